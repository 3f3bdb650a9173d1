package gate_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

func f(v float64) *float64 { return &v }

// withCost gives a report Layer 1 results and usage rows: model → cost per
// case over 10 case runs (nil: a price was unknown).
func withCost(r *report.Report, costs map[string]*float64) *report.Report {
	if _, ok := costs["m3"]; ok {
		r.Models = append(r.Models, report.Model{ID: "m3", Provider: "acme", Requested: "m3", Served: "m3"})
	}
	r.Telemetry = &report.Telemetry{Prices: "t", Latency: []report.Latency{}, Cases: []report.CaseUsage{}, Models: []report.ModelColumns{}, Warnings: []string{}}
	for _, m := range []string{"m1", "m2", "m3"} {
		c, ok := costs[m]
		if !ok {
			continue
		}
		reporttest.Case(r, "weather", report.Soft, m, 5, 5)
		u := report.Usage{Model: m, Role: report.RoleEval, Calls: 20, CaseRuns: 10, Direction: report.Lower}
		if c == nil {
			u.UnpricedCalls = 20
		} else {
			u.CostUSD, u.CostPerCaseUSD = f(*c*10), f(*c)
		}
		r.Telemetry.Usage = append(r.Telemetry.Usage, u)
	}
	return r
}

func gateWith(t *testing.T, p gate.Policy, now, base *report.Report) *report.Gate {
	t.Helper()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	in := gate.Input{New: now, Baseline: base, Now: reporttest.Start()}
	g := gate.Evaluate(in, p)
	now.Gate = g
	if _, err := report.Marshal(now); err != nil {
		t.Fatalf("gated report is invalid: %v", err)
	}
	return g
}

func TestCostIncreaseGate(t *testing.T) {
	p := gate.DefaultPolicy()
	p.MaxCostIncrease = f(0.10)
	base := reporttest.Green(withCost(reporttest.New(), map[string]*float64{"m1": f(0.0030), "m2": f(0.0100), "m3": nil}))
	now := withCost(reporttest.New(), map[string]*float64{"m1": f(0.0033), "m2": f(0.0111), "m3": f(0.001)})
	g := gateWith(t, p, now, base)
	// +10.0% exactly is within the limit; +11% is not; a baseline without
	// a price is no reference.
	wantStatus(t, one(t, g, report.KindCost, "cost per case", "m1"), report.ItemPass, "$0.003300 per case, was $0.003000 (+10.0%)")
	wantStatus(t, one(t, g, report.KindCost, "cost per case", "m2"), report.ItemFail, "(+11.0%) > 10%")
	wantStatus(t, one(t, g, report.KindCost, "cost per case", "m3"), report.ItemInconclusive, "baseline's cost is unknown")
	if g.Verdict != report.GateFail {
		t.Errorf("verdict %s, want fail", g.Verdict)
	}
	if !strings.Contains(g.Policy.Text, "max-cost-increase 0.1") || g.Policy.MaxCostIncrease == nil || *g.Policy.MaxCostIncrease != 0.1 {
		t.Errorf("policy recorded as %+v", g.Policy)
	}
}

// An unknown cost makes the cost gate inconclusive, never passed.
func TestUnknownCostIsInconclusive(t *testing.T) {
	p := gate.DefaultPolicy()
	p.MaxCostIncrease, p.MaxCostPerRun = f(0.5), f(100)
	base := reporttest.Green(withCost(reporttest.New(), map[string]*float64{"m1": f(0.003)}))
	now := withCost(reporttest.New(), map[string]*float64{"m1": nil})
	g := gateWith(t, p, now, base)
	wantStatus(t, one(t, g, report.KindCost, "cost per case", "m1"), report.ItemInconclusive, "cost unknown", "20 of 20 calls have no price")
	wantStatus(t, one(t, g, report.KindRunCost, "cost of the run", ""), report.ItemInconclusive, "no price for m1")
	if g.Verdict != report.GateInconclusive {
		t.Errorf("verdict %s, want inconclusive", g.Verdict)
	}
}

