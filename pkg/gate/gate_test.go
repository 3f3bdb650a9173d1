package gate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

func evaluate(t *testing.T, now, base *report.Report, hist ...*report.Report) *report.Gate {
	t.Helper()
	in := gate.Input{New: now, Baseline: base, Now: reporttest.Start()}
	if base != nil {
		in.BaselineRef = report.ReportRef{Path: "baseline.json", Commit: base.Run.Commit}
	}
	for i, h := range hist {
		in.History = append(in.History, gate.Historic{Ref: report.ReportRef{Path: fmt.Sprintf("h%d.json", i), Commit: h.Run.Commit}, Report: h})
	}
	g := gate.Evaluate(in, gate.DefaultPolicy())
	// Every gated report must still be a valid report.
	now.Gate = g
	if _, err := report.Marshal(now); err != nil {
		t.Fatalf("gated report is invalid: %v", err)
	}
	now.Gate = nil
	return g
}

// find returns the items of a kind about a subject (and model, if given).
func find(g *report.Gate, kind, subject, model string) []report.GateItem {
	var out []report.GateItem
	for _, it := range g.Items {
		if it.Kind == kind && it.Subject == subject && (model == "" || it.Model == model) {
			out = append(out, it)
		}
	}
	return out
}

func one(t *testing.T, g *report.Gate, kind, subject, model string) report.GateItem {
	t.Helper()
	items := find(g, kind, subject, model)
	if len(items) != 1 {
		t.Fatalf("%d %s items for %s %s, want 1; items: %+v", len(items), kind, subject, model, g.Items)
	}
	return items[0]
}

func wantStatus(t *testing.T, it report.GateItem, status string, reason ...string) {
	t.Helper()
	if it.Status != status {
		t.Errorf("%s %s %s: status %s, want %s (%s)", it.Kind, it.Subject, it.Model, it.Status, status, it.Reason)
	}
	for _, r := range reason {
		if !strings.Contains(it.Reason, r) {
			t.Errorf("%s %s: reason %q does not mention %q", it.Kind, it.Subject, it.Reason, r)
		}
	}
}

func TestPolicy(t *testing.T) {
	if err := gate.DefaultPolicy().Validate(); err != nil {
		t.Fatal(err)
	}
	p := gate.DefaultPolicy()
	p.MaxDrop, p.FloorSoft, p.Confidence, p.HistoryDepth = 1.5, 0, 0.3, -1
	err := p.Validate()
	for _, want := range []string{"max-drop 1.5 is out of range: write a fraction in [0, 1)", "floor for soft cases 0", "confidence 0.3", "history depth -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want it to mention %q", err, want)
		}
	}
	for in, want := range map[string]float64{"0.02": 0.02, "2%": 0.02, " 5 % ": 0.05, "0": 0} {
		if got, err := gate.ParseMaxDrop(in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParseMaxDrop(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := gate.ParseMaxDrop("two"); err == nil || !strings.Contains(err.Error(), "2%") {
		t.Errorf("ParseMaxDrop(two): %v", err)
	}
}

// ParseMaxDrop is the one parser of the flag, the input and the config
// file: its edges are theirs.
func TestParseMaxDropEdges(t *testing.T) {
	for in, want := range map[string]float64{"0": 0, "0%": 0, "0.02": 0.02, "2%": 0.02, ".5": 0.5, "0.999": 0.999, "99.9%": 0.999, "1e-3": 0.001} {
		if got, err := gate.ParseMaxDrop(in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParseMaxDrop(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"1": "out of range", "1.0": "out of range", "100%": "out of range", "150%": "out of range",
		"-0.01": "out of range", "-1%": "out of range", "1e400": "not a number",
		"NaN": "not a number", "nan%": "not a number", "Inf": "not a number", "-Inf": "not a number",
		"": "not a number", "%": "not a number", "2%%": "not a number", "0,02": "not a number",
	} {
		got, err := gate.ParseMaxDrop(in)
		if err == nil || !errors.Is(err, gate.ErrPolicy) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "max-drop") {
			t.Errorf("ParseMaxDrop(%q) = %v, %v; want an error saying %q", in, got, err, want)
		}
	}
}

func TestLayer0(t *testing.T) {
	base := reporttest.Layer0(reporttest.New(),
		reporttest.Check("DISC-1", report.Must, 5, 5), reporttest.Check("TOOL-3", report.Must, 5, 5),
		reporttest.Check("CACHE-1", report.Must, 2, 5), reporttest.Check("GONE-1", report.Must, 5, 5))
	now := reporttest.Layer0(reporttest.New(),
		reporttest.Check("DISC-1", report.Must, 5, 5), reporttest.Check("TOOL-3", report.Must, 4, 5),
		reporttest.Check("CACHE-1", report.Must, 2, 5), reporttest.Check("NEW-1", report.Must, 3, 5),
		reporttest.Check("LOG-2", report.Should, 0, 1))
	g := evaluate(t, now, base)
	wantStatus(t, one(t, g, report.KindCheck, "TOOL-3", ""), report.ItemFail, "new failure: 4/5 now, 5/5 in the baseline", "deterministic")
	wantStatus(t, one(t, g, report.KindCheck, "CACHE-1", ""), report.ItemKnown, "known failure")
	wantStatus(t, one(t, g, report.KindCheck, "NEW-1", ""), report.ItemFail, "did not run this check")
	if len(find(g, report.KindCheck, "LOG-2", "")) != 0 || len(find(g, report.KindCheck, "DISC-1", "")) != 0 {
		t.Error("SHOULD checks and passing checks are not gate items")
	}
	if g.Verdict != report.GateFail {
		t.Errorf("verdict %s, want fail", g.Verdict)
	}
	if !hasUnmatched(g, "NEW-1", "new") || !hasUnmatched(g, "GONE-1", "baseline") {
		t.Errorf("unmatched %+v: want NEW-1 (new) and GONE-1 (baseline)", g.Unmatched)
	}

	// Only the known failure left: no red.
	same := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5), reporttest.Check("CACHE-1", report.Must, 2, 5))
	if g := evaluate(t, same, base); g.Verdict != report.GatePass {
		t.Errorf("known failure only: verdict %s, want pass: %+v", g.Verdict, g.Items)
	}

	// No baseline: floors only, said clearly.
	g = evaluate(t, now, nil)
	wantStatus(t, one(t, g, report.KindCheck, "TOOL-3", ""), report.ItemFail, "no baseline")
	if !strings.Contains(g.BaselineNote, "floors only") || g.Baseline != nil {
		t.Errorf("baseline note %q", g.BaselineNote)
	}
}

// A MUST check that skipped in some runs (the rule had nothing to judge
// there: the discover failed, which DISC-1 judges) held where it applied:
// no item, as Layer 0's own verdict. A failed run beside skipped ones is
// counted as what it is: one failed run, not the skips too.
func TestLayer0SkippedRunsAreNotFailedRuns(t *testing.T) {
	skipped := func(id string, pass, skip, fail int) report.CheckResult {
		r := reporttest.Check(id, report.Must, pass+skip, pass+skip+fail)
		r.Counts = map[report.CheckVerdict]int{report.CheckPassed: pass, report.CheckSkipped: skip}
		if fail > 0 {
			r.Counts[report.CheckFailed] = fail
		}
		r.Flaky = true
		return r
	}
	green := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5), reporttest.Check("DISC-2", report.Must, 5, 5), reporttest.Check("CACHE-3", report.Must, 5, 5))
	now := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5), skipped("DISC-2", 2, 3, 0), skipped("CACHE-3", 2, 2, 1))
	for _, base := range []*report.Report{nil, green} {
		g := evaluate(t, now, base)
		if items := find(g, report.KindCheck, "DISC-2", ""); len(items) != 0 {
			t.Errorf("baseline %v: a check that passed where it applied and skipped elsewhere is an item: %+v", base != nil, items)
		}
		it := one(t, g, report.KindCheck, "CACHE-3", "")
		if it.Status != report.ItemFail || it.New == nil || it.New.K != 4 || it.New.N != 5 {
			t.Errorf("baseline %v: CACHE-3 %s %+v (%s), want a failure counted 4/5", base != nil, it.Status, it.New, it.Reason)
		}
	}
}

