package mcpclient

import (
	"crypto/rand"
	"encoding/hex"
)

// TraceContext is a W3C trace that requests join: one per eval case and one
// per Layer 0 run. Each request gets a new span id (basic/index.mdx
// §OpenTelemetry trace context; the keys are exempt from the prefix rule).
type TraceContext struct {
	TraceID    string // 32 lowercase hex digits
	TraceState string
	Baggage    string
}

// NewTrace returns a trace with a random, non-zero trace id.
func NewTrace() *TraceContext {
	return &TraceContext{TraceID: randomHex(16)}
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
