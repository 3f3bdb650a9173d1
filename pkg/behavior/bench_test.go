package behavior

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// instantExecutor answers every call at once, so that a benchmark measures
// the runner and the provider's latency, not a server.
type instantExecutor struct{}

func (instantExecutor) Call(context.Context, string, json.RawMessage, map[string]json.RawMessage) (CallResult, error) {
	return CallResult{Content: "ok"}, nil
}

// speedSuite is cases × runs × models runs of two provider calls each (a
// tool call, then the answer), with every call taking latency.
func speedSuite(cases, runs int, latency time.Duration, concurrency int) (Config, int) {
	var cs []golden.Case
	scripts := map[string][]script{}
	for i := 0; i < cases; i++ {
		c := golden.Case{ID: fmt.Sprintf("c%d", i), Prompt: fmt.Sprintf("prompt %d", i), ExpectTool: "t"}
		cs = append(cs, c)
		scripts[c.Prompt] = []script{{one(call("t", `{}`))}}
	}
	a, b := newScripted("fake:a", scripts), newScripted("fake:b", scripts)
	a.latency, b.latency = latency, latency
	cfg := Config{Set: &golden.Set{Cases: cs}, Models: []llm.Provider{a, b}, Executor: instantExecutor{},
		Tools: []mcpclient.Tool{{Name: "t", Description: "a tool", InputSchema: json.RawMessage(`{"type":"object"}`)}}, Runs: runs, Concurrency: concurrency}
	return cfg, cases * runs * 2 * 2
}

// BenchmarkMatrix: wall time of a whole matrix against a fake provider of
// fixed latency, by concurrency. The ideal is calls × latency ÷ concurrency;
// docs/benchmarks.md has the figures.
func BenchmarkMatrix(b *testing.B) {
	const latency = 10 * time.Millisecond
	for _, conc := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			cfg, calls := speedSuite(10, 5, latency, conc)
			ideal := time.Duration(calls) * latency / time.Duration(conc)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				plan, err := Prepare(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := plan.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(calls), "calls/op")
			b.ReportMetric(float64(ideal.Milliseconds()), "ideal-ms/op")
		})
	}
}

func TestMatrixWallTimeIsCallsTimesLatencyOverConcurrency(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	const latency, conc = 20 * time.Millisecond, 8
	cfg, calls := speedSuite(10, 4, latency, conc) // 160 calls
	ideal := time.Duration(calls) * latency / conc // 400ms
	plan, err := Prepare(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := plan.Run(ctx(t)); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	// Never faster than the ideal (the limit holds); not much slower
	// (the runner keeps every slot busy). The upper bound is loose for
	// loaded CI machines.
	if wall < ideal*9/10 || wall > ideal*3 {
		t.Errorf("wall %v for %d calls of %v at concurrency %d; want close to %v", wall, calls, latency, conc, ideal)
	}
	t.Logf("wall %v, ideal %v (%.2f×)", wall, ideal, float64(wall)/float64(ideal))
}
