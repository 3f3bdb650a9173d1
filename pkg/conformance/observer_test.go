package conformance

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Options.Observer reaches every client of a run: the probe's and the
// fresh ones checks open, so Layer 3 sees Layer 0's requests by method.
func TestObserverSeesTheRunsRequests(t *testing.T) {
	var (
		mu      sync.Mutex
		methods = map[string]int{}
		traces  = map[string]bool{}
	)
	obs := func(c mcpclient.Call) {
		mu.Lock()
		methods[c.Method]++
		traces[c.TraceID] = true
		mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, _, err := Run(ctx, refTarget(t, "http"), Options{Options: check.Options{Runs: 1, Only: []string{"DISC", "TOOL"}}, ProbeTimeout: 2 * time.Second, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if methods["server/discover"] < 2 || methods["tools/list"] == 0 {
		t.Errorf("observed %v; want the probe's and the checks' server/discover and tools/list", methods)
	}
	if len(traces) != 1 || traces[""] {
		t.Errorf("traces %v: a run's requests share one trace", traces)
	}
	if len(rep.Checks) == 0 {
		t.Error("no checks ran")
	}
}