// A MUST check short of its floor only by runs that errored (the run's
// deadline passed, the server's process was gone) is not the server's
// failure: it is not judged, and the verdict says so (exit 2), unless a
// run did fail.
func TestLayer0ErroredRunsAreNotJudged(t *testing.T) {
	green := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5),
		reporttest.Check("CACHE-1", report.Must, 2, 5), reporttest.Check("TOOL-3", report.Must, 5, 5))
	errored := reporttest.Layer0(reporttest.New(), reporttest.Errored("DISC-1", report.Must, 3, 0, 5),
		reporttest.Errored("CACHE-1", report.Must, 0, 0, 5), reporttest.Check("TOOL-3", report.Must, 5, 5))
	for _, base := range []*report.Report{nil, green} {
		g := evaluate(t, errored, base)
		wantStatus(t, one(t, g, report.KindCheck, "DISC-1", ""), report.ItemError, "not judged: 3/5 passed, and the other 2 run(s) errored", "context deadline exceeded")
		if g.Verdict != report.GateError {
			t.Errorf("baseline %v: verdict %s, want error", base != nil, g.Verdict)
		}
		cache := one(t, g, report.KindCheck, "CACHE-1", "")
		if base == nil {
			wantStatus(t, cache, report.ItemError, "0/5 passed")
		} else {
			// Below its floor in the baseline already: still known.
			wantStatus(t, cache, report.ItemKnown, "known failure")
		}
	}

	// One failed run is a finding, whatever else errored.
	mixed := reporttest.Layer0(reporttest.New(), reporttest.Errored("DISC-1", report.Must, 3, 1, 5), reporttest.Errored("TOOL-3", report.Must, 4, 0, 5))
	g := evaluate(t, mixed, green)
	wantStatus(t, one(t, g, report.KindCheck, "DISC-1", ""), report.ItemFail, "new failure: 3/5 now")
	wantStatus(t, one(t, g, report.KindCheck, "TOOL-3", ""), report.ItemError, "not judged")
	if g.Verdict != report.GateFail {
		t.Errorf("a failed run beside errored ones: verdict %s, want fail", g.Verdict)
	}
	if mixed.Conformance.Verdict != report.ConformanceFail || errored.Conformance.Verdict != report.ConformanceIncomplete {
		t.Errorf("Layer 0 verdicts %s and %s, want fail and incomplete", mixed.Conformance.Verdict, errored.Conformance.Verdict)
	}

	// An errored check outranks an inconclusive item, never a failure.
	for _, tc := range []struct {
		items []string
		want  string
	}{
		{[]string{report.ItemInconclusive, report.ItemError}, report.GateError},
		{[]string{report.ItemError, report.ItemInconclusive}, report.GateError},
		{[]string{report.ItemError, report.ItemFail}, report.GateFail},
		{[]string{report.ItemInconclusive, report.ItemWarn}, report.GateInconclusive},
	} {
		var items []report.GateItem
		for _, st := range tc.items {
			items = append(items, report.GateItem{Status: st})
		}
		if got := gate.VerdictOf(items); got != tc.want {
			t.Errorf("verdict of %v = %s, want %s", tc.items, got, tc.want)
		}
	}
}

func hasUnmatched(g *report.Gate, subject, side string) bool {
	for _, u := range g.Unmatched {
		if u.Subject == subject && u.Side == side {
			return true
		}
	}
	return false
}

