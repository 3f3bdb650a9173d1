package transport

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// HTTPConfig configures a Streamable HTTP transport. The zero value of every
// field but URL is the documented default.
type HTTPConfig struct {
	// URL is the MCP endpoint, http or https.
	URL string
	// Header is added to every request (e.g. Authorization from --header).
	Header http.Header
	// MaxMessageBytes bounds one JSON body or one SSE event (default 4 MiB).
	MaxMessageBytes int64
	// MaxStreamBytes bounds everything read from one response (default 16 MiB).
	MaxStreamBytes int64
	// DisableKeepAlives makes every request use a fresh connection, for checks
	// that must not share a connection with earlier requests.
	DisableKeepAlives bool
}

// HTTPTransport speaks Streamable HTTP: every message is its own POST and the
// answer is a JSON body or an SSE stream. It never follows redirects: the
// harness would otherwise send the user's headers (tokens) to a host the user
// did not name.
type HTTPTransport struct {
	cfg    HTTPConfig
	url    *url.URL
	client *http.Client
	watch  watchers
}

var _ Transport = (*HTTPTransport)(nil)

// NewHTTP checks the URL and builds the transport; it does not connect.
func NewHTTP(cfg HTTPConfig) (*HTTPTransport, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid server URL %q: want http://host[:port]/path or https://…", cfg.URL)
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.MaxStreamBytes <= 0 {
		cfg.MaxStreamBytes = DefaultMaxStreamBytes
	}
	rt := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		// As many as check runs may be in flight (--conformance-concurrency
		// is at most 64): with fewer, every burst of concurrent requests
		// closed the connections past the limit and dialled them again
		// (about 40 of a run's 150 connections on the reference server).
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        30 * time.Second,
		DisableKeepAlives:      cfg.DisableKeepAlives,
		MaxResponseHeaderBytes: 256 << 10,
	}
	return &HTTPTransport{cfg: cfg, url: u, client: &http.Client{
		Transport:     rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}, nil
}

// Kind implements Transport.
func (t *HTTPTransport) Kind() string { return "http" }

// URL is the endpoint.
func (t *HTTPTransport) URL() string { return t.url.String() }

// Header returns a copy of the headers configured for every request (the
// user's --header values), for raw requests that build their own header
// set. It may hold credentials: never print it.
func (t *HTTPTransport) Header() http.Header { return t.cfg.Header.Clone() }

// Close drops idle connections.
func (t *HTTPTransport) Close() error {
	t.client.CloseIdleConnections()
	return nil
}

// RawRequest is one HTTP request of the raw layer: any method, any body, any
// headers (missing, wrong or duplicated ones included).
type RawRequest struct {
	Method string // default POST
	Body   []byte
	// Header is sent as given (keys are written as stored, so a test can
	// send an unusual case). The transport's configured headers are added
	// unless the same key is present.
	Header http.Header
	// StopAtID ends reading an SSE stream once the response with this id
	// has arrived; nil reads the stream to its end (or the limits).
	StopAtID json.RawMessage
	// OnNotification is Outgoing.OnNotification, for each notification
	// decoded from an SSE stream.
	OnNotification func(*jsonrpc.Message)
}

// RawResponse is everything the raw layer saw.
type RawResponse struct {
	HTTPInfo
	// Messages are the JSON-RPC messages in the body (one for a JSON body,
	// one per event for SSE), in order.
	Messages []*jsonrpc.Message
	// Final is the response carrying StopAtID, or for a JSON body the one
	// message in it, when it is a response.
	Final     *jsonrpc.Message
	Anomalies []Anomaly
	// Ended is true when an SSE stream reached its end (as opposed to being
	// abandoned after the final response).
	Ended bool

	seen int // SSE events read, kept or not
}

