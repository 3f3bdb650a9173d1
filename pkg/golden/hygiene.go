package golden

import (
	"fmt"
	"sort"
	"strings"
)

// Hygiene thresholds: below them a set's scores say little. With fewer
// than 20 cases one case moves an accuracy by more than five points; with
// fewer than 4 negatives the over-trigger rate is a coin toss.
const (
	MinCases     = 20
	MinNegatives = 4
)

// Warning codes, stable for filtering and tests.
const (
	WarnFewCases        = "few-cases"
	WarnFewNegatives    = "few-negatives"
	WarnUntestedTool    = "untested-tool"    // a server tool no case expects
	WarnUnknownTool     = "unknown-tool"     // a case expects a tool the server does not list
	WarnUnanchoredRegex = "unanchored-regex" // regex: without ^…$ accepts any value containing a match
)

// Warning is advice about a set that loaded fine: it never fails a run.
type Warning struct {
	Code string
	Pos  Position
	Msg  string
	Hint string
}

func (w Warning) String() string { return w.Pos.String() + ": warning: " + w.Advice() }

// Advice is the warning without its position's "warning:", for a caller
// that says "warning" itself: where, what, the hint and the code.
func (w Warning) Advice() string {
	s := w.Msg
	if w.Hint != "" {
		s += " (" + w.Hint + ")"
	}
	return s + " [" + w.Code + "]"
}

// Hygiene returns advice on a set: fewer than MinCases cases, fewer than
// MinNegatives negative cases, tools of the server that no case expects,
// cases expecting tools the server does not list, and regexes without
// anchors. toolNames is the server's tool list; nil skips the two checks
// that need it (no server at hand). The order is fixed: the set-level
// counts, the regexes and the unknown tools in case order, then the
// untested tools by name.
func Hygiene(set *Set, toolNames []string) []Warning {
	if set == nil {
		return nil
	}
	var out []Warning
	setPos := Position{File: set.Path}
	if n := len(set.Cases); n < MinCases {
		out = append(out, Warning{Code: WarnFewCases, Pos: setPos,
			Msg:  fmt.Sprintf("the set has %d %s, fewer than %d", n, plural(n, "case"), MinCases),
			Hint: fmt.Sprintf("each case moves an accuracy by %.0f points; add cases until the scores mean something", 100/float64(max(n, 1)))})
	}
	negatives := 0
	for i := range set.Cases {
		if set.Cases[i].Negative {
			negatives++
		}
	}
	if negatives < MinNegatives {
		out = append(out, Warning{Code: WarnFewNegatives, Pos: setPos,
			Msg:  fmt.Sprintf("the set has %d negative %s (expect_tool: null), fewer than %d", negatives, plural(negatives, "case"), MinNegatives),
			Hint: "add prompts that must not call any tool (small talk, questions the tools cannot answer, near misses): without them over-triggering goes unmeasured"})
	}
	out = append(out, regexWarnings(set)...)
	if toolNames != nil {
		out = append(out, toolWarnings(set, toolNames)...)
	}
	return out
}

func regexWarnings(set *Set) []Warning {
	var out []Warning
	for i := range set.Cases {
		c := &set.Cases[i]
		for _, name := range sortedMatcherKeys(c.ArgMatch) {
			m := c.ArgMatch[name]
			if m.Kind == MatchRegex && (!strings.HasPrefix(m.Pattern, "^") || !strings.HasSuffix(m.Pattern, "$")) {
				out = append(out, Warning{Code: WarnUnanchoredRegex, Pos: c.Pos,
					Msg:  fmt.Sprintf("case %q: arg_match for %q is the unanchored regex %q, which accepts any value that merely contains a match", c.ID, name, m.Pattern),
					Hint: fmt.Sprintf("write regex:^%s$ to match the whole value", strings.TrimSuffix(strings.TrimPrefix(m.Pattern, "^"), "$"))})
			}
		}
	}
	return out
}

func toolWarnings(set *Set, toolNames []string) []Warning {
	served := map[string]bool{}
	for _, t := range toolNames {
		served[t] = true
	}
	expected := map[string]bool{}
	var out []Warning
	for i := range set.Cases {
		c := &set.Cases[i]
		for _, step := range c.Steps() {
			expected[step.Tool] = true
			if !served[step.Tool] {
				out = append(out, Warning{Code: WarnUnknownTool, Pos: c.Pos,
					Msg:  fmt.Sprintf("case %q expects the tool %q, which the server does not list", c.ID, step.Tool),
					Hint: suggest(step.Tool, toolNames) + "every run of this case will fail; fix the name or the server"})
			}
		}
	}
	names := append([]string(nil), toolNames...)
	sort.Strings(names)
	for i, t := range names {
		if (i == 0 || names[i-1] != t) && !expected[t] {
			out = append(out, Warning{Code: WarnUntestedTool, Pos: Position{File: set.Path},
				Msg:  fmt.Sprintf("no case expects the tool %q", t),
				Hint: "add a case whose prompt should select it: a description change there goes unnoticed, and so does another tool stealing its prompts"})
		}
	}
	return out
}

func sortedMatcherKeys(m map[string]Matcher) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
