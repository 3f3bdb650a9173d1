package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonpointer"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/toolschema"
)

// The LINT family judges tool descriptions as a model reads them: the
// text is all a model has to choose a tool and fill its arguments. No
// spec rule binds it, so the checks are SHOULD and never move the Layer 0
// verdict; the gate's lint setting (off, warn, fail) decides what a
// finding does. Tool names are TOOL-5's.
var lintFamily = family{name: "LINT", title: "tool descriptions",
	checks:          []*check.Check{LINT1, LINT2, LINT3, LINT4, LINT5},
	beyondChecklist: "the spec sets no rule on description quality; server/tools.mdx says descriptions are how a model understands a tool, and the lint reads them as one would"}

const lintSpec = "server/tools.mdx §Tool (description: \"human-readable description of functionality\"); schema.ts Tool.description, JSON Schema description"

var LINT1 = &check.Check{ID: "LINT-1", Level: check.Should, Transports: check.Both, Spec: lintSpec,
	Doc: "every tool has a description of more than one word",
	Fix: "say in a sentence what the tool does, on what, and what it returns",
	Run: lintRun(func(p *check.Pass, ts []lintTool) {
		for _, t := range ts {
			switch n := lintWords(t.Description); {
			case strings.TrimSpace(t.Description) == "":
				p.Failf(t.absent(p, "/description"), "tool %q has no description", t.clipName())
			case n == 1:
				p.Failf(t.at(p, "/description"), "tool %q is described in one word: %q", t.clipName(), jsonrpc.Clip(t.Description, 60))
			}
		}
	})}

var LINT2 = &check.Check{ID: "LINT-2", Level: check.Should, Transports: check.Both, Spec: lintSpec,
	Doc: "every parameter of a tool (the properties of its inputSchema) has a description",
	Fix: "add a description to each property of inputSchema: what it is, its unit or format",
	Run: lintRun(func(p *check.Pass, ts []lintTool) {
		for _, t := range ts {
			var bare []string
			for _, pr := range t.Params {
				if strings.TrimSpace(pr.Description) == "" {
					bare = append(bare, pr.Name)
				}
			}
			if len(bare) > 0 {
				p.Failf(t.absent(p, "/inputSchema/properties/"+lintPtr(bare[0])+"/description"), "tool %q: %d of %d parameters have no description: %s",
					t.clipName(), len(bare), len(t.Params), lintList(bare))
			}
		}
	})}

var LINT3 = &check.Check{ID: "LINT-3", Level: check.Should, Transports: check.Both, Spec: lintSpec,
	Doc: "a required parameter is one a model can fill: it has a description, or a telling name and a type",
	Fix: "describe the required parameter: what value, in what form, where the user finds it",
	Run: lintRun(func(p *check.Pass, ts []lintTool) {
		for _, t := range ts {
			for _, pr := range t.Params {
				if !pr.Required || strings.TrimSpace(pr.Description) != "" {
					continue
				}
				var why string
				switch {
				case lintGeneric(pr.Name):
					why = "its name says nothing of the value"
				case !pr.Typed:
					why = "no type, enum or format says what shape of value it takes"
				default:
					continue
				}
				p.Failf(t.absent(p, "/inputSchema/properties/"+lintPtr(pr.Name)+"/description"),
					"tool %q: required parameter %q has no description and %s", t.clipName(), jsonrpc.Clip(pr.Name, 40), why)
			}
		}
	})}

var LINT4 = &check.Check{ID: "LINT-4", Level: check.Should, Transports: check.Both, Spec: lintSpec,
	Doc: "an enum whose values are not words (codes, numbers, single letters) says what each value means",
	Fix: "use words as enum values, or say in the parameter's description what each value means",
	Run: lintRun(func(p *check.Pass, ts []lintTool) {
		for _, t := range ts {
			for _, pr := range t.Params {
				if len(pr.Enum) < 2 {
					continue
				}
				var opaque, unexplained []string
				for _, v := range pr.Enum {
					if !lintWordValue(v) {
						opaque = append(opaque, v)
						if !lintMentions(pr.Explains, v) {
							unexplained = append(unexplained, v)
						}
					}
				}
				if len(opaque) > 0 && len(unexplained) > 0 {
					p.Failf(t.at(p, pr.EnumAt),
						"tool %q: parameter %q has enum values a model cannot read (%s) and its description does not explain %s",
						t.clipName(), jsonrpc.Clip(pr.Name, 40), lintList(opaque), lintList(unexplained))
				}
			}
		}
	})}

