package pipeline

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/redact"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/target"
)

// conformancePlan is a Layer 0 run of a few checks against the reference
// server over HTTP, with count as its tool counter.
func conformancePlan(t *testing.T, count func([]llm.Tool, []string) (*report.ToolTokens, error)) *Plan {
	t.Helper()
	hs := httptest.NewServer(refserver.New(refserver.Options{}).Handler())
	t.Cleanup(hs.Close)
	opts := conformance.Options{}
	opts.Runs = 1
	opts.Only = []string{"DISC-1", "TOOL-1"}
	return &Plan{
		Target:      target.Target{URL: hs.URL + "/mcp"},
		TargetDesc:  hs.URL + "/mcp",
		Layers:      []string{Conformance},
		Conformance: opts,
		Timeout:     time.Minute,
		Env:         Env{Redact: redact.FromEnv(func() []string { return nil }, nil)},
		countTools:  count,
	}
}

// The count runs on a goroutine of its own beside the checks: a panic
// there would end the process with no report and no word of why.
func TestAPanicInTheToolCountIsTheRunsError(t *testing.T) {
	p := conformancePlan(t, func([]llm.Tool, []string) (*report.ToolTokens, error) {
		panic("tokenizer table corrupt")
	})
	rep, err := Run(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "counting the tokens of the tool surface: panic: tokenizer table corrupt") {
		t.Fatalf("Run = %v, %v; want the count's panic as the run's error", rep, err)
	}
}

func TestAFailedToolCountIsTheRunsError(t *testing.T) {
	p := conformancePlan(t, func([]llm.Tool, []string) (*report.ToolTokens, error) {
		return nil, errors.New("no encoding for model x")
	})
	if _, err := Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "counting the tokens of the tool surface: no encoding for model x") {
		t.Fatalf("Run error = %v, want the count's error", err)
	}
}

// A cancelled CI job must end at once with its "cancelled" report: it does
// not wait for a count still under way, which ends on its own.
func TestACancelledRunDoesNotWaitForTheToolCount(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	release := make(chan struct{})
	defer close(release)
	var counted atomic.Int32
	p := conformancePlan(t, func(tools []llm.Tool, _ []string) (*report.ToolTokens, error) {
		counted.Add(1)
		cancel() // the job is cancelled while the count runs
		<-release
		return &report.ToolTokens{}, nil
	})
	type result struct {
		rep *report.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := Run(ctx, p)
		done <- result{rep, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("Run: %v", r.err)
		}
		if counted.Load() != 1 {
			t.Fatalf("the count began %d times, want once (the test cancels from inside it)", counted.Load())
		}
		if r.rep.Run.Cancelled == "" || r.rep.Gate.Verdict != report.GateCancelled {
			t.Fatalf("report: cancelled %q, verdict %q; want a cancelled run", r.rep.Run.Cancelled, r.rep.Gate.Verdict)
		}
	case <-time.After(30 * time.Second): // a safety bound: the count never ends by itself here
		t.Fatal("the cancelled run waited for the tool count")
	}
}
