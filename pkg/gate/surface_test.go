package gate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

// judge gates now against base under p and checks the gated report is
// valid and that re-gating under the recorded policy gives the same.
func judge(t *testing.T, now, base *report.Report, p gate.Policy) *report.Gate {
	t.Helper()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	in := gate.Input{New: now, Baseline: base, Now: reporttest.Start()}
	g := gate.Evaluate(in, p)
	now.Gate = g
	data, err := report.Marshal(now)
	if err != nil {
		t.Fatalf("gated report is invalid: %v", err)
	}
	back, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	again := gate.Evaluate(gate.Input{New: back, Baseline: base, Now: reporttest.Start()}, gate.PolicyFromReport(back.Gate.Policy))
	if again.Verdict != g.Verdict || len(again.Items) != len(g.Items) || len(again.Waivers) != len(g.Waivers) {
		t.Fatalf("re-gated under the recorded policy: %s with %d items, first %s with %d", again.Verdict, len(again.Items), g.Verdict, len(g.Items))
	}
	now.Gate = nil
	return g
}

func withTokens(r *report.Report, o200k int) *report.Report {
	r.ToolTokens = &report.ToolTokens{Serialization: "tools array", Counts: []report.ToolTokenCount{{Encoding: "o200k_base", Models: []string{}, Total: o200k,
		Tools: []report.ToolTokenItem{{Name: "big", Tokens: o200k - 10}, {Name: "small", Tokens: 10}}}}}
	return r
}

func TestToolTokenGates(t *testing.T) {
	base := withTokens(reporttest.Layer0(reporttest.New(), reporttest.Check("TOOL-1", report.Must, 1, 1)), 1000)
	now := func(n int) *report.Report {
		return withTokens(reporttest.Layer0(reporttest.New(), reporttest.Check("TOOL-1", report.Must, 1, 1)), n)
	}
	// Not gated: an info item with the count and its delta.
	g := judge(t, now(1100), base, gate.DefaultPolicy())
	it := one(t, g, report.KindToolTokens, "o200k_base", "")
	wantStatus(t, it, report.ItemInfo, "1100 tokens, +100 (+10.0%) against the baseline's 1000")
	if *it.Value != 1100 || *it.BaselineValue != 1000 || g.Verdict != report.GatePass {
		t.Errorf("item %+v, verdict %s", it, g.Verdict)
	}

	p := gate.DefaultPolicy()
	max := 1050
	inc := 0.05
	p.MaxToolTokens = &max
	g = judge(t, now(1100), base, p)
	wantStatus(t, one(t, g, report.KindToolTokens, "o200k_base", ""), report.ItemFail, "1100 tokens, over max-tool-tokens 1050")
	if g.Verdict != report.GateFail {
		t.Errorf("verdict %s, want fail", g.Verdict)
	}
	p.MaxToolTokens, p.MaxToolTokensIncrease = nil, &inc
	g = judge(t, now(1100), base, p)
	wantStatus(t, one(t, g, report.KindToolTokens, "o200k_base", ""), report.ItemFail, "+100 (+10.0%) over the baseline's 1000 (max-tool-tokens-increase 5%)")
	g = judge(t, now(1040), base, p)
	wantStatus(t, one(t, g, report.KindToolTokens, "o200k_base", ""), report.ItemPass, "+40 (+4.0%)")
	// No baseline: the increase is not compared, never failed.
	g = judge(t, now(5000), nil, p)
	wantStatus(t, one(t, g, report.KindToolTokens, "o200k_base", ""), report.ItemPass, "no baseline count")
	if !strings.Contains(p.Text(), "max-tool-tokens-increase 0.05") {
		t.Errorf("policy text %q", p.Text())
	}
}

func lintWarned(id string) report.CheckResult {
	r := reporttest.Check(id, report.Should, 1, 1)
	r.Verdict, r.Counts = report.CheckWarned, map[report.CheckVerdict]int{report.CheckWarned: 1}
	r.Outcome = report.Outcome{Verdict: report.CheckWarned, Message: `tool "get" has no description`, Details: []string{"another"}}
	return r
}

