package conformance

// Streamable HTTP helpers shared by the HTTP, HDR, REM, SUB, LOG, PROG,
// AUTH and TASK checks: raw requests built from the client's own message,
// a reader that follows an event stream message by message (the raw
// layer's Do reads a stream to its end, which an open subscriptions/listen
// stream never reaches), and a hand-written HTTP/1.1 writer for header
// values net/http refuses to send.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// httpConfiguredHeader returns the headers the user configured for the HTTP
// transport (credentials included), for raw requests and streams that build
// their own header set.
func httpConfiguredHeader(t *transport.HTTPTransport) http.Header {
	if t == nil {
		return nil
	}
	return t.Header()
}

// httpRawHeader is what the transport sends with every MCP POST plus the
// message's own headers, as a map the caller may change.
func httpRawHeader(out *transport.Outgoing) http.Header {
	h := http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
	}
	for k, vs := range out.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	return h
}

// httpRawCall is one raw POST and what came back.
type httpRawCall struct {
	Body   []byte
	Header http.Header
	ID     json.RawMessage
	RR     *transport.RawResponse
}

// Ev is the exchange as evidence.
func (rc *httpRawCall) Ev() *check.Evidence { return check.FromRaw(rc.Body, rc.Header, rc.RR) }

// Error is the JSON-RPC error that answered the request, if any.
func (rc *httpRawCall) Error() *jsonrpc.Error {
	if m := rc.final(); m != nil {
		return m.Error
	}
	return nil
}

// final is the response message: the one with the request's id, or an
// error response without id (a server that could not read the id).
func (rc *httpRawCall) final() *jsonrpc.Message {
	if rc.RR == nil {
		return nil
	}
	if rc.RR.Final != nil {
		return rc.RR.Final
	}
	for _, m := range rc.RR.Messages {
		if m.Kind() == jsonrpc.KindResponse && (jsonrpc.SameID(m.ID, rc.ID) || len(m.ID) == 0 || string(m.ID) == "null") {
			return m
		}
	}
	return nil
}

// Describe says in a few words what came back, e.g. "HTTP 400 with error
// -32020" or "HTTP 200 with a result".
func (rc *httpRawCall) Describe() string { return httpDescribe(rc.RR, rc.final()) }

func httpDescribe(rr *transport.RawResponse, final *jsonrpc.Message) string {
	if rr == nil {
		return "no HTTP response"
	}
	s := fmt.Sprintf("HTTP %d", rr.Status)
	switch {
	case final != nil && final.Error != nil:
		s += fmt.Sprintf(" with error %d", final.Error.Code)
	case final != nil:
		s += " with a result"
	case len(bytes.TrimSpace(rr.Body)) == 0:
		s += " with an empty body"
	default:
		s += " with no JSON-RPC response"
	}
	return s
}

// httpRawTimeout bounds one raw request of a check.
const httpRawTimeout = 30 * time.Second

// httpPost builds method/params exactly as the client would send them, lets
// edit change the body or headers, and POSTs the result through the raw
// layer. edit may be nil.
func httpPost(ctx context.Context, env check.Env, method string, params any, edit func(h http.Header, body *[]byte), opts ...mcpclient.CallOption) (*httpRawCall, error) {
	if env.HTTP == nil {
		return nil, errors.New("no HTTP transport")
	}
	_, out, err := env.Client.Build(method, params, opts...)
	if err != nil {
		return nil, err
	}
	rc := &httpRawCall{Body: out.Body, Header: httpRawHeader(out), ID: out.ID}
	if edit != nil {
		edit(rc.Header, &rc.Body)
	}
	ctx, cancel := context.WithTimeout(ctx, httpRawTimeout)
	defer cancel()
	rc.RR, err = env.HTTP.Do(ctx, &transport.RawRequest{Body: rc.Body, Header: rc.Header, StopAtID: rc.ID})
	if err != nil && rc.RR == nil {
		return rc, err
	}
	return rc, nil
}

// isHeaderMismatch reports whether the exchange is the rejection the spec
// demands for a header problem: HTTP 400 with JSON-RPC error -32020.
func (rc *httpRawCall) isHeaderMismatch() bool {
	e := rc.Error()
	return rc.RR != nil && rc.RR.Status == http.StatusBadRequest && e != nil && e.Code == jsonrpc.CodeHeaderMismatch
}