func TestLegacy(t *testing.T) {
	legacy := func() *report.Report { return reporttest.Legacy(reporttest.New()) }
	modern := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5))
	for _, tc := range []struct {
		name      string
		now, base *report.Report
		status    string
		verdict   string
	}{
		{"legacy → legacy", legacy(), legacy(), report.ItemPass, report.GatePass},
		{"modern → legacy", legacy(), modern, report.ItemFail, report.GateFail},
		{"legacy, no baseline", legacy(), nil, report.ItemWarn, report.GatePass},
	} {
		g := evaluate(t, tc.now, tc.base)
		wantStatus(t, one(t, g, report.KindServer, "era", ""), tc.status)
		if g.Verdict != tc.verdict {
			t.Errorf("%s: verdict %s, want %s", tc.name, g.Verdict, tc.verdict)
		}
	}

	// mcp-eval check asks whether the server conforms, not whether it
	// regressed: with fail-on-legacy, legacy fails whatever the baseline.
	p := gate.DefaultPolicy()
	p.FailOnLegacy = true
	for _, base := range []*report.Report{nil, legacy(), modern} {
		g := gate.Evaluate(gate.Input{New: legacy(), Baseline: base, Now: reporttest.Start()}, p)
		wantStatus(t, one(t, g, report.KindServer, "era", ""), report.ItemFail, "migrate", "migration list")
		if g.Verdict != report.GateFail || !g.Policy.FailOnLegacy {
			t.Errorf("fail-on-legacy, baseline %v: verdict %s, policy %+v", base != nil, g.Verdict, g.Policy)
		}
	}
	g := gate.Evaluate(gate.Input{New: modern, Now: reporttest.Start()}, p)
	if g.Verdict != report.GatePass || len(find(g, report.KindServer, "era", "")) != 0 {
		t.Errorf("fail-on-legacy on a modern server: verdict %s, items %+v", g.Verdict, g.Items)
	}
}

func TestCaseFloors(t *testing.T) {
	base := reporttest.New()
	reporttest.Case(base, "hard-gone", report.Hard, "m1", 5, 5)
	reporttest.Case(base, "soft-dip", report.Soft, "m1", 5, 5)
	reporttest.Case(base, "soft-known", report.Soft, "m1", 3, 5)
	reporttest.Case(base, "hard-dip", report.Hard, "m1", 5, 5)
	reporttest.Case(base, "removed", report.Soft, "m1", 5, 5)
	now := reporttest.New()
	reporttest.Case(now, "hard-gone", report.Hard, "m1", 0, 5)
	reporttest.Case(now, "soft-dip", report.Soft, "m1", 3, 5)
	reporttest.Case(now, "soft-known", report.Soft, "m1", 2, 5)
	reporttest.Case(now, "hard-dip", report.Hard, "m1", 4, 5)
	reporttest.Case(now, "added", report.Soft, "m1", 3, 5)
	g := evaluate(t, now, base)
	gone := one(t, g, report.KindCase, "hard-gone", "m1")
	wantStatus(t, gone, report.ItemFail, "new failure: 0/5 now, 5/5 in the baseline", "Fisher p=0.0040")
	if gone.PValue == nil || math.Abs(*gone.PValue-1.0/252) > 1e-6 {
		t.Errorf("p-value %v, want 1/252", gone.PValue)
	}
	wantStatus(t, one(t, g, report.KindCase, "soft-dip", "m1"), report.ItemWarn, "within run-to-run noise")
	wantStatus(t, one(t, g, report.KindCase, "hard-dip", "m1"), report.ItemWarn, "4/5 is below its floor")
	wantStatus(t, one(t, g, report.KindCase, "soft-known", "m1"), report.ItemKnown, "known failure")
	wantStatus(t, one(t, g, report.KindCase, "added", "m1"), report.ItemFail, "not in the baseline, floors only")
	if !hasUnmatched(g, "added", "new") || !hasUnmatched(g, "removed", "baseline") {
		t.Errorf("unmatched: %+v", g.Unmatched)
	}
	if g.Verdict != report.GateFail {
		t.Errorf("verdict %s", g.Verdict)
	}

	// No baseline: a soft case at 3/5 is below ⌈0.8·5⌉ = 4.
	g = evaluate(t, now, nil)
	wantStatus(t, one(t, g, report.KindCase, "soft-dip", "m1"), report.ItemFail, "no baseline, floors only")
	if it := one(t, g, report.KindCase, "soft-dip", "m1"); it.Rule != "soft case: ⌈0.8·5⌉ = 4 of 5 runs" {
		t.Errorf("rule %q", it.Rule)
	}
}

// suitePair builds a baseline and a new report of cases × runs where case
// i passes base(i) and now(i) runs (all soft, one model, one score).
func suitePair(cases, runs int, base, now func(i int) int) (*report.Report, *report.Report) {
	b, n := reporttest.New(), reporttest.New()
	for i := range cases {
		id := fmt.Sprintf("c%03d", i)
		reporttest.Case(b, id, report.Soft, "m1", base(i), runs)
		reporttest.Case(n, id, report.Soft, "m1", now(i), runs)
	}
	return b, n
}

func constant(k int) func(int) int { return func(int) int { return k } }

// firstDrop: the first `count` cases pass `low` runs, the rest `high`.
func firstDrop(count, low, high int) func(int) int {
	return func(i int) int {
		if i < count {
			return low
		}
		return high
	}
}

