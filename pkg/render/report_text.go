package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// TextOptions adjust the terminal rendering.
type TextOptions struct {
	// Verbose shows passing checks too; by default only what needs
	// attention is listed under each family.
	Verbose bool
	// Only, when set, writes just these sections, without the run header
	// and the section banners, for a command that frames them itself
	// (`mcp-eval check` shows Layer 0 alone).
	Only []Section
	// Banners keeps the section banners with Only.
	Banners bool
}

// Section is one part of a report's text.
type Section string

const (
	SectionConformance Section = "conformance" // Layer 0
	SectionBehavior    Section = "behavior"    // Layer 1
	SectionResilience  Section = "resilience"  // Layer 2
	SectionTelemetry   Section = "telemetry"   // Layer 3
	SectionGate        Section = "gate"
)

// ReportText writes a report for a terminal, the one text view of every
// command: the run, then each layer present, then the gate. Every value
// from the report goes through Line.
func ReportText(w io.Writer, rep *report.Report, opts TextOptions) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	sections := []struct {
		name    Section
		banner  string
		present bool
		write   func()
	}{
		{SectionConformance, "\n== Layer 0 · conformance ==\n", rep.Conformance != nil, func() { conformanceText(w, rep.Conformance, opts, waivedChecks(rep)); surfaceText(w, rep) }},
		{SectionBehavior, "\n== Layer 1 · behaviour" + replayedTag(rep) + " ==\n", rep.Behavior != nil, func() {
			behaviorText(w, rep)
			if rep.Conformance == nil {
				surfaceText(w, rep) // the case waivers in force, with no Layer 0 to list them under
			}
		}},
		{SectionResilience, "\n== Layer 2 · resilience and security" + replayedTag(rep) + " ==\n", rep.Resilience != nil, func() {
			mw := modelWidth(rep)
			for _, f := range rep.Resilience.Faults {
				scoresText(w, mw, "fault", f.Model, f.Fault, f.Scores)
			}
			for _, a := range rep.Resilience.Attacks {
				scoresText(w, mw, "attack", a.Model, a.Attack, a.Scores)
			}
			unmeasuredText(p, mw, rep.Resilience)
		}},
		{SectionTelemetry, "\n== Layer 3 · latency, tokens and cost ==\n", rep.Telemetry != nil, func() { telemetryText(w, rep) }},
		{SectionGate, "\n", rep.Gate != nil, func() { GateText(w, rep) }},
	}
	if len(opts.Only) > 0 {
		for _, s := range sections {
			if s.present && slices.Contains(opts.Only, s.name) {
				if opts.Banners {
					p("%s", s.banner)
				}
				s.write()
			}
		}
		return
	}
	r := rep.Run
	p("mcp-eval report · schema %d · harness %s\n", rep.SchemaVersion, orDash(Line(r.HarnessVersion)))
	if r.Commit != "" || r.Ref != "" || r.Event != "" {
		p("run: commit %s · %s · %s", orDash(Line(shortSHA(r.Commit))), orDash(Line(r.Ref)), orDash(Line(r.Event)))
		if r.WorkflowRunID != 0 {
			p(" · workflow run %d", r.WorkflowRunID)
		}
		p("\n")
	}
	if rep.ToolSurfaceHash != "" {
		p("tool surface: %s\n", Line(rep.ToolSurfaceHash))
	}
	for _, m := range rep.Models {
		p("model %s: requested %s, served %s (%s)\n", Line(m.ID), orDash(Line(m.Requested)), orDash(Line(m.Served)), orDash(Line(m.Provider)))
	}
	for _, s := range sections {
		if s.present {
			p("%s", s.banner)
			s.write()
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func behaviorText(w io.Writer, rep *report.Report) {
	b := rep.Behavior
	models := resultModels(rep)
	fmt.Fprintf(w, "%d cases × %d models, %d runs each", len(b.Cases), len(models), b.RunsPerCase)
	if b.JudgeModel != "" {
		fmt.Fprintf(w, " · judge %s, rubric %s", Line(b.JudgeModel), shortHash(b.RubricHash))
	}
	fmt.Fprintln(w)
	items := map[[2]string]report.GateItem{}
	if rep.Gate != nil {
		for _, it := range rep.Gate.Items {
			if it.Kind == report.KindCase {
				items[[2]string{it.Subject, it.Model}] = it
			}
		}
	}
	for _, r := range b.Results {
		mark, base := " ", ""
		if it, ok := items[[2]string{r.Case, r.Model}]; ok {
			mark = statusMark(it.Status)
			if it.Baseline != nil {
				base = fmt.Sprintf(" (baseline %d/%d)", it.Baseline.K, it.Baseline.N)
			}
		}
		var scores []string
		for _, s := range r.Scores {
			scores = append(scores, fmt.Sprintf("%s %d/%d", Line(s.Name), s.K, s.N))
		}
		fmt.Fprintf(w, "  %s %-28s %-20s %d/%d%s  %s\n", mark, Line(r.Case), Line(r.Model), r.Passed.K, r.Passed.N, base, strings.Join(scores, ", "))
	}
	for i, it := range suiteItems(rep) {
		if i == 0 {
			// The per-model figures over all runs differ from these:
			// without the word one score read as two values.
			fmt.Fprintln(w, "  suite scores: the mean over cases, with its interval")
		}
		line := fmt.Sprintf("  suite %-20s %-20s", Line(it.Model), Line(it.Score))
		if it.Value != nil && it.Low != nil && it.High != nil {
			line += fmt.Sprintf(" %s [%s, %s]", pct1(*it.Value), pct1(*it.Low), pct1(*it.High))
		}
		// The comment's convention: Δ is new − baseline, the words follow
		// the score's direction, and nothing where the gate did not compare.
		if ch := suiteChange(it); ch.Delta != "–" {
			line += fmt.Sprintf(" was %s, Δ %s, %s", pct1(*it.BaselineValue), ch.Delta, ch.Surely)
		}
		fmt.Fprintf(w, "%s  %s %s\n", line, statusMark(it.Status), it.Status)
	}
	ConfusionText(w, rep)
}

func scoresText(w io.Writer, mw int, kind, model, subject string, scores []report.Score) {
	for _, s := range scores {
		fmt.Fprintf(w, "  %-6s %-*s %-24s %-14s %d/%d (%s, %s is better)\n", kind, mw, Line(model), Line(subject), Line(s.Name), s.K, s.N, percent(s.Count().Rate()), s.Direction)
	}
}

// modelWidth is the terminal's model column: 24, or the longest model
// name (up to 48) so that four providers' names still line up.
func modelWidth(rep *report.Report) int {
	w := 24
	grow := func(m string) { w = max(w, min(48, utf8.RuneCountInString(Line(m)))) }
	for _, m := range rep.Models {
		grow(m.ID)
	}
	if t := rep.Telemetry; t != nil {
		for _, u := range t.Usage {
			grow(u.Model) // the judge too
		}
	}
	return w
}

// GateText writes the gate's verdict like k6 thresholds: one line per item
// that did not simply pass, mark + the rule as written + what was seen,
// then the verdict.
func GateText(w io.Writer, rep *report.Report) {
	g := rep.Gate
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("gate · %s\n", Line(g.Policy.Text))
	if g.Baseline != nil {
		p("baseline: %s (commit %s", Line(g.Baseline.Path), orDash(Line(shortSHA(g.Baseline.Commit))))
		if g.Baseline.WorkflowRunID != 0 {
			p(", run %d", g.Baseline.WorkflowRunID)
		}
		p(")\n")
	} else {
		p("%s\n", Line(g.BaselineNote))
	}
	if len(g.History) > 0 {
		p("history: %d green reports\n", len(g.History))
	}
	if l := ReplayLabel(rep); l != "" {
		p("%s\n", Line(l))
	}
	for _, n := range g.Notes {
		p("note: %s\n", Line(n))
	}
	ctx := newAttnContext(rep)
	// Items not judged for one cause (a provider down, a server that
	// exited) are said once, with the others named after it: a model's
	// 404 printed eighteen blocks in a user's trial.
	type member struct {
		layer          int
		subject, model string
	}
	groupOf := map[member]int{}
	var groups []AttentionItem
	for _, a := range BuildAttention(rep).Items {
		if a.Status != report.ItemError || len(a.Decided) < 2 {
			continue
		}
		for _, d := range a.Decided {
			groupOf[member{a.Layer, d.Subject, d.Model}] = len(groups)
		}
		groups = append(groups, a)
	}
	said := map[int]bool{}
	shown := 0
	for _, status := range []string{report.ItemFail, report.ItemError, report.ItemInconclusive, report.ItemWarn, report.ItemWaived, report.ItemKnown, report.ItemNotComparable} {
		for _, it := range g.Items {
			if it.Status != status {
				continue
			}
			gi, grouped := groupOf[member{it.Layer, it.Subject, it.Model}]
			if grouped && it.Status == report.ItemError && said[gi] {
				continue
			}
			shown++
			subject := Line(it.Subject)
			if it.Model != "" {
				subject += " · " + Line(it.Model)
			}
			p("  %s L%d %-6s %s: %s\n      %s\n", statusMark(it.Status), it.Layer, it.Kind, subject, Line(it.Rule), Line(gateLine(ctx, it)))
			// A case's count says that it fell short, not why; the first
			// run that did is the quickest way in (the report has all).
			if it.Kind == report.KindCase {
				if r, ok := ctx.results[[2]string{it.Subject, it.Model}]; ok {
					if c := runCause(r); c != nil && c.Reason != "" {
						where := "first run short"
						if c.Run > 0 {
							where = fmt.Sprintf("run %d", c.Run)
						}
						p("      %s: %s\n", where, Line(clip(c.Reason, 240)))
					}
				}
			}
			if grouped && it.Status == report.ItemError {
				said[gi] = true
				if c := groups[gi].Cause; it.Kind == report.KindCheck && c != nil && c.Finding != "" {
					p("      cause: %s\n", Line(clip(c.Finding, 240)))
				}
				var others []string
				for _, d := range groups[gi].Decided {
					if d.Subject == it.Subject && d.Model == it.Model {
						continue
					}
					o := d.Subject
					if d.Model != "" && d.Model != it.Model {
						o += " · " + d.Model
					}
					others = append(others, o)
				}
				if len(others) > 8 {
					others = append(others[:8], fmt.Sprintf("%d more", len(others)-8))
				}
				p("      and %d more not judged for the same reason: %s\n", len(groups[gi].Decided)-1, Line(strings.Join(others, ", ")))
			}
		}
	}
	passed := 0
	for _, it := range g.Items {
		if it.Status == report.ItemPass {
			passed++
		}
	}
	if passed > 0 {
		p("  ✓ %d more item(s) passed\n", passed)
	}
	if len(g.Unmatched) > 0 {
		p("not compared (%d):\n", len(g.Unmatched))
		for i, u := range g.Unmatched {
			if i == 20 {
				p("  … and %d more (see the report)\n", len(g.Unmatched)-20)
				break
			}
			subject := Line(u.Subject)
			if u.Model != "" {
				subject += " · " + Line(u.Model)
			}
			p("  - L%d %s %s only in %s: %s\n", u.Layer, Line(u.Kind), subject, Line(u.Side), Line(u.Reason))
		}
	}
	p("method: %s\n", Line(g.Method))
	if c := legacy(rep); c != nil {
		// The gate's pass is no PASS for a server no 2026-07-28 check ran on.
		if g.Verdict == report.GateFail {
			p("verdict: FAIL (%s server: speaks %s only)\n", strings.ToLower(legacyWord), Line(legacySpeaks(c)))
		} else {
			p("verdict: %s (speaks %s only; %s)\n", legacyWord, Line(legacySpeaks(c)), legacyGate(g))
		}
		return
	}
	if why := rep.Run.Cancelled; why != "" {
		p("verdict: CANCELLED (%s): nothing is judged\n", Line(why))
		return
	}
	if why := rep.Run.Untested; why != "" {
		p("verdict: ERROR: the server could not be tested, so nothing is judged: %s\n", Line(why))
		return
	}
	p("verdict: %s\n", strings.ToUpper(Line(g.Verdict)))
}

// gateLine is an item's reason as the comment words it (numbers.go's
// convention: "fell"/"rose" by the score's direction, no "-0.0"), with the
// gate's statistics after it; an item Needs attention does not list (not
// comparable, info) keeps the gate's reason, which has no Δ.
func gateLine(ctx *attnContext, it report.GateItem) string {
	if _, listed := statusRank[it.Status]; !listed {
		return it.Reason
	}
	return itemWords(ctx, it)
}

// itemWords is an item's sentence with the gate's statistics after it.
func itemWords(ctx *attnContext, it report.GateItem) string {
	s := ctx.sentence(it)
	if it.Stats != "" {
		s += " (" + it.Stats + ")"
	}
	return s
}

// waivedChecks are the Layer 0 checks the gate waived.
func waivedChecks(rep *report.Report) map[string]bool {
	out := map[string]bool{}
	if rep.Gate == nil {
		return out
	}
	for _, it := range rep.Gate.Items {
		if it.Layer == 0 && it.Status == report.ItemWaived {
			out[it.Subject] = true
		}
	}
	return out
}
