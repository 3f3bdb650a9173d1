package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Finding a request that asks for input (MRTR) on an arbitrary server, for
// META-3, META-4, STATE-2 and CACHE-2: the tools the harness may call, the
// listed resources and prompts, each sent once with every client capability
// declared; the first that answers input_required is the target.

// stateAllCaps declares every client capability an input request can need
// (mrtr.mdx: elicitation in both modes, sampling with tools and context,
// roots).
var stateAllCaps = json.RawMessage(`{"elicitation":{"form":{},"url":{}},"sampling":{"context":{},"tools":{}},"roots":{}}`)

// stateNoCaps declares no client capability.
var stateNoCaps = json.RawMessage(`{}`)

// stateTarget is a request that asked for input.
type stateTarget struct {
	Method string
	Params map[string]any
	Label  string // e.g. `tools/call "send_email"`
}

// Limits of the search, so a server with hundreds of tools stays cheap.
const (
	stateMaxTools     = 8
	stateMaxResources = 3
	stateMaxPrompts   = 3
)

// stateCandidates lists the requests worth trying, tools first.
func stateCandidates(env check.Env) []stateTarget {
	var out []stateTarget
	for i, t := range env.CallableTools() {
		if i == stateMaxTools {
			break
		}
		out = append(out, stateTarget{Method: "tools/call", Params: map[string]any{"name": t.Name, "arguments": stateGuessArgs(t.InputSchema)}, Label: fmt.Sprintf("tools/call %q", t.Name)})
	}
	for i, pr := range env.Facts.Prompts {
		if i == stateMaxPrompts {
			break
		}
		out = append(out, stateTarget{Method: "prompts/get", Params: statePromptParams(pr), Label: fmt.Sprintf("prompts/get %q", pr.Name)})
	}
	for i, r := range env.Facts.Resources {
		if i == stateMaxResources {
			break
		}
		out = append(out, stateTarget{Method: "resources/read", Params: map[string]any{"uri": r.URI}, Label: fmt.Sprintf("resources/read %q", r.URI)})
	}
	return out
}

// statePromptParams fills required prompt arguments with a placeholder.
func statePromptParams(pr mcpclient.Prompt) map[string]any {
	params := map[string]any{"name": pr.Name}
	args := map[string]string{}
	for _, a := range pr.Arguments {
		if a.Required {
			args[a.Name] = "test"
		}
	}
	if len(args) > 0 {
		params["arguments"] = args
	}
	return params
}

type stateSearch struct {
	mu     sync.Mutex
	done   bool
	target *stateTarget
	tried  int
}

// stateSearches memoises the search per run (Facts are per run), so that
// the checks that need it do not each call every tool.
var stateSearches sync.Map // *check.Facts → *stateSearch

// stateFindTarget returns the first request that answers input_required
// with every capability declared, or nil and how many requests were tried.
func stateFindTarget(p *check.Pass) (*stateTarget, int, error) {
	v, _ := stateSearches.LoadOrStore(p.Env.Facts, &stateSearch{})
	s := v.(*stateSearch)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.target, s.tried, nil
	}
	s.tried = 0
	for _, cand := range stateCandidates(p.Env) {
		s.tried++
		resp, err := p.Env.Client.Do(p.Ctx, cand.Method, cand.Params, mcpclient.WithCapabilities(stateAllCaps))
		if err != nil {
			if p.Ctx.Err() != nil {
				return nil, s.tried, err
			}
			continue // a tool that times out is no target; others may be
		}
		if rt, _ := resp.ResultType(); rt == mcpclient.ResultInputRequired {
			c := cand
			s.target = &c
			break
		}
	}
	s.done = true
	return s.target, s.tried, nil
}

// stateSkipNoTarget is the skip message when no request asked for input.
func stateSkipNoTarget(p *check.Pass, tried int) {
	if tried == 0 {
		callSkip(p, "no request to try: no callable tool, resource or prompt")
		return
	}
	callSkip(p, fmt.Sprintf("none of %d requests tried (callable tools, resources, prompts) asked for input with input_required", tried))
}

// stateSend sends the target with the given capabilities on c.
func stateSend(ctx context.Context, c *mcpclient.Client, t *stateTarget, caps json.RawMessage) (*mcpclient.Response, error) {
	return c.Do(ctx, t.Method, t.Params, mcpclient.WithCapabilities(caps))
}

// stateInputMethods lists the methods of an input_required result's
// inputRequests, sorted by key.
func stateInputMethods(result json.RawMessage) []string {
	var r struct {
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
	}
	_ = json.Unmarshal(result, &r)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(r.InputRequests)) {
		out = append(out, r.InputRequests[k].Method)
	}
	return out
}

// stateCapabilityFor names the client capability an input request needs.
func stateCapabilityFor(method string) string {
	switch method {
	case "elicitation/create":
		return "elicitation"
	case "sampling/createMessage":
		return "sampling"
	case "roots/list":
		return "roots"
	}
	return ""
}

