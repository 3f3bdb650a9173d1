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
// fresh ones checks open, so Layer 3 sees Layer 0's requests by method. On
// stdio a fresh process probes with its own server/discover; on HTTP a
// fresh connection reuses the run's, and the repetition walks its lists on
// it (TOOL-2's fresh connection).
func TestObserverSeesTheRunsRequests(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
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
			rep, _, err := Run(ctx, refTarget(t, kind), Options{Options: check.Options{Runs: 1, Only: []string{"DISC", "TOOL"}}, ProbeTimeout: 2 * time.Second, Observer: obs})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case kind == "stdio" && methods["server/discover"] < 2:
				t.Errorf("observed %v; want the probe's and a fresh process's server/discover", methods)
			case kind == "http" && (methods["server/discover"] < 1 || methods["prompts/list"] < 1 || methods["tools/list"] < 2):
				t.Errorf("observed %v; want the probe's server/discover, the facts' lists and the repetition's tools/list on its own connection", methods)
			}
			if len(traces) != 1 || traces[""] {
				t.Errorf("traces %v: a run's requests share one trace", traces)
			}
			if len(rep.Checks) == 0 {
				t.Error("no checks ran")
			}
		})
	}
}