func TestRunCostCap(t *testing.T) {
	p := gate.DefaultPolicy()
	p.MaxCostPerRun = f(0.05)
	// m1 0.003 × 10 + m2 0.002 × 10 = $0.05: at the cap passes.
	now := withCost(reporttest.New(), map[string]*float64{"m1": f(0.003), "m2": f(0.002)})
	wantStatus(t, one(t, gateWith(t, p, now, nil), report.KindRunCost, "cost of the run", ""), report.ItemPass, "$0.0500 ≤ $0.0500")
	// A judge's calls count toward the run.
	now.Telemetry.Usage = append(now.Telemetry.Usage, report.Usage{Model: "m1", Role: report.RoleJudge, Calls: 1, CostUSD: f(0.001), Direction: report.Lower})
	now.Gate = nil
	wantStatus(t, one(t, gateWith(t, p, now, nil), report.KindRunCost, "cost of the run", ""), report.ItemFail, "$0.0510 > $0.0500")
	// No baseline: the cost per case is shown, not judged.
	p.MaxCostIncrease = f(0.1)
	now.Gate = nil
	wantStatus(t, one(t, gateWith(t, p, now, nil), report.KindCost, "cost per case", "m1"), report.ItemInfo, "no baseline")
	// A report that called no model has nothing to cap.
	l0 := reporttest.New()
	if items := find(gateWith(t, p, l0, nil), report.KindRunCost, "cost of the run", ""); len(items) != 0 {
		t.Errorf("a run without models got %+v", items)
	}
	// Models ran, but nothing measured their cost: inconclusive.
	blind := reporttest.Case(reporttest.New(), "weather", report.Soft, "m1", 5, 5)
	wantStatus(t, one(t, gateWith(t, p, blind, nil), report.KindRunCost, "cost of the run", ""), report.ItemInconclusive, "no telemetry")
}

func TestCostGatesOffByDefault(t *testing.T) {
	now := withCost(reporttest.New(), map[string]*float64{"m1": nil})
	g := gateWith(t, gate.DefaultPolicy(), now, nil)
	if len(find(g, report.KindCost, "cost per case", "")) != 0 || len(find(g, report.KindRunCost, "cost of the run", "")) != 0 {
		t.Error("cost items without a cost policy")
	}
	if strings.Contains(g.Policy.Text, "cost") || g.Policy.MaxCostIncrease != nil {
		t.Errorf("policy %+v", g.Policy)
	}
}

func TestCostPolicyValidation(t *testing.T) {
	p := gate.DefaultPolicy()
	p.MaxCostIncrease, p.MaxCostPerRun = f(-0.1), f(0)
	err := p.Validate()
	for _, want := range []string{"max-cost-increase -0.1 is out of range", "max-cost-per-run 0 is out of range"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want %q", err, want)
		}
	}
	p.MaxCostIncrease, p.MaxCostPerRun = f(math.NaN()), f(math.Inf(1))
	if err := p.Validate(); err == nil {
		t.Error("NaN and +Inf accepted")
	}
	for in, want := range map[string]float64{"0.1": 0.1, "10%": 0.1, " 25 % ": 0.25, "0": 0} {
		if got, err := gate.ParseCostIncrease(in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParseCostIncrease(%q) = %v, %v", in, got, err)
		}
	}
	for in, want := range map[string]float64{"5": 5, "$2.50": 2.5, " $ 1 ": 1} {
		if got, err := gate.ParseUSD(in); err != nil || got != want {
			t.Errorf("ParseUSD(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"ten", "€5", ""} {
		if _, err := gate.ParseUSD(bad); !errors.Is(err, gate.ErrPolicy) {
			t.Errorf("ParseUSD(%q): %v", bad, err)
		}
	}
	// One parser for the file, the flags and the inputs: it refuses what
	// Validate would, with the form to write instead.
	for _, bad := range []string{"lots", "abc", "10%%", "NaN", "-5%", "-0.1", "%", "1e9", "Inf"} {
		_, err := gate.ParseCostIncrease(bad)
		if !errors.Is(err, gate.ErrPolicy) || !strings.Contains(err.Error(), "25%") {
			t.Errorf("ParseCostIncrease(%q): %v; want an ErrPolicy naming the forms", bad, err)
		}
	}
	for _, bad := range []string{"NaN", "-1", "0", "$-2"} {
		if _, err := gate.ParseUSD(bad); !errors.Is(err, gate.ErrPolicy) || !strings.Contains(err.Error(), "$2.50") {
			t.Errorf("ParseUSD(%q): %v", bad, err)
		}
	}
}

// A cost item carries its limit: a fraction per case, dollars per run.
func TestCostItemsCarryTheirLimit(t *testing.T) {
	p := gate.DefaultPolicy()
	p.MaxCostIncrease, p.MaxCostPerRun = f(0.10), f(0.05)
	base := reporttest.Green(withCost(reporttest.New(), map[string]*float64{"m1": f(0.0030)}))
	now := withCost(reporttest.New(), map[string]*float64{"m1": f(0.0040)})
	g := gateWith(t, p, now, base)
	if it := one(t, g, report.KindCost, "cost per case", "m1"); it.Limit == nil || *it.Limit != 0.10 {
		t.Errorf("cost per case limit %v, want 0.10", it.Limit)
	}
	if it := one(t, g, report.KindRunCost, "cost of the run", ""); it.Limit == nil || *it.Limit != 0.05 {
		t.Errorf("run cost limit %v, want 0.05", it.Limit)
	}
}
