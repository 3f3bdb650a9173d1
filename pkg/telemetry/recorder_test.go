package telemetry

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/pricing"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// prices for the fixture run, per million tokens: round numbers so every
// expected figure below can be worked out by hand.
const fixturePrices = `version: fixture-1
models:
  - provider: t
    id: cheap
    prices:
      - {input: 1, cache-read: 0.5, cache-write: 1.25, output: 2}
  - provider: t
    id: dated
    prices:
      - {input: 10, output: 10}
      - {from: 2026-09-01, input: 20, output: 20}
`

func fixtureTable(t *testing.T) *pricing.Table {
	t.Helper()
	tb, err := pricing.Parse([]byte(fixturePrices), "fixture")
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

var t0 = time.Date(2026, 8, 31, 12, 0, 0, 0, time.UTC)

// fixtureRun records a small Layer 1 run whose latencies, tokens and
// prices are known in advance:
//
//	t:cheap  2 cases × 1 run, 2 calls a run (100 ms, 300 ms), each
//	         1000 input + 500 cached + 200 output (50 reasoning) tokens,
//	         one get_weather call a run (40 ms) and one stubbed call
//	x:nope   1 run of case a, 1 call of 10 input tokens: no price
//	t:cheap  as judge: 1 call of 2000 input + 100 output tokens
func fixtureRun(t *testing.T) *Recorder {
	rec := NewRecorder(Options{Prices: fixtureTable(t), Now: func() time.Time { return t0 }})
	u := llm.Usage{InputTokens: 1000, CachedInputTokens: 500, OutputTokens: 200, ReasoningTokens: 50}
	for _, kase := range []string{"a", "b"} {
		start := t0
		for _, lat := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond} {
			rec.ModelCall(ModelCall{Model: "t:cheap", Place: Place{Case: kase, Run: 1}, Start: start, Latency: lat, Usage: u})
			start = start.Add(lat)
		}
		rec.ToolCall(ToolCall{Model: "t:cheap", Place: Place{Case: kase, Run: 1}, Tool: "get_weather", Start: t0.Add(100 * time.Millisecond), Latency: 40 * time.Millisecond})
		rec.ToolCall(ToolCall{Model: "t:cheap", Place: Place{Case: kase, Run: 1}, Tool: "send_email", Stubbed: true})
		rec.CaseRun(CaseRun{Model: "t:cheap", Place: Place{Case: kase, Run: 1}, Start: t0, Duration: 500 * time.Millisecond, Outcome: report.RunPass})
	}
	rec.ModelCall(ModelCall{Model: "x:nope", Place: Place{Case: "a", Run: 1}, Start: t0, Latency: time.Second, Usage: llm.Usage{InputTokens: 10}})
	rec.CaseRun(CaseRun{Model: "x:nope", Place: Place{Case: "a", Run: 1}, Start: t0, Duration: 2 * time.Second, Outcome: report.RunFail})
	rec.ModelCall(ModelCall{Model: "t:cheap", Judge: true, Place: Place{Case: "a", Run: 1}, Start: t0, Latency: 50 * time.Millisecond, Usage: llm.Usage{InputTokens: 2000, OutputTokens: 100}})
	for i := range 25 {
		kind := ""
		if i == 0 {
			kind = mcpclient.CallRPCError
		}
		rec.ObserveMCP(mcpclient.Call{Method: "tools/call", Name: "get_weather", Start: t0, Elapsed: time.Duration(i+1) * time.Millisecond, ErrKind: kind})
	}
	return rec
}

func eq(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > 1e-9 {
		t.Errorf("%s: %v, want %v", what, deref(got), want)
	}
}

func deref(p *float64) any {
	if p == nil {
		return "absent"
	}
	return *p
}