// TestMaxDropBoundary puts suite drops just inside and just outside
// max-drop 0.02 at different sample sizes: inside always passes; outside
// fails only when the sample can show it, is inconclusive when it shows a
// real drop (bound above 0) but not one beyond max-drop, and passes when it
// cannot tell the drop from noise at all.
func TestMaxDropBoundary(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cases, runs int
		base, now   func(int) int
		drop        float64
		status      string
	}{
		{"20×5, 2 cases lose a run: drop 0.02, just inside", 20, 5, constant(5), firstDrop(2, 4, 5), 0.02, report.ItemPass},
		{"20×5, 3 cases lose a run: drop 0.03, just outside, but no evidence of any drop", 20, 5, constant(5), firstDrop(3, 4, 5), 0.03, report.ItemPass},
		{"200×10, 60 cases 9 → 8: drop 0.03, a real drop, not clearly beyond max-drop", 200, 10, constant(9), firstDrop(60, 8, 9), 0.03, report.ItemInconclusive},
		{"20×5, every case loses a run: drop 0.2", 20, 5, constant(5), constant(4), 0.2, report.ItemFail},
		{"200×100, 90 → 88: drop 0.02, just inside", 200, 100, constant(90), constant(88), 0.02, report.ItemPass},
		{"200×100, 90 → 87: drop 0.03, just outside and clear", 200, 100, constant(90), constant(87), 0.03, report.ItemFail},
		{"50×10, half the cases 9 → 8: drop 0.05, not clear at this size", 50, 10, constant(9), firstDrop(25, 8, 9), 0.05, report.ItemInconclusive},
		{"50×10, 9 → 7: drop 0.2", 50, 10, constant(9), constant(7), 0.2, report.ItemFail},
		{"20×5, better now", 20, 5, constant(4), constant(5), -0.2, report.ItemPass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, n := suitePair(tc.cases, tc.runs, tc.base, tc.now)
			g := evaluate(t, n, b)
			it := one(t, g, report.KindSuite, report.ToolSelection, "m1")
			wantStatus(t, it, tc.status)
			if it.Drop == nil || math.Abs(*it.Drop-tc.drop) > 1e-6 {
				t.Errorf("drop %v, want %v", it.Drop, tc.drop)
			}
			if it.Pairs != tc.cases {
				t.Errorf("%d pairs, want %d", it.Pairs, tc.cases)
			}
			if tc.status == report.ItemFail && (it.Bound == nil || *it.Bound <= 0.02) {
				t.Errorf("failed with bound %v, not beyond max-drop", it.Bound)
			}
			if tc.status == report.ItemInconclusive && (it.Bound == nil || *it.Bound > 0.02 || *it.Bound <= 0) {
				t.Errorf("inconclusive with bound %v, want in (0, max-drop]", it.Bound)
			}
			if tc.status == report.ItemPass && tc.drop > 0.02 && (it.Bound == nil || *it.Bound > 0) {
				t.Errorf("a drop beyond max-drop passed with bound %v, want ≤ 0", it.Bound)
			}
			wantVerdict := map[string]string{report.ItemPass: report.GatePass, report.ItemFail: report.GateFail, report.ItemInconclusive: report.GateInconclusive}[tc.status]
			if g.Verdict != wantVerdict && !(tc.status == report.ItemPass && g.Verdict == report.GatePass) {
				t.Errorf("verdict %s, want %s", g.Verdict, wantVerdict)
			}
		})
	}
}

func TestLowerIsBetterScore(t *testing.T) {
	b, n := reporttest.New(), reporttest.New()
	for i := range 20 {
		id := fmt.Sprintf("neg%02d", i)
		reporttest.Case(b, id, report.Soft, "m1", 5, 5, reporttest.Score(report.OverTrigger, 0, 5))
		reporttest.Case(n, id, report.Soft, "m1", 5, 5, reporttest.Score(report.OverTrigger, 2, 5))
	}
	g := evaluate(t, n, b)
	it := one(t, g, report.KindSuite, report.OverTrigger, "m1")
	wantStatus(t, it, report.ItemFail, "regression")
	if it.Direction != report.Lower || *it.Drop < 0.39 {
		t.Errorf("over-triggering rose 0 → 0.4: direction %s drop %v", it.Direction, *it.Drop)
	}
	// The other way round is an improvement.
	g = evaluate(t, b, n)
	wantStatus(t, one(t, g, report.KindSuite, report.OverTrigger, "m1"), report.ItemPass)
}

func TestNotComparable(t *testing.T) {
	mk := func(k int) *report.Report {
		r := reporttest.New()
		for i := range 10 {
			id := fmt.Sprintf("c%d", i)
			reporttest.Case(r, id, report.Soft, "m1", k, 5, reporttest.Score(report.ToolSelection, k, 5), reporttest.Score(report.TaskCompletion, k, 5))
			reporttest.Case(r, id, report.Soft, "m2", 5, 5, reporttest.Score(report.ToolSelection, 5, 5))
		}
		r.Behavior.JudgeModel, r.Behavior.RubricHash = "judge-1", reporttest.CaseHash("rubric-1")
		return r
	}
	base, now := mk(5), mk(4)
	now.Models[0].Served = "m1-2026-08-01"
	g := evaluate(t, now, base)
	wantStatus(t, one(t, g, report.KindModel, "m1", "m1"), report.ItemNotComparable, "served as")
	for _, score := range []string{report.ToolSelection, report.TaskCompletion} {
		it := one(t, g, report.KindSuite, score, "m1")
		wantStatus(t, it, report.ItemNotComparable)
		if it.Drop != nil || it.BaselineValue != nil {
			t.Errorf("%s: a not-comparable score has a delta", score)
		}
	}
	wantStatus(t, one(t, g, report.KindCase, "c0", "m1"), report.ItemNotComparable, "served model changed")
	wantStatus(t, one(t, g, report.KindSuite, report.ToolSelection, "m2"), report.ItemPass)

	// Another judge: judged scores are not comparable, the rest are.
	now = mk(5)
	now.Behavior.JudgeModel = "judge-2"
	g = evaluate(t, now, base)
	wantStatus(t, one(t, g, report.KindSuite, report.TaskCompletion, "m1"), report.ItemNotComparable, "judge")
	wantStatus(t, one(t, g, report.KindSuite, report.ToolSelection, "m1"), report.ItemPass)
}