// stateAnswers builds inputResponses that decline or answer each input
// request harmlessly: an elicitation is declined, sampling gets a short
// text, roots an empty list. ok is false for a method the harness cannot
// answer.
func stateAnswers(result json.RawMessage) (map[string]json.RawMessage, bool) {
	var r struct {
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for k, ir := range r.InputRequests {
		switch ir.Method {
		case "elicitation/create":
			out[k] = json.RawMessage(`{"action":"decline"}`)
		case "sampling/createMessage":
			out[k] = json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"mcp-eval conformance probe"},"model":"mcp-eval","stopReason":"endTurn"}`)
		case "roots/list":
			out[k] = json.RawMessage(`{"roots":[]}`)
		default:
			return nil, false
		}
	}
	return out, true
}

// stateGuessArgs returns arguments for a tool's required properties, guessed
// from the inputSchema (const, enum, default, examples, then the type). The
// guess may not satisfy every constraint; a tool that rejects it is simply
// not a target.
func stateGuessArgs(schema json.RawMessage) map[string]any {
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return map[string]any{}
	}
	v, _ := stateGuessValue(root, root, 0).(map[string]any)
	if v == nil {
		v = map[string]any{}
	}
	return v
}

func stateGuessValue(node, root map[string]any, depth int) any {
	if depth > 8 || node == nil {
		return nil
	}
	if ref, ok := node["$ref"].(string); ok && strings.HasPrefix(ref, "#/") {
		target := any(root)
		for _, part := range strings.Split(ref[2:], "/") {
			m, _ := target.(map[string]any)
			target = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
		}
		if m, ok := target.(map[string]any); ok {
			return stateGuessValue(m, root, depth+1)
		}
	}
	if c, ok := node["const"]; ok {
		return c
	}
	if e, ok := node["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if d, ok := node["default"]; ok {
		return d
	}
	if ex, ok := node["examples"].([]any); ok && len(ex) > 0 {
		return ex[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := node[k].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return stateGuessValue(m, root, depth+1)
			}
		}
	}
	typ := node["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[0]
	}
	switch typ {
	case "string":
		switch node["format"] {
		case "email":
			return "test@example.com"
		case "uri", "url":
			return "https://example.com/"
		case "date":
			return "2026-01-01"
		case "date-time":
			return "2026-01-01T00:00:00Z"
		}
		s := "test"
		if n, ok := node["minLength"].(float64); ok && int(n) > len(s) {
			s = strings.Repeat("a", int(n))
		}
		return s
	case "integer", "number":
		n := 1.0
		if lo, ok := node["minimum"].(float64); ok {
			n = lo
		} else if hi, ok := node["maximum"].(float64); ok && hi < n {
			n = hi
		}
		return n
	case "boolean":
		return false
	case "array":
		out := []any{}
		if mi, ok := node["minItems"].(float64); ok && mi > 0 {
			item, _ := node["items"].(map[string]any)
			for i := 0; i < int(mi) && i < 8; i++ {
				out = append(out, stateGuessValue(item, root, depth+1))
			}
		}
		return out
	case "null":
		return nil
	}
	// An object, or an untyped node with properties.
	obj := map[string]any{}
	props, _ := node["properties"].(map[string]any)
	req, _ := node["required"].([]any)
	for _, r := range req {
		name, ok := r.(string)
		if !ok {
			continue
		}
		sub, _ := props[name].(map[string]any)
		obj[name] = stateGuessValue(sub, root, depth+1)
	}
	return obj
}

// stateLabel names a response for messages: method and, when an error,
// its code.
func stateLabel(resp *mcpclient.Response) string {
	if resp.Error != nil {
		return fmt.Sprintf("error %d (%s)", resp.Error.Code, jsonrpc.CodeName(resp.Error.Code))
	}
	rt, ok := resp.ResultType()
	if !ok {
		return "a result without resultType"
	}
	return fmt.Sprintf("a %q result", rt)
}

// stateFirstAsk finds a request that answers input_required and sends it
// once with every capability declared. ok is false when the check has
// been skipped (nothing asks for input, or it no longer does).
func stateFirstAsk(p *check.Pass) (t *stateTarget, first *mcpclient.Response, ok bool, err error) {
	t, tried, err := stateFindTarget(p)
	if err != nil || t == nil {
		if err == nil {
			stateSkipNoTarget(p, tried)
		}
		return nil, nil, false, err
	}
	first, err = stateSend(p.Ctx, p.Env.Client, t, stateAllCaps)
	if err != nil {
		return nil, nil, false, err
	}
	if rt, _ := first.ResultType(); rt != mcpclient.ResultInputRequired {
		p.Skipf("%s asked for input before but now answered %s", t.Label, stateLabel(first))
		return nil, nil, false, nil
	}
	return t, first, true, nil
}
