package refserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/testenv"
)

// The official 2026-07-28 JSON Schema, the oracle, is compiled once per
// test binary.
var (
	specOnce   sync.Once
	specCached *schema
	specErr    error
)

func specSchema(t *testing.T) *schema {
	t.Helper()
	path := testenv.SpecSchema(t, "2026-07-28")
	specOnce.Do(func() {
		doc, err := os.ReadFile(path)
		if err != nil {
			specErr = err
			return
		}
		specCached, specErr = compileSchema(doc)
	})
	if specErr != nil {
		t.Fatalf("loading %s: %v", path, specErr)
	}
	return specCached
}

// assertDef validates v against #/$defs/<def> of the official schema.
func assertDef(t *testing.T, v any, def string) {
	t.Helper()
	if err := specSchema(t).validateRef(v, "#/$defs/"+def); err != nil {
		t.Errorf("not a valid %s: %v\n%s", def, err, compactJSON(v))
	}
}

// resultDefs names the concrete result type of each method (AMB-1: validate
// the concrete type, not the permissive union).
var resultDefs = map[string]string{
	"server/discover":          "DiscoverResult",
	"tools/list":               "ListToolsResult",
	"tools/call":               "CallToolResult",
	"resources/list":           "ListResourcesResult",
	"resources/templates/list": "ListResourceTemplatesResult",
	"resources/read":           "ReadResourceResult",
	"prompts/list":             "ListPromptsResult",
	"prompts/get":              "GetPromptResult",
	"completion/complete":      "CompleteResult",
	"subscriptions/listen":     "SubscriptionsListenResult",
}

