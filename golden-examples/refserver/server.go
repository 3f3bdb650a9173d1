package refserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// ProtocolVersion is the only MCP revision this server speaks. It is
// modern-only: no initialize, no sessions (REM-2), unless Options.DualEra
// adds the legacy side (dualera.go).
const ProtocolVersion = "2026-07-28"

// supportedVersions is both DiscoverResult.supportedVersions and
// UnsupportedProtocolVersionError data.supported (VER-4: keep them equal).
var supportedVersions = []string{ProtocolVersion}

// Reserved _meta keys (basic/index.mdx §_meta).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	metaProgressToken      = "progressToken"
)

// Server identity reported in every result's _meta (DISC-4, RES-3).
const (
	ServerName    = "mcp-eval-example"
	ServerVersion = "1.0.0"
)

// Server is the reference MCP server. It keeps no per-client state: each
// request is judged only on its own content (STATE-1), and the only state that
// spans requests travels in the client-held requestState (MRTR) or cursors.
// A Server is safe for concurrent use by any number of transports.
type Server struct {
	opts     Options
	stateKey []byte

	methods    map[string]methodFunc
	tools      []*tool
	toolByName map[string]*tool

	closing   chan struct{}
	closeOnce sync.Once
}

// methodFunc handles one request. A nil result with a nil error means the
// request was cancelled and must get no response (CANC-2).
type methodFunc func(ctx context.Context, r *request) (map[string]any, *Error)

// request is a request whose envelope passed validation.
type request struct {
	id     json.RawMessage
	method string
	params map[string]json.RawMessage
	meta   requestMeta
	notify Notifier
}

// requestMeta holds the per-request protocol fields of params._meta.
type requestMeta struct {
	version       string
	caps          map[string]json.RawMessage
	logLevel      string          // "" when the client did not opt in to logs (LOG-1)
	progressToken json.RawMessage // nil when no progress was requested (PROG-1)
}

// removedMethods were part of 2025-11-25 and no longer exist (REM-1, REM-2).
var removedMethods = map[string]bool{
	"initialize":            true,
	"ping":                  true,
	"logging/setLevel":      true,
	"resources/subscribe":   true,
	"resources/unsubscribe": true,
	"tasks/list":            true,
	"tasks/result":          true,
}

// New returns a server configured by opts (see Options for defaults).
func New(opts Options) *Server {
	s := &Server{opts: opts.withDefaults(), closing: make(chan struct{})}
	s.stateKey = s.opts.StateKey
	if len(s.stateKey) == 0 {
		s.stateKey = make([]byte, 32)
		if _, err := rand.Read(s.stateKey); err != nil {
			panic("refserver: reading random state key: " + err.Error())
		}
	}
	s.tools = append(s.buildTools(), s.mrtrItemTools()...)
	s.toolByName = make(map[string]*tool, len(s.tools))
	for _, t := range s.tools {
		s.toolByName[t.name] = t
	}
	s.methods = map[string]methodFunc{
		"server/discover":          s.discover,
		"tools/list":               s.listTools,
		"tools/call":               s.callTool,
		"resources/list":           s.listResources,
		"resources/templates/list": s.listResourceTemplates,
		"resources/read":           s.readResource,
		"prompts/list":             s.listPrompts,
		"prompts/get":              s.getPrompt,
		"completion/complete":      s.complete,
		"subscriptions/listen":     s.listen,
	}
	s.mutWrapMethods()
	return s
}

// Close ends every open subscriptions/listen stream gracefully: each gets
// its closing result (SUB-6) and the stream ends. Call it before shutting
// down an http.Server, whose Shutdown would otherwise wait for those
// never-ending streams. Close does not stop in-flight ordinary requests.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// Handle is the transport-independent core: it validates the request envelope
// and version and runs the method. It returns nil for notifications (RPC-3)
// and for requests cancelled through ctx (CANC-2). notify may be nil when the
// transport cannot carry notifications; they are then dropped.
func (s *Server) Handle(ctx context.Context, msg *Message, notify Notifier) *Response {
	if msg.IsNotification() {
		return nil
	}
	if s.opts.DualEra && legacyOpening(msg) {
		return s.handleLegacy(ctx, msg, notify)
	}
	req, err := s.parseRequest(msg)
	if err == nil {
		err = s.versionCheck(req.method, req.meta.version)
	}
	if err != nil {
		return errorResponse(msg.ID, err)
	}
	req.notify = notify
	return s.dispatch(ctx, req)
}

