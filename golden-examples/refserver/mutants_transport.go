package refserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The behaviour behind the mutants of the transport, header, removed-method,
// subscription, logging, progress, cancellation and trace-context rules
// (HTTP-*, HDR-*, REM-*, STDIO-*, SUB-*, LOG-*, PROG-*, CANC-*, OTEL-*).
// Every mutant here is a wrapper: around the HTTP handler, around the stdio
// streams, or around a method. With no such rule in Options.Break nothing is
// wrapped, so the correct server runs exactly the code above. The call
// sites are one line each: Handler, ServeStdio and New.

// anyBreak reports whether any of the ids is to be broken.
func (o Options) anyBreak(ids ...string) bool {
	for _, id := range ids {
		if o.Break[id] {
			return true
		}
	}
	return false
}

// mutRequestView is what the transport wrappers read of a request body.
type mutRequestView struct {
	ID     json.RawMessage            `json:"id"`
	Method string                     `json:"method"`
	Params map[string]json.RawMessage `json:"params"`
}

func (v *mutRequestView) meta() map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(v.Params["_meta"], &m)
	return m
}

func (v *mutRequestView) str(key string) (string, bool) {
	var s string
	err := json.Unmarshal(v.Params[key], &s)
	return s, err == nil
}

// mutRewriteRequest edits a request body on its way in: LOG-4 drops a
// logLevel it does not know instead of rejecting it.
func (s *Server) mutRewriteRequest(body []byte) []byte {
	if !s.opts.breaks("LOG-4") {
		return body
	}
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	p, _ := m["params"].(map[string]any)
	meta, _ := p["_meta"].(map[string]any)
	if lvl, ok := meta[metaLogLevel].(string); ok && levelRank(lvl) < 0 {
		delete(meta, metaLogLevel)
		if out, err := json.Marshal(m); err == nil {
			return out
		}
	}
	return body
}

// httpMutants are the rules mutHTTPHandler breaks.
var httpMutants = []string{"RESIL-1", "HTTP-1", "HTTP-2", "HTTP-3", "HTTP-4", "HTTP-5", "HTTP-6", "HTTP-7", MutantRemovedStatus, "HDR-1", "HDR-2", "HDR-3", "HDR-4", "HDR-5", "REM-3", "REM-4", "LOG-4"}

// mutHTTPHandler wraps the Streamable HTTP endpoint with the HTTP mutants.
func (s *Server) mutHTTPHandler(next http.Handler) http.Handler {
	if !s.opts.anyBreak(httpMutants...) {
		return next
	}
	b := s.opts.breaks
	var wedged atomic.Bool // RESIL-1: a client left mid-request
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b("RESIL-1") && wedged.Load() {
			// Mutant: breaks RESIL-1 (no answer since a client left
			// mid-request; bounded, and the connection is then dropped).
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
			panic(http.ErrAbortHandler)
		}
		if r.Method != http.MethodPost {
			if b("REM-4") && !s.opts.DualEra {
				// Mutant: breaks REM-4 (400 instead of 405, and a session id).
				if id := r.Header.Get("Mcp-Session-Id"); id != "" {
					w.Header().Set("Mcp-Session-Id", id)
				}
				writeJSON(w, http.StatusBadRequest, errorResponse(nil, errorf(CodeInvalidRequest, "Bad Request")))
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if b("HTTP-2") {
			r.Header.Del("Origin") // Mutant: breaks HTTP-2 (no Origin check).
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxBodyBytes+1))
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		if b("RESIL-1") {
			// Once the body is read net/http watches the connection; the
			// pause lets a client that left right after writing be seen.
			select {
			case <-r.Context().Done():
				wedged.Store(true)
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		var v mutRequestView
		_ = json.Unmarshal(body, &v)
		notification := v.ID == nil && v.Method != ""
		switch {
		case b("HTTP-1") && v.Method == "tools/list":
			w.WriteHeader(http.StatusMethodNotAllowed) // Mutant: breaks HTTP-1.
			return
		case b("HTTP-4") && notification && v.Method == "notifications/cancelled":
			writeJSON(w, http.StatusOK, map[string]any{}) // Mutant: breaks HTTP-4.
			return
		case b("REM-3") && notification && v.Method == "notifications/initialized":
			writeJSON(w, http.StatusOK, errorResponse(nil, errorf(CodeMethodNotFound, "Method not found: notifications/initialized"))) // Mutant: breaks REM-3.
			return
		}
		h := r.Header
		if b("HDR-1") && len(h.Values(headerProtocolVersion)) == 0 {
			h.Set(headerProtocolVersion, ProtocolVersion) // Mutant: breaks HDR-1.
		}
		if b("HDR-2") {
			var version string
			if json.Unmarshal(v.meta()[metaProtocolVersion], &version) == nil && version != "" {
				h.Set(headerProtocolVersion, version) // Mutant: breaks HDR-2.
			}
		}
		if b("HDR-3") && len(h.Values(headerMethod)) == 0 {
			h.Set(headerMethod, v.Method) // Mutant: breaks HDR-3.
		}
		if field := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}[v.Method]; b("HDR-4") && field != "" && len(h.Values(headerName)) == 0 {
			if value, ok := v.str(field); ok {
				h.Set(headerName, mutHeaderValue(value)) // Mutant: breaks HDR-4.
			}
		}
		if b("HDR-5") && v.Method == "tools/call" {
			s.mutParamHeaders(h, &v) // Mutant: breaks HDR-5.
		}
		body = s.mutRewriteRequest(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		_, hasMeta := v.Params["_meta"]
		next.ServeHTTP(&transportMutWriter{ResponseWriter: w, s: s, method: v.Method, malformed: !hasMeta}, r)
	})
}

// mutHeaderValue writes v as a header value, base64-encoded when needed.
func mutHeaderValue(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return base64Prefix + base64.StdEncoding.EncodeToString([]byte(v)) + base64Suffix
		}
	}
	return v
}