func TestSummarizeFixtureRun(t *testing.T) {
	tel := fixtureRun(t).Summarize()
	if tel.Prices != "fixture-1" {
		t.Errorf("prices %q", tel.Prices)
	}
	if len(tel.Usage) != 3 {
		t.Fatalf("usage rows %+v", tel.Usage)
	}
	cheap, judge, nope := tel.Usage[0], tel.Usage[1], tel.Usage[2]
	// One call: (1000·1 + 500·0.5 + 200·2) / 1e6 = 0.00165 USD.
	if cheap.Model != "t:cheap" || cheap.Role != report.RoleEval || cheap.Calls != 4 || cheap.CaseRuns != 2 || cheap.ToolCalls != 4 {
		t.Errorf("t:cheap counts: %+v", cheap)
	}
	if cheap.InputTokens != 4000 || cheap.CachedInputTokens != 2000 || cheap.OutputTokens != 800 || cheap.ReasoningTokens != 200 || cheap.Tokens() != 6800 {
		t.Errorf("t:cheap tokens: %+v", cheap)
	}
	eq(t, "cost", cheap.CostUSD, 0.0066)
	eq(t, "per call", cheap.CostPerCallUSD, 0.00165)
	eq(t, "per case", cheap.CostPerCaseUSD, 0.0033)
	eq(t, "per tool call", cheap.CostPerToolCallUSD, 0.00165)
	eq(t, "per 1k tool calls", cheap.CostPer1kToolCallsUSD, 1.65)
	// The judge: (2000·1 + 100·2) / 1e6, not per case.
	if judge.Role != report.RoleJudge || judge.CaseRuns != 0 || judge.CostPerCaseUSD != nil {
		t.Errorf("judge: %+v", judge)
	}
	eq(t, "judge cost", judge.CostUSD, 0.0022)
	// No price: unknown, never 0, and a warning.
	if nope.CostUSD != nil || nope.UnpricedCalls != 1 || nope.CostPerCaseUSD != nil {
		t.Errorf("x:nope: %+v", nope)
	}
	if len(tel.Warnings) != 1 || !strings.Contains(tel.Warnings[0], "x:nope") || !strings.Contains(tel.Warnings[0], "unknown") {
		t.Errorf("warnings %q", tel.Warnings)
	}
	if _, known := tel.TotalCostUSD(); known {
		t.Error("the run's total cost is known although one model has no price")
	}

	// Per case × model: case a of t:cheap is 2 calls, 1 tool call + 1 stub.
	if len(tel.Cases) != 3 {
		t.Fatalf("case rows %+v", tel.Cases)
	}
	a := tel.Cases[0]
	if a.Case != "a" || a.Model != "t:cheap" || a.Runs != 1 || a.ModelCalls != 2 || a.ToolCalls != 2 || a.Tokens != 3400 {
		t.Errorf("case a: %+v", a)
	}
	eq(t, "case a cost per run", a.CostPerRunUSD, 0.0033)
	if n := tel.Cases[1]; n.Model != "x:nope" || n.CostUSD != nil {
		t.Errorf("case a of x:nope: %+v", n)
	}

	rows := map[string]report.Latency{}
	for _, l := range tel.Latency {
		rows[l.Kind+"|"+l.Subject+"|"+l.Model] = l
	}
	m := rows["method|tools/call|"]
	if m.Samples != 25 || m.Errors != 1 || m.MaxMs != 25 {
		t.Errorf("method row %+v", m)
	}
	eq(t, "tools/call p50", m.P50Ms, 13) // ⌈12.5⌉ = 13th of 1..25 ms
	eq(t, "tools/call p95", m.P95Ms, 24) // ⌈23.75⌉ = 24th
	tool := rows["tool|get_weather|t:cheap"]
	if tool.Samples != 2 || tool.P95Ms != nil || tool.MaxMs != 40 {
		t.Errorf("tool row (stubs excluded, n and max only): %+v", tool)
	}
	if _, ok := rows["tool|send_email|t:cheap"]; ok {
		t.Error("a stubbed tool has a latency row")
	}
	if mr := rows["model||t:cheap"]; mr.Samples != 4 || mr.MaxMs != 300 {
		t.Errorf("model row %+v", mr)
	}
	if jr := rows["model|judge|t:cheap"]; jr.Samples != 1 || jr.MaxMs != 50 {
		t.Errorf("judge row %+v", jr)
	}
	if cr := rows["case||x:nope"]; cr.Samples != 1 || cr.MaxMs != 2000 {
		t.Errorf("case row %+v", cr)
	}
	if tel.Latency[0].Kind != report.LatencyMethod || tel.Latency[len(tel.Latency)-1].Kind != report.LatencyCase {
		t.Errorf("rows not ordered method … case: %+v", tel.Latency)
	}
}

// A price change recorded in the table changes the cost of calls made
// after it, not before: the same usage on two days.
func TestSummarizeCostsByCallDate(t *testing.T) {
	rec := NewRecorder(Options{Prices: fixtureTable(t)})
	u := llm.Usage{InputTokens: 100_000}
	rec.ModelCall(ModelCall{Model: "t:dated", Place: Place{Case: "a", Run: 1}, Start: time.Date(2026, 8, 31, 23, 0, 0, 0, time.UTC), Usage: u})
	rec.ModelCall(ModelCall{Model: "t:dated", Place: Place{Case: "a", Run: 2}, Start: time.Date(2026, 9, 1, 1, 0, 0, 0, time.UTC), Usage: u})
	tel := rec.Summarize()
	eq(t, "cost", tel.Usage[0].CostUSD, 1+2) // 0.1M × $10 + 0.1M × $20
	eq(t, "per case", tel.Usage[0].CostPerCaseUSD, 1.5)
}