// Do sends one raw HTTP request. It returns an error only when no HTTP
// response could be read whole (connect, timeout, size); statuses and bodies
// of any kind are data in the RawResponse, but one:
//
// a gateway's or rate limiter's refusal (HTTP 429, 502, 503 or 504 with no
// JSON-RPC message in the body) is returned as an error with no response:
// it says the server could not be reached or asked, not what it answers,
// so no rule may be judged on it (a raw check returns the error, which
// leaves its run unjudged, as the typed client's requests are).
func (t *HTTPTransport) Do(ctx context.Context, rr *RawRequest) (*RawResponse, error) {
	out, err := t.do(ctx, rr)
	if out != nil && GatewayRefusal(out.Status) && len(out.Messages) == 0 {
		op := cmp.Or(rr.Method, http.MethodPost) + " " + t.url.Redacted()
		if m := RequestMethod(rr.Body); m != "" {
			op += " (" + m + ")"
		}
		return nil, &Error{Kind: KindHTTPStatus, Op: op, Status: out.Status, Excerpt: excerpt(out.Body)}
	}
	return out, err
}

// RequestMethod is the JSON-RPC method a request body names, "" when it
// names none (a batch, bytes that are not JSON-RPC).
func RequestMethod(body []byte) string {
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) != nil {
		return ""
	}
	return jsonrpc.Clip(one.Method, 80)
}

// GatewayRefusal reports the statuses a proxy or rate limiter answers in
// the server's stead.
func GatewayRefusal(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// GatewayRefused reports an error that is a gateway's refusal: HTTP 429,
// 502, 503 or 504 without a JSON-RPC message in the body.
func GatewayRefused(err error) bool {
	te := (*Error)(nil)
	return errors.As(err, &te) && te.Kind == KindHTTPStatus && GatewayRefusal(te.Status)
}

// do sends rr, and once more after a pause when a rate limiter or an
// unavailable upstream refused it (429 or 503 with no JSON-RPC message)
// and it calls no tool: what a client does, and behind a proxy that
// refused 5% of requests a tenth of a run's checks were not judged. A
// tool call is not sent twice (it may have reached the server), nor is a
// 502 or 504 (the server may have acted on it).
func (t *HTTPTransport) do(ctx context.Context, rr *RawRequest) (*RawResponse, error) {
	out, err := t.sendOnce(ctx, rr)
	if out == nil {
		return out, err
	}
	pause, again := AskAgain(out.Status, out.Header, len(out.Messages) > 0, rr.Body)
	if !again {
		return out, err
	}
	select {
	case <-ctx.Done():
		return out, err
	case <-time.After(pause):
	}
	return t.sendOnce(ctx, rr)
}

// AskAgain says whether a request with body that got status (and header,
// and a JSON-RPC message in the body or not) is sent once more, and after
// what pause: a 429 or 503 with no JSON-RPC message, to a request that
// calls no tool (HTTPTransport.do).
func AskAgain(status int, header http.Header, message bool, body []byte) (time.Duration, bool) {
	if message || (status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable) || callsTool(body) {
		return 0, false
	}
	return retryAfter(header), true
}

// Bounds of the pause before a refused request is sent again.
const (
	gatewayRetryPause    = 250 * time.Millisecond
	gatewayRetryPauseMax = 2 * time.Second
)

// retryAfter is the pause a Retry-After of seconds asks for, at most
// gatewayRetryPauseMax; gatewayRetryPause without one.
func retryAfter(h http.Header) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After"))); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, gatewayRetryPauseMax)
	}
	return gatewayRetryPause
}

// callsTool reports a body that is a tools/call request (or a batch that
// holds one).
func callsTool(body []byte) bool {
	if !bytes.Contains(body, []byte("tools/call")) {
		return false
	}
	if m := RequestMethod(body); m != "" {
		return m == "tools/call"
	}
	return true // a batch or a body that names it: not sent twice
}