// mutParamHeaders replaces whatever Mcp-Param-* headers the client sent by
// the ones the arguments call for, so nothing the client sends is checked.
func (s *Server) mutParamHeaders(h http.Header, v *mutRequestView) {
	name, _ := v.str("name")
	t, ok := s.toolByName[name]
	if !ok {
		return
	}
	var args map[string]any
	if raw, ok := v.Params["arguments"]; ok {
		a, _ := decodeJSON(raw)
		args, _ = a.(map[string]any)
	}
	for _, ph := range t.headers {
		key := headerParamPrefix + ph.header
		h.Del(key)
		value, ok := lookupPath(args, ph.path)
		if !ok || value == nil {
			continue
		}
		switch x := value.(type) {
		case string:
			h.Set(key, mutHeaderValue(x))
		case bool:
			h.Set(key, strconv.FormatBool(x))
		case json.Number:
			h.Set(key, x.String())
		}
	}
}

// transportMutWriter changes statuses and headers of responses, and adds an
// unrelated event to tools/call streams.
type transportMutWriter struct {
	http.ResponseWriter
	s         *Server
	method    string
	malformed bool
	wrote     bool
	injected  bool
}

func (m *transportMutWriter) WriteHeader(code int) {
	if m.wrote {
		return
	}
	m.wrote = true
	b := m.s.opts.breaks
	if b("HTTP-3") && strings.HasPrefix(m.Header().Get("Content-Type"), "application/json") {
		m.Header().Set("Content-Type", "text/plain; charset=utf-8") // Mutant: breaks HTTP-3.
	}
	if b("HTTP-6") && code == http.StatusNotFound {
		code = http.StatusOK // Mutant: breaks HTTP-6.
	}
	if b(MutantRemovedStatus) && code == http.StatusNotFound && mutRemovedMethods[m.method] {
		code = http.StatusOK // Mutant: breaks HTTP-7 on the removed methods only.
	}
	if b("HTTP-7") && code == http.StatusBadRequest && m.malformed {
		code = http.StatusOK // Mutant: breaks HTTP-7 (missing _meta is not a 400).
	}
	m.ResponseWriter.WriteHeader(code)
}

func (m *transportMutWriter) Write(p []byte) (int, error) {
	if !m.wrote {
		m.WriteHeader(http.StatusOK)
	}
	if m.s.opts.breaks("HTTP-5") && !m.injected && m.method == "tools/call" && strings.HasPrefix(m.Header().Get("Content-Type"), "text/event-stream") {
		// Mutant: breaks HTTP-5 (a notification unrelated to the request).
		m.injected = true
		if _, err := io.WriteString(m.ResponseWriter, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"); err != nil {
			return 0, err
		}
	}
	return m.ResponseWriter.Write(p)
}

func (m *transportMutWriter) Unwrap() http.ResponseWriter { return m.ResponseWriter }

// stdioMutants are the rules mutStdioStreams breaks.
var stdioMutants = []string{"STDIO-1", MutantParseNoise, "STDIO-2", "STDIO-4", "STDIO-5", "REM-3", "SUB-7", "CANC-2", "LOG-4"}

