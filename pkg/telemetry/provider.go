package telemetry

import (
	"context"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

// Place is where in a run a call happens: the case run, and the trace its
// MCP requests carry (mcpclient.TraceContext.TraceID).
type Place struct {
	Case    string
	Run     int
	TraceID string
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

func (w *recordingProvider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	start := time.Now()
	resp, err := w.p.Complete(ctx, req)
	pl := PlaceOf(ctx)
	c := ModelCall{Model: w.p.ID(), Judge: w.judge, Case: pl.Case, Run: pl.Run, TraceID: pl.TraceID, Start: start,
		Latency: time.Since(start), Failed: err != nil}
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