func (t *HTTPTransport) sendOnce(ctx context.Context, rr *RawRequest) (*RawResponse, error) {
	method := rr.Method
	if method == "" {
		method = http.MethodPost
	}
	op := method + " " + t.url.Redacted()
	req, err := http.NewRequestWithContext(ctx, method, t.url.String(), bytes.NewReader(rr.Body))
	if err != nil {
		return nil, &Error{Kind: KindConnect, Op: op, Err: err}
	}
	for k, vs := range rr.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range t.cfg.Header {
		if req.Header.Values(k) == nil {
			req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
	}
	start := time.Now()
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, t.wrapErr(ctx, op, start, err)
	}
	defer resp.Body.Close()
	out := &RawResponse{HTTPInfo: HTTPInfo{Status: resp.StatusCode, Header: resp.Header.Clone()}}
	out.ContentType = resp.Header.Get("Content-Type")
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return out, &Error{Kind: KindRedirect, Op: op, Status: resp.StatusCode, Location: jsonrpc.Clip(sanitize(resp.Header.Get("Location")), 200)}
	}
	mt, _, _ := mime.ParseMediaType(out.ContentType)
	body := io.LimitReader(resp.Body, t.cfg.MaxStreamBytes+1)
	if mt == "text/event-stream" {
		out.SSE = true
		err = t.readSSE(body, rr, out)
	} else {
		err = t.readJSON(body, out)
	}
	if err != nil {
		if te, ok := err.(*Error); ok {
			te.Op = op
			return out, te
		}
		werr := t.wrapErr(ctx, op, start, err)
		if te, ok := werr.(*Error); ok && out.SSE && te.Kind == KindTimeout {
			te.Meanwhile = fmt.Sprintf("the event stream carried %d event(s) and %d comment line(s), none of them this request's response", out.seen, out.Comments)
		}
		return out, werr
	}
	return out, nil
}

func (t *HTTPTransport) readJSON(body io.Reader, out *RawResponse) error {
	b, err := io.ReadAll(io.LimitReader(body, t.cfg.MaxMessageBytes+1))
	out.Body = b
	if err != nil {
		return bodyBroken(err, len(b))
	}
	if int64(len(b)) > t.cfg.MaxMessageBytes {
		out.Body = b[:t.cfg.MaxMessageBytes]
		return &Error{Kind: KindTooLarge, Limit: t.cfg.MaxMessageBytes}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	msg, err := decode(b)
	if err != nil {
		out.Anomalies = append(out.Anomalies, Anomaly{Kind: "malformed-body", Detail: err.Error(), Excerpt: excerpt(b)})
		return nil
	}
	out.Messages = append(out.Messages, msg)
	if msg.Kind() == jsonrpc.KindResponse {
		out.Final = msg
	}
	return nil
}

func (t *HTTPTransport) readSSE(body io.Reader, rr *RawRequest, out *RawResponse) error {
	stopAt := rr.StopAtID
	var raw bytes.Buffer
	sr := newSSEReader(io.TeeReader(body, &limitedBuffer{buf: &raw, max: int(t.cfg.MaxMessageBytes)}), int(t.cfg.MaxMessageBytes))
	defer func() {
		out.Body = raw.Bytes()
		out.Comments = sr.comments
	}()
	// A stream of many small events costs far more in memory than its
	// bytes; past the budget events are read (the final response may come
	// yet) but not kept.
	var events, messages, responses keepBudget
	keep := func(b *keepBudget, size int) bool {
		ok, first := b.take(size)
		if first {
			out.Anomalies = append(out.Anomalies, floodAnomaly("events on one stream"))
		}
		return ok
	}
	for {
		ev, err := sr.Next()
		if err != nil {
			switch {
			case err == io.EOF:
				out.Ended = true
				if sr.read > t.cfg.MaxStreamBytes {
					return &Error{Kind: KindTooLarge, Limit: t.cfg.MaxStreamBytes}
				}
				return nil
			case errors.Is(err, errLineTooLong), errors.Is(err, errEventTooLarge):
				return &Error{Kind: KindTooLarge, Limit: t.cfg.MaxMessageBytes}
			case err == io.ErrUnexpectedEOF:
				out.Ended = true
				out.Anomalies = append(out.Anomalies, Anomaly{Kind: "sse-truncated", Detail: "stream ended inside an event"})
				return nil
			}
			return bodyBroken(err, int(sr.read))
		}
		out.seen++
		kept := keep(&events, len(ev.Data))
		if kept {
			out.Events = append(out.Events, ev)
			if ev.Name != "" && ev.Name != "message" {
				out.Anomalies = append(out.Anomalies, Anomaly{Kind: "sse-event-name", Detail: fmt.Sprintf("event type %q (MCP sends messages as the default \"message\" event)", jsonrpc.Clip(sanitize(ev.Name), 40))})
			}
		}
		if strings.TrimSpace(ev.Data) == "" {
			continue // a priming event with an empty data field carries no message
		}
		if !kept && !strings.Contains(ev.Data, `"id"`) {
			// Past the budget only the final response matters, and a
			// response has an id member: a flood of notifications is
			// skipped without decoding each one.
			continue
		}
		msg, err := decode([]byte(ev.Data))
		if err != nil {
			if kept {
				out.Anomalies = append(out.Anomalies, Anomaly{Kind: "malformed-event", Detail: err.Error(), Excerpt: excerpt([]byte(ev.Data))})
			}
			continue
		}
		if rr.OnNotification != nil && msg.Kind() == jsonrpc.KindNotification {
			rr.OnNotification(msg)
		}
		isResp := msg.Kind() == jsonrpc.KindResponse
		final := isResp && stopAt != nil && jsonrpc.SameID(msg.ID, stopAt)
		// Responses have a budget of their own, so a flood of
		// notifications cannot push the answer out of a raw read.
		if final || keep(&messages, len(ev.Data)) || (isResp && keep(&responses, len(ev.Data))) {
			out.Messages = append(out.Messages, msg)
		}
		if final {
			out.Final = msg
			return nil
		}
	}
}

// bodyBroken classifies a failed read of a response body. The server did
// answer (the status and headers arrived), so it is not a connection
// failure: it cut its answer short. A timeout stays a timeout.
func bodyBroken(err error, read int) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || (errors.As(err, &ne) && ne.Timeout()) {
		return err
	}
	return &Error{Kind: KindStreamBroken, Err: fmt.Errorf("the server cut its answer short after %d bytes of the body: %w", read, err)}
}

