package transport

import (
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// Seen is one request as a watcher sees it, once it has its answer or has
// failed: the conformance layer judges the rules that hold on every
// exchange (ids, resultType, caching hints, unrequested notifications) on
// all of them, not only on the requests its checks make for that rule.
type Seen struct {
	// Out is what was sent; nil for a stray (a response to no request in
	// flight, seen on stdio).
	Out *Outgoing
	// Exchange is what came back (nil when nothing did). For a stray,
	// Exchange.Response is the stray message.
	Exchange *Exchange
	// Err is how the request failed, nil when it got its response.
	Err error
	// Transport is "stdio" or "http".
	Transport string
	// Line, on stdio, is a stdout line that broke the framing rules: not
	// a JSON-RPC message, neither request, notification nor response, or
	// a request from the server. Out and Exchange are nil then. Lines a
	// process wrote before the watcher was added are not told (Anomalies
	// has them).
	Line *Anomaly
}

// Stray reports whether s is a response that answered no request in
// flight.
func (s Seen) Stray() bool { return s.Out == nil && s.Line == nil }

// Watchable is a transport that tells a watcher of every request it
// carries (RoundTrip, not the raw layer nor an Outgoing marked Raw: a raw
// request is deliberately malformed, and the check that sent it judges
// the answer).
type Watchable interface {
	// Watch adds fn, called after every RoundTrip and every HTTP Tell
	// (and on stdio for each stray response and each line that breaks the
	// framing rules) from the goroutine that saw it, never with a lock of
	// the transport held: fn must be safe for concurrent use and quick.
	Watch(fn func(Seen))
}

// watchers is the list a transport calls.
type watchers struct {
	mu  sync.Mutex
	fns []func(Seen)
}

func (w *watchers) add(fn func(Seen)) {
	w.mu.Lock()
	w.fns = append(w.fns, fn)
	w.mu.Unlock()
}

func (w *watchers) tell(s Seen) {
	w.mu.Lock()
	fns := w.fns
	w.mu.Unlock()
	for _, fn := range fns {
		fn(s)
	}
}

// strayMessage is the exchange a watcher gets for a stray response.
func strayExchange(m *jsonrpc.Message) *Exchange { return &Exchange{Response: m} }
