// Package mcpclient is an MCP client for revision 2026-07-28 that also talks
// to initialize-era servers (2025-11-25 and earlier). Connect probes the
// server's era as the spec's backward-compatibility section describes and
// keeps the evidence; every call returns the exchange it caused, so the
// conformance layer can judge what went over the wire.
//
//	t, _ := transport.NewHTTP(transport.HTTPConfig{URL: "http://127.0.0.1:3000/mcp"})
//	c, err := mcpclient.Connect(ctx, t, mcpclient.Config{})
//	tools, err := c.ListTools(ctx)
//	res, err := c.CallTool(ctx, "get_weather", map[string]any{"location": "Oslo"})
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Config configures a client. The zero value is the documented default.
type Config struct {
	// ClientInfo is sent as io.modelcontextprotocol/clientInfo (default
	// mcp-eval and the harness version).
	ClientInfo Implementation
	// Capabilities is io.modelcontextprotocol/clientCapabilities (default
	// {"elicitation":{}}: the harness can answer form elicitations through
	// an InputHandler or the caller of Continue).
	Capabilities json.RawMessage
	// LogLevel, when set, is sent as io.modelcontextprotocol/logLevel.
	LogLevel string
	// RequestTimeout bounds each request (default 30s).
	RequestTimeout time.Duration
	// ProbeTimeout bounds the server/discover probe on stdio, after which
	// the server is taken for legacy (default 5s; checklist §2.3).
	ProbeTimeout time.Duration
	// MaxPages caps how many pages a list helper follows (default 100).
	MaxPages int
	// MaxInputRounds caps MRTR rounds with an InputHandler (default 8).
	MaxInputRounds int
	// Trace, when set, makes every request carry W3C trace context in
	// _meta with this trace id and a new span id per request; a request
	// whose context has a trace (WithTrace) carries that one instead.
	Trace *TraceContext
	// ForceEra skips the probe ("modern" or "legacy"); empty probes.
	ForceEra Era
	// KnownModern says the server already answered a modern probe on
	// another connection (a conformance run's new stdio processes). The
	// probe is still sent, as the process's first message, but a probe
	// that gets no answer fails Connect instead of falling back to
	// initialize: a new process of a modern server that answers nothing
	// is broken, not legacy, and the fallback waited out two more
	// timeouts (35 s) for each one.
	KnownModern bool
	// KeepModern says the run checks the server as a modern one although
	// its own process answered neither server/discover as a modern server
	// does nor initialize: a new process whose probe is answered that way
	// again (not as a modern server, yet answered) is kept modern instead
	// of being taken for legacy. Where the run's own process answered as
	// a modern server, one that does not is a start that failed.
	KeepModern bool
	// Observer, when set, is told about every request the client sends
	// (the era probe and re-issued requests included), after its answer
	// or failure: the harness measures latency per method with it
	// (package telemetry). It is called from the goroutine that sent the
	// request, so it must be safe for concurrent use and quick. Nil costs
	// nothing.
	Observer func(Call)
}

// DefaultProbeTimeout is Config.ProbeTimeout's default (checklist §2.3).
const DefaultProbeTimeout = 5 * time.Second

// Version of the harness, sent in clientInfo.
const harnessVersion = "0.1.0"

func (c *Config) defaults() {
	if c.ClientInfo.Name == "" {
		c.ClientInfo = Implementation{Name: "mcp-eval", Version: harnessVersion}
	}
	if c.Capabilities == nil {
		c.Capabilities = json.RawMessage(`{"elicitation":{}}`)
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = DefaultProbeTimeout
	}
	if c.MaxPages <= 0 {
		c.MaxPages = 100
	}
	if c.MaxInputRounds <= 0 {
		c.MaxInputRounds = 8
	}
}

// Client is a connection to one MCP server. Its methods are safe for
// concurrent use.
type Client struct {
	t      transport.Transport
	cfg    Config
	nextID atomic.Int64

	mu        sync.Mutex
	info      Info
	headerFor map[string][]HeaderParam // tool name → x-mcp-header declarations
}

// Request is a call as the client built it; Continue re-sends it.
type Request struct {
	Method string
	// Params are the caller's params without _meta.
	Params map[string]json.RawMessage
	opts   callOptions
}