func TestToolSurfaceChanged(t *testing.T) {
	b, n := suitePair(10, 5, constant(5), constant(3))
	n.ToolSurfaceHash = reporttest.CaseHash("other tools")
	g := evaluate(t, n, b)
	wantStatus(t, one(t, g, report.KindSuite, report.ToolSelection, "m1"), report.ItemInfo)
	// Not "a new or edited case": the tool surface is why nothing pairs,
	// and the tools whose tokens changed are named.
	wantStatus(t, one(t, g, report.KindCase, "c000", "m1"), report.ItemFail, "not compared, as the tool surface changed since the baseline")
	if !strings.Contains(strings.Join(g.Notes, "\n"), "tool surface changed") {
		t.Errorf("notes %q", g.Notes)
	}
	b.ToolTokens = &report.ToolTokens{Counts: []report.ToolTokenCount{{Encoding: "o200k_base", Models: []string{}, Total: 30, Tools: []report.ToolTokenItem{{Name: "get_note", Tokens: 20}, {Name: "list", Tokens: 10}}}}}
	n.ToolTokens = &report.ToolTokens{Counts: []report.ToolTokenCount{{Encoding: "o200k_base", Models: []string{}, Total: 27, Tools: []report.ToolTokenItem{{Name: "get_note", Tokens: 17}, {Name: "list", Tokens: 10}}}}}
	g = evaluate(t, n, b)
	it := one(t, g, report.KindCase, "c000", "m1")
	if it.NotComparable != "the tool surface changed since the baseline (changed: get_note)" {
		t.Errorf("not comparable %q", it.NotComparable)
	}
}

func TestLayer2(t *testing.T) {
	mk := func(success, n int) *report.Report {
		r := reporttest.New()
		r.Resilience = &report.Resilience{
			Faults: []report.FaultResult{{Model: "m1", Fault: "timeout", Scores: []report.Score{reporttest.Score(report.FaultHandled, 9, 10)}}},
			Attacks: []report.AttackResult{
				{Model: "m1", Attack: "result-injection", Scores: []report.Score{reporttest.Score(report.AttackSuccess, success, n)}},
				{Model: "m2", Attack: "result-injection", Scores: []report.Score{reporttest.Score(report.AttackSuccess, success/5, n/5)}},
			},
		}
		return r
	}
	g := evaluate(t, mk(10, 50), mk(0, 50))
	wantStatus(t, one(t, g, report.KindAttack, "result-injection", "m1"), report.ItemFail, "regression: 10/50 now, 0/50 in the baseline")
	wantStatus(t, one(t, g, report.KindAttack, "result-injection", "m2"), report.ItemInconclusive, "inside the noise")
	wantStatus(t, one(t, g, report.KindFault, "timeout", "m1"), report.ItemPass)
	// Without a baseline nothing regressed, but attacks that succeeded
	// are a warning; none succeeding is shown.
	g = evaluate(t, mk(10, 50), nil)
	wantStatus(t, one(t, g, report.KindAttack, "result-injection", "m1"), report.ItemWarn, "10 of 50 attacks succeeded; no baseline to compare")
	g = evaluate(t, mk(0, 50), nil)
	wantStatus(t, one(t, g, report.KindAttack, "result-injection", "m1"), report.ItemInfo)
	// A model new since the baseline: the same warning.
	withM3 := mk(0, 50)
	withM3.Resilience.Attacks = append(withM3.Resilience.Attacks, report.AttackResult{Model: "m3", Attack: "result-injection", Scores: []report.Score{reporttest.Score(report.AttackSuccess, 15, 15)}})
	withM3.Models = append(withM3.Models, report.Model{ID: "m3", Provider: "acme", Requested: "m3", Served: "m3-2026-11-01"})
	g = evaluate(t, withM3, mk(0, 50))
	m3 := one(t, g, report.KindAttack, "result-injection", "m3")
	wantStatus(t, m3, report.ItemWarn, "15 of 15 attacks succeeded; not in the baseline")
	// The rule named is the one that decided: nothing was compared, so
	// no "clear rise beyond max-drop" is in it.
	if strings.Contains(m3.Rule, "max-drop") || !strings.Contains(m3.Rule, "nothing to compare") {
		t.Errorf("rule of an attack that got through with no baseline rate: %q", m3.Rule)
	}
	// The pooled row moves with the mix of types: shown, never gated.
	pooled := func(k, n int) *report.Report {
		r := mk(0, 50)
		r.Resilience.Faults = append(r.Resilience.Faults, report.FaultResult{Model: "m1", Fault: report.Pooled, Scores: []report.Score{reporttest.Score(report.FaultHandled, k, n)}})
		return r
	}
	g = evaluate(t, pooled(6, 9), pooled(12, 15))
	wantStatus(t, one(t, g, report.KindFault, report.Pooled, "m1"), report.ItemInfo, "each type is compared apart")
	if it := one(t, g, report.KindAttack, "result-injection", "m1"); !strings.Contains(it.Rule, "a clear rise beyond max-drop") {
		t.Errorf("attack success rule %q: a rise is the regression", it.Rule)
	}
}