// limitedBuffer keeps the first max bytes written to it, as evidence.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		if len(p) > room {
			l.buf.Write(p[:room])
		} else {
			l.buf.Write(p)
		}
	}
	return len(p), nil
}

func (t *HTTPTransport) wrapErr(ctx context.Context, op string, start time.Time, err error) error {
	if ctx.Err() == context.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Kind: KindTimeout, Op: op, After: waited(ctx, start), Err: err}
	}
	if ctx.Err() == context.Canceled {
		return &Error{Kind: KindClosed, Op: op, Err: ctx.Err()}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Op: op, After: waited(ctx, start), Err: err}
	}
	return &Error{Kind: KindConnect, Op: op, Err: err}
}

// baseHeader is what every MCP POST carries (streamable-http.mdx §Sending
// Messages: the client MUST accept both media types).
func baseHeader() http.Header {
	return http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
	}
}

// Watch implements Watchable.
func (t *HTTPTransport) Watch(fn func(Seen)) { t.watch.add(fn) }

// Tell puts an exchange the caller carried itself before the watchers, as
// RoundTrip would have: a check that follows a response stream message by
// message past its final response (which RoundTrip stops at) still has the
// rules every exchange keeps judged on it. A request marked Raw is not told.
func (t *HTTPTransport) Tell(out *Outgoing, ex *Exchange, err error) {
	if out == nil || out.Raw {
		return
	}
	t.watch.tell(Seen{Out: out, Exchange: ex, Err: err, Transport: "http"})
}

// RoundTrip implements Transport.
func (t *HTTPTransport) RoundTrip(ctx context.Context, out *Outgoing) (*Exchange, error) {
	ex, err := t.roundTrip(ctx, out)
	t.Tell(out, ex, err)
	return ex, err
}