// Response is the answer to one request.
type Response struct {
	// Result is the raw result (nil when Error is set).
	Result json.RawMessage
	// Error is the server's JSON-RPC error.
	Error *jsonrpc.Error
	// ID is the request id used.
	ID json.RawMessage
	// Sent is the exact request body.
	Sent []byte
	// SentHeader is the HTTP header sent (nil on stdio).
	SentHeader http.Header
	// Exchange is what the transport saw.
	Exchange *transport.Exchange
	// Request is what to pass to Continue after an input_required result.
	Request *Request
	// Reissued is true when a broken stream made the client send the
	// request again under a new id.
	Reissued bool
}

// ResultType returns result.resultType, and whether it was present.
func (r *Response) ResultType() (string, bool) {
	if r.Result == nil {
		return "", false
	}
	var v struct {
		ResultType *string `json:"resultType"`
	}
	if json.Unmarshal(r.Result, &v) != nil || v.ResultType == nil {
		return "", false
	}
	return *v.ResultType, true
}

// RPCError is a JSON-RPC error returned by a typed helper, with the method.
type RPCError struct {
	Method   string
	Err      *jsonrpc.Error
	Response *Response
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("%s: server returned error %d (%s): %s", e.Method, e.Err.Code, jsonrpc.CodeName(e.Err.Code), jsonrpc.Clip(e.Err.Message, 300))
}

func (e *RPCError) Unwrap() error { return e.Err }

// Code is the JSON-RPC error code.
func (e *RPCError) Code() int64 { return e.Err.Code }

// CallOption adjusts one request.
type CallOption func(*callOptions)

type callOptions struct {
	meta         map[string]json.RawMessage
	capabilities json.RawMessage
	header       http.Header
	noMeta       bool
	timeout      time.Duration // overrides Config.RequestTimeout when > 0
	onNote       func(*jsonrpc.Message)
}

// withTimeout bounds this request instead of Config.RequestTimeout.
func withTimeout(d time.Duration) CallOption { return func(o *callOptions) { o.timeout = d } }

// WithMeta adds a key to the request's _meta.
func WithMeta(key string, value any) CallOption {
	b, _ := json.Marshal(value)
	return func(o *callOptions) {
		if o.meta == nil {
			o.meta = map[string]json.RawMessage{}
		}
		o.meta[key] = b
	}
}

// WithProgressToken asks for progress notifications under token.
func WithProgressToken(token any) CallOption { return WithMeta("progressToken", token) }

// WithLogLevel asks for log notifications at level and above.
func WithLogLevel(level string) CallOption { return WithMeta(MetaLogLevel, level) }

// WithCapabilities sends these client capabilities instead of the default.
func WithCapabilities(caps json.RawMessage) CallOption {
	return func(o *callOptions) { o.capabilities = caps }
}

// WithNotificationHook calls fn with each notification the request
// receives, while it runs (see transport.Outgoing.OnNotification: fn must
// return at once).
func WithNotificationHook(fn func(*jsonrpc.Message)) CallOption {
	return func(o *callOptions) { o.onNote = fn }
}

// WithHeader adds an HTTP header to this request.
func WithHeader(key, value string) CallOption {
	return func(o *callOptions) {
		if o.header == nil {
			o.header = http.Header{}
		}
		o.header.Add(key, value)
	}
}

// Transport returns the underlying transport, for the raw layer.
func (c *Client) Transport() transport.Transport { return c.t }

// Info returns what the client learnt when it connected.
func (c *Client) Info() Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// NewID returns a fresh request id.
func (c *Client) NewID() json.RawMessage { return jsonrpc.IntID(c.nextID.Add(1)) }

// Close ends a legacy session if there is one and closes the transport.
func (c *Client) Close() error {
	info := c.Info()
	if ht, ok := c.t.(*transport.HTTPTransport); ok && info.SessionID != "" {
		// Legacy Streamable HTTP: DELETE ends the session (optional for the
		// client; a server may answer 405).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, _ = ht.Do(ctx, &transport.RawRequest{Method: http.MethodDelete, Header: http.Header{HeaderSessionID: {info.SessionID}}})
		cancel()
	}
	return c.t.Close()
}

