package hostile

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
)

// Behaviour is one hostile thing a server can do. Hooks left nil do
// nothing; a request no hook takes is answered by the reference server.
type Behaviour struct {
	Name string
	// Doc says what the server does, in one sentence.
	Doc string
	// Transports lists "stdio" and/or "http": where the behaviour exists.
	Transports []string
	// Methods limits the hooks to requests of these methods (nil: all).
	Methods []string
	// AllRequests gives the hooks every request. Without it a request the
	// reference server would reject (wrong headers, version or _meta, as
	// the conformance checks send on purpose) goes to the reference server,
	// so the report blames the behaviour and nothing else.
	AllRequests bool

	// Reply, on either transport, answers a request with these bytes (one
	// JSON body, no newline) instead of the reference answer; nil passes.
	Reply func(ctx context.Context, s *Server, req *Request) []byte
	// Stdio takes a request on stdio; it returns false to pass it on.
	Stdio func(ctx context.Context, s *Server, o *StdioOut, req *Request) bool
	// HTTP takes a request over HTTP; it returns false to pass it on.
	HTTP func(ctx context.Context, s *Server, w http.ResponseWriter, r *http.Request, req *Request) bool
	// StdioStart runs once before a stdio server reads its first line.
	StdioStart func(ctx context.Context, s *Server, o *StdioOut) error
	// StdioEOF runs when stdin ends, before the server exits.
	StdioEOF func(ctx context.Context, s *Server)
}

// takes reports whether the hooks see req; h is nil on stdio.
func (b *Behaviour) takes(req *Request, h http.Header) bool {
	if req.ID == nil || req.Method == "subscriptions/listen" {
		return false // notifications and never-ending streams stay the reference's
	}
	if b.Methods != nil && !slices.Contains(b.Methods, req.Method) {
		return false
	}
	return b.AllRequests || admissible(req, h)
}

// admissible is what the reference server checks before it serves a
// request: _meta with the version and client capabilities, and over HTTP
// the headers that must match the body and no foreign Origin.
func admissible(req *Request, h http.Header) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(req.Params, &p)
	var version string
	_ = json.Unmarshal(p.Meta["io.modelcontextprotocol/protocolVersion"], &version)
	if version != refserver.ProtocolVersion || p.Meta["io.modelcontextprotocol/clientCapabilities"] == nil {
		return false
	}
	if h == nil {
		return true
	}
	if h.Get("MCP-Protocol-Version") != version || h.Get("Mcp-Method") != req.Method || len(h.Values("Origin")) > 0 ||
		len(h.Values("MCP-Protocol-Version")) != 1 || len(h.Values("Mcp-Method")) != 1 {
		return false
	}
	for k := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-Param-") {
			return false // x-mcp-header parameters: the reference judges them
		}
	}
	var named struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	_ = json.Unmarshal(req.Params, &named)
	switch req.Method {
	case "tools/call", "prompts/get":
		return h.Get("Mcp-Name") == named.Name && len(h.Values("Mcp-Name")) == 1
	case "resources/read":
		return h.Get("Mcp-Name") == named.URI && len(h.Values("Mcp-Name")) == 1
	}
	return true
}

// On reports whether the behaviour exists on a transport.
func (b *Behaviour) On(transport string) bool { return slices.Contains(b.Transports, transport) }

var (
	both      = []string{"stdio", "http"}
	stdioOnly = []string{"stdio"}
	httpOnly  = []string{"http"}
)

// All lists every behaviour, sorted by name.
func All() []*Behaviour {
	var all []*Behaviour
	for _, group := range [][]*Behaviour{timingBehaviours(), sizeBehaviours(), streamBehaviours(), encodingBehaviours(), idBehaviours(), schemaBehaviours(), surfaceBehaviours(), processBehaviours(), secretBehaviours()} {
		all = append(all, group...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// Lookup returns the behaviour called name, or nil.
func Lookup(name string) *Behaviour {
	for _, b := range All() {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// ---- helpers shared by the behaviours

// onMethod wraps a Reply so that it applies to one method only.
func onMethod(method string, f func(ctx context.Context, s *Server, req *Request) []byte) func(context.Context, *Server, *Request) []byte {
	return func(ctx context.Context, s *Server, req *Request) []byte {
		if req.Method != method {
			return nil
		}
		return f(ctx, s, req)
	}
}

// spliced encodes v, then replaces each placeholder string (with its
// quotes) by raw bytes: how a behaviour puts bytes into an answer that
// encoding/json would refuse to write (invalid UTF-8, 1e400, a depth of
// 100,000, duplicate keys).
func spliced(v any, raw map[string][]byte) []byte {
	b := mustJSON(v)
	for ph, r := range raw {
		b = bytes.Replace(b, mustJSON(ph), r, 1)
	}
	return b
}

// withTools is the reference tools/list answer with extra tools put first
// on the first page (later pages are the reference's).
func withTools(ctx context.Context, s *Server, req *Request, extra ...any) map[string]any {
	resp := s.reference(ctx, req)
	if req.cursor() != "" || resp == nil {
		return resp
	}
	if res, ok := resp["result"].(map[string]any); ok {
		tools, _ := res["tools"].([]any)
		res["tools"] = append(append([]any{}, extra...), tools...)
	}
	return resp
}

// tool is a tool definition without readOnlyHint, so the harness lists it
// but never calls it.
func tool(name, description string, schema any) map[string]any {
	if schema == nil {
		schema = map[string]any{"type": "object"}
	}
	return map[string]any{"name": name, "description": description, "inputSchema": schema}
}

// sseHeader starts an event stream.
func sseHeader(w http.ResponseWriter) *http.ResponseController {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return rc
}

// sseEvent writes one message event.
func sseEvent(w http.ResponseWriter, data []byte) error {
	_, err := w.Write(append(append([]byte("data: "), data...), '\n', '\n'))
	return err
}

// withID returns resp re-encoded under another id.
func withID(resp map[string]any, id json.RawMessage) []byte {
	cp := map[string]any{}
	for k, v := range resp {
		cp[k] = v
	}
	cp["id"] = id
	return mustJSON(cp)
}