// lintSimilar is the similarity from which two descriptions are
// near-duplicates: a model choosing between the two tools has little but
// the names to go on.
const lintSimilar = 0.7

var LINT5 = &check.Check{ID: "LINT-5", Level: check.Should, Transports: check.Both, Spec: lintSpec,
	Doc: fmt.Sprintf("no two tools have near-duplicate descriptions (word-set Jaccard similarity ≥ %.2f)", lintSimilar),
	Fix: "say in each description what sets the tool apart from the other: its input, its scope, when to use which",
	Run: lintRun(func(p *check.Pass, ts []lintTool) {
		pairs, more := lintPairs(ts, lintMaxPairs)
		for _, pr := range pairs {
			a, b := ts[pr.A], ts[pr.B]
			// pkg/render reads this wording (lintPairRE) to link a Layer 1
			// confusion between the two tools to this finding.
			p.Failf(b.at(p, "/description"), "tools %q and %q have near-duplicate descriptions (similarity %.2f): %q / %q",
				a.clipName(), b.clipName(), pr.Score, jsonrpc.Clip(a.Description, 80), jsonrpc.Clip(b.Description, 80))
		}
		if more > 0 {
			// Generated tools can be near-duplicates pairwise by the
			// hundred thousand: name the closest, count the rest.
			p.Failf(nil, "and %d more pairs of tools have near-duplicate descriptions", more)
		}
	})}

// lintTool is one listed tool as the lint reads it, with where it sits in
// the tools/list response (for located evidence).
type lintTool struct {
	Name, Description string
	Params            []lintParam
	resp              *mcpclient.Response
	index             int // in the page's result.tools
}

// lintParam is one property of a tool's inputSchema, read through the
// same-document $refs it makes and the nullable wrappers (anyOf/oneOf of
// one schema and null) it sits in (lint_ref.go).
type lintParam struct {
	// Description is the nearest non-blank one: beside the $ref or the
	// wrapper before the schema it names or wraps.
	Description string
	// Explains is every description on the way, for LINT-4.
	Explains string
	Name     string
	Required bool
	Enum     []string // as JSON text for non-strings
	EnumAt   string   // where Enum is, a pointer into the tool
	// Typed: the schema says the value's shape (type, enum, const,
	// format or a composition), or it makes a $ref the lint could not
	// follow.
	Typed bool
}

func (t lintTool) clipName() string { return jsonrpc.Clip(t.Name, 60) }

func (t lintTool) ptr(rest string) string { return fmt.Sprintf("/result/tools/%d%s", t.index, rest) }

// at and absent locate a finding in the tools/list page; only while p
// still keeps evidence: a server of 1,000 undescribed tools has a finding
// per tool, and locating each in a page of them all is quadratic.
func (t lintTool) at(p *check.Pass, rest string) *check.Evidence {
	if !p.KeepsEvidence() {
		return nil
	}
	return check.FromResponseAt(t.resp, t.ptr(rest))
}

func (t lintTool) absent(p *check.Pass, rest string) *check.Evidence {
	if !p.KeepsEvidence() {
		return nil
	}
	return check.FromResponseAbsent(t.resp, t.ptr(rest))
}

// lintRun lists the tools once and hands them to judge; a run that found
// nothing passes with the count.
func lintRun(judge func(p *check.Pass, ts []lintTool)) func(p *check.Pass) error {
	return func(p *check.Pass) error {
		if !toolServed(p.Env.Facts) {
			p.Skipf(toolNotServed)
			return nil
		}
		_, lr, ok, err := toolListRaw(p)
		if !ok {
			return err
		}
		ts := lintTools(lr)
		if len(ts) == 0 {
			p.Skipf("the server lists no tools")
			return nil
		}
		judge(p, ts)
		p.Passf(toolEvidence(lr), "%d tools read", len(ts))
		return nil
	}
}

