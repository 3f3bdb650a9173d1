// Package render turns reports into text for people and tools: the
// terminal, JUnit XML, Markdown. Every renderer is a pure function of a
// report to a writer; none of them decides anything.
package render

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// familyTitle heads a family: the title the result carries, or for a
// report written before results carried one, the family id.
func familyTitle(r report.CheckResult) string {
	if r.FamilyTitle != "" {
		return r.FamilyTitle
	}
	// A report written before results carried their family's title.
	return r.Family
}

// conformanceText writes the human summary of a Layer 0 result, grouped
// by family in checklist order.
//
// waived are the checks the gate waived: Layer 0's own verdict does not
// know the policy, and a bare "FAIL" above the gate's "PASS" read as two
// verdicts that disagree.
func conformanceText(w io.Writer, rep *report.Conformance, opts TextOptions, waived map[string]bool) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	server := "(no serverInfo)"
	if rep.ServerInfo != nil {
		server = Line(rep.ServerInfo.Name + " " + rep.ServerInfo.Version)
	}
	p("mcp-eval check: %s\n", Line(rep.Target))
	p("server %s · %s %s · %s · %d checks · MUST checks ×%d · %.0f ms\n", server, rep.Era, Line(rep.ProtocolVersion), rep.Transport, len(rep.Checks), rep.Runs, rep.DurationMs)
	if rep.Verdict == report.ConformanceLegacy {
		legacyText(w, rep)
		return
	}
	family := ""
	shownInFamily := 0
	var callSkips []string
	for _, r := range rep.Checks {
		if r.Family != family {
			family = r.Family
			shownInFamily = 0
		}
		if r.Verdict == report.CheckSkipped && r.Outcome.SkipCause == report.SkipNeedsCall {
			callSkips = append(callSkips, r.ID)
		}
		if !opts.Verbose && r.Verdict == report.CheckPassed && !r.Flaky {
			continue
		}
		if shownInFamily == 0 {
			p("\n%s  %s\n", r.Family, familyTitle(r))
		}
		shownInFamily++
		p("  %s %-9s %-6s %-6s %s\n", mark(r), r.ID, r.Level, counts(r), Line(headline(r)))
		if r.Verdict == report.CheckFailed || r.Verdict == report.CheckErrored || (r.Verdict == report.CheckWarned && opts.Verbose) {
			// A finding repeated (the same fault in several runs or
			// cases) is said once.
			said := map[string]bool{r.Outcome.Message: true}
			for _, d := range r.Outcome.Details {
				if !said[d] {
					said[d] = true
					p("        also: %s\n", Line(d))
				}
			}
			if r.Fix != "" && r.Verdict == report.CheckFailed {
				p("        fix: %s\n", Line(r.Fix))
			}
			if r.SameAs != "" {
				p("        same fault as %s (the same response value at the same place; counted once)\n", r.SameAs)
			}
			shown := map[string]bool{}
			for _, ev := range r.Outcome.Evidence {
				if len(shown) == 2 {
					break
				}
				if l := evidenceLine(ev); !shown[l] {
					shown[l] = true
					p("        evidence: %s\n", Line(l))
				}
			}
		}
	}
	s := Summarize(rep)
	// The same counts as the Markdown and HTML say; a result that
	// repeats another's fault is one fault to fix, named after them (a
	// terminal that counted it once disagreed with the comment).
	p("\n%d checks: %s", len(rep.Checks), s.Line())
	if s.Flaky > 0 {
		p(", %d flaky", s.Flaky)
	}
	if len(s.Repeats) > 0 {
		what, n := "failed", s.Failed
		if s.RepeatWarned > 0 {
			what, n = "failed or warned", s.Failed+s.Warned
		}
		p(" (%d %s are %s: %s)", n, what, plural(n-s.RepeatFailed-s.RepeatWarned, "fault", "faults"), strings.Join(s.Repeats, ", "))
	}
	p("\n")
	if len(callSkips) > 0 {
		// "might": a tool allowed is called for real, and may still not
		// give what the check looks for (input_required, an outputSchema).
		p("skipped, and might apply with a tool the harness may not call allowed: %s (--call-tool NAME calls it for real: allow only what is safe on this server)\n", strings.Join(callSkips, ", "))
	}
	// The run's notes were in report.json only, so what they say (a
	// --call-tool name the server does not list, a server that stopped
	// answering) reached no one who reads the terminal. Beside the line
	// above: a note may be why it still asks for --call-tool.
	for _, n := range rep.Notes {
		p("note: %s\n", Line(n))
	}
	for _, d := range rep.Deprecated {
		p("deprecated: %s (%s); migrate: %s; earliest removal: %s\n", Line(d.Feature), Line(d.Evidence), Line(d.Migration), Line(d.EarliestRemoval))
	}
	switch rep.Verdict {
	case report.ConformancePass:
		must := 0
		for _, r := range rep.Checks {
			if r.Level == report.Must && r.Verdict != report.CheckSkipped {
				must++
			}
		}
		if must == 0 {
			p("conformance: PASS: no MUST check ran (the selection holds SHOULD and info checks only, or every MUST was skipped)\n")
		} else {
			p("conformance: PASS: every MUST check passed %d/%d\n", rep.Runs, rep.Runs)
		}
	case report.ConformanceFail:
		named, open := make([]string, 0, len(s.FailedMust)), 0
		for _, id := range s.FailedMust {
			if waived[id] {
				named = append(named, id+" (waived)")
			} else {
				named = append(named, id)
				open++
			}
		}
		if open == 0 {
			p("conformance: FAIL, every failure waived: %d MUST check(s) failed, each waived by the policy until its date: %s (the gate's verdict follows)", len(s.FailedMust), strings.Join(s.FailedMust, ", "))
		} else {
			p("conformance: FAIL: %d MUST check(s) failed: %s", len(s.FailedMust), strings.Join(named, ", "))
		}
		if len(s.UnjudgedMust) > 0 {
			p("; %d more not judged, as their runs errored: %s", len(s.UnjudgedMust), strings.Join(s.UnjudgedMust, ", "))
		}
		p("\n")
	case report.ConformanceIncomplete:
		p("conformance: INCOMPLETE: no MUST check failed, but %d could not be judged, as their runs errored (the errors are above): %s\n", len(s.UnjudgedMust), strings.Join(s.UnjudgedMust, ", "))
	}
}

