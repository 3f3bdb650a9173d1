package gate_test

import (
	"reflect"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

// TestPolicyRoundTrip: a policy recorded in a saved report reads back as
// the same policy, field by field, so re-gating a report applies the
// rules of the command that wrote it.
func TestPolicyRoundTrip(t *testing.T) {
	inc, usd, toks, toksInc := 0.25, 3.5, 9000, 0.1
	p := gate.Policy{MaxDrop: 0.05, Confidence: 0.9, FloorMust: 0.8, FloorHard: 0.9, FloorSoft: 0.6, HistoryDepth: 4,
		FailOnInconclusive: true, FailOnLegacy: true, MaxCostIncrease: &inc, MaxCostPerRun: &usd,
		MaxToolTokens: &toks, MaxToolTokensIncrease: &toksInc, Lint: gate.LintFail,
		Waivers: []report.GateWaiver{{Check: "TOOL-5", Transport: "http", Reason: "SDK names", Until: "2026-12-31"}}}
	// Every field is set to a non-default value, so a field added to
	// Policy without a place in the record fails here.
	v := reflect.ValueOf(p)
	for i := range v.NumField() {
		if v.Field(i).IsZero() || reflect.DeepEqual(v.Field(i).Interface(), reflect.ValueOf(gate.DefaultPolicy()).Field(i).Interface()) {
			t.Fatalf("set Policy.%s to a non-default value in this test", v.Type().Field(i).Name)
		}
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	r := reporttest.Layer0(reporttest.New())
	r.Gate = gate.Evaluate(gate.Input{New: r, Now: reporttest.Start()}, p)
	data, err := report.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	got := gate.PolicyFromReport(back.Gate.Policy)
	if !reflect.DeepEqual(got, p) {
		t.Errorf("round trip: got %+v, want %+v", got, p)
	}
	if got.Text() != back.Gate.Policy.Text {
		t.Errorf("text %q, recorded %q", got.Text(), back.Gate.Policy.Text)
	}
	// The defaults too: no cost gate stays no cost gate.
	if got := gate.PolicyFromReport(gate.DefaultPolicy().Record()); !reflect.DeepEqual(got, gate.DefaultPolicy()) {
		t.Errorf("defaults: got %+v", got)
	}
}
