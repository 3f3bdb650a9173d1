// Package transport moves JSON-RPC messages between the harness and an MCP
// server over stdio or Streamable HTTP, and keeps what it saw on the wire
// (status, headers, raw bytes, stray lines) as evidence for the conformance
// layer. It knows nothing of MCP methods: the client decides what to send and
// which HTTP headers go with it.
package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// Outgoing is one message to send.
type Outgoing struct {
	// Body is the exact JSON to send, without a trailing newline.
	Body []byte
	// ID is the request id (nil for a notification); the final response is
	// the message that carries the same id.
	ID json.RawMessage
	// Method is body.method, for error messages.
	Method string
	// Header holds HTTP request headers (MCP-Protocol-Version, Mcp-Method,
	// ...). The HTTP transport adds Content-Type and Accept itself; stdio
	// ignores Header.
	Header http.Header
	// Raw marks a message the raw layer edited on purpose (a missing _meta
	// field, an odd id): watchers are not told of it, since the check that
	// sent it judges the answer.
	Raw bool
	// OnNotification, when set, is called with each notification this
	// request receives, as it arrives: a caller that must act while the
	// request is still running (send another request once the server is
	// busy with this one) learns it without guessing a delay. It runs on
	// the transport's reader, on stdio with its lock held, so it must
	// return at once and never call the transport.
	OnNotification func(*jsonrpc.Message)
}

// Exchange is what came back for one request: the final response, and every
// message and oddity seen on its way.
type Exchange struct {
	// Response is the final response (result or error); nil when none came.
	Response *jsonrpc.Message
	// Notifications are the notifications received for this request before
	// the final response (on HTTP: on its SSE stream; on stdio: those
	// attributed to it, see StdioTransport).
	Notifications []*jsonrpc.Message
	// ServerRequests are JSON-RPC requests the server sent, which 2026-07-28
	// forbids (RPC-4); they are recorded and never answered.
	ServerRequests []*jsonrpc.Message
	// HTTP is the HTTP-level view; nil on stdio.
	HTTP *HTTPInfo
	// Anomalies are framing problems that did not stop the exchange.
	Anomalies []Anomaly
	// Elapsed is the time from sending to the final response.
	Elapsed time.Duration
	// Ambiguous is true on stdio when a notification was put in
	// Notifications only because this was the one request in flight
	// besides an open subscriptions/listen stream, which it may belong
	// to instead: a rule about unrequested notifications cannot blame
	// this request for it.
	Ambiguous bool
}

// Sort files the messages a response carried besides its final response:
// notifications and server requests in their lists, a response under
// another id and anything that is no message as anomalies.
func (ex *Exchange) Sort(msgs []*jsonrpc.Message) {
	for _, m := range msgs {
		switch m.Kind() {
		case jsonrpc.KindNotification:
			ex.Notifications = append(ex.Notifications, m)
		case jsonrpc.KindRequest:
			ex.ServerRequests = append(ex.ServerRequests, m)
		case jsonrpc.KindResponse:
			if m != ex.Response {
				ex.Anomalies = append(ex.Anomalies, Anomaly{Kind: "unknown-id", Detail: "response with an id that is not this request's", Excerpt: jsonrpc.Clip(string(m.ID), 60)})
			}
		default:
			ex.Anomalies = append(ex.Anomalies, Anomaly{Kind: "invalid-message", Detail: "message is neither request, notification nor response"})
		}
	}
}

// HTTPInfo is what the HTTP transport saw of a response.
type HTTPInfo struct {
	Status      int
	Header      http.Header
	ContentType string
	// Body is the raw body read (up to the size limit); for an SSE stream it
	// is the stream's bytes up to the final response.
	Body []byte
	// SSE is true when the response was an event stream.
	SSE bool
	// Events are the SSE events, in order (nil for a JSON response).
	Events []Event
	// Comments counts SSE comment lines (":" keep-alives).
	Comments int
}

// Anomaly is a problem with the framing of what the server sent: a stdout
// line that is not JSON-RPC, an SSE event that is not a message, a response
// to an id never sent.
type Anomaly struct {
	Kind    string // short id, e.g. "non-json-line", "unknown-id"
	Detail  string
	Excerpt string
}

// Transport sends MCP messages. Implementations are safe for concurrent use.
type Transport interface {
	// RoundTrip sends a request and waits for its final response or for ctx.
	// On error the returned Exchange, when non-nil, holds what was seen
	// before the failure.
	RoundTrip(ctx context.Context, out *Outgoing) (*Exchange, error)
	// Notify sends a notification. On HTTP the Exchange carries the status
	// (202 expected); on stdio it is empty.
	Notify(ctx context.Context, out *Outgoing) (*Exchange, error)
	// Close releases the connection or stops the server process. It is safe
	// to call more than once.
	Close() error
	// Kind is "stdio" or "http".
	Kind() string
}

// Default limits. Every one can be changed in the transport's config.
const (
	DefaultMaxMessageBytes = 4 << 20
	DefaultMaxStreamBytes  = 16 << 20
	DefaultStderrBytes     = 64 << 10
)

// excerpt is the start of b, safe to print. Only the start is sanitized:
// b may be a 4 MiB line, and a flood of them must stay cheap.
func excerpt(b []byte) string { return jsonrpc.Clip(sanitize(string(b[:min(len(b), 1200)])), 300) }

// sanitize replaces control characters so that server text cannot forge
// lines in a terminal or a log.
func sanitize(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			out = append(out, r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			out = append(out, '�')
		default:
			out = append(out, r)
		}
	}
	return string(out)
}