func legacyText(w io.Writer, rep *report.Conformance) {
	fmt.Fprintf(w, "\nconformance: LEGACY: this server speaks %s only; it does not serve %s\n", Line(rep.Legacy.Speaks), "2026-07-28")
	fmt.Fprintf(w, "what blocks 2026-07-28:\n")
	for _, b := range rep.Legacy.Blockers {
		fmt.Fprintf(w, "  - %s: %s\n      instead: %s\n", b.ID, Line(b.Found), Line(b.Instead))
		if b.Evidence != "" {
			fmt.Fprintf(w, "      evidence: %s\n", Line(b.Evidence))
		}
	}
}

// Summary counts a report's results.
type Summary struct {
	// Noted are the info checks that noted something: shown as "info",
	// never counted as warnings.
	Passed, Failed, Warned, Noted, Skipped, Errored, Flaky int
	// FailedMust are the MUST checks that failed a run; UnjudgedMust
	// those that failed none but errored in one.
	FailedMust, UnjudgedMust []string
	// RepeatFailed and RepeatWarned are the failed and warned results
	// (counted in Failed and Warned) that repeat an earlier result's
	// fault (SameAs); Repeats names them, "RSRC-2 = CACHE-1".
	RepeatFailed, RepeatWarned int
	Repeats                    []string
}

// Line is the counts as one line, the same in every view: "3 passed, 0
// failed, 1 warning, 1 info, 2 skipped, 0 errors".
func (s Summary) Line() string {
	parts := []string{fmt.Sprintf("%d passed", s.Passed), fmt.Sprintf("%d failed", s.Failed), plural(s.Warned, "warning", "warnings")}
	if s.Noted > 0 {
		parts = append(parts, fmt.Sprintf("%d info", s.Noted))
	}
	parts = append(parts, fmt.Sprintf("%d skipped", s.Skipped), plural(s.Errored, "error", "errors"))
	return strings.Join(parts, ", ")
}

