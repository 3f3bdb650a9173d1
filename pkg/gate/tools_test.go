package gate_test

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

func withTools(r *report.Report, names ...string) *report.Report {
	r.Tools = names
	return r
}

// A tool the baseline listed and the server no longer does is a warning
// that names it and the tools new since (a rename?); the verdict stays.
func TestRemovedToolWarns(t *testing.T) {
	layer0 := func() *report.Report {
		return reporttest.Layer0(reporttest.New(), reporttest.Check("TOOL-1", report.Must, 1, 1))
	}
	base := withTools(layer0(), "search_tickets", "get_ticket", "close_ticket")
	g := judge(t, withTools(layer0(), "search_tickets", "fetch_ticket", "close_ticket"), base, gate.DefaultPolicy())
	it := one(t, g, report.KindTool, "get_ticket", "")
	wantStatus(t, it, report.ItemWarn, "listed in the baseline, not now", "renamed? new since the baseline: fetch_ticket")
	if g.Verdict != report.GatePass || len(find(g, report.KindTool, "search_tickets", "")) != 0 {
		t.Errorf("verdict %s, items %+v", g.Verdict, g.Items)
	}
	// No listing now (the listing failed or found none): nothing said
	// about tools; Layer 0 reports the listing.
	if g := judge(t, layer0(), base, gate.DefaultPolicy()); len(find(g, report.KindTool, "get_ticket", "")) != 0 {
		t.Errorf("a report without tools warned: %+v", g.Items)
	}
}

// A tool whose calls mostly error now, and seldom did, warns per model.
func TestToolErrorsWarn(t *testing.T) {
	withUsage := func(r *report.Report, calls, errors int) *report.Report {
		r.Telemetry = &report.Telemetry{Tools: []report.ToolUsage{{Tool: "get_ticket", Model: "m:a", Calls: calls, Errors: errors}}}
		return r
	}
	layer0 := func() *report.Report {
		return reporttest.Layer0(reporttest.New(), reporttest.Check("TOOL-1", report.Must, 1, 1))
	}
	base := withUsage(layer0(), 10, 0)
	g := judge(t, withUsage(layer0(), 10, 10), base, gate.DefaultPolicy())
	wantStatus(t, one(t, g, report.KindTool, "get_ticket", "m:a"), report.ItemWarn, "10 of 10 calls errored", "0 of 10 in the baseline")
	if g.Verdict != report.GatePass {
		t.Errorf("verdict %s", g.Verdict)
	}
	for _, tc := range []struct {
		name      string
		now, base [2]int // calls, errors
	}{
		{"as often as before", [2]int{10, 6}, [2]int{10, 5}},
		{"too few calls now", [2]int{2, 2}, [2]int{10, 0}},
		{"a few errors now", [2]int{10, 4}, [2]int{10, 0}},
	} {
		g := judge(t, withUsage(layer0(), tc.now[0], tc.now[1]), withUsage(layer0(), tc.base[0], tc.base[1]), gate.DefaultPolicy())
		if items := find(g, report.KindTool, "get_ticket", "m:a"); len(items) != 0 {
			t.Errorf("%s: %+v", tc.name, items)
		}
	}
}

// A case the run defines but left undecided (the budget stopped it) is not
// called a removed or edited case.
func TestUndecidedCaseIsNotCalledRemoved(t *testing.T) {
	base := reporttest.Case(reporttest.Case(reporttest.New(), "a", report.Hard, "m1", 5, 5), "b", report.Hard, "m1", 5, 5)
	now := reporttest.Case(reporttest.New(), "b", report.Hard, "m1", 5, 5)
	now.Behavior.Cases = append(now.Behavior.Cases, report.Case{ID: "a", Hash: reporttest.CaseHash("a"), Kind: report.Hard, Tags: []string{}, Source: "golden/a.yaml"})
	now.Behavior.Inconclusive = []report.Inconclusive{{Case: "a", Model: "m1", Runs: 5, Reason: "the budget ran out"}}
	g := judge(t, now, base, gate.DefaultPolicy())
	found := false
	for _, u := range g.Unmatched {
		if u.Subject == "a" && u.Side == "baseline" {
			found = true
			if !strings.Contains(u.Reason, "not decided now") || strings.Contains(u.Reason, "removed") {
				t.Errorf("reason %q", u.Reason)
			}
		}
	}
	if !found {
		t.Errorf("unmatched %+v: want case a from the baseline", g.Unmatched)
	}
}

// A tool whose calls became much slower than in the baseline warns; a
// small or slight change does not.
func TestSlowToolWarns(t *testing.T) {
	withLatency := func(ms ...float64) *report.Report {
		r := reporttest.Layer0(reporttest.New(), reporttest.Check("TOOL-1", report.Must, 1, 1))
		r.Telemetry = &report.Telemetry{Latency: []report.Latency{{Kind: report.LatencyTool, Subject: "search_notes", Model: "m1", Samples: len(ms), SamplesMs: ms, MaxMs: ms[len(ms)-1], Histogram: []report.Bin{}, Direction: report.Lower}}}
		return r
	}
	fast := withLatency(1, 1, 1, 2, 2)
	g := judge(t, withLatency(1500, 1500, 1501, 1502, 1503), fast, gate.DefaultPolicy())
	wantStatus(t, one(t, g, report.KindTool, "search_notes", "m1"), report.ItemWarn, "median call 1.50 s called by m1, against 1 ms in the baseline")
	if g.Verdict != report.GatePass {
		t.Errorf("verdict %s", g.Verdict)
	}
	for name, now := range map[string]*report.Report{
		"within 100 ms": withLatency(50, 50, 50, 50, 50),
		"too few calls": withLatency(1500, 1500),
		"under 5 times": withLatency(4, 4, 4, 4, 4),
	} {
		if items := find(judge(t, now, fast, gate.DefaultPolicy()), report.KindTool, "search_notes", "m1"); len(items) != 0 {
			t.Errorf("%s: %+v", name, items)
		}
	}
}
