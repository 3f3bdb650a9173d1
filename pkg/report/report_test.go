package report_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

// full is a report with every layer and a gate section.
func full() *report.Report {
	r := reporttest.New()
	reporttest.Layer0(r, reporttest.Check("DISC-1", report.Must, 5, 5), reporttest.Check("TOOL-3", report.Must, 4, 5), reporttest.Check("CACHE-2", report.Should, 0, 1))
	r.Conformance.CallTools = []string{"send_email"}
	reporttest.Case(r, "weather-basic", report.Hard, "m1", 5, 5,
		reporttest.Score(report.ToolSelection, 5, 5), reporttest.Score(report.ArgumentCorrectness, 5, 5), reporttest.Score(report.TaskCompletion, 5, 5))
	reporttest.Case(r, "no-tool-needed", report.Soft, "m1", 4, 5, reporttest.Score(report.OverTrigger, 1, 5))
	r.Behavior.Cases[1].Negative = true
	r.Behavior.JudgeModel, r.Behavior.RubricHash = "judge-1", reporttest.CaseHash("rubric")
	r.Resilience = &report.Resilience{
		Faults:  []report.FaultResult{{Model: "m1", Fault: "timeout", Scores: []report.Score{reporttest.Score(report.FaultHandled, 9, 10)}}},
		Attacks: []report.AttackResult{{Model: "m1", Attack: "description-injection", Scores: []report.Score{reporttest.Score(report.AttackSuccess, 1, 10), reporttest.Score(report.Refusal, 8, 10)}}},
	}
	p50, p95, cost, to := 120.0, 340.0, 0.0421, 200.0
	r.Telemetry = &report.Telemetry{
		Prices: "2026-11-29",
		Latency: []report.Latency{{Kind: report.LatencyTool, Subject: "get_weather", Model: "m1", Samples: 50, P50Ms: &p50, P95Ms: &p95, MaxMs: 900,
			Histogram: []report.Bin{{FromMs: 100, ToMs: &to, Count: 48}, {FromMs: 500, Count: 2}}, Direction: report.Lower}},
		Usage: []report.Usage{{Model: "m1", Role: report.RoleEval, Calls: 12, CaseRuns: 10, InputTokens: 12000, OutputTokens: 3400, CostUSD: &cost, Direction: report.Lower}},
	}
	reporttest.Green(r)
	return r
}

func TestBuiltReportValidates(t *testing.T) {
	data, err := report.Marshal(full())
	if err != nil {
		t.Fatalf("a report built in code does not validate: %v", err)
	}
	if bytes.Contains(data, []byte("null")) {
		t.Errorf("the JSON has a null; every list must be []:\n%s", data)
	}
	back, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := report.Marshal(back)
	if !bytes.Equal(data, again) {
		t.Errorf("parse → marshal is not stable")
	}
}