// plural is "1 warning", "0 warnings", "2 warnings".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Summarize counts results by verdict.
func Summarize(rep *report.Conformance) Summary {
	var s Summary
	for _, r := range rep.Checks {
		switch r.Verdict {
		case report.CheckPassed:
			s.Passed++
		case report.CheckFailed:
			s.Failed++
		case report.CheckWarned:
			s.Warned++
		case report.CheckNoted:
			s.Noted++
		case report.CheckSkipped:
			s.Skipped++
		case report.CheckErrored:
			s.Errored++
		}
		if r.Flaky {
			s.Flaky++
		}
		if r.SameAs != "" && (r.Verdict == report.CheckFailed || r.Verdict == report.CheckWarned) {
			if r.Verdict == report.CheckFailed {
				s.RepeatFailed++
			} else {
				s.RepeatWarned++
			}
			s.Repeats = append(s.Repeats, r.ID+" = "+r.SameAs)
		}
		switch {
		case r.Level != report.Must:
		case r.FailedARun():
			s.FailedMust = append(s.FailedMust, r.ID)
		case r.Unjudged():
			s.UnjudgedMust = append(s.UnjudgedMust, r.ID)
		}
	}
	sort.Strings(s.FailedMust)
	sort.Strings(s.UnjudgedMust)
	return s
}

func mark(r report.CheckResult) string {
	switch r.Verdict {
	case report.CheckPassed:
		return "✓"
	case report.CheckFailed:
		return "✗"
	case report.CheckWarned:
		return "!"
	case report.CheckNoted:
		return "i"
	case report.CheckErrored:
		return "E"
	}
	return "-"
}

// counts is k/N for repeated checks, the verdict word otherwise.
func counts(r report.CheckResult) string {
	if r.Verdict == report.CheckSkipped {
		return "skip"
	}
	if r.Runs > 1 {
		return fmt.Sprintf("%d/%d", r.Passes(), r.Runs)
	}
	return string(r.Verdict)
}

func headline(r report.CheckResult) string {
	msg := r.Outcome.Message
	if msg == "" {
		msg = r.Doc
	}
	if e := r.Counts[report.CheckErrored]; e > 0 && e < r.Runs && r.Verdict == report.CheckErrored {
		// A failed run under the error that heads the line is said too:
		// Errored outranks Failed in the verdict.
		failed := ""
		if f := r.Counts[report.CheckFailed]; f > 0 {
			failed = fmt.Sprintf("failed in %d, ", f)
		}
		msg = fmt.Sprintf("%snot judged in %d of %d runs: %s", failed, e, r.Runs, msg)
	}
	if r.Flaky {
		msg = "flaky: " + msg
	}
	return msg
}

// methodRE finds the method in a request excerpt, which may be clipped.
var methodRE = regexp.MustCompile(`"method":"([^"]{1,80})"`)

func evidenceLine(ev report.Evidence) string {
	var b strings.Builder
	if m := methodRE.FindStringSubmatch(ev.Request); m != nil {
		b.WriteString(m[1])
	} else {
		b.WriteString(ev.Request)
	}
	switch {
	case ev.Status != 0:
		fmt.Fprintf(&b, " → HTTP %d", ev.Status)
	case ev.Request != "":
		b.WriteString(" →")
	}
	// The located value first: a line is cut at 300 characters, and a
	// long response would push the fault past the cut. A value in another
	// message than the response (a notification) names that message and
	// shows its excerpt before the response's.
	if ev.In != "" {
		fmt.Fprintf(&b, " in the %s,", ev.In)
	}
	switch {
	case ev.Missing:
		fmt.Fprintf(&b, " %s is missing;", ev.Pointer)
	case ev.Pointer != "":
		fmt.Fprintf(&b, " at %s: %s;", ev.Pointer, ev.Value)
	case ev.OnStatus:
		b.WriteString(" (the status is the fault)")
	}
	if ev.In != "" && ev.Message != "" {
		b.WriteString(" " + ev.Message)
		if ev.Response != "" {
			b.WriteString(" · response")
		}
	}
	if ev.Response != "" {
		b.WriteString(" " + ev.Response)
	}
	return strings.TrimSpace(b.String())
}

// Line makes server-controlled text safe for one terminal line: control
// characters (escapes, CR, LF) and bidi overrides become visible
// replacements, and very long text is cut.
func Line(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r':
			return '⏎'
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '\uFFFD'
		case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f:
			return '\uFFFD'
		case r >= 0xe0000 && r <= 0xe007f: // Unicode tag characters hide text
			return '\uFFFD'
		}
		return r
	}, s)
	if len(s) > 300 {
		cut := 300
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