func (t *HTTPTransport) roundTrip(ctx context.Context, out *Outgoing) (*Exchange, error) {
	h := baseHeader()
	for k, vs := range out.Header {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	start := time.Now()
	rr, err := t.do(ctx, &RawRequest{Body: out.Body, Header: h, StopAtID: out.ID, OnNotification: out.OnNotification})
	ex := t.exchange(rr, out, start)
	if err != nil {
		if te, ok := err.(*Error); ok {
			te.Op += " (" + out.Method + ")"
		}
		return ex, err
	}
	op := "POST " + t.url.Redacted() + " (" + out.Method + ")"
	if ex.Response != nil {
		if len(ex.Response.ID) == 0 || string(bytes.TrimSpace(ex.Response.ID)) == "null" {
			if ex.Response.Error == nil {
				return ex, &Error{Kind: KindBadID, Op: op, Excerpt: excerpt(rr.Body), Err: errors.New("result without an id")}
			}
			ex.Anomalies = append(ex.Anomalies, Anomaly{Kind: "error-without-id", Detail: "error response does not carry the request id"})
			return ex, nil
		}
		if !jsonrpc.SameID(ex.Response.ID, out.ID) {
			return ex, &Error{Kind: KindBadID, Op: op, Excerpt: excerpt(rr.Body), Err: fmt.Errorf("response id %s, request id %s", jsonrpc.Clip(string(ex.Response.ID), 40), out.ID)}
		}
		return ex, nil
	}
	if rr.SSE {
		return ex, &Error{Kind: KindStreamBroken, Op: op, Excerpt: excerpt(rr.Body), Err: errors.New("the event stream ended before the response")}
	}
	if rr.Status < 200 || rr.Status > 299 {
		return ex, &Error{Kind: KindHTTPStatus, Op: op, Status: rr.Status, Excerpt: excerpt(rr.Body)}
	}
	if len(rr.Messages) > 0 {
		return ex, &Error{Kind: KindMalformed, Op: op, Excerpt: excerpt(rr.Body), Err: errors.New("the body is a JSON-RPC " + rr.Messages[0].Kind().String() + ", not a response")}
	}
	if len(ex.Anomalies) > 0 {
		return ex, &Error{Kind: KindMalformed, Op: op, Excerpt: excerpt(rr.Body), Err: errors.New(ex.Anomalies[0].Detail)}
	}
	return ex, &Error{Kind: KindMalformed, Op: op, Status: rr.Status, Err: fmt.Errorf("HTTP %d with an empty body", rr.Status)}
}

func (t *HTTPTransport) exchange(rr *RawResponse, out *Outgoing, start time.Time) *Exchange {
	ex := &Exchange{Elapsed: time.Since(start)}
	if rr == nil {
		return ex
	}
	info := rr.HTTPInfo
	ex.HTTP = &info
	ex.Anomalies = append(ex.Anomalies, rr.Anomalies...)
	ex.Response = rr.Final
	if ex.Response == nil && !rr.SSE && len(rr.Messages) == 1 && rr.Messages[0].Kind() == jsonrpc.KindResponse {
		ex.Response = rr.Messages[0]
	}
	ex.Sort(rr.Messages)
	return ex
}

// Notify implements Transport: a notification POST, answered by 202 with no
// body when accepted (HTTP-4).
func (t *HTTPTransport) Notify(ctx context.Context, out *Outgoing) (*Exchange, error) {
	h := baseHeader()
	for k, vs := range out.Header {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	start := time.Now()
	rr, err := t.Do(ctx, &RawRequest{Body: out.Body, Header: h})
	ex := t.exchange(rr, out, start)
	if err != nil {
		return ex, err
	}
	if rr.Status < 200 || rr.Status > 299 {
		return ex, &Error{Kind: KindHTTPStatus, Op: "POST " + t.url.Redacted() + " (" + out.Method + ")", Status: rr.Status, Excerpt: excerpt(rr.Body)}
	}
	return ex, nil
}
