package refserver

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// The behaviour behind the mutants of the tool, tool-call, JSON Schema,
// resource, prompt, completion and multi round-trip rules (TOOL-*, CALL-*,
// SCHEMA-*, RSRC-*, PROMPT-*, COMP-*, MRTR-*). Each function is a no-op
// unless one of its rules is in Options.Break; the call sites are one line
// in the file the rule lives in. Served definitions are edited on deep
// copies: the compiled schemas the server validates with never change.

// featMemory is what these mutants remember across requests.
type featMemory struct {
	called atomic.Bool // a tools/call ran a tool (TOOL-2)
}

var featMemories sync.Map // *Server → *featMemory

func (s *Server) featMem() *featMemory {
	v, _ := featMemories.LoadOrStore(s, &featMemory{})
	return v.(*featMemory)
}

// deepCopy returns a JSON-level copy of a definition.
func deepCopy(v map[string]any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out map[string]any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// featToolMutants are the rules mutToolDef breaks.
var featToolMutants = []string{"TOOL-4", "TOOL-5", "TOOL-6", "TOOL-7", "SCHEMA-1", "SCHEMA-2", "SCHEMA-3", "SCHEMA-4"}

// mutToolSet is the TOOL-2 mutant: once a tool has run, tools/list stops
// listing slow_count (a side effect of another request).
func (s *Server) mutToolSet(tools []*tool) []*tool {
	if !s.opts.breaks("TOOL-2") || !s.featMem().called.Load() {
		return tools
	}
	out := make([]*tool, 0, len(tools))
	for _, t := range tools {
		if t.name != "slow_count" {
			out = append(out, t)
		}
	}
	return out
}

// mutToolDef edits one served tool definition.
func (s *Server) mutToolDef(def map[string]any) map[string]any {
	active := false
	for _, id := range featToolMutants {
		active = active || s.opts.breaks(id)
	}
	if !active {
		return def
	}
	def = deepCopy(def)
	name, _ := def["name"].(string)
	in, _ := def["inputSchema"].(map[string]any)
	props, _ := in["properties"].(map[string]any)
	switch name {
	case "get_weather":
		if s.opts.breaks("TOOL-5") {
			def["name"] = "get weather!" // TOOL-5: not [A-Za-z0-9_.-]
		}
		if s.opts.breaks("SCHEMA-1") {
			props["location"].(map[string]any)["minLength"] = -1 // not a valid 2020-12 schema
		}
		if s.opts.breaks("SCHEMA-4") {
			def["outputSchema"].(map[string]any)["$schema"] = "https://example.com/dialects/strict"
		}
	case "search_invoices":
		if s.opts.breaks("SCHEMA-2") {
			props["customer_id"] = map[string]any{"$ref": "https://schemas.example.com/customer-id.json"}
		}
	case "lookup_region":
		if s.opts.breaks("TOOL-6") {
			props["region"].(map[string]any)["x-mcp-header"] = "Region Name" // not an RFC 9110 token
		}
		if s.opts.breaks("TOOL-7") {
			props["api_key"] = map[string]any{"type": "string", "x-mcp-header": "Api-Key", "description": "API key for the regional backend"}
		}
	case "slow_count":
		if s.opts.breaks("TOOL-4") {
			delete(in, "type") // root type "object" is required
		}
		if s.opts.breaks("SCHEMA-3") {
			deep := map[string]any{"type": "string"}
			for i := 0; i < 80; i++ {
				deep = map[string]any{"type": "object", "properties": map[string]any{"next": deep}}
			}
			props["deep"] = deep
		}
	}
	return def
}

// mutToolList is the TOOL-1 mutant: the tools array is served under
// "items" instead of "tools".
func (s *Server) mutToolList(result map[string]any) map[string]any {
	if s.opts.breaks("TOOL-1") {
		result["items"] = result["tools"]
		delete(result, "tools")
	}
	return result
}

// mutUnknownToolResult is the CALL-2 mutant: an unknown tool gets a tool
// result with isError instead of a JSON-RPC error.
func (s *Server) mutUnknownToolResult(name string) map[string]any {
	if !s.opts.breaks("CALL-2") {
		return nil
	}
	return toolError("Unknown tool: " + truncate(name, 128))
}

// mutInvalidArgs is the CALL-3 mutant: arguments that break the
// inputSchema get a normal success.
func (s *Server) mutInvalidArgs() map[string]any {
	if !s.opts.breaks("CALL-3") {
		return nil
	}
	return toolText("Done.")
}

// mutToolResult edits the result of a tool that ran: CALL-1 drops content,
// CALL-4 adds a property outputSchema forbids, CALL-5 drops the text
// mirror of structuredContent, CALL-6 adds an image whose data is not
// base64. It also notes that a tool ran (TOOL-2).
func (s *Server) mutToolResult(result map[string]any, err *Error) (map[string]any, *Error) {
	if s.opts.breaks("TOOL-2") {
		s.featMem().called.Store(true)
	}
	if result == nil || err != nil {
		return result, err
	}
	if rt, _ := result["resultType"].(string); rt == "input_required" {
		return result, err
	}
	structured, hasStructured := result["structuredContent"].(map[string]any)
	if s.opts.breaks("CALL-4") && hasStructured {
		structured["unexpected_field"] = true
	}
	if s.opts.breaks("CALL-5") && hasStructured {
		result["content"] = []any{}
	}
	if s.opts.breaks("CALL-6") {
		content, _ := result["content"].([]any)
		result["content"] = append(content, map[string]any{"type": "image", "data": "not base64!", "mimeType": "image/png"})
	}
	if s.opts.breaks("CALL-1") {
		delete(result, "content")
	}
	return result, err
}

// mutResourcePage is the RSRC-1 mutant: resources are listed without
// their required name.
func (s *Server) mutResourcePage(result map[string]any) map[string]any {
	if !s.opts.breaks("RSRC-1") {
		return result
	}
	items, _ := result["resources"].([]any)
	out := make([]any, 0, len(items))
	for _, it := range items {
		m := deepCopy(it.(map[string]any))
		delete(m, "name")
		out = append(out, m)
	}
	result["resources"] = out
	return result
}

// mutTemplatesList is the MRTR-1 mutant: resources/templates/list asks
// for input, which only tools/call, resources/read and prompts/get may.
func (s *Server) mutTemplatesList() map[string]any {
	if s.opts.breaks("MRTR-1") {
		return map[string]any{"resultType": "input_required", "requestState": "templates-need-input"}
	}
	return nil
}

// mutReadShape is the RSRC-2 mutant: the read result names its array
// "content" instead of "contents".
func (s *Server) mutReadShape(result map[string]any) map[string]any {
	if s.opts.breaks("RSRC-2") {
		result["content"] = result["contents"]
		delete(result, "contents")
	}
	return result
}

// mutReadFails is the RSRC-4 mutant: reading the summary fails with the
// implementation-defined code -32000 instead of -32603.
func (s *Server) mutReadFails(uri string) *Error {
	if s.opts.breaks("RSRC-4") && uri == summaryURI {
		return errorf(-32000, "Server error: the summary backend is down")
	}
	return nil
}

// mutMissingResourceCode is the RSRC-3 mutant: a missing resource gets
// -32002, the code of earlier revisions.
func (s *Server) mutMissingResourceCode(e *Error) *Error {
	if s.opts.breaks("RSRC-3") {
		e.Code = -32002
	}
	return e
}

// mutPromptResult is the PROMPT-1 mutant: prompts/get leaves out messages.
func (s *Server) mutPromptResult(result map[string]any) map[string]any {
	if s.opts.breaks("PROMPT-1") {
		delete(result, "messages")
	}
	return result
}

// mutUnknownPrompt is the PROMPT-2 mutant: an unknown prompt gets -32601.
func (s *Server) mutUnknownPrompt(e *Error) *Error {
	if s.opts.breaks("PROMPT-2") {
		e.Code = CodeMethodNotFound
	}
	return e
}

// mutMRTRResult edits send_email's input_required result: MRTR-2 leaves
// out both inputRequests and requestState, MRTR-3 wraps the input request
// in a JSON-RPC envelope.
func (s *Server) mutMRTRResult(result map[string]any) map[string]any {
	if s.opts.breaks("MRTR-2") {
		delete(result, "inputRequests")
		delete(result, "requestState")
	}
	if s.opts.breaks("MRTR-3") {
		if reqs, ok := result["inputRequests"].(map[string]any); ok {
			if c, ok := reqs[confirmKey].(map[string]any); ok {
				c["jsonrpc"] = "2.0"
				c["id"] = 7
			}
		}
	}
	return result
}

// mutRetry is the MRTR-5 mutant: every retry is refused.
func (s *Server) mutRetry() *Error {
	if s.opts.breaks("MRTR-5") {
		return errorf(CodeInvalidParams, "Invalid params: retries are not accepted")
	}
	return nil
}

// mutMissingAnswer is the MRTR-6 mutant: a retry without the answer is an
// error instead of a new input_required.
func (s *Server) mutMissingAnswer() *Error {
	if s.opts.breaks("MRTR-6") {
		return errorf(CodeInvalidParams, "Invalid params: inputResponses.%s is required", confirmKey)
	}
	return nil
}

// mutTamperedState is the MRTR-7 mutant: a requestState that fails
// verification gets a malformed complete result instead of a rejection.
func (s *Server) mutTamperedState() map[string]any {
	if s.opts.breaks("MRTR-7") {
		return map[string]any{"resultType": "complete"}
	}
	return nil
}

// mutAfterFinal is the MRTR-8 mutant: after an input_required result on an
// SSE stream, one more notification is written to the stream.
func (s *Server) mutAfterFinal(w http.ResponseWriter, st *httpStream, resp *Response) {
	if !s.opts.breaks("MRTR-8") || resp == nil || resp.Result == nil {
		return
	}
	st.mu.Lock()
	sse := st.sse
	st.mu.Unlock()
	if rt, _ := resp.Result["resultType"].(string); !sse || rt != "input_required" {
		return
	}
	data, err := marshal(Notification{Method: "notifications/message", Params: map[string]any{"level": "info", "logger": "send_email", "data": "still here"}})
	if err != nil {
		return
	}
	io.WriteString(w, "event: message\ndata: "+string(data)+"\n\n")
	http.NewResponseController(w).Flush()
}
