package behavior

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

func TestBudgetCapLeavesTheRemainingCasesInconclusive(t *testing.T) {
	rs := newRefServer(t)
	// Every call costs 100 + 20 tokens; a weather run is two calls.
	model := newScripted("test:a", perfectScripts())
	cfg := Config{Set: set(weatherCase(), negativeCase()), Models: []llm.Provider{model}, Client: rs.client, Runs: 5, Concurrency: 1,
		Budget: Budget{MaxTokens: 300}}
	res := runOnce(t, cfg)
	// Run 1: 120, 240. Run 2: its first call reaches 360 ≥ 300; its second
	// call is not made, so run 2 is inconclusive, and so is everything after.
	if got := model.calls.Load(); got != 3 {
		t.Errorf("%d model calls, want 3 (no call starts once the cap is reached)", got)
	}
	b := res.Behavior
	if len(b.Results) != 1 {
		t.Fatalf("%d results, want only weather (hello never ran)", len(b.Results))
	}
	w := b.Results[0]
	if w.Passed.K != 1 || w.Passed.N != 1 || w.Inconclusive != 4 {
		t.Errorf("weather passed %d/%d with %d inconclusive, want 1/1 and 4", w.Passed.K, w.Passed.N, w.Inconclusive)
	}
	if len(b.Inconclusive) != 2 || b.Inconclusive[0].Runs != 4 || b.Inconclusive[1].Case != "hello" || b.Inconclusive[1].Runs != 5 {
		t.Fatalf("inconclusive = %+v, want weather ×4 and hello ×5", b.Inconclusive)
	}
	if !strings.Contains(b.Inconclusive[1].Reason, "max-tokens 300") {
		t.Errorf("reason %q does not say which cap was reached", b.Inconclusive[1].Reason)
	}
	s := b.Spend
	if !s.Reached || s.Used.Calls != 3 || s.Used.Tokens != 360 || s.MaxTokens != 300 {
		t.Errorf("spend = %+v, want reached after 3 calls, 360 tokens", s)
	}
	if !strings.Contains(strings.Join(res.Notes, "\n"), "budget reached (360 tokens used, the cap is eval.budget.max-tokens 300): 9 runs") {
		t.Errorf("notes %q do not say why runs are inconclusive", res.Notes)
	}
}

func TestMoneyCapNeedsKnownPrices(t *testing.T) {
	rs := newRefServer(t)
	cfg := Config{Set: set(weatherCase()), Models: []llm.Provider{newScripted("custom:m", nil)}, Client: rs.client, Budget: Budget{MaxUSD: 1}}
	_, err := Prepare(ctx(t), cfg)
	if err == nil || !strings.Contains(err.Error(), "no price is known for custom:m") || !strings.Contains(err.Error(), "max-tokens") {
		t.Errorf("err = %v, want a refusal naming the model and the alternative", err)
	}
}

func TestMoneyCapWithKnownPrices(t *testing.T) {
	rs := newRefServer(t)
	// gpt-4o-mini: $0.15 in, $0.60 out per million; a call of 100 in and
	// 20 out costs (100·0.15 + 20·0.60)/1e6 = $0.000027. A cap of
	// $0.00005 is reached by the second call (0.000054).
	model := newScripted("openai:gpt-4o-mini", perfectScripts())
	cfg := Config{Set: set(weatherCase()), Models: []llm.Provider{model}, Client: rs.client, Runs: 3, Concurrency: 1, Budget: Budget{MaxUSD: 0.00005}}
	plan, err := Prepare(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p := plan.Preview(); !p.USDKnown || p.Calls != 6 || p.USD <= 0 {
		t.Errorf("preview %+v: want 3 runs × 2 calls, a known cost", p)
	}
	res, err := plan.Run(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Behavior.Spend
	if !s.Reached || s.Used.Calls != 2 || s.Used.USD == nil || *s.Used.USD != 0.000054 {
		t.Errorf("spend %+v (usd %v), want reached at 2 calls, $0.000054", s, s.Used.USD)
	}
	r := res.Behavior.Results[0]
	if r.Passed.N != 1 || r.Inconclusive != 2 || r.Runs[0].CostUSD == nil || *r.Runs[0].CostUSD != 0.000054 {
		t.Errorf("result %+v, want 1 decided run costing $0.000054 and 2 inconclusive", r)
	}
}

func TestPriceTable(t *testing.T) {
	p := DefaultPrices()
	if p.Version == "" || len(p.Models) < 5 {
		t.Fatalf("embedded price table: %+v", p)
	}
	for _, m := range []string{"anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5-20250929", "openai:gpt-5-mini-2025-08-07"} {
		if _, ok := p.Lookup(m); !ok {
			t.Errorf("%s has no price", m)
		}
	}
	for _, m := range []string{"openai:gpt-5-pro", "openai:gpt-5.1", "custom:gpt-5", "openai:gpt-5-mini-latest"} {
		if pr, ok := p.Lookup(m); ok {
			t.Errorf("%s priced as %s: a similar name is not the same price", m, pr.Model)
		}
	}
	// claude-sonnet-4-5: 3 in, 0.30 cached, 3.75 cache write, 15 out.
	pr, _ := p.Lookup("anthropic:claude-sonnet-4-5")
	got := pr.Cost(llm.Usage{InputTokens: 1000, CachedInputTokens: 2000, CacheWriteTokens: 400, OutputTokens: 500})
	want := (1000*3.0 + 2000*0.30 + 400*3.75 + 500*15.0) / 1e6 // 0.0126
	if diff := got - want; diff > 1e-12 || diff < -1e-12 || want != 0.0126 {
		t.Errorf("cost %v, want %v = 0.0126", got, want)
	}
	if _, err := ParsePrices([]byte("version: x\nmodels:\n  - {model: gpt, input: 1, output: 1}\n")); err == nil {
		t.Errorf("a row without an endpoint prefix must be rejected")
	}
	if _, err := ParsePrices([]byte("version: x\nmodels:\n  - {model: a:b, input: 1, ouput: 1}\n")); err == nil {
		t.Errorf("an unknown key must be rejected")
	}
}