// mutStdioStreams wraps the stdio streams with the stdio mutants: a filter
// on the lines read and on the lines written.
func (s *Server) mutStdioStreams(in io.Reader, out io.Writer) (io.Reader, io.Writer) {
	if !s.opts.anyBreak(stdioMutants...) {
		return in, out
	}
	mo := &stdioMutOut{w: out, s: s, inflight: map[string]bool{}, listens: map[string]bool{}}
	pr, pw := io.Pipe()
	go mo.filterIn(in, pw)
	return pr, mo
}

// stdioMutOut writes the server's lines, and the mutants' own.
type stdioMutOut struct {
	w        io.Writer
	s        *Server
	mu       sync.Mutex
	inflight map[string]bool // request ids not answered yet (STDIO-5)
	listens  map[string]bool // subscriptions/listen ids (SUB-7, CANC-2)
}

func (o *stdioMutOut) line(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.w.Write(append(append([]byte(nil), b...), '\n'))
}

func (o *stdioMutOut) Write(p []byte) (int, error) {
	b := o.s.opts.breaks
	var v struct {
		ID     json.RawMessage            `json:"id"`
		Method string                     `json:"method"`
		Result map[string]json.RawMessage `json:"result"`
		Error  json.RawMessage            `json:"error"`
	}
	_ = json.Unmarshal(bytes.TrimSpace(p), &v)
	response := v.Method == "" && (v.Result != nil || v.Error != nil)
	if response {
		id, _ := canonicalID(v.ID)
		o.mu.Lock()
		delete(o.inflight, string(id))
		o.mu.Unlock()
	}
	if _, isList := v.Result["tools"]; b("STDIO-2") && response && isList {
		o.line([]byte(`{"jsonrpc":"2.0","id":"refserver-ping","method":"ping"}`)) // Mutant: breaks STDIO-2.
	}
	o.mu.Lock()
	n, err := o.w.Write(p)
	o.mu.Unlock()
	if b("STDIO-1") && response {
		o.line([]byte("refserver: request handled")) // Mutant: breaks STDIO-1.
	}
	return n, err
}

