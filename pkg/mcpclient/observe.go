package mcpclient

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Call is one request as Config.Observer sees it: what was asked, how long
// the round trip took in the harness, and how it ended. It carries no
// params or result, so an observer cannot leak or keep them.
type Call struct {
	Method string
	// Name is the tool or prompt name of tools/call and prompts/get, the
	// URI of resources/read, "" otherwise (server-chosen text: untrusted).
	Name string
	// Start is when the request was handed to the transport; Elapsed is
	// until its final response or failure.
	Start   time.Time
	Elapsed time.Duration
	// ErrKind is "" when the server answered with a result, "rpc" when it
	// answered with a JSON-RPC error, and otherwise the transport error's
	// kind ("timeout", "process exited", …; "error" for anything else).
	ErrKind string
	// TraceID and SpanID are the W3C trace context the request carried in
	// _meta ("" when none): an exporter gives the request's span this id,
	// so the server's own spans, parented on the traceparent it received,
	// join the harness's trace.
	TraceID string
	SpanID  string
	// RunSpanID is the TraceContext's RunSpanID: the case run or session
	// the request belongs to.
	RunSpanID string
	// Raw is true for a request the client built (Client.Build) for the
	// conformance layer to send itself: the client never sees its answer,
	// so Start is when it was built and Elapsed is zero. It is observed so
	// that its traceparent names an exported span all the same.
	Raw bool
	// Probe is true for a request of the conformance layer, which sends
	// many to draw an error on purpose (a wrong method, bad params, a
	// request before initialize): its JSON-RPC error answers are Layer
	// 0's to judge, not failures of the server to answer.
	Probe bool
}

// sentTrace is the trace context one request carried.
type sentTrace struct {
	traceparent string
	runSpanID   string
}

// Error kinds of a Call besides the transport's.
const (
	CallRPCError   = "rpc"
	CallOtherError = "error"
)

// observed builds the Call for one round trip.
func observed(req *Request, start time.Time, sent *sentTrace, ex *transport.Exchange, err error) Call {
	c := Call{Method: req.Method, Start: start, Elapsed: time.Since(start)}
	switch req.Method {
	case "tools/call", "prompts/get":
		c.Name, _ = unquote(req.Params["name"])
	case "resources/read":
		c.Name, _ = unquote(req.Params["uri"])
	}
	switch {
	case err != nil:
		c.ErrKind = CallOtherError
		if k := transport.KindOf(err); k != 0 {
			c.ErrKind = k.String()
		}
	case ex != nil && ex.Response != nil && ex.Response.Error != nil:
		c.ErrKind = CallRPCError
	}
	if sent != nil {
		// traceparent is version-traceid-spanid-flags (W3C Trace Context §3.2).
		if parts := strings.Split(sent.traceparent, "-"); len(parts) == 4 {
			c.TraceID, c.SpanID, c.RunSpanID = parts[1], parts[2], sent.runSpanID
		}
	}
	return c
}

// unquote decodes a JSON string, "" and false for anything else.
func unquote(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