// lintTools reads every page's tools; an entry that is not a tool object
// is TOOL-1's to report and is left out. A parameter is read as a model
// reads it (package toolschema): through local $refs and nullable
// wrappers. A $ref that cannot be followed is SCHEMA-2's (unresolvable)
// or SCHEMA-3's (loop) to report, with evidence, as a MUST; a LINT
// finding saying it again would report one fault twice. So is a tool
// listed again as it was (TOOL-5 reports the name): linted again, its
// findings came twice. A second definition under the name is linted:
// a client keeping the last one shows a model that one.
func lintTools(lr *mcpclient.ListResult) []lintTool {
	var out []lintTool
	seen := map[string]string{} // name → the raw tool read under it
	for _, pg := range lr.Pages {
		if pg.Response == nil {
			continue
		}
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(pg.Response.Result, &page) != nil {
			continue
		}
		for i, raw := range page.Tools {
			var t struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			var in struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if json.Unmarshal(raw, &t) != nil || (len(t.InputSchema) > 0 && json.Unmarshal(t.InputSchema, &in) != nil) {
				continue
			}
			if first, ok := seen[t.Name]; ok && first == string(raw) {
				continue
			}
			lt := lintTool{Name: t.Name, Description: t.Description, resp: pg.Response, index: i}
			names := make([]string, 0, len(in.Properties))
			for n := range in.Properties {
				names = append(names, n)
			}
			sort.Strings(names)
			doc := toolschema.NewDoc(t.InputSchema)
			ok := true
			for _, n := range names {
				sp, read := doc.Param(n, in.Properties[n])
				if !read {
					ok = false
					break
				}
				lt.Params = append(lt.Params, lintParam{Name: n, Description: sp.Description, Explains: sp.Explains,
					Required: slices.Contains(in.Required, n), Enum: sp.EnumText(), EnumAt: sp.EnumAt, Typed: sp.Typed})
			}
			if !ok {
				continue
			}
			if _, ok := seen[t.Name]; !ok {
				seen[t.Name] = string(raw)
			}
			out = append(out, lt)
		}
	}
	return out
}

// lintWords counts the words of s (runs of letters or digits).
func lintWords(s string) int {
	return len(strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }))
}

// lintGenericNames are parameter names that say nothing of the value.
var lintGenericNames = map[string]bool{"arg": true, "args": true, "data": true, "input": true, "value": true, "val": true, "param": true,
	"params": true, "payload": true, "obj": true, "object": true, "item": true, "thing": true, "x": true, "y": true, "z": true,
	"foo": true, "bar": true, "opts": true, "options": true, "config": true, "misc": true, "extra": true, "str": true, "string": true,
	"number": true, "num": true, "flag": true, "arg1": true, "arg2": true, "p1": true, "p2": true}

// lintGeneric reports a name a model cannot read a value from: a generic
// word, or two letters at most ("q", "v"; "id" is read with the tool's
// name).
func lintGeneric(name string) bool {
	n := strings.ToLower(strings.Trim(name, "_-."))
	return lintGenericNames[n] || (utf8.RuneCountInString(n) <= 2 && n != "id")
}

// lintMentions reports whether text names the parameter or value: the
// name itself, or its words ("customer_id" as "customer id").
func lintMentions(text, name string) bool {
	t, n := strings.ToLower(text), strings.ToLower(name)
	if n == "" {
		return false
	}
	if strings.Contains(t, n) {
		return true
	}
	words := lintSplit(n)
	if len(words) < 2 {
		return false
	}
	return strings.Contains(strings.Join(lintSplit(t), " "), strings.Join(words, " "))
}