// filterIn copies the client's lines to the server, dropping, answering or
// changing some.
func (o *stdioMutOut) filterIn(in io.Reader, pw *io.PipeWriter) {
	b := o.s.opts.breaks
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if fwd := o.onLine(line); fwd != nil {
				if _, werr := pw.Write(fwd); werr != nil {
					return
				}
			}
		}
		if err != nil {
			if b("STDIO-4") {
				select {} // Mutant: breaks STDIO-4 (never notices EOF).
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// onLine returns what to pass on to the server (nil: nothing).
func (o *stdioMutOut) onLine(line []byte) []byte {
	b := o.s.opts.breaks
	var v mutRequestView
	if json.Unmarshal(line, &v) != nil {
		if b(MutantParseNoise) {
			o.line([]byte("refserver: cannot parse the request line")) // Mutant: breaks STDIO-1 on a process of its own.
		}
		return line
	}
	switch {
	case v.ID != nil && v.Method != "":
		id, _ := canonicalID(v.ID)
		o.mu.Lock()
		busy := false
		for id := range o.inflight {
			if !o.listens[id] {
				busy = true
			}
		}
		if v.Method == "subscriptions/listen" {
			o.listens[string(id)] = true
		}
		if b("STDIO-5") && busy && v.Method != "subscriptions/listen" {
			o.mu.Unlock()
			// Mutant: breaks STDIO-5 (one request at a time).
			if resp, err := marshal(errorResponse(v.ID, errorf(CodeInternalError, "Internal error: busy with another request"))); err == nil {
				o.line(resp)
			}
			return nil
		}
		o.inflight[string(id)] = true
		o.mu.Unlock()
	case v.Method == "notifications/initialized" && b("REM-3"):
		if resp, err := marshal(errorResponse(nil, errorf(CodeMethodNotFound, "Method not found: notifications/initialized"))); err == nil {
			o.line(resp) // Mutant: breaks REM-3.
		}
	case v.Method == "notifications/cancelled":
		id, _ := canonicalID(v.Params["requestId"])
		o.mu.Lock()
		listen := o.listens[string(id)]
		delete(o.inflight, string(id))
		o.mu.Unlock()
		if listen && b("SUB-7") {
			// Mutant: breaks SUB-7 (a message after the cancellation).
			if resp, err := marshal(&Response{ID: id, Result: map[string]any{"resultType": "complete", "_meta": map[string]any{metaSubscriptionID: json.RawMessage(id)}}}); err == nil {
				o.line(resp)
			}
		}
		if !listen && b("CANC-2") {
			return nil // Mutant: breaks CANC-2 (cancellation ignored).
		}
	}
	return append(o.s.mutRewriteRequest(bytes.TrimRight(line, "\r\n")), '\n')
}

// methodMutants are the rules mutWrapMethods breaks.
var methodMutants = []string{"REM-1", "REM-2", MutantUnnamedVersions, "LOG-1", MutantListLogs, "LOG-2", "LOG-3", "PROG-1", "CANC-1", "OTEL-1", "OTEL-2", MutantProgressTrace, "SUB-1", "SUB-2", "SUB-3", "SUB-4", MutantSubOtherID, "SUB-5"}

// mutWrapMethods adds and wraps methods for the method-level mutants.
func (s *Server) mutWrapMethods() {
	if !s.opts.anyBreak(methodMutants...) {
		return
	}
	b := s.opts.breaks
	empty := func(context.Context, *request) (map[string]any, *Error) { return map[string]any{}, nil }
	if b("REM-1") {
		s.methods["ping"] = empty // Mutant: breaks REM-1.
	}
	if b("REM-2") {
		s.methods["initialize"] = empty // Mutant: breaks REM-2.
	}
	if b(MutantUnnamedVersions) {
		// Mutant: breaks REM-2's SHOULD for a modern-only server (name the
		// supported versions), and nothing it MUSTs.
		s.methods["initialize"] = func(context.Context, *request) (map[string]any, *Error) {
			return nil, &Error{Code: CodeMethodNotFound, Message: "Method not found: initialize"}
		}
	}
	var last lastListen
	for name, next := range s.methods {
		s.methods[name] = s.mutMethod(name, next, &last)
	}
}

// lastListen is the id of the latest listen request the server got
// (MutantSubOtherID).
type lastListen struct {
	mu sync.Mutex
	id json.RawMessage
}

// swap records id as the latest and returns the one before it.
func (l *lastListen) swap(id json.RawMessage) json.RawMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.id
	l.id = id
	return prev
}

// otelBadTraceparent has an all-zero trace id, which W3C forbids (OTEL-2).
const otelBadTraceparent = "00-00000000000000000000000000000000-0000000000000000-01"

func (s *Server) mutMethod(name string, next methodFunc, last *lastListen) methodFunc {
	b := s.opts.breaks
	return func(ctx context.Context, r *request) (map[string]any, *Error) {
		if b("OTEL-1") {
			var meta map[string]json.RawMessage
			_ = json.Unmarshal(r.params["_meta"], &meta)
			if _, ok := meta["baggage"]; ok {
				return nil, errorf(CodeInvalidParams, "Invalid params: unknown _meta key baggage") // Mutant: breaks OTEL-1.
			}
		}
		if b("LOG-1") && r.meta.logLevel == "" {
			r.meta.logLevel = "debug" // Mutant: breaks LOG-1.
		}
		if b(MutantListLogs) && strings.HasSuffix(name, "/list") && r.meta.logLevel == "" {
			// Mutant: breaks LOG-1 on the list requests, which LOG-1's own
			// tools/call never sees.
			_ = r.notify(Notification{Method: "notifications/message", Params: map[string]any{"level": "info", "logger": "lists", "data": "listing " + name}})
		}
		if b("LOG-2") && r.meta.logLevel != "" {
			r.meta.logLevel = "debug" // Mutant: breaks LOG-2.
		}
		if b("PROG-1") && len(r.meta.progressToken) > 0 && r.meta.progressToken[0] != '"' {
			r.meta.progressToken = json.RawMessage(strconv.Quote(string(r.meta.progressToken))) // Mutant: breaks PROG-1.
		}
		if b(MutantProgressTrace) && name == "tools/call" {
			notify := r.notify
			r.notify = func(n Notification) error {
				if n.Params != nil && n.Method == "notifications/progress" {
					n.Params["_meta"] = map[string]any{"traceparent": otelBadTraceparent} // Mutant: breaks OTEL-2 in progress notifications only.
				}
				return notify(n)
			}
		}
		if b("CANC-1") && name == "tools/list" {
			// Mutant: breaks CANC-1.
			_ = r.notify(Notification{Method: "notifications/cancelled", Params: map[string]any{"requestId": json.RawMessage(r.id), "reason": "refserver mutant"}})
		}
		if name == "subscriptions/listen" && s.opts.anyBreak("SUB-1", "SUB-2", "SUB-3", "SUB-4", MutantSubOtherID, "SUB-5") {
			return s.mutListen(ctx, r, next, last)
		}
		result, err := next(ctx, r)
		if result != nil && b("LOG-3") && name == "server/discover" {
			if caps, ok := result["capabilities"].(map[string]any); ok {
				delete(caps, "logging") // Mutant: breaks LOG-3.
			}
		}
		if result != nil && b("OTEL-2") {
			meta, _ := result["_meta"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta["traceparent"] = otelBadTraceparent // Mutant: breaks OTEL-2.
			result["_meta"] = meta
		}
		return result, err
	}
}

// mutListen runs subscriptions/listen with the SUB mutants acting on its
// acknowledgment.
func (s *Server) mutListen(ctx context.Context, r *request, next methodFunc, last *lastListen) (map[string]any, *Error) {
	b := s.opts.breaks
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	subID := json.RawMessage(r.id)
	otherID := last.swap(subID)
	if otherID == nil {
		otherID = json.RawMessage(`"another-subscription"`)
	}
	send := r.notify
	r.notify = func(n Notification) error {
		if n.Method != "notifications/subscriptions/acknowledged" {
			return send(n)
		}
		if meta, ok := n.Params["_meta"].(map[string]any); ok && b("SUB-2") && len(subID) > 0 && subID[0] != '"' {
			meta[metaSubscriptionID] = json.RawMessage(strconv.Quote(string(subID))) // Mutant: breaks SUB-2.
		}
		if err := send(n); err != nil {
			return err
		}
		if b("SUB-3") {
			_ = send(Notification{Method: "notifications/prompts/list_changed", Params: map[string]any{"_meta": map[string]any{metaSubscriptionID: subID}}}) // Mutant: breaks SUB-3.
		}
		if b("SUB-4") {
			_ = send(Notification{Method: "notifications/tools/list_changed"}) // Mutant: breaks SUB-4.
		}
		if b(MutantSubOtherID) {
			_ = send(Notification{Method: "notifications/tools/list_changed", Params: map[string]any{"_meta": map[string]any{metaSubscriptionID: otherID}}}) // Mutant: breaks SUB-4.
		}
		if b("SUB-5") && r.meta.logLevel != "" {
			_ = send(Notification{Method: "notifications/message", Params: map[string]any{"level": "info", "logger": "subscriptions", "data": "listening"}}) // Mutant: breaks SUB-5.
		}
		if b("SUB-1") {
			cancel() // Mutant: breaks SUB-1 (the stream ends at once).
		}
		return nil
	}
	result, err := next(ictx, r)
	if b("SUB-1") && ictx.Err() != nil && ctx.Err() == nil {
		return map[string]any{"_meta": map[string]any{metaSubscriptionID: subID}}, nil
	}
	return result, err
}

// MutantUnnamedVersions rejects initialize with -32601 without naming the
// supported versions: a warning of REM-2 on a modern-only server, none on
// a dual-era one (its legacy side answers initialize first).
const MutantUnnamedVersions = "REM-2.unnamed"

// MutantSubOtherID tags a notification of each subscription with another
// subscription's id (the listen request before it, a made-up id for the
// first): on a process whose listens are told apart by id, SUB-4 must still
// see that it is not its own.
const MutantSubOtherID = "SUB-4.other"

// MutantParseNoise complains in plain text on stdout about a line that is
// not JSON. Only RPC-5 sends such lines, on a process of its own: STDIO-1
// sees it only by watching every process, not the shared one alone.
const MutantParseNoise = "STDIO-1.parse"

// MutantProgressTrace puts an invalid traceparent in the _meta of every
// notifications/progress, and nowhere else: OTEL-2 sees it only through
// its monitor, on the progress calls of other checks (the emitter search;
// on stdio PROG-1 and STDIO-5 too).
const MutantProgressTrace = "OTEL-2.progress"

// MutantRemovedStatus answers the methods 2026-07-28 removed with their
// -32601 under HTTP 200, not 404. HTTP-7's own probes send none of them:
// it sees the fault on REM-1's requests, through its monitor.
const MutantRemovedStatus = "HTTP-7.removed"

// mutRemovedMethods are the methods MutantRemovedStatus answers with 200.
var mutRemovedMethods = map[string]bool{"ping": true, "logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true, "tasks/list": true, "tasks/result": true}

// MutantListLogs logs on every list request that set no logLevel.
const MutantListLogs = "LOG-1.lists"
