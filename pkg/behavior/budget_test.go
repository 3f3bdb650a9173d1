package behavior

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
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
	s := res.Spend
	if !s.Reached || s.Used.Calls != 3 || s.Used.Tokens != 360 || s.MaxTokens != 300 {
		t.Errorf("spend = %+v, want reached after 3 calls, 360 tokens", s)
	}
	// Runs 1 and 2 of weather were made; the eight the cap stopped before
	// their first call were not.
	if res.FreshRuns != 2 {
		t.Errorf("%d runs counted as made now, want 2", res.FreshRuns)
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
	if p := plan.Preview(); len(p.Unpriced()) != 0 || p.Calls() != 6 || !strings.Contains(p.String(), "≈ $0.0") {
		t.Errorf("preview %+v: want 3 runs × 2 calls, a known cost", p)
	}
	res, err := plan.Run(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	s := res.Spend
	if !s.Reached || s.Used.Calls != 2 || s.Used.USD == nil || *s.Used.USD != 0.000054 {
		t.Errorf("spend %+v (usd %v), want reached at 2 calls, $0.000054", s, s.Used.USD)
	}
	r := res.Behavior.Results[0]
	if r.Passed.N != 1 || r.Inconclusive != 2 || r.Runs[0].CostUSD == nil || *r.Runs[0].CostUSD != 0.000054 {
		t.Errorf("result %+v, want 1 decided run costing $0.000054 and 2 inconclusive", r)
	}
}

// Only an argument a semantic matcher compares may ask the judge, and the
// rubric: the preview's judge calls count those, not every matcher named.
func TestJudgeCallsCountSemanticArgumentsAndTheRubric(t *testing.T) {
	set, err := golden.Parse("tasks.yaml", []byte(`version: 1
cases:
  - id: c
    prompt: Book the room for Team lunch on 2026-03-14.
    expect_tool: book
    expect_args: {title: Team lunch, date: "2026-03-14", room: 4}
    arg_match: {title: semantic, date: exact, room: "tolerance:1"}
    rubric: The room is booked.
`))
	if err != nil {
		t.Fatal(err)
	}
	if n := JudgeCalls(set.Cases[0]); n != 2 {
		t.Errorf("%d judge calls, want 2 (title and the rubric)", n)
	}
}
