package telemetry

import (
	"context"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Place is where in a run a call happens: the case run, and the trace its
// MCP requests carry (mcpclient.TraceContext: TraceID and RunSpanID).
type Place struct {
	Case string
	Run  int
	// Scenario is "" for a Layer 1 run; for a Layer 2 run what was done
	// to it ("fault timeout", "attack exfil-1"): Layer 2 runs count in
	// model usage and tool latency, not in Layer 1's per-case figures.
	Scenario  string
	TraceID   string
	RunSpanID string
}

// PlaceFor is the Place of a case run in trace tc (nil: none).
func PlaceFor(kase string, run int, scenario string, tc *mcpclient.TraceContext) Place {
	p := Place{Case: kase, Run: run, Scenario: scenario}
	if tc != nil {
		p.TraceID, p.RunSpanID = tc.TraceID, tc.RunSpanID
	}
	return p
}

type placeKey struct{}

// WithPlace returns a context that says which case run its calls belong
// to; the Provider wrapper reads it.
func WithPlace(ctx context.Context, p Place) context.Context {
	return context.WithValue(ctx, placeKey{}, p)
}

// PlaceOf is the Place of ctx (zero outside a case run).
func PlaceOf(ctx context.Context) Place {
	p, _ := ctx.Value(placeKey{}).(Place)
	return p
}

// Provider wraps p so that every Complete is recorded as a ModelCall of
// p.ID() in the case run of its context (WithPlace), with the provider's
// usage and latency. judge marks the judge's provider. The wrapper costs
// a context lookup and an append per call.
func (r *Recorder) Provider(p llm.Provider, judge bool) llm.Provider {
	return &recordingProvider{p: p, rec: r, judge: judge}
}

type recordingProvider struct {
	p     llm.Provider
	rec   *Recorder
	judge bool
}

func (w *recordingProvider) ID() string { return w.p.ID() }

func (w *recordingProvider) Revision() string { return llm.Revision(w.p) }

func (w *recordingProvider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	resp, err := w.p.Complete(ctx, req)
	pl := PlaceOf(ctx)
	c := ModelCall{Model: w.p.ID(), Judge: w.judge, Place: pl, Start: start, Latency: time.Since(start), Failed: err != nil}
	if resp != nil {
		// A response can come with an error (output that never matched
		// the schema): its tokens were still billed.
		c.Usage, c.Served = resp.Usage, resp.ServedModel
		if resp.Latency > 0 {
			c.Latency = resp.Latency
		}
	}
	w.rec.ModelCall(c)
	return resp, err
}