// Build turns a method and params into the exact message and headers the
// client would send; the conformance layer starts from it to make
// deliberately wrong variants, and sends them itself. The Observer is told
// of it as a Raw call, so that the span id in its traceparent is exported.
func (c *Client) Build(method string, params any, opts ...CallOption) (*Request, *transport.Outgoing, error) {
	req := &Request{Method: method}
	for _, o := range opts {
		o(&req.opts)
	}
	p, err := toParamMap(params)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding params of %s: %w", method, err)
	}
	req.Params = p
	start := time.Now()
	out, sent, err := c.outgoingTraced(req, c.NewID(), c.cfg.Trace)
	if err == nil && sent != nil && c.cfg.Observer != nil {
		call := observed(req, start, sent, nil, nil)
		call.Raw, call.Elapsed = true, 0
		c.cfg.Observer(call)
	}
	return req, out, err
}

func toParamMap(params any) (map[string]json.RawMessage, error) {
	if params == nil {
		return map[string]json.RawMessage{}, nil
	}
	if m, ok := params.(map[string]json.RawMessage); ok {
		cp := make(map[string]json.RawMessage, len(m))
		for k, v := range m {
			cp[k] = v
		}
		return cp, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, errors.New("params must encode to a JSON object")
	}
	return m, nil
}