// Layer 2 runs left out of N: a model whose attack runs measured nothing
// is inconclusive, never a pass; a category unmeasured beside measured
// ones is info; a layer that measured nothing says so in the notes.
func TestLayer2NotMeasured(t *testing.T) {
	notDelivered := func(n int) []report.UncountedOutcome {
		return []report.UncountedOutcome{{Outcome: "not-delivered", Runs: n, Reason: "no tool gave a real result to plant the payload in"}}
	}
	r := reporttest.New()
	r.Resilience = &report.Resilience{
		Faults: []report.FaultResult{{Model: "m1", Fault: "timeout", Scores: []report.Score{reporttest.Score(report.FaultHandled, 9, 10)}}},
		Attacks: []report.AttackResult{{Model: "m1", Attack: "result-injection", Scores: []report.Score{
			reporttest.Score(report.AttackSuccess, 0, 6), reporttest.Score(report.Refusal, 6, 6)}}},
		Unmeasured: []report.ResilienceUnmeasured{
			{Kind: report.KindAttack, Model: "m1", Subject: "exfiltration", Runs: 6, Uncounted: 6, Why: notDelivered(6)},
			{Kind: report.KindAttack, Model: "m1", Subject: "all", Runs: 12, Uncounted: 6, Why: notDelivered(6)},
			{Kind: report.KindAttack, Model: "m2", Subject: "result-injection", Runs: 12, Uncounted: 12, Why: notDelivered(12)},
			{Kind: report.KindAttack, Model: "m2", Subject: "all", Runs: 12, Uncounted: 12, Why: notDelivered(12)},
		},
	}
	g := evaluate(t, r, nil)
	wantStatus(t, one(t, g, report.KindAttack, "all", "m2"), report.ItemInconclusive, "12 of 12 runs not measured: no tool gave a real result")
	wantStatus(t, one(t, g, report.KindAttack, "exfiltration", "m1"), report.ItemInfo, "6 of 6 runs not measured")
	if g.Verdict != report.GateInconclusive {
		t.Errorf("verdict %s: a model that measured nothing must not pass", g.Verdict)
	}
	if strings.Contains(strings.Join(g.Notes, "\n"), "Layer 2 measured nothing") {
		t.Errorf("m1 measured something, yet the notes say nothing was: %q", g.Notes)
	}
	r.Resilience.Faults, r.Resilience.Attacks = nil, nil
	r.Resilience.Unmeasured = r.Resilience.Unmeasured[2:]
	g = evaluate(t, r, nil)
	if !strings.Contains(strings.Join(g.Notes, "\n"), "Layer 2 measured nothing: 12 of 12 runs not measured") || g.Verdict != report.GateInconclusive {
		t.Errorf("verdict %s, notes %q", g.Verdict, g.Notes)
	}
}

// Layer 2 runs the budget stopped are undecided, as Layer 1's are: their
// category is inconclusive however many others were measured.
func TestLayer2BudgetStopsAreUndecided(t *testing.T) {
	stopped := []report.UncountedOutcome{{Outcome: report.OutcomeBudget, Runs: 2, Reason: "the budget stopped the run"}}
	r := reporttest.New()
	r.Resilience = &report.Resilience{
		Faults: []report.FaultResult{{Model: "m1", Fault: "timeout", Scores: []report.Score{reporttest.Score(report.FaultHandled, 4, 4)}}},
		Unmeasured: []report.ResilienceUnmeasured{
			{Kind: report.KindFault, Model: "m1", Subject: "timeout", Runs: 6, Uncounted: 2, Why: stopped},
			{Kind: report.KindFault, Model: "m1", Subject: "all", Runs: 6, Uncounted: 2, Why: stopped},
		},
	}
	g := evaluate(t, r, nil)
	found := false
	for _, it := range g.Items {
		if it.Layer == 2 && it.Subject == "timeout" && it.Status == report.ItemInconclusive {
			found = strings.Contains(it.Reason, "2 of 6 runs not decided: the budget stopped them")
		}
	}
	if !found {
		t.Errorf("no inconclusive item for the stopped timeout runs: %+v", g.Items)
	}
	if g.Verdict != report.GateInconclusive {
		t.Errorf("verdict %s: runs the budget stopped cannot pass", g.Verdict)
	}
}

func TestHistoryDrift(t *testing.T) {
	day := func(d int, k int) *report.Report {
		r := reporttest.Case(reporttest.New(), "steady", report.Soft, "m1", k, 5)
		reporttest.Case(r, "other", report.Soft, "m1", 5, 5)
		return reporttest.Green(reporttest.At(r, reporttest.Start().Add(time.Duration(d)*24*time.Hour)))
	}
	now := day(10, 1)
	now.Gate = nil
	g := evaluate(t, now, day(9, 5), day(9, 5), day(8, 5), day(7, 5), day(1, 2))
	wantStatus(t, one(t, g, report.KindDrift, "steady", "m1"), report.ItemWarn, "likely model drift", "last 3 green reports")
	if len(g.History) != 4 {
		t.Errorf("history %d reports, want 4", len(g.History))
	}
	// A case waiver accepts the drift warning of its case too.
	in := gate.Input{New: now, Baseline: day(9, 5), BaselineRef: report.ReportRef{Path: "baseline.json"}, Now: reporttest.Start()}
	for i, h := range []*report.Report{day(9, 5), day(8, 5), day(7, 5), day(1, 2)} {
		in.History = append(in.History, gate.Historic{Ref: report.ReportRef{Path: fmt.Sprintf("h%d.json", i), Commit: h.Run.Commit}, Report: h})
	}
	p := gate.DefaultPolicy()
	p.Waivers = []report.GateWaiver{{Case: "steady", Model: "m1", Reason: "m1 drifts on it, #5", Until: "2099-01-01"}}
	wantStatus(t, one(t, gate.Evaluate(in, p), report.KindDrift, "steady", "m1"), report.ItemWaived, "m1 drifts on it")

	// Two green reports are no streak; a red one is not history.
	red := day(8, 5)
	red.Gate.Verdict = report.GateFail
	g = evaluate(t, now, day(9, 5), day(9, 5), red, day(7, 4))
	if len(find(g, report.KindDrift, "steady", "m1")) != 0 {
		t.Error("drift called without three N/N reports in a row")
	}
	if !strings.Contains(strings.Join(g.Notes, "\n"), "1 report(s) skipped") {
		t.Errorf("notes %q", g.Notes)
	}

	// Another tool surface: not model drift.
	h := []*report.Report{day(9, 5), day(8, 5), day(7, 5)}
	for _, r := range h {
		r.ToolSurfaceHash = reporttest.CaseHash("old tools")
	}
	g = evaluate(t, now, day(9, 5), h...)
	if len(find(g, report.KindDrift, "steady", "m1")) != 0 {
		t.Error("drift called although the tool surface changed")
	}
}

