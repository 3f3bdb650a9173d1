package telemetry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/lexical"
)

type fakeProvider struct {
	resp *llm.Response
	err  error
}

func (fakeProvider) ID() string { return "t:cheap" }

func (f fakeProvider) Complete(context.Context, *llm.Request) (*llm.Response, error) {
	return f.resp, f.err
}

func TestProviderRecordsEveryCall(t *testing.T) {
	rec := NewRecorder(Options{Prices: fixtureTable(t)})
	ok := rec.Provider(fakeProvider{resp: &llm.Response{Usage: llm.Usage{InputTokens: 1000, OutputTokens: 10}, Latency: 250 * time.Millisecond, ServedModel: "cheap-2026"}}, false)
	bad := rec.Provider(fakeProvider{resp: &llm.Response{Usage: llm.Usage{InputTokens: 50}}, err: errors.New("invalid output")}, true)
	ctx := WithPlace(context.Background(), Place{Case: "weather", Run: 2, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"})
	if ok.ID() != "t:cheap" {
		t.Errorf("ID %q", ok.ID())
	}
	if _, err := ok.Complete(ctx, &llm.Request{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Complete(ctx, &llm.Request{}); err == nil {
		t.Fatal("the error was swallowed")
	}
	ev := rec.Events()
	if len(ev.Models) != 2 {
		t.Fatalf("%d calls recorded", len(ev.Models))
	}
	a, b := ev.Models[0], ev.Models[1]
	if a.Model != "t:cheap" || a.Case != "weather" || a.Run != 2 || a.TraceID == "" || a.Latency != 250*time.Millisecond || a.Served != "cheap-2026" || a.Judge || a.Failed {
		t.Errorf("first call %+v", a)
	}
	if !b.Judge || !b.Failed || b.Usage.InputTokens != 50 {
		t.Errorf("failed judge call %+v: its usage still counts", b)
	}
}

// The recorder wraps every Layer 1 provider, the lexical baseline too: it
// passes the baseline's revision on to the result cache's keys.
func TestRecordingProviderForwardsTheRevision(t *testing.T) {
	rec := NewRecorder(Options{})
	if got := llm.Revision(rec.Provider(lexical.New(), false)); got != lexical.Revision {
		t.Errorf("revision through the recorder %q, want %q", got, lexical.Revision)
	}
	if got := llm.Revision(rec.Provider(fakeProvider{}, false)); got != "" {
		t.Errorf("a model behind an API has revision %q, want none", got)
	}
}