// headerRejected reports whether the server rejected the request because
// of its headers (-32020 under any status): the opposite of accepted.
func (rc *httpRawCall) headerRejected() bool {
	e := rc.Error()
	return e != nil && e.Code == jsonrpc.CodeHeaderMismatch
}

// httpSetHeader replaces every spelling of a header name by one value under
// exactly the key given (the raw layer writes keys as stored).
func httpSetHeader(h http.Header, key, value string) {
	httpDelHeader(h, key)
	h[key] = []string{value}
}

// httpDelHeader removes a header whatever the case of its stored key.
func httpDelHeader(h http.Header, key string) {
	for k := range h {
		if strings.EqualFold(k, key) {
			delete(h, k)
		}
	}
}

// httpLiveMsg is one item read from a live response: a JSON-RPC message, or a
// frame that is not one (kept as an anomaly).
type httpLiveMsg struct {
	Msg     *jsonrpc.Message
	Raw     string
	Anomaly string
	At      time.Time
}

// httpLive is an HTTP response read message by message while it is still
// open, for streams that stay open (subscriptions/listen) and for checks
// that must see what follows the final response.
type httpLive struct {
	Status      int
	Header      http.Header
	ContentType string
	SSE         bool
	Sent        []byte
	SentHeader  http.Header

	cancel context.CancelFunc
	items  chan httpLiveMsg

	mu       sync.Mutex
	body     bytes.Buffer
	comments int
	ended    bool
	readErr  error
}

// httpLiveMaxBytes bounds what one live response may deliver.
const httpLiveMaxBytes = 4 << 20

// httpOpenLive POSTs body with h to the endpoint and returns once the response
// headers are in; messages then arrive through Next. The request carries
// the transport's configured headers (credentials) unless h sets them.
func httpOpenLive(ctx context.Context, ht *transport.HTTPTransport, body []byte, h http.Header) (*httpLive, error) {
	hdr := h.Clone()
	for k, vs := range httpConfiguredHeader(ht) {
		if hdr.Values(k) == nil {
			hdr[k] = vs
		}
	}
	lctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(lctx, http.MethodPost, ht.URL(), bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, err
	}
	for k, vs := range hdr {
		req.Header[k] = append([]string(nil), vs...)
	}
	resp, err := httpLiveClient.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" && mt != "application/json" {
		// A rate limiter's or unavailable upstream's refusal is asked
		// again once, as every request of the run is (transport.AskAgain).
		if pause, again := transport.AskAgain(resp.StatusCode, resp.Header, false, body); again {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			select {
			case <-lctx.Done():
				cancel()
				return nil, lctx.Err()
			case <-time.After(pause):
			}
			req, err = http.NewRequestWithContext(lctx, http.MethodPost, ht.URL(), bytes.NewReader(body))
			if err != nil {
				cancel()
				return nil, err
			}
			req.Header = hdr.Clone()
			if resp, err = httpLiveClient.Do(req); err != nil {
				cancel()
				return nil, err
			}
		}
	}
	l := &httpLive{Status: resp.StatusCode, Header: resp.Header, ContentType: resp.Header.Get("Content-Type"), Sent: body, SentHeader: hdr, cancel: cancel, items: make(chan httpLiveMsg, 256)}
	mt, _, _ := mime.ParseMediaType(l.ContentType)
	l.SSE = mt == "text/event-stream"
	if transport.GatewayRefusal(l.Status) && !l.SSE && mt != "application/json" {
		// A proxy or rate limiter answered in the server's stead (a
		// JSON body may be the server's own JSON-RPC error, kept as data).
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		resp.Body.Close()
		cancel()
		return nil, &transport.Error{Kind: transport.KindHTTPStatus, Op: "POST to the MCP endpoint (" + transport.RequestMethod(body) + ")", Status: l.Status, Excerpt: jsonrpc.Clip(strings.ToValidUTF8(string(excerpt), "�"), 200)}
	}
	go l.read(resp.Body)
	return l, nil
}