func TestSlowSlide(t *testing.T) {
	mk := func(d, k int) *report.Report {
		r := reporttest.New()
		for i := range 40 {
			reporttest.Case(r, fmt.Sprintf("c%02d", i), report.Soft, "m1", k, 20)
		}
		return reporttest.Green(reporttest.At(r, reporttest.Start().Add(time.Duration(d)*24*time.Hour)))
	}
	now := mk(10, 19)
	now.Gate = nil
	g := evaluate(t, now, mk(9, 19), mk(9, 19), mk(6, 20), mk(3, 20))
	wantStatus(t, one(t, g, report.KindSuite, report.ToolSelection, "m1"), report.ItemPass)
	wantStatus(t, one(t, g, report.KindSlide, report.ToolSelection, "m1"), report.ItemWarn, "slow slide", "5.0 pts worse")
	if g.Verdict != report.GatePass {
		t.Errorf("a slide is a warning, verdict %s", g.Verdict)
	}
}

func TestDeterministic(t *testing.T) {
	b, n := suitePair(30, 5, constant(5), firstDrop(10, 2, 5))
	reporttest.Layer0(n, reporttest.Check("TOOL-3", report.Must, 4, 5))
	reporttest.Layer0(b, reporttest.Check("TOOL-3", report.Must, 5, 5))
	g1, _ := json.Marshal(evaluate(t, n, b))
	g2, _ := json.Marshal(evaluate(t, n, b))
	if string(g1) != string(g2) {
		t.Error("two evaluations of the same reports differ")
	}
}

// The numbers a reason names are on the item too, so a renderer words a
// sentence without parsing the reason: the family size and level of the
// exact tests, the statistics the reason ends with, the max-drop, the
// floor in runs and why an item was not compared.
func TestItemsCarryTheirNumbers(t *testing.T) {
	base := reporttest.New()
	now := reporttest.New()
	for i, k := range []int{0, 3, 4} {
		id := fmt.Sprintf("c%d", i)
		reporttest.Case(base, id, report.Soft, "m1", 5, 5, reporttest.Score(report.ToolSelection, 5, 5))
		reporttest.Case(now, id, report.Soft, "m1", k, 5, reporttest.Score(report.ToolSelection, k, 5))
	}
	g := evaluate(t, now, base)
	for _, id := range []string{"c0", "c1"} {
		it := one(t, g, report.KindCase, id, "m1")
		if it.FamilySize < 1 || it.Level == nil || it.Stats == "" {
			t.Fatalf("%s: family %d, level %v, stats %q", id, it.FamilySize, it.Level, it.Stats)
		}
		if !strings.HasSuffix(it.Reason, " ("+it.Stats+")") || !strings.Contains(it.Stats, fmt.Sprintf("= α/%d", it.FamilySize)) {
			t.Errorf("%s: reason %q, stats %q, family %d", id, it.Reason, it.Stats, it.FamilySize)
		}
		if want := 0.05 / float64(it.FamilySize); math.Abs(*it.Level-want) > 1e-6 {
			t.Errorf("%s: level %v, want α/K = %v", id, *it.Level, want)
		}
		if it.FloorRuns == nil || *it.FloorRuns != 4 {
			t.Errorf("%s: floor runs %v, want ⌈0.8·5⌉ = 4", id, it.FloorRuns)
		}
	}
	s := one(t, g, report.KindSuite, report.ToolSelection, "m1")
	if s.MaxDrop == nil || *s.MaxDrop != 0.02 || s.FamilySize != 1 {
		t.Errorf("suite: max-drop %v, family %d", s.MaxDrop, s.FamilySize)
	}

	now.Models[0].Served = "m1-2026-08-01"
	g = evaluate(t, now, base)
	if it := one(t, g, report.KindCase, "c0", "m1"); !strings.HasPrefix(it.NotComparable, "served model changed (") || !strings.Contains(it.Reason, it.NotComparable) {
		t.Errorf("not comparable %q, reason %q", it.NotComparable, it.Reason)
	}
	if it := one(t, g, report.KindSuite, report.ToolSelection, "m1"); it.NotComparable == "" || it.Drop != nil {
		t.Errorf("suite: not comparable %q, drop %v", it.NotComparable, it.Drop)
	}
}

// A case × model short of its floor only by runs the provider or the
// harness could not complete is not judged: a provider that could not be
// reached is not a model that got every case wrong.
func TestCaseErroredRunsAreNotJudged(t *testing.T) {
	errored := func(r *report.Report, id string, k, failed, n int) {
		reporttest.Case(r, id, report.Hard, "m1", k, n)
		res := &r.Behavior.Results[len(r.Behavior.Results)-1]
		res.Errors = n - k - failed
		for i := range n {
			run := report.CaseRun{Run: i + 1, Outcome: report.RunPass}
			switch {
			case i >= k+failed:
				run.Outcome, run.Reasons = report.RunError, []string{"error: model call failed: connection refused"}
			case i >= k:
				run.Outcome, run.Reasons = report.RunFail, []string{"called no tool"}
			}
			res.Runs = append(res.Runs, run)
		}
	}
	now := reporttest.New()
	errored(now, "down", 0, 0, 5)
	errored(now, "half", 3, 0, 5)
	errored(now, "real", 3, 1, 5)
	g := evaluate(t, now, nil)
	wantStatus(t, one(t, g, report.KindCase, "down", "m1"), report.ItemError, "not judged: 0/5 passed, and the other 5 run(s) errored", "connection refused")
	wantStatus(t, one(t, g, report.KindCase, "half", "m1"), report.ItemError, "not judged: 3/5")
	wantStatus(t, one(t, g, report.KindCase, "real", "m1"), report.ItemFail, "below its floor")
	if g.Verdict != report.GateFail {
		t.Errorf("verdict %s with a failed run, want fail", g.Verdict)
	}
	only := reporttest.New()
	errored(only, "down", 0, 0, 5)
	if g := evaluate(t, only, nil); g.Verdict != report.GateError {
		t.Errorf("verdict %s with errored runs only, want error", g.Verdict)
	}
}