var cacheableMethods = []string{"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}

var notificationDefs = map[string]string{
	"notifications/progress":                   "ProgressNotification",
	"notifications/message":                    "LoggingMessageNotification",
	"notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
	"notifications/cancelled":                  "CancelledNotification",
}

// errorDefs maps codes to their schema type; the MCP-specific ones describe
// whole responses, the JSON-RPC ones only the error object.
var errorDefs = map[int]struct {
	def   string
	whole bool
}{
	CodeHeaderMismatch:                  {"HeaderMismatchError", true},
	CodeMissingRequiredClientCapability: {"MissingRequiredClientCapabilityError", true},
	CodeUnsupportedProtocolVersion:      {"UnsupportedProtocolVersionError", true},
	CodeMethodNotFound:                  {"MethodNotFoundError", false},
	CodeInvalidParams:                   {"InvalidParamsError", false},
	CodeParseError:                      {"ParseError", false},
	CodeInvalidRequest:                  {"InvalidRequestError", false},
	CodeInternalError:                   {"InternalError", false},
}

// checkMessage asserts the invariants of any server message answering a
// request of reqMethod, and validates it against the official schema.
func checkMessage(t *testing.T, m map[string]any, reqMethod string) {
	t.Helper()
	if m["jsonrpc"] != "2.0" {
		t.Errorf("jsonrpc = %v, want 2.0 (RPC-1)", m["jsonrpc"])
	}
	if method, ok := m["method"].(string); ok {
		if _, hasID := m["id"]; hasID {
			t.Errorf("server sent a request %q (RPC-4)", method)
		}
		def, known := notificationDefs[method]
		if !known {
			t.Errorf("unexpected notification %q", method)
			return
		}
		assertDef(t, m, def)
		return
	}
	result, hasResult := m["result"].(map[string]any)
	errObj, hasError := m["error"].(map[string]any)
	if hasResult == hasError {
		t.Fatalf("response must have exactly one of result and error (RPC-1): %s", compactJSON(m))
	}
	if hasError {
		assertDef(t, m, "JSONRPCErrorResponse")
		code, _ := number(errObj["code"])
		if code >= -32019 && code <= -32000 || code == -32002 {
			t.Errorf("error code %v is forbidden (ERR-2, ERR-3)", code)
		}
		if d, ok := errorDefs[int(code)]; ok {
			if d.whole {
				assertDef(t, m, d.def)
			} else {
				assertDef(t, errObj, d.def)
			}
		} else {
			t.Errorf("unexpected error code %v (ERR-1)", code)
		}
		return
	}
	assertDef(t, m, "JSONRPCResultResponse")
	checkResult(t, result, reqMethod)
}

// checkResult asserts RES-1/RES-3, CACHE-1/CACHE-2, MRTR-1/2/3 and the
// concrete result type.
func checkResult(t *testing.T, result map[string]any, method string) {
	t.Helper()
	info, _ := get(result, "_meta", metaServerInfo).(map[string]any)
	if info["name"] != ServerName || info["version"] != ServerVersion {
		t.Errorf("_meta.serverInfo = %v (RES-3)", info)
	}
	switch result["resultType"] {
	case "complete":
		def, ok := resultDefs[method]
		if !ok {
			t.Fatalf("no result type known for %s", method)
		}
		assertDef(t, result, def)
		if slices.Contains(cacheableMethods, method) {
			ttl, ok := number(result["ttlMs"])
			if !ok || ttl < 0 || !isType(result["ttlMs"], "integer") {
				t.Errorf("ttlMs = %v, want an integer >= 0 (CACHE-1)", result["ttlMs"])
			}
			if s := result["cacheScope"]; s != "public" && s != "private" {
				t.Errorf("cacheScope = %v (CACHE-1)", s)
			}
		}
	case "input_required":
		if !slices.Contains([]string{"tools/call", "resources/read", "prompts/get"}, method) {
			t.Errorf("input_required on %s (MRTR-1)", method)
		}
		assertDef(t, result, "InputRequiredResult")
		_, hasReqs := result["inputRequests"]
		_, hasState := result["requestState"]
		if !hasReqs && !hasState {
			t.Errorf("input_required without inputRequests or requestState (MRTR-2)")
		}
		for key, ir := range asMap(result["inputRequests"]) {
			assertDef(t, ir, "InputRequest")
			if _, bad := asMap(ir)["jsonrpc"]; bad {
				t.Errorf("inputRequests[%s] carries jsonrpc (MRTR-3)", key)
			}
		}
		if _, ok := result["ttlMs"]; ok {
			t.Errorf("input_required carries ttlMs (CACHE-2)")
		}
		if _, ok := result["cacheScope"]; ok {
			t.Errorf("input_required carries cacheScope (CACHE-2)")
		}
	default:
		t.Errorf("resultType = %v (RES-1, RES-2)", result["resultType"])
	}
}

// get walks nested objects; it returns nil when a step is missing.
func get(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func asSlice(v any) []any { s, _ := v.([]any); return s }

func str(v any) string { s, _ := v.(string); return s }

func num(v any) float64 { f, _ := number(v); return f }

// meta builds params._meta for 2026-07-28 with the given capabilities.
func meta(caps map[string]any) map[string]any {
	if caps == nil {
		caps = map[string]any{}
	}
	return map[string]any{
		metaProtocolVersion:    ProtocolVersion,
		metaClientInfo:         map[string]any{"name": "refserver-test", "version": "0.0.1"},
		metaClientCapabilities: caps,
	}
}

// params returns params with the baseline _meta plus extra fields.
func params(extra map[string]any) map[string]any {
	p := map[string]any{"_meta": meta(nil)}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func encodeRequest(t *testing.T, id any, method string, p map[string]any) []byte {
	t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		m["id"] = id
	}
	if p != nil {
		m["params"] = p
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatalf("invalid JSON from server: %v\n%s", err, b)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("server sent a non-object: %s", b)
	}
	return m
}

// testOptions are fast timings for tests.
func testOptions() Options {
	return Options{StepDelay: 2 * time.Millisecond, KeepAliveInterval: time.Hour}
}

// ---------------------------------------------------------------------------
// Streamable HTTP client

type httpTarget struct {
	srv *Server
	url string
}

func newHTTPTarget(t *testing.T, opts Options) *httpTarget {
	t.Helper()
	srv := New(opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Close) // runs first: ends listen streams so ts.Close does not wait
	return &httpTarget{srv: srv, url: ts.URL + "/mcp"}
}

type httpReply struct {
	status int
	header http.Header
	body   []byte
	msgs   []map[string]any // the JSON body, or each SSE data event in order
}

// last returns the final message (the response).
func (r *httpReply) last(t *testing.T) map[string]any {
	t.Helper()
	if len(r.msgs) == 0 {
		t.Fatalf("no JSON-RPC message in reply (status %d): %q", r.status, r.body)
	}
	return r.msgs[len(r.msgs)-1]
}

// baselineHeaders are the §0 headers for a request body.
func baselineHeaders(method string, p map[string]any) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set(headerProtocolVersion, ProtocolVersion)
	h.Set(headerMethod, method)
	switch method {
	case "tools/call", "prompts/get":
		if name, ok := p["name"].(string); ok {
			h.Set(headerName, name)
		}
	case "resources/read":
		if uri, ok := p["uri"].(string); ok {
			h.Set(headerName, uri)
		}
	}
	return h
}

// call sends a baseline request; edit may change the headers.
func (ht *httpTarget) call(t *testing.T, id any, method string, p map[string]any, edit func(http.Header)) *httpReply {
	t.Helper()
	h := baselineHeaders(method, p)
	if edit != nil {
		edit(h)
	}
	return ht.post(t, http.DefaultClient, encodeRequest(t, id, method, p), h)
}

func (ht *httpTarget) post(t *testing.T, client *http.Client, body []byte, h http.Header) *httpReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ht.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	reply := &httpReply{status: resp.StatusCode, header: resp.Header, body: data}
	if _, ok := resp.Header["Mcp-Session-Id"]; ok {
		t.Errorf("server sent Mcp-Session-Id (REM-4)")
	}
	switch ct := resp.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "text/event-stream"):
		for _, ev := range parseSSE(t, data) {
			reply.msgs = append(reply.msgs, decodeObject(t, []byte(ev)))
		}
	case len(data) > 0:
		if ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json (HTTP-3)", ct)
		}
		reply.msgs = append(reply.msgs, decodeObject(t, data))
	}
	return reply
}

