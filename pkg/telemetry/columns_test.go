package telemetry

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

// measured is a report whose m1 passed k of 10 runs, with a model-call
// p95 and a cost per case, finished day days after the start.
func measured(k int, p95, costPerCase float64, day int, verdict string) *report.Report {
	r := reporttest.Case(reporttest.New(), "weather", report.Soft, "m1", k, 10)
	reporttest.At(r, reporttest.Start().Add(time.Duration(day)*24*time.Hour))
	r.Run.Commit = fmt.Sprintf("%07x", day+1)
	p50 := p95 / 2
	r.Telemetry = &report.Telemetry{
		Latency: []report.Latency{{Kind: report.LatencyModel, Model: "m1", Samples: 40, P50Ms: &p50, P95Ms: &p95, MaxMs: p95 + 1, Direction: report.Lower}},
		Usage:   []report.Usage{{Model: "m1", Role: report.RoleEval, Calls: 20, CaseRuns: 10, InputTokens: 9000, OutputTokens: 1000, CostPerCaseUSD: &costPerCase, CostUSD: ptrTo(costPerCase * 10), Direction: report.Lower}},
	}
	if verdict != "" {
		r.Gate = &report.Gate{Verdict: verdict}
	}
	return r
}

func ptrTo(v float64) *float64 { return &v }

func TestColumnsWithBaselineAndTrend(t *testing.T) {
	now := measured(8, 900, 0.004, 10, "")
	base := measured(10, 800, 0.003, 9, report.GatePass)
	hist := []*report.Report{
		base,
		measured(10, 700, 0.002, 7, report.GatePass),
		measured(3, 5000, 0.5, 8, report.GateFail), // not green: not in the trend
		measured(9, 750, 0.0025, 8, report.GateInconclusive),
		nil,
	}
	Compare(now, base, hist)
	if len(now.Telemetry.Models) != 1 {
		t.Fatalf("columns %+v", now.Telemetry.Models)
	}
	c := now.Telemetry.Models[0]
	f := c.Now
	if c.Model != "m1" || *f.Accuracy != 0.8 || *f.P95Ms != 900 || *f.TokensPerCase != 1000 || *f.CostPerCaseUSD != 0.004 {
		t.Errorf("now %+v", f)
	}
	if c.Baseline == nil || *c.Baseline.Accuracy != 1 || *c.Baseline.CostPerCaseUSD != 0.003 {
		t.Errorf("baseline %+v", c.Baseline)
	}
	if len(c.Trend) != 3 || *c.Trend[0].CostPerCaseUSD != 0.002 || *c.Trend[1].CostPerCaseUSD != 0.003 || *c.Trend[2].CostPerCaseUSD != 0.004 {
		t.Fatalf("trend %+v: want the two green reports oldest first, then now", c.Trend)
	}
	if c.Trend[2].Commit != now.Run.Commit || !c.Trend[0].FinishedAt.Before(c.Trend[1].FinishedAt) {
		t.Errorf("trend points %+v", c.Trend)
	}
	if _, err := report.Marshal(now); err != nil {
		t.Errorf("a compared report is invalid: %v", err)
	}
}

// Without a baseline or history the columns are this run's alone; a
// figure the report cannot give is absent, never zero.
func TestColumnsAlone(t *testing.T) {
	now := measured(5, 900, 0.004, 1, "")
	now.Telemetry.Latency[0].P95Ms, now.Telemetry.Latency[0].P50Ms, now.Telemetry.Latency[0].Samples = nil, nil, 5
	now.Telemetry.Usage[0].CostPerCaseUSD, now.Telemetry.Usage[0].CostUSD, now.Telemetry.Usage[0].UnpricedCalls = nil, nil, 20
	cols := Columns(now, nil, nil)
	f := cols[0].Now
	if cols[0].Baseline != nil || len(cols[0].Trend) != 0 || f.P95Ms != nil || f.CostPerCaseUSD != nil || *f.Accuracy != 0.5 {
		t.Errorf("columns %+v", cols[0])
	}
	// A report without telemetry is left alone.
	bare := reporttest.New()
	Compare(bare, nil, nil)
	if bare.Telemetry != nil {
		t.Error("Compare made a telemetry section")
	}
}

func TestTrendKeepsTheNewestGreen(t *testing.T) {
	var hist []*report.Report
	for d := range TrendDepth + 5 {
		hist = append(hist, measured(10, 800, 0.001*float64(d+1), d, report.GatePass))
	}
	now := measured(10, 800, 1, 40, "")
	Compare(now, nil, hist)
	tr := now.Telemetry.Models[0].Trend
	if len(tr) != TrendDepth+1 || *tr[0].CostPerCaseUSD != 0.006 {
		t.Errorf("trend of %d from %v, want %d from the 6th report", len(tr), *tr[0].CostPerCaseUSD, TrendDepth+1)
	}
}