func TestLintModes(t *testing.T) {
	rep := func() *report.Report {
		return reporttest.Layer0(reporttest.New(), reporttest.Check("TOOL-1", report.Must, 1, 1), lintWarned("LINT-1"), reporttest.Check("LINT-2", report.Should, 1, 1))
	}
	p := gate.DefaultPolicy()
	g := judge(t, rep(), nil, p)
	wantStatus(t, one(t, g, report.KindLint, "LINT-1", ""), report.ItemWarn, `tool "get" has no description (and 1 more finding, listed under the check)`)
	if len(find(g, report.KindLint, "LINT-2", "")) != 0 || g.Verdict != report.GatePass {
		t.Errorf("a passing lint check got an item, or a warning moved the verdict: %s %+v", g.Verdict, g.Items)
	}
	// Against a baseline: new, as before, or changed.
	clean := reporttest.Layer0(reporttest.New(), reporttest.Check("TOOL-1", report.Must, 1, 1), reporttest.Check("LINT-1", report.Should, 1, 1))
	wantStatus(t, one(t, judge(t, rep(), clean, p), report.KindLint, "LINT-1", ""), report.ItemWarn, "new since the baseline: ")
	wantStatus(t, one(t, judge(t, rep(), rep(), p), report.KindLint, "LINT-1", ""), report.ItemWarn, "as in the baseline: ")
	changed := rep()
	changed.Conformance.Checks[1].Outcome.Message = "tool \"put\" has no description"
	wantStatus(t, one(t, judge(t, rep(), changed, p), report.KindLint, "LINT-1", ""), report.ItemWarn, "changed since the baseline: ")
	p.Lint = gate.LintFail
	g = judge(t, rep(), nil, p)
	wantStatus(t, one(t, g, report.KindLint, "LINT-1", ""), report.ItemFail)
	if g.Verdict != report.GateFail || g.Policy.Lint != "fail" {
		t.Errorf("lint fail: verdict %s, recorded %q", g.Verdict, g.Policy.Lint)
	}
	p.Lint = gate.LintOff
	if g = judge(t, rep(), nil, p); len(find(g, report.KindLint, "LINT-1", "")) != 0 {
		t.Errorf("lint off still judged: %+v", g.Items)
	}
	p.Lint = "loud"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), `lint "loud" is not a mode: want off, warn or fail`) {
		t.Errorf("Validate: %v", err)
	}
}

func TestWaivers(t *testing.T) {
	today := reporttest.Start().Format(time.DateOnly)
	yesterday := reporttest.Start().AddDate(0, 0, -1).Format(time.DateOnly)
	rep := func() *report.Report {
		r := reporttest.Layer0(reporttest.New(), reporttest.Check("TOOL-1", report.Must, 0, 1), reporttest.Check("TOOL-2", report.Must, 1, 1),
			reporttest.Check("HDR-1", report.Must, 0, 1), lintWarned("LINT-1"))
		return r
	}
	transport := rep().Conformance.Transport
	other := "stdio"
	if transport == "stdio" {
		other = "http"
	}
	p := gate.DefaultPolicy()
	p.Lint = gate.LintFail
	p.Waivers = []report.GateWaiver{
		{Check: "TOOL-1", Reason: "SDK bug upstream#12", Until: today},             // active through today
		{Check: "HDR-1", Reason: "proxy strips it", Until: yesterday},              // expired
		{Check: "TOOL-2", Reason: "was broken", Until: today},                      // stale: passes
		{Check: "LINT-1", Transport: transport, Reason: "generated", Until: today}, // waives a lint failure
		{Check: "TOOL-1", Transport: other, Reason: "other transport", Until: today},
	}
	g := judge(t, rep(), nil, p)
	wantStatus(t, one(t, g, report.KindCheck, "TOOL-1", ""), report.ItemWaived, "waived until "+today+": SDK bug upstream#12")
	wantStatus(t, one(t, g, report.KindCheck, "HDR-1", ""), report.ItemFail, "waiver expired on "+yesterday+": proxy strips it")
	wantStatus(t, one(t, g, report.KindWaiver, "TOOL-2", ""), report.ItemWarn, "TOOL-2 passes now: remove its waiver")
	wantStatus(t, one(t, g, report.KindLint, "LINT-1", ""), report.ItemWaived, "generated")
	var states []string
	for _, w := range g.Waivers {
		states = append(states, w.Check+":"+w.State)
	}
	if got := strings.Join(states, " "); got != "TOOL-1:active HDR-1:expired TOOL-2:stale LINT-1:active TOOL-1:unused" {
		t.Errorf("waiver states: %s", got)
	}
	if g.Verdict != report.GateFail {
		t.Errorf("verdict %s: the expired waiver's failure must count", g.Verdict)
	}
	// With HDR-1's waiver in date too, nothing fails.
	p.Waivers[1].Until = today
	if g = judge(t, rep(), nil, p); g.Verdict != report.GatePass {
		t.Errorf("verdict %s with every failure waived: %+v", g.Verdict, g.Items)
	}
	// Against a baseline that failed the same check (a known failure),
	// the waiver still says why it is accepted: waived, and active.
	g = judge(t, rep(), rep(), p)
	wantStatus(t, one(t, g, report.KindCheck, "TOOL-1", ""), report.ItemWaived, "waived until "+today+": SDK bug upstream#12")
	if g.Waivers[0].State != report.WaiverActive {
		t.Errorf("the waiver of a known failure is %s, want active", g.Waivers[0].State)
	}
	for _, bad := range []struct {
		w    report.GateWaiver
		want string
	}{
		{report.GateWaiver{Check: "tool-1", Reason: "r", Until: today}, `check "tool-1" is not a check id`},
		{report.GateWaiver{Check: "TOOL-1", Reason: " ", Until: today}, "TOOL-1 has no reason"},
		{report.GateWaiver{Check: "TOOL-1", Reason: "r", Until: "2026-02-30"}, `until "2026-02-30" of TOOL-1 is not a date`},
		{report.GateWaiver{Check: "TOOL-1", Transport: "sse", Reason: "r", Until: today}, `transport "sse" is not http or stdio`},
	} {
		if err := gate.CheckWaiver(bad.w); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("CheckWaiver(%+v) = %v, want %q", bad.w, err, bad.want)
		}
	}
}