// lintSplit is s's lower-case words, split at every non-letter, non-digit.
func lintSplit(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// lintWordValue reports an enum value a model can read as it is: a
// string of three letters or more ("open", "celsius", "read_only").
func lintWordValue(v string) bool {
	letters := 0
	for _, r := range v {
		switch {
		case unicode.IsLetter(r):
			letters++
		case r == '_' || r == '-' || r == ' ' || unicode.IsDigit(r):
		default:
			return false
		}
	}
	return letters >= 3 && !(letters <= 4 && strings.ToUpper(v) == v)
}

// lintMaxPairs bounds the near-duplicate pairs LINT-5 names.
const lintMaxPairs = 25

// lintPair is two tools (indexes) and their similarity.
type lintPair struct {
	A, B  int
	Score float64
}

// lintPairs returns the n most similar pairs of descriptions at or above
// lintSimilar, most similar first (ties in the order of the tools), and
// how many more pairs are at or above it. The similarity is the Jaccard
// index of their content-word sets (lower case, stop words and one-letter
// words out). Deterministic, so a finding is the same on every run;
// descriptions of fewer than three content words are not compared (LINT-1
// judges them). Only the n best pairs are kept: 1,000 generated tools make
// half a million pairs, which held 13 MB and a sort when all were kept.
func lintPairs(ts []lintTool, n int) (top []lintPair, more int) {
	// Words become numbers and each set a sorted list of them, so that a
	// pair costs one merge, not a map lookup per word.
	ids := map[string]int{}
	sets := make([][]int, len(ts))
	for i, t := range ts {
		seen := map[int]bool{}
		for _, w := range lintSplit(t.Description) {
			if len(w) <= 1 || lintStop[w] {
				continue
			}
			id, ok := ids[w]
			if !ok {
				id = len(ids)
				ids[w] = id
			}
			if !seen[id] {
				seen[id] = true
				sets[i] = append(sets[i], id)
			}
		}
		slices.Sort(sets[i])
	}
	for i := range ts {
		if len(sets[i]) < 3 {
			continue
		}
		for j := i + 1; j < len(ts); j++ {
			if len(sets[j]) < 3 {
				continue
			}
			if ts[i].Name == ts[j].Name {
				// Two definitions under one name are TOOL-5's finding,
				// not two tools a model must choose between.
				continue
			}
			inter := lintIntersect(sets[i], sets[j])
			union := len(sets[i]) + len(sets[j]) - inter
			score := float64(inter) / float64(union)
			if score < lintSimilar {
				continue
			}
			if len(top) == n && (n == 0 || score <= top[n-1].Score) {
				more++
				continue
			}
			// After every kept pair of the same score or more: an earlier
			// pair wins a tie, as a stable sort of all pairs would have it.
			at := sort.Search(len(top), func(k int) bool { return top[k].Score < score })
			if len(top) == n {
				more++
				top = top[:n-1]
			}
			top = slices.Insert(top, at, lintPair{A: i, B: j, Score: score})
		}
	}
	return top, more
}

// lintIntersect counts the numbers two sorted lists share.
func lintIntersect(a, b []int) int {
	n := 0
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] == b[0]:
			n++
			a, b = a[1:], b[1:]
		case a[0] < b[0]:
			a = a[1:]
		default:
			b = b[1:]
		}
	}
	return n
}

var lintStop = map[string]bool{"the": true, "an": true, "and": true, "or": true, "of": true, "to": true, "in": true, "on": true, "for": true,
	"by": true, "with": true, "from": true, "is": true, "are": true, "be": true, "it": true, "its": true, "this": true, "that": true, "as": true,
	"at": true, "if": true, "use": true, "returns": true, "return": true, "tool": true, "given": true, "all": true, "any": true}

// lintList is up to five items, quoted, and how many more.
func lintList(items []string) string {
	var q []string
	for i, s := range items {
		if i == 5 {
			q = append(q, fmt.Sprintf("and %d more", len(items)-5))
			break
		}
		q = append(q, fmt.Sprintf("%q", jsonrpc.Clip(s, 40)))
	}
	return strings.Join(q, ", ")
}

// lintPtr escapes a property name for a JSON pointer (RFC 6901).
func lintPtr(name string) string { return jsonpointer.Escape(name) }