func TestEmptyReportValidatesWithEmptyLists(t *testing.T) {
	r := report.New()
	r.Behavior = &report.Behavior{RunsPerCase: 5} // nil lists inside
	data, err := report.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"models": []`, `"cases": []`, `"results": []`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("missing %s in\n%s", want, data)
		}
	}
	if bytes.Contains(data, []byte("null")) || bytes.Contains(data, []byte(`"conformance"`)) {
		t.Errorf("null, or a section for a layer that did not run:\n%s", data)
	}
}

func TestParseRejects(t *testing.T) {
	good, err := report.Marshal(full())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	behavior := func(m map[string]any) map[string]any { return m["behavior"].(map[string]any) }
	cases := []struct {
		name string
		data []byte
		is   error
		want []string
	}{
		{"corrupt", good[:len(good)/2], report.ErrNotJSON, []string{"cut short"}},
		{"syntax", []byte("{\n  \"schemaVersion\": 1,\n  oops\n}"), report.ErrNotJSON, []string{"line 3, column 3"}},
		{"trailing", append(append([]byte{}, good...), []byte("{}")...), report.ErrNotJSON, []string{"data after the report"}},
		{"empty", nil, report.ErrNotJSON, []string{"empty"}},
		{"array", []byte("[]"), report.ErrSchema, []string{"is a array, not an object"}},
		{"future version", edit(func(m map[string]any) { m["schemaVersion"] = 2 }), report.ErrVersion, []string{"schemaVersion 2", "reads version 1"}},
		{"no version", edit(func(m map[string]any) { delete(m, "schemaVersion") }), report.ErrVersion, []string{"no schemaVersion"}},
		{"bare layer 0", []byte(`{"target":"x","checks":[]}`), report.ErrVersion, []string{"bare Layer 0"}},
		{"unknown key", edit(func(m map[string]any) { m["extra"] = true }), report.ErrSchema, []string{"extra"}},
		{"bad hash", edit(func(m map[string]any) { m["toolSurfaceHash"] = "md5:abc" }), report.ErrSchema, []string{"/toolSurfaceHash"}},
		{"negative k", edit(func(m map[string]any) {
			behavior(m)["results"].([]any)[0].(map[string]any)["passed"] = map[string]any{"k": -1, "n": 5}
		}), report.ErrSchema, []string{"/behavior/results/0/passed/k"}},
		{"bad direction", edit(func(m map[string]any) {
			s := behavior(m)["results"].([]any)[0].(map[string]any)["scores"].([]any)[0].(map[string]any)
			s["direction"] = "up"
		}), report.ErrSchema, []string{"/behavior/results/0/scores/0/direction"}},
		{"layer 0 invalid", edit(func(m map[string]any) { m["conformance"].(map[string]any)["verdict"] = "great" }), report.ErrSchema, []string{"/conformance/verdict"}},
		{"call tool not a name", edit(func(m map[string]any) { m["conformance"].(map[string]any)["callTools"] = []any{1} }), report.ErrSchema, []string{"/conformance/callTools/0"}},
		{"k above n", edit(func(m map[string]any) {
			behavior(m)["results"].([]any)[0].(map[string]any)["passed"] = map[string]any{"k": 6, "n": 5}
		}), report.ErrInvalid, []string{"/behavior/results/0/passed: k 6 is more than n 5"}},
		{"unknown case", edit(func(m map[string]any) {
			behavior(m)["results"].([]any)[0].(map[string]any)["case"] = "ghost"
		}), report.ErrInvalid, []string{`"ghost" is not in /behavior/cases`}},
		{"unknown model", edit(func(m map[string]any) {
			behavior(m)["results"].([]any)[0].(map[string]any)["model"] = "m9"
		}), report.ErrInvalid, []string{`model "m9" is not in /models`}},
		{"wrong direction for a known score", edit(func(m map[string]any) {
			s := behavior(m)["results"].([]any)[1].(map[string]any)["scores"].([]any)[0].(map[string]any)
			s["direction"] = "higher"
		}), report.ErrInvalid, []string{`overTrigger is a "lower"-is-better score`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := report.Parse(tc.data)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestOversized(t *testing.T) {
	big := make([]byte, report.MaxBytes+1)
	_, err := report.Parse(big)
	if !errors.Is(err, report.ErrTooLarge) || !strings.Contains(err.Error(), "32.0 MiB") {
		t.Errorf("Parse: %v", err)
	}
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file: its size is what matters, not its bytes.
	if err := f.Truncate(report.MaxBytes + 10); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = report.Load(path)
	if !errors.Is(err, report.ErrTooLarge) || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("Load: %v", err)
	}
}

// Marshal refuses a report that its own reader would refuse (writing is
// atomicfile's: see its tests for modes and atomicity).
func TestMarshalIsChecked(t *testing.T) {
	b, err := report.Marshal(full())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := report.Parse(b); err != nil {
		t.Fatalf("a marshalled report does not parse: %v", err)
	}
	bad := full()
	bad.Behavior.Results[0].Passed.K = 9
	if _, err := report.Marshal(bad); err == nil || !errors.Is(err, report.ErrInvalid) {
		t.Errorf("marshalling an inconsistent report: %v", err)
	}
}

func TestRelPath(t *testing.T) {
	for _, c := range []struct{ ws, p, want string }{
		{"/github/workspace", "/github/workspace/golden/a.yaml", "golden/a.yaml"},
		{"/github/workspace", "golden/./a.yaml", "golden/a.yaml"},
		{"/github/workspace", "/tmp/base.json", "../../tmp/base.json"},
		{"", "/abs/x", "/abs/x"},
	} {
		if got := report.RelPath(c.ws, c.p); got != c.want {
			t.Errorf("RelPath(%q, %q) = %q, want %q", c.ws, c.p, got, c.want)
		}
	}
	if got := report.RelCommand("/w", "node /w/dist/server.js --root /etc"); got != "node dist/server.js --root /etc" {
		t.Errorf("RelCommand = %q", got)
	}
}