// httpLiveClient never follows redirects (credentials stay with the host the
// user named) and keeps no idle connections beyond the default.
var httpLiveClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  httpRawTimeout,
		MaxResponseHeaderBytes: 256 << 10,
		IdleConnTimeout:        30 * time.Second,
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (l *httpLive) read(body io.ReadCloser) {
	defer close(l.items)
	defer body.Close()
	r := io.TeeReader(io.LimitReader(body, httpLiveMaxBytes), &httpLiveWriter{l})
	if !l.SSE {
		b, err := io.ReadAll(r)
		l.finish(err)
		if len(bytes.TrimSpace(b)) == 0 {
			return
		}
		l.push(string(b))
		return
	}
	br := bufio.NewReaderSize(r, 32<<10)
	var data strings.Builder
	has := false
	for {
		line, err := br.ReadString('\n')
		if err != nil && line == "" {
			l.finish(err)
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if has {
				l.push(data.String())
			}
			data.Reset()
			has = false
		case line[0] == ':':
			l.mu.Lock()
			l.comments++
			l.mu.Unlock()
		default:
			field, value, _ := strings.Cut(line, ":")
			if field == "data" {
				if has {
					data.WriteByte('\n')
				}
				data.WriteString(strings.TrimPrefix(value, " "))
				has = true
			}
		}
		if err != nil {
			if has {
				l.push(data.String())
			}
			l.finish(err)
			return
		}
	}
}

type httpLiveWriter struct{ l *httpLive }

func (w *httpLiveWriter) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	if room := 64<<10 - w.l.body.Len(); room > 0 {
		w.l.body.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *httpLive) push(data string) {
	if strings.TrimSpace(data) == "" {
		return
	}
	item := httpLiveMsg{Raw: data, At: time.Now()}
	if m, err := jsonrpc.Decode([]byte(data)); err != nil {
		item.Anomaly = err.Error()
	} else {
		item.Msg = m
	}
	select {
	case l.items <- item:
	default: // a flood beyond the buffer is dropped; checks need the start
	}
}

func (l *httpLive) finish(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == io.EOF || err == nil {
		l.ended = true
		return
	}
	l.readErr = err
}

// Next returns the next item, waiting at most d. ok is false when nothing
// came in time; ended is true when the response is over.
func (l *httpLive) Next(ctx context.Context, d time.Duration) (item httpLiveMsg, ok, ended bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case it, open := <-l.items:
		if !open {
			return httpLiveMsg{}, false, true
		}
		return it, true, false
	case <-t.C:
	case <-ctx.Done():
	}
	return httpLiveMsg{}, false, false
}

// Ended reports whether the server ended the response by itself.
func (l *httpLive) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}

// Comments counts SSE comment lines seen so far.
func (l *httpLive) Comments() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.comments
}

// Close abandons the response (closing the stream, as a client cancels on
// Streamable HTTP).
func (l *httpLive) Close() { l.cancel() }

// info is what the response showed so far, as the transport reports it.
func (l *httpLive) info() transport.HTTPInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return transport.HTTPInfo{Status: l.Status, Header: l.Header, ContentType: l.ContentType, SSE: l.SSE, Body: append([]byte(nil), l.body.Bytes()...), Comments: l.comments}
}

// Ev is the exchange so far as evidence.
func (l *httpLive) Ev() *check.Evidence {
	return check.FromRaw(l.Sent, l.SentHeader, &transport.RawResponse{HTTPInfo: l.info()})
}

// httpRawTCPPost writes one HTTP/1.1 POST by hand, so header values net/http
// refuses (control characters) reach the server, and reads the status and
// body. Only plain http and https URLs; it waits at most until ctx ends.
func httpRawTCPPost(ctx context.Context, endpoint string, header [][2]string, body []byte) (int, []byte, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return 0, nil, err
	}
	host := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			host += ":443"
		} else {
			host += ":80"
		}
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	var conn net.Conn
	if u.Scheme == "https" {
		conn, err = (&tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: u.Hostname()}}).DialContext(ctx, "tcp", host)
	} else {
		conn, err = d.DialContext(ctx, "tcp", host)
	}
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = conn.SetDeadline(deadline)
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", u.RequestURI(), u.Host)
	for _, kv := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", kv[0], kv[1])
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\nConnection: close\r\n\r\n", len(body))
	b.Write(body)
	if _, err := conn.Write(b.Bytes()); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, rb, nil
}