// parseRequest resolves the method and validates params._meta. Methods come
// first: a method this server does not have can never succeed, whatever its
// envelope, and a legacy initialize without _meta still learns which
// versions are supported (REM-2).
func (s *Server) parseRequest(msg *Message) (*request, *Error) {
	if _, ok := s.methods[msg.Method]; !ok {
		return nil, s.mutMethodNotFound(methodNotFound(msg.Method))
	}
	malformed := func(format string, args ...any) *Error {
		e := errorf(CodeInvalidParams, format, args...)
		e.malformed = true
		return e
	}
	if msg.Params == nil {
		return nil, malformed("Invalid params: params with _meta is required (missing %s and %s)", metaProtocolVersion, metaClientCapabilities)
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(msg.Params, &params); err != nil {
		return nil, malformed("Invalid params: params must be an object")
	}
	rawMeta, ok := params["_meta"]
	if !ok {
		return nil, malformed("Invalid params: params._meta is required (META-1)")
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(rawMeta, &meta); err != nil || meta == nil {
		return nil, malformed("Invalid params: params._meta must be an object")
	}
	if err := s.mutMeta(meta); err != nil {
		return nil, err
	}
	r := &request{id: msg.ID, method: msg.Method, params: params}
	// META-1: both fields are required on every request.
	if err := json.Unmarshal(meta[metaProtocolVersion], &r.meta.version); err != nil || r.meta.version == "" {
		return nil, malformed("Invalid params: _meta[%q] must be a non-empty string", metaProtocolVersion)
	}
	if err := json.Unmarshal(meta[metaClientCapabilities], &r.meta.caps); err != nil || r.meta.caps == nil {
		return nil, malformed("Invalid params: _meta[%q] must be an object", metaClientCapabilities)
	}
	// META-2: clientInfo is optional and never used for behaviour.
	if raw, ok := meta[metaLogLevel]; ok {
		var level string
		if err := json.Unmarshal(raw, &level); err != nil || levelRank(level) < 0 {
			// LOG-4: unknown level → -32602 (not malformed: status unspecified).
			return nil, errorf(CodeInvalidParams, "Invalid params: _meta[%q] must be one of %v", metaLogLevel, logLevels)
		}
		r.meta.logLevel = level
	}
	if raw, ok := meta[metaProgressToken]; ok {
		token, ok := canonicalID(raw) // ProgressToken is string | integer, like RequestId
		if !ok {
			return nil, errorf(CodeInvalidParams, "Invalid params: _meta.progressToken must be a string or an integer")
		}
		r.meta.progressToken = token
	}
	return r, nil
}

func methodNotFound(method string) *Error {
	if removedMethods[method] {
		// REM-2: name the supported versions so a legacy client knows why.
		return &Error{
			Code:    CodeMethodNotFound,
			Message: fmt.Sprintf("Method not found: %s does not exist in MCP %s; this server supports protocol versions %v (call server/discover)", method, ProtocolVersion, supportedVersions),
			Data:    map[string]any{"reason": "removed in " + ProtocolVersion, "supportedVersions": supportedVersions},
		}
	}
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + method, Data: map[string]any{"reason": "unknown method"}}
}

// checkVersion enforces VER-1/VER-2 for every method, server/discover included.
func checkVersion(v string) *Error {
	if slices.Contains(supportedVersions, v) {
		return nil
	}
	return &Error{
		Code:    CodeUnsupportedProtocolVersion,
		Message: "Unsupported protocol version",
		Data:    map[string]any{"supported": supportedVersions, "requested": v},
	}
}

// dispatch runs a validated request and shapes its response.
func (s *Server) dispatch(ctx context.Context, r *request) *Response {
	if r.notify == nil {
		r.notify = func(Notification) error { return nil }
	}
	s.mutRequestSide(r)
	result, err := s.methods[r.method](ctx, r)
	if ctx.Err() != nil {
		// CANC-2/CANC-3: a cancelled request gets no response.
		return nil
	}
	if err != nil {
		return s.mutResponse(errorResponse(r.id, err))
	}
	if result == nil {
		return nil
	}
	return s.mutResponse(&Response{ID: r.id, Result: s.finish(result)})
}

// finish adds the fields every result carries: resultType (RES-1) and
// _meta.serverInfo (RES-3), merged into any _meta the method set.
func (s *Server) finish(result map[string]any) map[string]any {
	if _, ok := result["resultType"]; !ok {
		result["resultType"] = "complete"
	}
	if s.opts.breaks("RES-1") {
		delete(result, "resultType")
	}
	meta := map[string]any{}
	if m, ok := result["_meta"].(map[string]any); ok {
		maps.Copy(meta, m)
	}
	if !s.opts.breaks("RES-3") {
		meta[metaServerInfo] = map[string]any{"name": ServerName, "version": ServerVersion}
	}
	result["_meta"] = meta
	return result
}

// cacheable adds the CACHE-1 hints to a complete result of a cacheable method.
func cacheable(result map[string]any, ttlMs int, scope string) map[string]any {
	result["ttlMs"] = ttlMs
	result["cacheScope"] = scope
	return result
}

// Cache hints. Lists and discover hold no user data, so they are public;
// invoice contents are per customer, so reads are private (CACHE-1).
const (
	listTTLMs     = 300_000
	discoverTTLMs = 300_000
	readTTLMs     = 60_000
	scopePublic   = "public"
	scopePrivate  = "private"
)

// stringParam reads an optional string parameter; present-but-not-string is an error.
func (r *request) stringParam(name string) (string, bool, *Error) {
	raw, ok := r.params[name]
	if !ok {
		return "", false, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", true, errorf(CodeInvalidParams, "Invalid params: %s must be a string", name)
	}
	return v, true, nil
}

// hasCapability reports whether this request's clientCapabilities declares
// the named capability (META-3: never remembered from earlier requests).
func (r *request) hasCapability(name string) bool {
	raw, ok := r.meta.caps[name]
	if !ok {
		return false
	}
	var obj map[string]json.RawMessage
	return json.Unmarshal(raw, &obj) == nil && obj != nil
}