// outgoingTraced renders req under id for the current era, in trace tc
// (none when nil). It also returns the trace context put in _meta (nil
// when none, or when the caller's own WithMeta replaced the traceparent:
// then the wire id is not the harness's), for the observer.
func (c *Client) outgoingTraced(req *Request, id json.RawMessage, tc *TraceContext) (*transport.Outgoing, *sentTrace, error) {
	info := c.Info()
	params := make(map[string]json.RawMessage, len(req.Params)+1)
	for k, v := range req.Params {
		params[k] = v
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := params["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
	}
	modern := info.Era != EraLegacy
	if modern && !req.opts.noMeta {
		caps := c.cfg.Capabilities
		if req.opts.capabilities != nil {
			caps = req.opts.capabilities
		}
		meta[MetaProtocolVersion], _ = json.Marshal(info.versionOrLatest())
		meta[MetaClientCapabilities] = caps
		meta[MetaClientInfo], _ = json.Marshal(c.cfg.ClientInfo)
		if c.cfg.LogLevel != "" {
			meta[MetaLogLevel], _ = json.Marshal(c.cfg.LogLevel)
		}
	}
	var sent *sentTrace
	if tc != nil {
		for k, v := range tc.meta() {
			meta[k], _ = json.Marshal(v)
			if k == "traceparent" {
				sent = &sentTrace{traceparent: v, runSpanID: tc.RunSpanID}
			}
		}
	}
	for k, v := range req.opts.meta {
		meta[k] = v
		if k == "traceparent" {
			sent = nil // a probe's own traceparent: no span of the harness has its id
		}
	}
	if len(meta) > 0 {
		params["_meta"], _ = json.Marshal(meta)
	}
	var paramsAny any
	if len(params) > 0 || modern {
		paramsAny = params
	}
	msg, err := jsonrpc.NewRequest(id, req.Method, paramsAny)
	if err != nil {
		return nil, nil, err
	}
	body, err := msg.Encode()
	if err != nil {
		return nil, nil, err
	}
	h, err := c.headers(req, info)
	if err != nil {
		return nil, nil, err
	}
	return &transport.Outgoing{Body: body, ID: id, Method: req.Method, Header: h, OnNotification: req.opts.onNote}, sent, nil
}

// headers derives the Streamable HTTP request headers from the body
// (streamable-http.mdx §Request Metadata, §Client Behavior).
func (c *Client) headers(req *Request, info Info) (http.Header, error) {
	if c.t.Kind() != "http" {
		return nil, nil
	}
	h := http.Header{}
	if info.Era == EraLegacy {
		if info.ProtocolVersion != "" {
			h.Set(HeaderProtocolVersion, info.ProtocolVersion)
		}
		if info.SessionID != "" {
			h.Set(HeaderSessionID, info.SessionID)
		}
	} else {
		h.Set(HeaderProtocolVersion, info.versionOrLatest())
		h.Set(HeaderMethod, req.Method)
		var name string
		switch req.Method {
		case "tools/call", "prompts/get":
			_ = json.Unmarshal(req.Params["name"], &name)
			h.Set(HeaderName, EncodeHeaderValue(name))
		case "resources/read":
			_ = json.Unmarshal(req.Params["uri"], &name)
			h.Set(HeaderName, EncodeHeaderValue(name))
		}
		if req.Method == "tools/call" {
			c.mu.Lock()
			decl := c.headerFor[name]
			c.mu.Unlock()
			ph, err := paramHeaders(decl, req.Params["arguments"])
			if err != nil {
				return nil, err
			}
			for k, v := range ph {
				h[k] = v
			}
		}
	}
	for k, v := range req.opts.header {
		h[http.CanonicalHeaderKey(k)] = append(h[http.CanonicalHeaderKey(k)], v...)
	}
	return h, nil
}

// Do sends a request and returns the server's answer. A JSON-RPC error is
// data in Response.Error, not a Go error; the error return is for transport
// failures (see package transport's Error kinds).
func (c *Client) Do(ctx context.Context, method string, params any, opts ...CallOption) (*Response, error) {
	req := &Request{Method: method}
	for _, o := range opts {
		o(&req.opts)
	}
	p, err := toParamMap(params)
	if err != nil {
		return nil, fmt.Errorf("encoding params of %s: %w", method, err)
	}
	req.Params = p
	return c.send(ctx, req)
}

func (c *Client) send(ctx context.Context, req *Request) (*Response, error) {
	resp, err := c.sendOnce(ctx, req)
	if err != nil && transport.KindOf(err) == transport.KindStreamBroken {
		// streamable-http.mdx: a stream that breaks before the response is
		// not resumable (no Last-Event-ID); the client re-issues the
		// request once under a new id.
		resp2, err2 := c.sendOnce(ctx, req)
		if resp2 != nil {
			resp2.Reissued = true
		}
		return resp2, err2
	}
	return resp, err
}

func (c *Client) sendOnce(ctx context.Context, req *Request) (*Response, error) {
	id := c.NewID()
	tc := c.cfg.Trace
	if t := TraceOf(ctx); t != nil {
		tc = t
	}
	out, sent, err := c.outgoingTraced(req, id, tc)
	if err != nil {
		return nil, err
	}
	timeout := c.cfg.RequestTimeout
	if req.opts.timeout > 0 {
		timeout = req.opts.timeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	ex, err := c.t.RoundTrip(rctx, out)
	if c.cfg.Observer != nil {
		c.cfg.Observer(observed(req, start, sent, ex, err))
	}
	resp := &Response{ID: id, Sent: out.Body, SentHeader: out.Header, Exchange: ex, Request: req}
	if te := (*transport.Error)(nil); errors.As(err, &te) && te.Kind == transport.KindTimeout && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		// The request's own bound ran out: say the bound that was set,
		// not the transport's measurement, which starts a moment later
		// and reads 499ms for a 500ms deadline on a busy machine.
		te.After = timeout
	}
	if transport.GatewayRefused(err) {
		// A proxy or rate limiter answered in the server's stead: there
		// is no answer of the server's to judge, only the error.
		return nil, err
	}
	if err != nil {
		return resp, err
	}
	if ex.Response.Error != nil {
		resp.Error = ex.Response.Error
	} else {
		resp.Result = ex.Response.Result
	}
	return resp, nil
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) (*transport.Exchange, error) {
	req := &Request{Method: method}
	p, err := toParamMap(params)
	if err != nil {
		return nil, err
	}
	req.Params = p
	tc := c.cfg.Trace
	if t := TraceOf(ctx); t != nil {
		tc = t
	}
	out, sent, err := c.outgoingTraced(req, nil, tc)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	start := time.Now()
	ex, err := c.t.Notify(rctx, out)
	if c.cfg.Observer != nil {
		// Observed like a request, so that its traceparent names a span.
		c.cfg.Observer(observed(req, start, sent, ex, err))
	}
	if transport.GatewayRefused(err) {
		return nil, err
	}
	return ex, err
}

// call is Do for typed helpers: a JSON-RPC error becomes an *RPCError.
func (c *Client) call(ctx context.Context, method string, params any, opts ...CallOption) (*Response, error) {
	resp, err := c.Do(ctx, method, params, opts...)
	if err != nil {
		return resp, err
	}
	if resp.Error != nil {
		return resp, &RPCError{Method: method, Err: resp.Error, Response: resp}
	}
	return resp, nil
}
