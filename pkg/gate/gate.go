package gate

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Method names the statistics, as recorded in every gated report.
// Version 2 narrowed inconclusive suite scores to drops whose bound is
// above zero.
const Method = "mcp-eval-gate/2: floors ⌈f·N⌉; Layer 0 exact; case falls and Layer 2 rates by one-sided Fisher exact test, " +
	"family-wise with Tarone–Bonferroni; suite scores by paired case-level one-sided t bound (Bonferroni over scores), " +
	"inconclusive only above 0; docs/gate.md"

// Input is what the gate judges. Baseline nil means floors only;
// BaselineNote then says why (none given, unreadable, wrong version, …).
type Input struct {
	New          *report.Report
	Baseline     *report.Report
	BaselineRef  report.ReportRef
	BaselineNote string
	// History are earlier reports, any order; Evaluate keeps the green
	// ones (gate verdict pass), newest first, up to Policy.HistoryDepth.
	History []Historic
	// Now stamps the verdict (the CLI passes time.Now()).
	Now time.Time
	// WaiversOn is the day waivers' dates are judged on; zero means Now.
	// Gating a recorded report again passes the day it was first gated,
	// so a waiver that ran out since does not change its verdict.
	WaiversOn time.Time
}

// Historic is an earlier report and where it was read from.
type Historic struct {
	Ref    report.ReportRef
	Report *report.Report
}

// Evaluate judges in.New against the baseline and history under p, which
// must be valid (Policy.Validate). It does not modify the reports; the
// caller stores the returned section in the new report.
//
// Every rule is read from the reports alone: Layer 1 results of the
// built-in lexical selector (IsLexicalBaseline) are listed as info and
// never gated, and case runs left undecided (report.Behavior.Inconclusive)
// make the verdict at least inconclusive (items with RuleUndecided).
func Evaluate(in Input, p Policy) *report.Gate {
	in, replayNote := replayComparable(in)
	g := &report.Gate{
		Method: Method, Policy: p.Record(), EvaluatedAt: in.Now.UTC(),
		History: []report.ReportRef{}, Items: []report.GateItem{}, Unmatched: []report.Unmatched{}, Notes: []string{},
	}
	if why := in.New.Run.Cancelled; why != "" {
		// A stopped run has no results to judge: its checks and cases
		// ended on the cancellation, not on the server.
		g.Verdict, g.BaselineNote = report.GateCancelled, "not compared: the run was cancelled"
		g.Notes = append(g.Notes, "the run was cancelled ("+why+") before it finished: nothing is judged, and this report is never a baseline")
		return g
	}
	if why := in.New.Run.Untested; why != "" {
		g.Verdict, g.BaselineNote = report.GateError, "not compared: the server could not be tested"
		g.Notes = append(g.Notes, "the server could not be tested ("+why+"): nothing is judged, and this report is never a baseline")
		return g
	}
	if b := in.Baseline; b != nil && (b.Run.Cancelled != "" || (b.Gate != nil && (b.Gate.Verdict == report.GateCancelled || b.Gate.Verdict == report.GateError))) {
		// A cancelled run, or one with runs nobody could judge, compares
		// with nothing; floors only, like no baseline.
		name := "the baseline"
		if in.BaselineRef.Path != "" {
			name = "baseline " + in.BaselineRef.Path
		}
		what := "a cancelled run"
		switch {
		case b.Run.Untested != "":
			what = "a run that could not test the server"
		case b.Run.Cancelled == "" && b.Gate.Verdict == report.GateError:
			what = "a run whose verdict is error (runs it needed were not judged)"
		}
		in.Baseline, in.BaselineNote = nil, name+" is "+what+", never a baseline"
	}
	view, lex := gatedView(in.New)
	on := in.WaiversOn
	if on.IsZero() {
		on = in.Now
	}
	e := &evaluation{p: p, g: g, new: view, base: in.Baseline, today: on.UTC().Format(time.DateOnly), replayApart: replayNote != ""}
	if today := in.Now.UTC().Format(time.DateOnly); e.today != today && len(p.Waivers) > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("waiver dates are judged as of %s, the day this report was first gated (today is %s)", e.today, today))
	}
	if in.Baseline != nil {
		ref := in.BaselineRef
		g.Baseline = &ref
	} else {
		note := in.BaselineNote
		if note == "" {
			note = "no baseline given"
		}
		g.BaselineNote = fmt.Sprintf("%s: floors only, nothing is compared (MUST checks ⌈%s·N⌉, hard cases ⌈%s·N⌉, soft cases ⌈%s·N⌉ of N runs)", note, num(p.FloorMust), num(p.FloorHard), num(p.FloorSoft))
	}
	e.layer0()
	e.toolTokens()
	e.tools()
	e.lint()
	e.waivers()
	e.behavior()
	e.lexical(lex)
	e.resilience()
	e.cost()
	e.cassette()
	if replayNote != "" {
		g.Notes = append(g.Notes, replayNote)
	}
	e.decideExact()
	e.history(greenHistory(in.History, p.HistoryDepth, g))
	e.undecided()
	// Once every case item is in, the undecided ones too: a waived case
	// whose runs were not all decided is accepted all the same.
	e.caseWaivers()
	sortUnmatched(g.Unmatched)
	g.Verdict = verdict(g.Items)
	switch {
	case view.Conformance != nil || view.Behavior != nil || view.Resilience != nil:
	case lex != nil:
		g.Notes = append(g.Notes, "the report has no Layer 0 or 2 results, and Layer 1 ran only the lexical baseline (shown, not gated): nothing to gate")
	default:
		g.Notes = append(g.Notes, "the report has no Layer 0, 1 or 2 results: nothing to gate")
	}
	return g
}

