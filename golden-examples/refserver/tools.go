package refserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
)

// tool is one served tool: its wire definition, its compiled schemas, the
// x-mcp-header parameters HTTP must validate, and its implementation.
type tool struct {
	name string
	def  map[string]any // the Tool object returned by tools/list
	// The schemas are compiled on first use, not when the server is made:
	// a conformance run starts the server tens of times, and most of its
	// processes call no tool (compiling them was about 4% of a start's CPU).
	input   func() *schema
	output  func() *schema // nil when the tool declares no outputSchema
	headers []paramHeader
	run     toolFunc
}

// toolFunc runs a tool on arguments that already passed inputSchema
// validation. It returns a CallToolResult or InputRequiredResult body, or a
// protocol error; nil, nil means the request was cancelled.
type toolFunc func(ctx context.Context, r *request, args map[string]any) (map[string]any, *Error)

// paramHeader is an inputSchema property annotated with x-mcp-header.
type paramHeader struct {
	header string   // the name part of Mcp-Param-{name}
	path   []string // the chain of properties keys leading to the property
	typ    string   // "string", "integer" or "boolean" (TOOL-6)
}

// buildTools returns the tools in their fixed order (TOOL-3). The schemas are
// constants, so a compile failure is a programming error and panics; the
// tests construct a Server and would catch it.
func (s *Server) buildTools() []*tool {
	specs := []struct {
		def string
		run toolFunc
	}{
		{getWeatherDef, s.getWeather},
		{searchInvoicesDef, s.searchInvoices},
		{sendEmailDef, s.sendEmail},
		{lookupRegionDef, s.lookupRegion},
		{slowCountDef, s.slowCount},
	}
	tools := make([]*tool, 0, len(specs))
	for _, spec := range specs {
		var def map[string]any
		if err := json.Unmarshal([]byte(spec.def), &def); err != nil {
			panic(fmt.Sprintf("refserver: tool definition: %v", err))
		}
		if d, ok := s.opts.Describe[def["name"].(string)]; ok {
			def["description"] = d
		}
		t := &tool{name: def["name"].(string), def: def, run: spec.run}
		t.input = lazySchema(def["inputSchema"])
		if out, ok := def["outputSchema"]; ok {
			t.output = lazySchema(out)
		}
		t.headers = collectParamHeaders(def["inputSchema"].(map[string]any), nil)
		tools = append(tools, t)
	}
	return tools
}

// lazySchema compiles v, a schema of the server's own, when first asked.
func lazySchema(v any) func() *schema {
	return sync.OnceValue(func() *schema { return mustCompile(v) })
}

func mustCompile(v any) *schema {
	doc, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	sc, err := compileSchema(doc)
	if err != nil {
		panic(fmt.Sprintf("refserver: %v", err))
	}
	return sc
}

// collectParamHeaders finds x-mcp-header annotations. It follows only
// "properties" chains because that is the only place the annotation is valid
// (TOOL-6); the tool schemas here put it nowhere else.
func collectParamHeaders(node map[string]any, path []string) []paramHeader {
	var out []paramHeader
	props, _ := node["properties"].(map[string]any)
	for _, key := range sortedKeys(props) {
		prop, ok := props[key].(map[string]any)
		if !ok {
			continue
		}
		p := append(append([]string(nil), path...), key)
		if h, ok := prop["x-mcp-header"].(string); ok {
			typ, _ := prop["type"].(string)
			out = append(out, paramHeader{header: h, path: p, typ: typ})
		}
		out = append(out, collectParamHeaders(prop, p)...)
	}
	return out
}

// listTools answers tools/list (TOOL-1): same set for everyone (TOOL-2), in
// a fixed order (TOOL-3), paginated with opaque cursors (PAGE-1).
func (s *Server) listTools(_ context.Context, r *request) (map[string]any, *Error) {
	tools := s.mutToolSet(s.tools)
	if s.opts.breaks("TOOL-3") {
		// Mutant: breaks TOOL-3 on purpose.
		tools = append([]*tool(nil), tools...)
		rand.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })
	}
	start, end, next, err := s.page(r, "tools", len(tools))
	if err != nil {
		return nil, err
	}
	items := make([]any, 0, end-start)
	for _, t := range tools[start:end] {
		items = append(items, s.mutToolDef(t.def))
	}
	return s.mutToolsPage(s.mutToolList(pagedResult("tools", items, next)), start), nil
}

// callTool answers tools/call. Protocol problems (unknown tool, malformed
// params) are JSON-RPC errors (CALL-2); arguments that break the inputSchema
// are a tool execution error with isError:true (CALL-3, AMB-4).
func (s *Server) callTool(ctx context.Context, r *request) (map[string]any, *Error) {
	name, present, err := r.stringParam("name")
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, errorf(CodeInvalidParams, "Invalid params: name is required")
	}
	t, ok := s.toolByName[name]
	if !ok {
		if res := s.mutUnknownToolResult(name); res != nil {
			return res, nil
		}
		return nil, s.mutUnknownTool(&Error{Code: CodeInvalidParams, Message: "Unknown tool: " + truncate(name, 128), Data: map[string]any{"name": truncate(name, 128)}})
	}
	args := map[string]any{}
	if raw, ok := r.params["arguments"]; ok && string(raw) != "null" {
		v, derr := decodeJSON(raw)
		obj, isObj := v.(map[string]any)
		if derr != nil || !isObj {
			return nil, errorf(CodeInvalidParams, "Invalid params: arguments must be an object")
		}
		args = obj
	}
	if verr := t.input().validate(args); verr != nil {
		if res := s.mutInvalidArgs(); res != nil {
			return res, nil
		}
		return toolError(fmt.Sprintf("Invalid arguments for tool %s: argument %v", t.name, verr)), nil
	}
	return s.mutToolResult(t.run(ctx, r, args))
}

// toolError is a tool execution error (isError:true) the model can read.
func toolError(text string) map[string]any {
	return map[string]any{"content": []any{textContent(text)}, "isError": true}
}

// toolText is a successful plain-text result.
func toolText(text string) map[string]any {
	return map[string]any{"content": []any{textContent(text)}, "isError": false}
}

// toolStructured is a successful result with structuredContent and, per
// CALL-5, the same JSON serialized in a text block.
func toolStructured(structured map[string]any) map[string]any {
	text, err := marshal(structured)
	if err != nil {
		return toolError("internal error: " + err.Error())
	}
	return map[string]any{
		"content":           []any{textContent(string(text))},
		"structuredContent": structured,
		"isError":           false,
	}
}

func textContent(text string) map[string]any {
	return map[string]any{"type": "text", "text": text}
}