// parseSSE returns the data of each event of a complete stream.
func parseSSE(t *testing.T, data []byte) []string {
	t.Helper()
	var events []string
	var cur []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		switch {
		case line == "":
			if cur != nil {
				events = append(events, strings.Join(cur, "\n"))
				cur = nil
			}
		case strings.HasPrefix(line, ":"):
			// comment / keep-alive
		case strings.HasPrefix(line, "data:"):
			cur = append(cur, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if cur != nil {
		events = append(events, strings.Join(cur, "\n"))
	}
	return events
}

// wantError asserts an error response with the given status and code and
// validates it; it returns the error object.
func wantError(t *testing.T, r *httpReply, status, code int, reqMethod string) map[string]any {
	t.Helper()
	m := r.last(t)
	checkMessage(t, m, reqMethod)
	e := asMap(m["error"])
	if got := int(num(e["code"])); got != code {
		t.Fatalf("error code = %d, want %d: %s", got, code, r.body)
	}
	if r.status != status {
		t.Errorf("HTTP status = %d, want %d (code %d): %s", r.status, status, code, r.body)
	}
	return e
}

// wantResult asserts a 200 result response, validates it and returns the result.
func wantResult(t *testing.T, r *httpReply, reqMethod string) map[string]any {
	t.Helper()
	m := r.last(t)
	if r.status != http.StatusOK {
		t.Fatalf("HTTP status = %d, want 200: %s", r.status, r.body)
	}
	checkMessage(t, m, reqMethod)
	res := asMap(m["result"])
	if res == nil {
		t.Fatalf("no result: %s", r.body)
	}
	return res
}

// sseStream reads events from a long-lived SSE response.
type sseStream struct {
	resp     *http.Response
	events   chan string
	comments chan string
	done     chan struct{}
}

func (ht *httpTarget) openStream(t *testing.T, ctx context.Context, id any, method string, p map[string]any) *sseStream {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ht.url, bytes.NewReader(encodeRequest(t, id, method, p)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = baselineHeaders(method, p)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", method, err)
	}
	st := &sseStream{resp: resp, events: make(chan string, 64), comments: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var cur []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur != nil {
					st.events <- strings.Join(cur, "\n")
					cur = nil
				}
			case strings.HasPrefix(line, ":"):
				select {
				case st.comments <- line:
				default:
				}
			case strings.HasPrefix(line, "data:"):
				cur = append(cur, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
	}()
	return st
}

func (st *sseStream) next(t *testing.T, timeout time.Duration) map[string]any {
	t.Helper()
	select {
	case ev := <-st.events:
		return decodeObject(t, []byte(ev))
	case <-st.done:
		select {
		case ev := <-st.events:
			return decodeObject(t, []byte(ev))
		default:
		}
		t.Fatalf("stream ended while waiting for an event")
	case <-time.After(timeout):
		t.Fatalf("no event within %v", timeout)
	}
	return nil
}

// ---------------------------------------------------------------------------
// stdio client over io.Pipe

type stdioClient struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]any
	done  chan error
	mu    sync.Mutex
}

func newStdioClient(t *testing.T, ctx context.Context, opts Options) *stdioClient {
	t.Helper()
	srv := New(opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, in: inW, lines: make(chan map[string]any, 256), done: make(chan error, 1)}
	go func() {
		err := srv.ServeStdio(ctx, inR, outW)
		outW.Close()
		c.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			v, err := decodeJSON(sc.Bytes())
			m, ok := v.(map[string]any)
			if err != nil || !ok {
				t.Errorf("stdout line is not a JSON object (STDIO-1): %q", sc.Text())
				continue
			}
			c.lines <- m
		}
		close(c.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *stdioClient) sendRaw(line string) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("writing to server stdin: %v", err)
	}
}

func (c *stdioClient) send(id any, method string, p map[string]any) {
	c.t.Helper()
	c.sendRaw(string(encodeRequest(c.t, id, method, p)))
}

// recv returns the next line, failing after timeout.
func (c *stdioClient) recv(timeout time.Duration) map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("server output closed")
		}
		return m
	case <-time.After(timeout):
		c.t.Fatalf("no message within %v", timeout)
	}
	return nil
}

// recvResponse returns the response with the given id (compared as JSON),
// collecting any other messages seen meanwhile.
func (c *stdioClient) recvResponse(id any, timeout time.Duration) (resp map[string]any, others []map[string]any) {
	c.t.Helper()
	want := compactJSON(id)
	deadline := time.Now().Add(timeout)
	for {
		m := c.recv(time.Until(deadline))
		if _, isNote := m["method"]; !isNote && compactJSON(m["id"]) == want {
			return m, others
		}
		others = append(others, m)
	}
}

// quiet asserts that no message arrives for d.
func (c *stdioClient) quiet(d time.Duration, why string) {
	c.t.Helper()
	select {
	case m, ok := <-c.lines:
		if ok {
			c.t.Errorf("%s: unexpected message %s", why, compactJSON(m))
		}
	case <-time.After(d):
	}
}
