package cli

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/resilience"
)

// overridePrices prices a model the built-in table does not know.
const overridePrices = `version: "test-override"
models:
  - provider: openai
    id: gpt-house-1
    prices:
      - {input: 2, output: 8}
`

// Layers 1 and 2 through mcp-eval run, every layer's model calls under
// one meter: a model priced only by the override file, claude-sonnet-4-6
// from the built-in table and the judge are each priced the same by the
// preview, the budget (a money cap is accepted, not refused) and the
// report's telemetry; the preview never counts fewer calls than the fake
// then received, and the spend record counts exactly those.
func TestRunPricesEveryLayerWithOneTable(t *testing.T) {
	e := newEvalEnv(t, "pricing: {file: prices.yaml}\n")
	if err := os.WriteFile(e.path("prices.yaml"), []byte(overridePrices), 0o644); err != nil {
		t.Fatal(err)
	}
	models := "openai:gpt-house-1,anthropic:claude-sonnet-4-6"
	code, out, errOut := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "behavior,resilience,telemetry",
		"--models", models, "--max-usd", "50", "--out", e.path("report.json"))
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out, "cost unknown") || !strings.Contains(out, "prices of 2026-11-29+test-override") {
		t.Errorf("the preview must price every model from the one table:\n%s", out)
	}
	rep, err := report.Load(e.path("report.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Spend
	if s == nil || rep.Telemetry == nil || rep.Resilience == nil || rep.Behavior == nil {
		t.Fatalf("spend %+v; every layer must be in the report", s)
	}
	if s.Prices != rep.Telemetry.Prices || s.Prices != "2026-11-29+test-override" {
		t.Errorf("budget prices %q, telemetry prices %q: one table", s.Prices, rep.Telemetry.Prices)
	}
	received := len(e.models.Requests())
	if s.Used.Calls != received {
		t.Errorf("the meter counted %d calls, the fake received %d", s.Used.Calls, received)
	}
	if s.Preview.Calls < received {
		t.Errorf("the preview estimated %d calls, the run made %d", s.Preview.Calls, received)
	}
	parts := map[string]report.SpendPart{}
	for _, p := range s.Layers {
		parts[p.Name] = p
		if p.Preview.Calls < p.Used.Calls {
			t.Errorf("%s: preview %d calls < %d made", p.Name, p.Preview.Calls, p.Used.Calls)
		}
	}
	for _, name := range []string{"Layer 1", "judge", "Layer 2"} {
		if parts[name].Used.Calls == 0 {
			t.Errorf("no %s calls in the spend record: %+v", name, s.Layers)
		}
	}
	if !strings.Contains(out, "spend: "+strconv.Itoa(received)+" provider calls (Layer 1: ") || !strings.Contains(out, "Layer 2: ") {
		t.Errorf("the spend line must count every layer's calls (%d):\n%s", received, out)
	}
	telemetryUSD := map[string]float64{}
	for _, u := range rep.Telemetry.Usage {
		if u.CostUSD == nil {
			t.Fatalf("telemetry has no price for %s", u.Model)
		}
		telemetryUSD[u.Model] += *u.CostUSD
	}
	for _, m := range []string{"openai:gpt-house-1", "anthropic:claude-sonnet-4-6", "anthropic:claude-haiku-4-5"} {
		var sm *report.SpendPart
		for i := range s.Models {
			if s.Models[i].Name == m {
				sm = &s.Models[i]
			}
		}
		switch {
		case sm == nil:
			t.Errorf("%s is not in the spend record", m)
		case sm.Preview.USD == nil || *sm.Preview.USD <= 0:
			t.Errorf("%s: the preview has no price: %+v", m, sm.Preview)
		case sm.Used.USD == nil || *sm.Used.USD <= 0:
			t.Errorf("%s: the budget has no price: %+v", m, sm.Used)
		case math.Abs(*sm.Used.USD-telemetryUSD[m]) > 1e-5:
			t.Errorf("%s: the budget counted $%v, telemetry $%v", m, *sm.Used.USD, telemetryUSD[m])
		}
	}
}

// Under eval.budget.max-tokens, no layer starts a model call once the cap
// is reached: across Layers 1 and 2 the fake receives at most the calls
// up to the cap and those in flight; every Layer 2 run the cap stopped is
// not counted and says why, none resisted or failed.
func TestRunBudgetCapsBothLayers(t *testing.T) {
	// Layer 1 then Layer 2 share the cap; Layer 2 alone is held to it too.
	for _, layers := range []string{"behavior,resilience", "resilience"} {
		t.Run(layers, func(t *testing.T) { testBudgetCaps(t, layers) })
	}
}

func testBudgetCaps(t *testing.T, layers string) {
	e := newEvalEnv(t, "  budget: {max-tokens: 1000}\n")
	const concurrency = 2
	code, out, errOut := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", layers,
		"--concurrency", strconv.Itoa(concurrency), "--out", e.path("report.json"))
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	rep, err := report.Load(e.path("report.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Spend
	if s == nil || !s.Reached || !strings.Contains(s.Reason, "max-tokens 1000") {
		t.Fatalf("spend %+v: the cap must be reached and say so", s)
	}
	// sensible's replies all report the fake's default usage, so the cap
	// is crossed by call ceil(1000 / perCall); after it, at most the calls
	// in flight then (one per lane) finish.
	reqs := e.models.Requests()
	perCall := llmfake.DefaultInputTokens + llmfake.DefaultOutputTokens
	capAt := (1000 + perCall - 1) / perCall
	if len(reqs) > capAt+concurrency {
		t.Errorf("the fake received %d calls; the cap was crossed at call %d, so at most %d may start", len(reqs), capAt, capAt+concurrency)
	}
	if s.Used.Calls != len(reqs) {
		t.Errorf("the meter counted %d calls, the fake received %d", s.Used.Calls, len(reqs))
	}
	stopped := 0
	for _, r := range rep.Resilience.Runs {
		if r.Outcome == resilience.NotMeasured {
			stopped++
			if r.Counted || !strings.Contains(r.Reason, "budget reached") {
				t.Errorf("a run the cap stopped must be uncounted with the reason: %+v", r)
			}
		}
	}
	if stopped == 0 {
		t.Errorf("no Layer 2 run was stopped by the budget: %d runs", len(rep.Resilience.Runs))
	}
	for _, f := range rep.Resilience.Faults {
		for _, sc := range f.Scores {
			if sc.N > len(rep.Resilience.Runs)-stopped {
				t.Errorf("fault %s counts %d runs, only %d were measured", f.Fault, sc.N, len(rep.Resilience.Runs)-stopped)
			}
		}
	}
	if !strings.Contains(strings.Join(rep.Resilience.Notes, "\n"), "Layer 2: budget reached") {
		t.Errorf("Layer 2's notes must say the budget stopped runs: %q", rep.Resilience.Notes)
	}
}

// A bad override file is a usage error before anything runs, naming the
// setting it came from and the file's line.
func TestRunRefusesABadPriceFile(t *testing.T) {
	e := newEvalEnv(t, "pricing: {file: bad-prices.yaml}\n")
	bad := "version: x\nmodels:\n  - provider: openai\n    id: gpt-house-1\n    prices:\n      - {input: 1, output: -2}\n"
	if err := os.WriteFile(e.path("bad-prices.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.path("good.yaml"), []byte(overridePrices), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		extra []string
		want  []string
	}{
		{nil, []string{"pricing.file", "bad-prices.yaml:6: models[0] (openai:gpt-house-1) prices[0]"}},
		{[]string{"--prices", e.path("bad-prices.yaml")}, []string{"(--prices)", "bad-prices.yaml:6:"}},
	} {
		args := append([]string{"run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "behavior"}, tc.extra...)
		code, out, errOut := e.run(args...)
		if code != ExitError {
			t.Errorf("%v: exit %d, want %d\n%s", tc.extra, code, ExitError, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.extra, w, errOut)
			}
		}
		if n := len(e.models.Requests()); n != 0 {
			t.Errorf("%v: %d model calls before the price file was checked", tc.extra, n)
		}
	}
	// The flag is stronger than the file: a good --prices replaces it.
	code, out, errOut := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "behavior", "--prices", e.path("good.yaml"),
		"--models", "openai:gpt-house-1", "--judge", "none", "--runs", "1", "--out", e.path("report.json"))
	if code != ExitOK || !strings.Contains(out, "test-override") || strings.Contains(out, "cost unknown") {
		t.Errorf("--prices over pricing.file: exit %d\n%s\n%s", code, out, errOut)
	}
}
