package mcpclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// TraceContext is a W3C trace that requests join: one per case run (Layers
// 1 and 2), one per Layer 0 run and one per session. Each request gets a
// new span id (basic/index.mdx §OpenTelemetry trace context; the keys are
// exempt from the prefix rule), which is the id its exported span takes.
type TraceContext struct {
	TraceID string // 32 lowercase hex digits
	// RunSpanID is the span the exporter gives the case run (or session)
	// whose requests carry this context: requests are grouped by it, since
	// under an inherited TRACEPARENT every run shares one trace id.
	RunSpanID string
	// TraceState and Baggage are propagated as given (an inherited
	// TRACESTATE, BAGGAGE), never invented.
	TraceState string
	Baggage    string
}

// NewTrace returns a trace with a random, non-zero trace id.
func NewTrace() *TraceContext {
	return &TraceContext{TraceID: randomHex(16), RunSpanID: randomHex(8)}
}

// Parent is trace context the harness was started in (TRACEPARENT,
// TRACESTATE, BAGGAGE), already validated by ParseParent: every trace the
// run makes joins it.
type Parent struct {
	TraceID    string
	SpanID     string // the parent-id: the harness's run span is its child
	TraceState string
	Baggage    string
}

type parentKey struct{}
type traceKey struct{}

// WithParent returns a context whose new traces (NewTraceFor) join p; a
// nil p leaves ctx as it is.
func WithParent(ctx context.Context, p *Parent) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, parentKey{}, p)
}

// ParentOf is the Parent of ctx (nil when none).
func ParentOf(ctx context.Context) *Parent {
	p, _ := ctx.Value(parentKey{}).(*Parent)
	return p
}

// NewTraceFor returns the trace of a new case run or session started
// under ctx: in the Parent's trace, with its tracestate and baggage, when
// ctx has one; else a trace of its own.
func NewTraceFor(ctx context.Context) *TraceContext {
	p := ParentOf(ctx)
	if p == nil {
		return NewTrace()
	}
	return &TraceContext{TraceID: p.TraceID, RunSpanID: randomHex(8), TraceState: p.TraceState, Baggage: p.Baggage}
}

// WithTrace returns a context whose requests carry tc instead of the
// client's Config.Trace: the runners give each case run its own trace
// this way, whichever executor makes its calls.
func WithTrace(ctx context.Context, tc *TraceContext) context.Context {
	return context.WithValue(ctx, traceKey{}, tc)
}

// TraceOf is the trace set by WithTrace (nil when none).
func TraceOf(ctx context.Context) *TraceContext {
	tc, _ := ctx.Value(traceKey{}).(*TraceContext)
	return tc
}

func randomHex(n int) string {
	b := make([]byte, n)
	for {
		_, _ = rand.Read(b)
		for _, x := range b {
			if x != 0 { // an all-zero id is invalid
				return hex.EncodeToString(b)
			}
		}
	}
}

// meta returns the _meta entries for one request, with a fresh span id.
func (tc *TraceContext) meta() map[string]string {
	m := map[string]string{"traceparent": "00-" + tc.TraceID + "-" + randomHex(8) + "-01"}
	if tc.TraceState != "" {
		m["tracestate"] = tc.TraceState
	}
	if tc.Baggage != "" {
		m["baggage"] = tc.Baggage
	}
	return m
}