// A case below its floor can be waived, for one model or every one: how a
// team accepts a model's known weakness before any run is green (no run
// with that model passed, so the baseline search never found one). It
// applies once the cases are decided, and is stale once the case passes.
func TestCaseWaivers(t *testing.T) {
	today := reporttest.Start().Format(time.DateOnly)
	rep := func() *report.Report {
		r := reporttest.Case(reporttest.New(), "refund", report.Hard, "m1", 5, 5)
		r = reporttest.Case(r, "refund", report.Hard, "m2", 0, 5)
		r = reporttest.Case(r, "search", report.Soft, "m2", 2, 5)
		return reporttest.Case(r, "lookup", report.Hard, "m1", 5, 5)
	}
	p := gate.DefaultPolicy()
	p.Waivers = []report.GateWaiver{
		{Case: "refund", Model: "m2", Reason: "m2 cannot do refunds", Until: today},
		{Case: "search", Reason: "ranking work in progress", Until: today}, // every model
		{Case: "lookup", Model: "m1", Reason: "was flaky", Until: today},   // passes: stale
	}
	g := judge(t, rep(), nil, p)
	wantStatus(t, one(t, g, report.KindCase, "refund", "m2"), report.ItemWaived, "waived until "+today+": m2 cannot do refunds")
	wantStatus(t, one(t, g, report.KindCase, "refund", "m1"), report.ItemPass)
	wantStatus(t, one(t, g, report.KindCase, "search", "m2"), report.ItemWaived, "ranking work in progress")
	wantStatus(t, one(t, g, report.KindWaiver, "lookup", "m1"), report.ItemWarn, "case lookup × m1 passes now: remove its waiver")
	if g.Verdict != report.GatePass {
		t.Errorf("verdict %s with every case failure waived: %+v", g.Verdict, g.Items)
	}
	var states []string
	for _, w := range g.Waivers {
		states = append(states, gate.WaiverName(w.GateWaiver)+":"+w.State)
	}
	// A waiver that names no case × model of the run says so, with what
	// it likely meant: an unused waiver is shown nowhere.
	typo := p
	typo.Waivers = []report.GateWaiver{{Case: "refnd", Model: "m2", Reason: "r", Until: today}, {Case: "refund", Model: "m3", Reason: "r", Until: today}}
	tg := judge(t, rep(), nil, typo)
	wantStatus(t, one(t, tg, report.KindWaiver, "refnd", "m2"), report.ItemWarn, "did you mean case refund?")
	wantStatus(t, one(t, tg, report.KindWaiver, "refund", "m3"), report.ItemWarn, "did you mean model m1?")
	if got := strings.Join(states, " "); got != "case refund × m2:active case search (every model):active case lookup × m1:stale" {
		t.Errorf("waiver states: %s", got)
	}
	// A waived case whose runs were not all decided is accepted too.
	undecided := rep()
	undecided.Behavior.Inconclusive = []report.Inconclusive{{Case: "refund", Model: "m2", Runs: 2, Reason: "budget reached"}}
	if g = judge(t, undecided, nil, p); g.Verdict != report.GatePass {
		t.Errorf("verdict %s with the waived case's runs undecided: %+v", g.Verdict, g.Items)
	}
	// Past its date the failure counts again: with no baseline, and
	// against the green run the waiver made (there it is "known").
	green := rep()
	green.Gate = judge(t, green, nil, p)
	p.Waivers[0].Until = reporttest.Start().AddDate(0, 0, -1).Format(time.DateOnly)
	if g = judge(t, rep(), nil, p); g.Verdict != report.GateFail {
		t.Errorf("verdict %s with refund × m2's waiver expired", g.Verdict)
	}
	if g = judge(t, rep(), green, p); g.Verdict != report.GateFail {
		t.Errorf("verdict %s with refund × m2's waiver expired, against the green run it made", g.Verdict)
	}
	for _, bad := range []struct {
		w    report.GateWaiver
		want string
	}{
		{report.GateWaiver{Check: "TOOL-1", Case: "refund", Reason: "r", Until: today}, "a check or a case, not both"},
		{report.GateWaiver{Case: "refund", Transport: "http", Reason: "r", Until: today}, "transport applies to a check's waiver"},
		{report.GateWaiver{Model: "m2", Reason: "r", Until: today}, `model "m2" without a case`},
		{report.GateWaiver{Case: "refund", Reason: "", Until: today}, "case refund (every model) has no reason"},
	} {
		if err := gate.CheckWaiver(bad.w); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("CheckWaiver(%+v) = %v, want %q", bad.w, err, bad.want)
		}
	}
}