// Failed calls without usage cost nothing, even for an unknown model; a
// model with no case runs reported falls back to the runs its calls name.
func TestSummarizeEdges(t *testing.T) {
	rec := NewRecorder(Options{Prices: fixtureTable(t)})
	rec.ModelCall(ModelCall{Model: "x:nope", Place: Place{Case: "a", Run: 1}, Failed: true, Latency: time.Second})
	rec.ModelCall(ModelCall{Model: "t:cheap", Place: Place{Case: "a", Run: 1}, Usage: llm.Usage{InputTokens: 1_000_000}})
	rec.ModelCall(ModelCall{Model: "t:cheap", Place: Place{Case: "a", Run: 2}, Usage: llm.Usage{InputTokens: 1_000_000}})
	tel := rec.Summarize()
	nope := tel.Usage[1]
	eq(t, "failed call", nope.CostUSD, 0)
	if len(tel.Warnings) != 0 {
		t.Errorf("warnings %q", tel.Warnings)
	}
	if tel.Usage[0].CaseRuns != 2 {
		t.Errorf("case runs from the calls: %d, want 2", tel.Usage[0].CaseRuns)
	}
	eq(t, "per case", tel.Usage[0].CostPerCaseUSD, 1)
	if got := tel.Latency[1]; got.Errors != 1 {
		t.Errorf("failed call not counted as an error: %+v", got)
	}
	empty := NewRecorder(Options{}).Summarize()
	if empty.Prices != "" || empty.Latency == nil || empty.Usage == nil || empty.Cases == nil || empty.Models == nil || empty.Warnings == nil {
		t.Errorf("an empty run: %+v", empty)
	}
}

func TestRecorderIsSafeForConcurrentUse(t *testing.T) {
	rec := NewRecorder(Options{MaxEvents: 4000})
	var wg sync.WaitGroup
	for g := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				rec.ObserveMCP(mcpclient.Call{Method: fmt.Sprintf("m%d", g%3), Elapsed: time.Duration(i) * time.Millisecond})
				rec.ToolCall(ToolCall{Model: "t:cheap", Tool: "x", Latency: time.Millisecond})
				if i == 50 {
					_ = rec.Summarize()
				}
			}
		}()
	}
	wg.Wait()
	ev := rec.Events()
	if len(ev.MCP) != 4000 || len(ev.Tools) != 4000 || ev.Dropped != 2000 {
		t.Fatalf("kept %d + %d, dropped %d; want 4000 + 4000 kept and 2000 dropped", len(ev.MCP), len(ev.Tools), ev.Dropped)
	}
	if w := rec.Summarize().Warnings; len(w) != 1 || !strings.Contains(w[0], "2000 events") {
		t.Errorf("warnings %q", w)
	}
}

// Layer 2's model calls are a usage row of their own: cost and tokens
// per case (and the cost gate on them) are Layer 1's, while the run's
// total counts both layers.
func TestLayer2UsageIsKeptApartFromCostPerCase(t *testing.T) {
	rec := NewRecorder(Options{Prices: fixtureTable(t)})
	t0 := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	u := llm.Usage{InputTokens: 1_000_000} // $1 at t:cheap
	for run := 1; run <= 2; run++ {
		p := Place{Case: "a", Run: run}
		rec.ModelCall(ModelCall{Model: "t:cheap", Place: p, Start: t0, Usage: u})
		rec.ToolCall(ToolCall{Model: "t:cheap", Place: p, Tool: "get_weather", Start: t0, Latency: time.Millisecond})
		rec.CaseRun(CaseRun{Model: "t:cheap", Place: p, Start: t0, Duration: time.Second, Outcome: report.RunPass})
	}
	for run := 1; run <= 3; run++ { // three Layer 2 runs, $3 each
		p := Place{Case: "a", Run: run, Scenario: "fault timeout"}
		rec.ModelCall(ModelCall{Model: "t:cheap", Place: p, Start: t0, Usage: llm.Usage{InputTokens: 3_000_000}})
		rec.ToolCall(ToolCall{Model: "t:cheap", Place: p, Tool: "get_weather", Start: t0, Latency: time.Millisecond})
		rec.CaseRun(CaseRun{Model: "t:cheap", Place: p, Start: t0, Duration: time.Second, Outcome: "handled"})
	}
	tel := rec.Summarize()
	rows := map[string]report.Usage{}
	for _, r := range tel.Usage {
		rows[r.Role] = r
	}
	l1, l2 := rows[report.RoleEval], rows[report.RoleResilience]
	if l1.CaseRuns != 2 || l1.ToolCalls != 2 || l1.CostPerCaseUSD == nil || *l1.CostPerCaseUSD != 1 {
		t.Errorf("Layer 1 row %+v: want 2 case runs, 2 tool calls, $1 per case", l1)
	}
	if l2.Calls != 3 || l2.ToolCalls != 3 || l2.CaseRuns != 0 || l2.CostPerCaseUSD != nil || l2.CostUSD == nil || *l2.CostUSD != 9 {
		t.Errorf("Layer 2 row %+v: want 3 calls, 3 tool calls, no per-case cost, $9", l2)
	}
	if total, ok := tel.TotalCostUSD(); !ok || total != 11 {
		t.Errorf("run total %v (%v), want $11 over both layers", total, ok)
	}
}