// A baseline that did not judge a check or a case (its runs errored) makes
// no failure now a known one; a baseline whose verdict is error is no
// baseline at all. A waiver accepts a check not judged as it accepts a
// failing one.
func TestABaselineThatDidNotJudgeHidesNoFailure(t *testing.T) {
	base := reporttest.Layer0(reporttest.New(), reporttest.Errored("SUB-4", report.Must, 0, 0, 2), reporttest.Check("DISC-1", report.Must, 2, 2))
	reporttest.Case(base, "down", report.Hard, "m1", 0, 5)
	base.Behavior.Results[0].Errors = 5
	now := reporttest.Layer0(reporttest.New(), reporttest.Check("SUB-4", report.Must, 0, 2), reporttest.Check("DISC-1", report.Must, 2, 2))
	reporttest.Case(now, "down", report.Hard, "m1", 0, 5)
	g := evaluate(t, now, base)
	wantStatus(t, one(t, g, report.KindCheck, "SUB-4", ""), report.ItemFail, "the baseline did not judge this check")
	wantStatus(t, one(t, g, report.KindCase, "down", "m1"), report.ItemFail)
	if g.Verdict != report.GateFail {
		t.Errorf("verdict %s, want fail", g.Verdict)
	}
	base.Gate = &report.Gate{Verdict: report.GateError}
	g = evaluate(t, now, base)
	if g.Baseline != nil || !strings.Contains(g.BaselineNote, "never a baseline") {
		t.Errorf("an error run as baseline: %+v, note %q", g.Baseline, g.BaselineNote)
	}

	errored := reporttest.Layer0(reporttest.New(), reporttest.Errored("TOOL-3", report.Must, 2, 0, 5))
	p := gate.DefaultPolicy()
	p.Waivers = []report.GateWaiver{{Check: "TOOL-3", Reason: "hangs on the CI runner", Until: "2099-01-01"}}
	g = gate.Evaluate(gate.Input{New: errored, Now: reporttest.Start()}, p)
	if it := one(t, g, report.KindCheck, "TOOL-3", ""); it.Status != report.ItemWaived || g.Verdict != report.GatePass || g.Waivers[0].State != report.WaiverActive {
		t.Errorf("waived check not judged: %s, verdict %s, waiver %s", it.Status, g.Verdict, g.Waivers[0].State)
	}
}

// A shard's gate is of its part: the baseline's cases the other shards
// ran are not "removed or edited".
func TestShardGateLeavesTheOtherShardsCasesAlone(t *testing.T) {
	base := reporttest.Case(reporttest.Case(reporttest.New(), "a", report.Hard, "m1", 5, 5), "b", report.Hard, "m1", 5, 5)
	base = reporttest.Case(base, "gone", report.Hard, "m1", 5, 5)
	base = reporttest.Case(base, "a", report.Hard, "m2", 5, 5) // m2 is the other shard's
	now := reporttest.Case(reporttest.New(), "a", report.Hard, "m1", 5, 5)
	now.Shard = &report.Shard{Index: 1, Count: 2, Units: []report.ShardUnit{{Case: "a", Model: "m1"}, {Case: "gone", Model: "m1"}}, Total: 3, Balance: report.BalanceCount}
	g := evaluate(t, now, base)
	if hasUnmatched(g, "b", "baseline") || hasUnmatched(g, "m2", "baseline") {
		t.Errorf("unmatched %+v: b and m2 are the other shard's", g.Unmatched)
	}
	if !hasUnmatched(g, "gone", "baseline") {
		t.Errorf("unmatched %+v: want gone, this shard's unit the run did not make", g.Unmatched)
	}
}

// A Layer 2 row of the baseline that was run now but measured nothing
// says so, not "not run now".
func TestLayer2RowRunButNotMeasured(t *testing.T) {
	mk := func(k, n int) *report.Report {
		r := reporttest.New()
		r.Resilience = &report.Resilience{Faults: []report.FaultResult{{Model: "m1", Fault: "timeout", Scores: []report.Score{reporttest.Score(report.FaultHandled, 9, 10)}}}, Attacks: []report.AttackResult{}}
		if n > 0 {
			r.Resilience.Faults = append(r.Resilience.Faults, report.FaultResult{Model: "m1", Fault: "http_500", Scores: []report.Score{reporttest.Score(report.FaultHandled, k, n)}})
		}
		return r
	}
	now := mk(0, 0)
	now.Resilience.Unmeasured = []report.ResilienceUnmeasured{{Kind: report.KindFault, Model: "m1", Subject: "http_500", Runs: 3, Uncounted: 3,
		Why: []report.UncountedOutcome{{Outcome: "not-fired", Runs: 3, Reason: "the fault never fired"}}}}
	g := evaluate(t, now, mk(3, 3))
	for _, u := range g.Unmatched {
		if u.Layer == 2 && strings.HasPrefix(u.Subject, "http_500") {
			if !strings.Contains(u.Reason, "run now, not measured") || !strings.Contains(u.Reason, "the fault never fired") {
				t.Errorf("http_500: %q", u.Reason)
			}
			return
		}
	}
	t.Errorf("unmatched %+v: want http_500, in the baseline only", g.Unmatched)
}
