package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Behaviours that break request/response correlation: wrong ids, answers
// to nothing, requests to the client, a null id.
func idBehaviours() []*Behaviour {
	return []*Behaviour{
		correlated("wrong-then-right-id", "answers every request twice: first under a wrong id, then under the right one",
			func(resp map[string]any, req *Request) [][]byte {
				return [][]byte{withID(resp, mustJSON("wrong-"+string(req.ID))), mustJSON(resp)}
			}),
		correlated("unsolicited-response", "sends a response to a request never sent before every answer",
			func(resp map[string]any, _ *Request) [][]byte {
				stray := mustJSON(map[string]any{"jsonrpc": "2.0", "id": "never-sent", "result": map[string]any{"resultType": "complete"}})
				return [][]byte{stray, mustJSON(resp)}
			}),
		correlated("server-request", "sends the client a sampling/createMessage request before answering tools/list",
			func(resp map[string]any, req *Request) [][]byte {
				if req.Method != "tools/list" {
					return [][]byte{mustJSON(resp)}
				}
				ask := mustJSON(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "sampling/createMessage", "params": map[string]any{"messages": []any{}, "maxTokens": 1}})
				return [][]byte{ask, mustJSON(resp)}
			}),
		{
			Name: "null-id", Transports: both,
			Doc: "answers tools/list with a result whose id is null",
			Reply: onMethod("tools/list", func(ctx context.Context, s *Server, req *Request) []byte {
				return withID(s.reference(ctx, req), json.RawMessage("null"))
			}),
		},
	}
}

// listMethods are the requests the correlation behaviours garble: enough
// for the checks that list something or watch a call's stream to see them.
var listMethods = []string{"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "tools/call"}

// correlated builds a behaviour that answers with several messages: on
// stdio one line each, over HTTP one event each on an event stream. The
// reference server's own notifications go first, as it sends them.
func correlated(name, doc string, messages func(resp map[string]any, req *Request) [][]byte) *Behaviour {
	return &Behaviour{
		Name: name, Doc: doc, Transports: both, Methods: listMethods,
		Stdio: func(ctx context.Context, s *Server, o *StdioOut, req *Request) bool {
			if s.hasParamHeaders(ctx, req) {
				return false
			}
			resp := s.referenceStreaming(ctx, req, func(n []byte) { _ = o.Line(n) })
			if resp == nil {
				return false
			}
			for _, m := range messages(resp, req) {
				_ = o.Line(m)
			}
			return true
		},
		HTTP: func(ctx context.Context, s *Server, w http.ResponseWriter, _ *http.Request, req *Request) bool {
			if s.hasParamHeaders(ctx, req) {
				return false
			}
			rc := sseHeader(w)
			resp := s.referenceStreaming(ctx, req, func(n []byte) {
				_ = sseEvent(w, n)
				_ = rc.Flush()
			})
			if resp == nil {
				resp = map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32603, "message": "cancelled"}}
			}
			for _, m := range messages(resp, req) {
				_ = sseEvent(w, m)
			}
			return true
		},
	}
}

// hasParamHeaders reports whether req calls a tool that declares
// x-mcp-header parameters: their header rules are the reference server's
// to judge (HDR-5), so the behaviour leaves those calls alone.
func (s *Server) hasParamHeaders(ctx context.Context, req *Request) bool {
	if req.Method != "tools/call" {
		return false
	}
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(req.Params, &p)
	list := s.reference(ctx, &Request{ID: json.RawMessage(`"hdr"`), Method: "tools/list", Raw: []byte(`{"jsonrpc":"2.0","id":"hdr","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)})
	for cursor := ""; ; {
		res, _ := list["result"].(map[string]any)
		tools, _ := res["tools"].([]any)
		for _, t := range tools {
			if tm, ok := t.(map[string]any); ok && tm["name"] == p.Name {
				return strings.Contains(string(mustJSON(tm)), "x-mcp-header")
			}
		}
		next, _ := res["nextCursor"].(string)
		if next == "" || next == cursor {
			return false
		}
		cursor = next
		raw := fmt.Sprintf(`{"jsonrpc":"2.0","id":"hdr","method":"tools/list","params":{"cursor":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, mustJSON(next))
		list = s.reference(ctx, &Request{Method: "tools/list", Raw: []byte(raw)})
	}
}