// A waived case is left out of its model's suite scores: three waived
// cases that fell from 5/5 to 0/5 fail the suite on their own, which
// would fail the build the waivers were written to let through.
func TestCaseWaiversLeaveSuiteScores(t *testing.T) {
	today := reporttest.Start().Format(time.DateOnly)
	rep := func(waivedPass int) *report.Report {
		r := reporttest.New()
		for _, id := range []string{"w1", "w2", "w3"} {
			r = reporttest.Case(r, id, report.Soft, "m1", waivedPass, 5)
		}
		for _, id := range []string{"p1", "p2"} {
			r = reporttest.Case(r, id, report.Soft, "m1", 5, 5)
		}
		return r
	}
	base := rep(5)
	base.Gate = judge(t, base, nil, gate.DefaultPolicy())
	suite := func(g *report.Gate) report.GateItem {
		return one(t, g, report.KindSuite, report.ToolSelection, "m1")
	}
	// Without waivers the drop fails the suite score (and the soft
	// cases' own falls).
	if g := judge(t, rep(0), base, gate.DefaultPolicy()); suite(g).Status != report.ItemFail {
		t.Fatalf("the unwaived drop: suite %s (%s), want fail", suite(g).Status, suite(g).Reason)
	}
	p := gate.DefaultPolicy()
	for _, id := range []string{"w1", "w2", "w3"} {
		p.Waivers = append(p.Waivers, report.GateWaiver{Case: id, Reason: "known weakness", Until: today})
	}
	g := judge(t, rep(0), base, p)
	it := suite(g)
	wantStatus(t, it, report.ItemPass, "3 waived cases left out")
	if it.Pairs != 2 || it.Value == nil || *it.Value != 1 {
		t.Errorf("suite over the unwaived cases: %d pairs, value %v; want 2 pairs at 1", it.Pairs, it.Value)
	}
	if g.Verdict != report.GatePass {
		t.Errorf("verdict %s with every falling case waived: %+v", g.Verdict, g.Items)
	}
	// An expired waiver leaves nothing out.
	for i := range p.Waivers {
		p.Waivers[i].Until = reporttest.Start().AddDate(0, 0, -1).Format(time.DateOnly)
	}
	if it := suite(judge(t, rep(0), base, p)); it.Status != report.ItemFail || strings.Contains(it.Reason, "left out") {
		t.Errorf("expired waivers: suite %s (%s), want a failure over every case", it.Status, it.Reason)
	}
}

// Gating a recorded report again judges its waivers' dates as on the
// day it was first gated: the verdict does not change when one runs out.
func TestWaiversOnRecordedDay(t *testing.T) {
	day := reporttest.Start()
	r := reporttest.Case(reporttest.New(), "refund", report.Hard, "m2", 0, 5)
	p := gate.DefaultPolicy()
	p.Waivers = []report.GateWaiver{{Case: "refund", Model: "m2", Reason: "m2 cannot do refunds", Until: day.Format(time.DateOnly)}}
	later := day.AddDate(0, 0, 3)
	g := gate.Evaluate(gate.Input{New: r, Now: later, WaiversOn: day}, p)
	if g.Verdict != report.GatePass {
		t.Errorf("re-gated three days later with the first day's date: verdict %s, want pass", g.Verdict)
	}
	if note := strings.Join(g.Notes, "\n"); !strings.Contains(note, "waiver dates are judged as of "+day.Format(time.DateOnly)) {
		t.Errorf("notes do not say which day waivers were judged on: %q", note)
	}
	if g := gate.Evaluate(gate.Input{New: r, Now: later}, p); g.Verdict != report.GateFail {
		t.Errorf("gated three days later as new: verdict %s, want fail (the waiver ran out)", g.Verdict)
	}
}