// The per-method rows time what the server serves: a JSON-RPC error a
// Layer 0 probe asked for (ping on a modern server) is no row, a probe
// that got no answer is an error of its method, and a plain call's error
// counts.
func TestMethodRowsLeaveOutTheErrorsProbesAskedFor(t *testing.T) {
	ev := Events{MCP: []mcpclient.Call{
		{Method: "ping", Probe: true, ErrKind: mcpclient.CallRPCError, Elapsed: time.Millisecond},
		{Method: "tools/list", Probe: true, Elapsed: 2 * time.Millisecond},
		{Method: "tools/list", Probe: true, ErrKind: transport.KindTimeout.String(), Elapsed: 3 * time.Millisecond},
		{Method: "tools/call", ErrKind: mcpclient.CallRPCError, Elapsed: time.Millisecond},
	}}
	rows := map[string]report.Latency{}
	for _, l := range Summarize(ev, nil).Latency {
		if l.Kind == report.LatencyMethod {
			rows[l.Subject] = l
		}
	}
	if _, ok := rows["ping"]; ok {
		t.Errorf("ping, answered with the error the probe asked for, has a row: %+v", rows["ping"])
	}
	if r := rows["tools/list"]; r.Samples != 2 || r.Errors != 1 {
		t.Errorf("tools/list: %d samples, %d errors; want 2 and 1", r.Samples, r.Errors)
	}
	if r := rows["tools/call"]; r.Samples != 1 || r.Errors != 1 {
		t.Errorf("tools/call: %d samples, %d errors; want 1 and 1", r.Samples, r.Errors)
	}
}

// A case run replayed from the cache costs nothing now, but counts in the
// per-case figures at its stored usage: a run with part of its cases
// cached (the read-only ones; a stubbed tool's are made again) has the
// cost per case of a fresh one. Before, cost per case came from the runs
// made now alone and an identical rerun failed the cost gate.
func TestReusedRunsCountInThePerCaseFigures(t *testing.T) {
	t0 := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	cheap := llm.Usage{InputTokens: 1_000_000} // $1 at t:cheap
	dear := llm.Usage{InputTokens: 3_000_000}  // $3: a two-turn case
	fresh := func(rec *Recorder, kase string, u llm.Usage) {
		p := Place{Case: kase, Run: 1}
		rec.ModelCall(ModelCall{Model: "t:cheap", Place: p, Start: t0, Usage: u})
		rec.CaseRun(CaseRun{Model: "t:cheap", Place: p, Start: t0, Duration: time.Second, Outcome: report.RunPass})
	}
	perCase := func(rec *Recorder) report.Usage {
		for _, u := range rec.Summarize().Usage {
			if u.Role == report.RoleEval {
				return u
			}
		}
		t.Fatal("no eval row")
		return report.Usage{}
	}
	all := NewRecorder(Options{Prices: fixtureTable(t), Now: func() time.Time { return t0 }})
	fresh(all, "read", cheap)
	fresh(all, "write", dear)
	partly := NewRecorder(Options{Prices: fixtureTable(t), Now: func() time.Time { return t0 }})
	partly.Reused(ReusedRun{Model: "t:cheap", Case: "read", Run: 1, Usage: cheap})
	fresh(partly, "write", dear)
	cached := NewRecorder(Options{Prices: fixtureTable(t), Now: func() time.Time { return t0 }})
	cached.Reused(ReusedRun{Model: "t:cheap", Case: "read", Run: 1, Usage: cheap})
	cached.Reused(ReusedRun{Model: "t:cheap", Case: "write", Run: 1, Usage: dear})
	want := perCase(all)
	for name, rec := range map[string]*Recorder{"partly cached": partly, "all cached": cached} {
		got := perCase(rec)
		if got.CaseRuns != 2 || got.CostPerCaseUSD == nil || *got.CostPerCaseUSD != *want.CostPerCaseUSD || got.TokensPerCase() != want.TokensPerCase() {
			t.Errorf("%s: %+v, want 2 case runs at %v a case and %v tokens, as fresh", name, got, *want.CostPerCaseUSD, want.TokensPerCase())
		}
	}
	if got := perCase(partly); got.CostUSD == nil || *got.CostUSD != 3 || got.ReusedRuns != 1 {
		t.Errorf("partly cached: spent %v now with %d reused, want $3 and 1", got.CostUSD, got.ReusedRuns)
	}
}

