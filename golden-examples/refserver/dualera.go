package refserver

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
)

// Dual-era mode (Options.DualEra): the server also serves legacy clients
// (basic/versioning.mdx §Backward Compatibility with Initialization-Based
// Versions). A dual-era server selects its behaviour from how the client
// opens: a request with modern _meta is served as 2026-07-28; an initialize
// selects legacy semantics. What it does with a request that has neither is
// not specified; like the TS, Go and mcp-go SDKs, this mode serves it as a
// legacy request. Over Streamable HTTP a request takes the legacy path
// (2025-11-25 Streamable HTTP, without sessions) when its
// MCP-Protocol-Version header is absent or legacy and its body is legacy
// too; a GET needs only the header.

// legacyVersions are the revisions dual-era mode negotiates in initialize,
// newest first.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// legacyOpening reports whether dual-era mode takes msg as a legacy
// request: its _meta carries neither of the per-request fields only
// 2026-07-28 requests have (protocolVersion, clientCapabilities). So an
// initialize or a request without _meta is legacy (a legacy client may
// still send _meta.progressToken), while a request that has one of the
// fields and lacks the other stays modern and malformed (META-1).
func legacyOpening(msg *Message) bool {
	var params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &params) != nil {
		return false
	}
	_, version := params.Meta[metaProtocolVersion]
	_, caps := params.Meta[metaClientCapabilities]
	return !version && !caps
}

// legacyHTTP reports whether dual-era mode takes an HTTP request down the
// legacy path: no MCP-Protocol-Version header, or a legacy one. A POST also
// needs a legacy body (legacyOpening): a body with modern _meta is a
// modern request whatever its headers say, and header validation rejects
// it (HDR-1, HDR-2).
func legacyHTTP(h http.Header) bool {
	v := h.Get(headerProtocolVersion)
	return v == "" || slices.Contains(legacyVersions, v)
}

// legacyCapabilities are the capabilities an InitializeResult declares.
func legacyCapabilities() map[string]any {
	return map[string]any{
		"tools":       map[string]any{"listChanged": false},
		"resources":   map[string]any{},
		"prompts":     map[string]any{},
		"completions": map[string]any{},
	}
}

// handleLegacy serves one request under legacy semantics. There is no
// session state to keep: every legacy method of this server answers the
// same whoever asks, so the handshake only negotiates the version.
func (s *Server) handleLegacy(ctx context.Context, msg *Message, notify Notifier) *Response {
	if msg.IsNotification() {
		return nil // notifications/initialized and the like
	}
	params := map[string]json.RawMessage{}
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &params); err != nil {
			return errorResponse(msg.ID, errorf(CodeInvalidParams, "Invalid params: params must be an object"))
		}
	}
	switch msg.Method {
	case "initialize":
		var requested string
		_ = json.Unmarshal(params["protocolVersion"], &requested)
		version := legacyVersions[0]
		if slices.Contains(legacyVersions, requested) {
			version = requested
		}
		return &Response{ID: msg.ID, Result: map[string]any{
			"protocolVersion": version,
			"capabilities":    legacyCapabilities(),
			"serverInfo":      map[string]any{"name": ServerName, "version": ServerVersion},
			"instructions":    instructions,
		}}
	case "ping":
		return &Response{ID: msg.ID, Result: map[string]any{}}
	case "server/discover", "subscriptions/listen":
		// 2026-07-28 methods: a legacy session does not have them.
		return errorResponse(msg.ID, &Error{Code: CodeMethodNotFound, Message: "Method not found: " + msg.Method + " needs protocol version " + ProtocolVersion})
	}
	if _, ok := s.methods[msg.Method]; !ok {
		return errorResponse(msg.ID, methodNotFound(msg.Method))
	}
	delete(params, "_meta")
	r := &request{id: msg.ID, method: msg.Method, params: params, notify: notify,
		meta: requestMeta{version: ProtocolVersion, caps: map[string]json.RawMessage{}}}
	return s.dispatch(ctx, r)
}

// serveLegacyGET answers a legacy GET: the 2025-11-25 standalone SSE
// stream, which this server never sends anything on, so it ends at once.
func serveLegacyGET(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// serveLegacyPOST answers a POST on the legacy path with one JSON response
// (or 202 for a notification).
func (s *Server) serveLegacyPOST(ctx context.Context, w http.ResponseWriter, msg *Message) {
	resp := s.handleLegacy(ctx, msg, nil)
	if resp == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