// httpIsLoopback reports whether the endpoint's host is a loopback address
// or localhost.
func httpIsLoopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// EvAnswer is Ev located at what answered the request: the error code or
// the result of its response; when the error code is want and only the
// status was wrong, at the HTTP status. Unlocated when no JSON-RPC
// response came (the status and body are the evidence).
func (rc *httpRawCall) EvAnswer(want int64) *check.Evidence {
	ev := rc.Ev()
	m := rc.final()
	if m == nil {
		return ev
	}
	if m.Error != nil && m.Error.Code == want {
		ev.OnStatus = rc.RR.Status != 0
		return ev
	}
	ptr := "/result"
	if m.Error != nil {
		ptr = "/error/code"
	}
	msg := bytes.TrimSpace(rc.RR.Body)
	if len(msg) == 0 || msg[0] != '{' {
		// An event stream: the response as the client decoded it.
		b, err := json.Marshal(m)
		if err != nil {
			return ev
		}
		msg = b
	}
	return check.At(ev, msg, ptr)
}

// httpSeen is a plain request's answer as the repetition observed it
// (Pass.Do), read the way an httpRawCall reads a raw one: a check that
// only judges what a plain request got judges the answer the other checks
// of the repetition judge, instead of sending it again. It is shared:
// read it, never change it.
type httpSeen struct {
	resp *mcpclient.Response
	info *transport.HTTPInfo
}

// httpObserve is Pass.Do on Streamable HTTP. The error is the transport's
// when no HTTP response came at all (as httpPost's).
func httpObserve(p *check.Pass, method string, params any) (*httpSeen, error) {
	resp, err := p.Do(method, params)
	if resp == nil || resp.Exchange == nil || resp.Exchange.HTTP == nil {
		if err == nil {
			err = fmt.Errorf("%s: no HTTP response", method)
		}
		return nil, err
	}
	return &httpSeen{resp: resp, info: resp.Exchange.HTTP}, nil
}

// final is the response message (the transport's, as httpRawCall.final).
func (s *httpSeen) final() *jsonrpc.Message { return s.resp.Exchange.Response }

// Status is the HTTP status.
func (s *httpSeen) Status() int { return s.info.Status }

// Error is the JSON-RPC error that answered the request, if any.
func (s *httpSeen) Error() *jsonrpc.Error {
	if m := s.final(); m != nil {
		return m.Error
	}
	return nil
}

// Describe is httpRawCall.Describe.
func (s *httpSeen) Describe() string {
	return httpDescribe(&transport.RawResponse{HTTPInfo: *s.info}, s.final())
}

// Ev is the exchange as evidence.
func (s *httpSeen) Ev() *check.Evidence { return check.FromResponse(s.resp) }

// EvAnswer is httpRawCall.EvAnswer: located at the error code or result
// of the response, or at the status when the code was want.
func (s *httpSeen) EvAnswer(want int64) *check.Evidence {
	m := s.final()
	switch {
	case m == nil:
		return s.Ev()
	case m.Error != nil && m.Error.Code == want:
		ev := s.Ev()
		ev.OnStatus = s.info.Status != 0
		return ev
	case m.Error != nil:
		return check.FromResponseAt(s.resp, "/error/code")
	}
	return check.FromResponseAt(s.resp, "/result")
}

// httpSharedKey is the Memo key of one repetition's raw variant named name.
type httpSharedKey struct {
	run  int
	name string
}

type httpShared struct {
	rc  *httpRawCall
	err error
}

// httpPostShared is httpPost for a variant several checks send alike (the
// same method, params and edit, which name must say in full): sent once
// per repetition, every check judges the same exchange. The call is
// shared: read it only.
func httpPostShared(p *check.Pass, name, method string, params any, edit func(h http.Header, body *[]byte)) (*httpRawCall, error) {
	if p.Env.Memo == nil {
		return httpPost(p.Ctx, p.Env, method, params, edit)
	}
	v, ok := p.Env.Memo.Do(httpSharedKey{p.Run, name}, func() any {
		rc, err := httpPost(p.Ctx, p.Env, method, params, edit)
		return httpShared{rc, err}
	}).(httpShared)
	if !ok {
		return nil, fmt.Errorf("%s: the shared request failed (a harness bug: see the check that sent it)", name)
	}
	return v.rc, v.err
}

// httpMethodMismatch names the variant HDR-3, HDR-6 and HTTP-7 share:
// server/discover whose Mcp-Method header says tools/list.
const httpMethodMismatch = "server/discover with Mcp-Method tools/list"

// httpSendMethodMismatch sends (once per repetition) httpMethodMismatch.
func httpSendMethodMismatch(p *check.Pass) (*httpRawCall, error) {
	return httpPostShared(p, httpMethodMismatch, "server/discover", nil, func(h http.Header, _ *[]byte) { httpSetHeader(h, mcpclient.HeaderMethod, "tools/list") })
}