// A Layer 2 fault shown in the server's answer's place is a call of the
// model's, but no error of the tool's and no timing of it: the per-tool
// table counted the faults as the tool's failures.
func TestInjectedFaultsAreNotTheToolsErrors(t *testing.T) {
	rec := NewRecorder(Options{Prices: fixtureTable(t)})
	p := Place{Case: "a", Run: 1, Scenario: "fault http_500"}
	rec.ToolCall(ToolCall{Model: "t:cheap", Place: p, Tool: "get_note", Start: t0, Latency: 3 * time.Second, IsError: true, Injected: true, Outcome: ToolError})
	rec.ToolCall(ToolCall{Model: "t:cheap", Place: p, Tool: "get_note", Start: t0, Latency: time.Millisecond, Outcome: ToolOK})
	rec.ToolCall(ToolCall{Model: "t:cheap", Place: Place{Case: "a", Run: 2}, Tool: "get_note", Start: t0, Latency: time.Millisecond, IsError: true, Outcome: ToolError})
	tel := rec.Summarize()
	if len(tel.Tools) != 1 {
		t.Fatalf("tools %+v", tel.Tools)
	}
	if u := tel.Tools[0]; u.Calls != 3 || u.Errors != 1 || u.Untimed != 1 || u.MaxMs == nil || *u.MaxMs != 1 {
		t.Errorf("get_note: %+v; want 3 calls, 1 error (the server's), 1 untimed (the fault), max 1 ms", u)
	}
}

// A call of a run replayed from the cache is counted, with its stored
// result and turn, but timed nowhere; and the usage rows' calls per model
// are the calls this run paid for.
func TestReusedToolCallsAreCountedNotTimed(t *testing.T) {
	rec := NewRecorder(Options{Prices: fixtureTable(t)})
	turn := llm.Usage{InputTokens: 1000, OutputTokens: 100}
	rec.ModelCall(ModelCall{Model: "t:cheap", Place: Place{Case: "a", Run: 1}, Start: t0, Latency: time.Second, Usage: turn})
	rec.ToolCall(ToolCall{Model: "t:cheap", Place: Place{Case: "a", Run: 1}, Tool: "get_note", Start: t0, Latency: 2 * time.Millisecond, Outcome: ToolOK, TurnUsage: turn, TurnCalls: 1})
	rec.ToolCall(ToolCall{Model: "t:cheap", Tool: "get_note", Reused: true, IsError: true, TurnUsage: turn, TurnCalls: 2})
	tel := rec.Summarize()
	if len(tel.Tools) != 1 {
		t.Fatalf("tools %+v", tel.Tools)
	}
	u := tel.Tools[0]
	if u.Calls != 2 || u.Reused != 1 || u.Untimed != 0 || u.Errors != 1 || len(u.SamplesMs) != 1 || u.MaxMs == nil || *u.MaxMs != 2 {
		t.Errorf("get_note: %+v; want 2 calls, 1 reused (its stored error counted), 1 timed at 2 ms", u)
	}
	// Tokens and cost are of the call made now: the reused one's were
	// spent by the run that made it.
	if u.TokensPerCall != 1100 || u.CostPerCallUSD == nil || u.CostUSD == nil || *u.CostPerCallUSD != *u.CostUSD {
		t.Errorf("tokens per call %v, cost %v per call %v; want 1100 and the one fresh call's cost", u.TokensPerCall, u.CostUSD, u.CostPerCallUSD)
	}
	for _, l := range tel.Latency {
		if l.Kind == report.LatencyTool && l.Samples != 1 {
			t.Errorf("latency row %+v: the reused call was timed", l)
		}
	}
	for _, us := range tel.Usage {
		if us.Model == "t:cheap" && us.ToolCalls != 1 {
			t.Errorf("usage %+v: %d tool calls, want the 1 made now", us, us.ToolCalls)
		}
	}
}