// verdict is fail if any item failed, else inconclusive if any was, else
// pass. Known failures, warnings and info never move it.
func verdict(items []report.GateItem) string {
	v := report.GatePass
	for _, it := range items {
		switch it.Status {
		case report.ItemFail:
			return report.GateFail
		case report.ItemError:
			v = report.GateError
		case report.ItemInconclusive:
			if v == report.GatePass {
				v = report.GateInconclusive
			}
		}
	}
	return v
}

// evaluation carries one Evaluate call's state; it lives only for the call.
type evaluation struct {
	p         Policy
	g         *report.Gate
	new, base *report.Report
	// today is the day (YYYY-MM-DD, UTC) waivers' dates are judged on.
	today string
	// replayApart: the baseline's Layers 1 to 3 were set aside, one run
	// replayed and the other not (replayComparable's note says so).
	replayApart bool
	// exact are the Fisher tests of the family, decided together once
	// every candidate is known (Tarone needs all of them).
	exact []exactTest
}

// exactTest is one comparison in the family-wise exact-test family.
type exactTest struct {
	item int // index in g.Items, or -1 for a comparison that only counts toward K
	p    float64
	minP float64
	// onFail and onNoise are the status and reason if significant or not.
	failReason, noiseReason string
	noiseStatus             string
}

// decideExact settles every pending exact test with one Tarone–Bonferroni
// level for the whole family.
func (e *evaluation) decideExact() {
	if len(e.exact) == 0 {
		return
	}
	minP := make([]float64, len(e.exact))
	for i, t := range e.exact {
		minP[i] = t.minP
	}
	k := taroneK(minP, e.p.alpha())
	level := e.p.alpha() / float64(k)
	for _, t := range e.exact {
		if t.item < 0 {
			continue
		}
		it := &e.g.Items[t.item]
		it.PValue, it.FamilySize, it.Level = ptr(t.p), k, ptr(level)
		if t.p <= level {
			it.Status = report.ItemFail
			it.Stats = fmt.Sprintf("Fisher p%s ≤ %s = α/%d", fmtP(t.p), strings.TrimPrefix(fmtP(level), "="), k)
			it.Reason = t.failReason + " (" + it.Stats + ")"
		} else {
			it.Status = t.noiseStatus
			it.Stats = fmt.Sprintf("Fisher p%s > %s = α/%d", fmtP(t.p), strings.TrimPrefix(fmtP(level), "="), k)
			it.Reason = t.noiseReason + " (" + it.Stats + ")"
		}
	}
}

// beyond reports whether a drop exceeds max-drop by more than rounding:
// 0.90 − 0.88 is 0.020000000000000018 in floating point, and a drop of
// exactly max-drop is within it.
func beyond(drop, maxDrop float64) bool { return drop > maxDrop+1e-9 }

// fmtP is a p-value after "p": "=0.0040", or "<0.0001" (not "=<").
func fmtP(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return fmt.Sprintf("=%.4f", p)
}

// servedChanged says whether a model's served version differs from the
// baseline's (both known and unequal).
func (e *evaluation) servedChanged(model string) (from, to string, changed bool) {
	if e.base == nil {
		return "", "", false
	}
	var nm, bm *report.Model
	for i := range e.new.Models {
		if e.new.Models[i].ID == model {
			nm = &e.new.Models[i]
		}
	}
	for i := range e.base.Models {
		if e.base.Models[i].ID == model {
			bm = &e.base.Models[i]
		}
	}
	if nm == nil || bm == nil || nm.Served == "" || bm.Served == "" || nm.Served == bm.Served {
		return "", "", false
	}
	return bm.Served, nm.Served, true
}

func (e *evaluation) add(it report.GateItem) int {
	e.g.Items = append(e.g.Items, it)
	return len(e.g.Items) - 1
}

func (e *evaluation) unmatched(u report.Unmatched) { e.g.Unmatched = append(e.g.Unmatched, u) }

func ptr(v float64) *float64 {
	r := math.Round(v*1e6) / 1e6 // stable text in reports and goldens
	return &r
}

// sortUnmatched orders the list for stable output: by layer, side, kind,
// model, subject.
func sortUnmatched(u []report.Unmatched) {
	sort.SliceStable(u, func(i, j int) bool {
		a, b := u[i], u[j]
		if a.Layer != b.Layer {
			return a.Layer < b.Layer
		}
		if a.Side != b.Side {
			return a.Side > b.Side // "new" first
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Subject < b.Subject
	})
}

func cnt(c report.Count) *report.Count { return &c }

// SuiteScores are a report's suite scores (each score × model over all
// cases, with its interval) as the gate lists them with no baseline: for
// renderers of a report that was never gated.
func SuiteScores(rep *report.Report, p Policy) []report.GateItem {
	g := &report.Gate{Items: []report.GateItem{}}
	if rep.Behavior == nil {
		return g.Items
	}
	e := &evaluation{p: p, g: g, new: rep}
	e.suites(e.prepareL1())
	return g.Items
}

func intPtr(v int) *int { return &v }
