package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Requests that ask for input (MRTR) on an arbitrary server, for META-3,
// META-4, STATE-2 and CACHE-2: the items the MRTR search found (every tool
// the harness may call, every listed resource and prompt, within the
// run's deadline: mrtr_find.go). Each check judges every item found, as
// the MRTR checks do (mrtrEach), sending it again with every client
// capability declared.

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

// stateTargetOf is an item the MRTR search found, as a stateTarget.
func stateTargetOf(t *mrtrTarget) *stateTarget {
	return &stateTarget{Method: t.method, Params: t.params, Label: t.label()}
}

// stateFindTarget returns the first item the MRTR search found that
// answers input_required, or nil and how many items were tried. For the
// checks that take one sample request (ERR, RES); the state checks judge
// every item (stateEach).
func stateFindTarget(p *check.Pass) (*stateTarget, int, error) {
	f := mrtrSearch(p)
	if f.err != nil {
		return nil, f.tried, f.err
	}
	if len(f.targets) == 0 {
		return nil, f.tried, nil
	}
	return stateTargetOf(f.targets[0]), f.tried, nil
}

// stateJudgeFunc judges one item that asked for input; the findings go
// through j, a pass is (mrtrOK, line, evidence), an item the rule does
// not apply to (mrtrNA, why, nil).
type stateJudgeFunc func(j *mrtrJudge, t *stateTarget) (mrtrStatus, string, *check.Evidence, error)

// stateEach judges every item the MRTR search found, within the judging
// deadline (mrtrEach).
func stateEach(p *check.Pass, judge stateJudgeFunc) error {
	return mrtrEach(p, mrtrSearched, func(j *mrtrJudge, t *mrtrTarget) (mrtrStatus, string, *check.Evidence, error) {
		return judge(j, stateTargetOf(t))
	})
}

// stateAsk sends an item with every capability declared and returns its
// input_required answer; nil with a note when it no longer asks for input
// or gave no answer (the other items are still judged), an error when the
// server is gone or the run's time is up.
func stateAsk(p *check.Pass, t *stateTarget) (*mcpclient.Response, string, error) {
	resp, err := stateSend(p.Ctx, p.Env.Client, t, stateAllCaps)
	if resp == nil {
		if err == nil || p.Ctx.Err() != nil || mrtrUnreachable(err) {
			return nil, "", err
		}
		return nil, fmt.Sprintf("%s asked for input before but then gave no answer: %v", t.Label, err), nil
	}
	if rt, _ := resp.ResultType(); rt != mcpclient.ResultInputRequired {
		return nil, fmt.Sprintf("%s asked for input before but now answered %s", t.Label, stateLabel(resp)), nil
	}
	return resp, "", nil
}

// stateAskedKey is the Memo key of one repetition's stateAsk of a target.
type stateAskedKey struct {
	run            int
	method, params string
}

type stateAsked struct {
	resp *mcpclient.Response
	note string
	err  error
}

// stateAskShared is stateAsk sent once per repetition: CACHE-2 judges the
// input_required answer's hints and STATE-2 retries it on a new
// connection, so both take the same first answer. (META-3 asks for
// itself: its rule is about the request right before its own.) The
// response is shared: read it only.
func stateAskShared(p *check.Pass, t *stateTarget) (*mcpclient.Response, string, error) {
	params, err := json.Marshal(t.Params)
	if err != nil || p.Env.Memo == nil {
		return stateAsk(p, t)
	}
	v, ok := p.Env.Memo.Do(stateAskedKey{p.Run, t.Method, string(params)}, func() any {
		resp, note, err := stateAsk(p, t)
		return stateAsked{resp, note, err}
	}).(stateAsked)
	if !ok {
		return nil, "", fmt.Errorf("%s: the shared request failed (a harness bug: see the check that sent it)", t.Label)
	}
	return v.resp, v.note, v.err
}

// stateNoCapsKey is the Memo key of one repetition's request of an item
// with no client capabilities declared.
type stateNoCapsKey struct {
	run            int
	method, params string
}

type stateNoCapsAnswer struct {
	resp *mcpclient.Response
	err  error
}

// stateNoCapsShared sends an item that asks for input with
// clientCapabilities {} once per repetition, on the shared client, for
// the checks that only read the answer: MRTR-4 (what a server asks for
// when nothing is declared), META-4 (-32021 and its HTTP status, from the
// bytes the server wrote: replyOfHTTP) and, for the first item, the error
// sweep (errProvoke). None retries the answer, and the request starts a
// flow of its own, so reading it together changes nothing any of them
// judges. META-3 sends its own: its rule is about this request right after
// the same request with capabilities. runCtx is the run's context (the
// asking check's p.Ctx may be its judging deadline: mrtrShare). The
// response is shared: read it only.
func stateNoCapsShared(p *check.Pass, runCtx context.Context, method string, params map[string]any) (*mcpclient.Response, error) {
	b, err := json.Marshal(params)
	if err != nil || p.Env.Memo == nil || runCtx == nil {
		return p.Env.Client.Do(p.Ctx, method, params, mcpclient.WithCapabilities(stateNoCaps))
	}
	v, err := mrtrShare(p, runCtx, stateNoCapsKey{p.Run, method, string(b)}, func(ctx context.Context) any {
		resp, err := p.Env.Client.Do(ctx, method, params, mcpclient.WithCapabilities(stateNoCaps))
		return stateNoCapsAnswer{resp, err}
	})
	if err != nil {
		return nil, err
	}
	a := v.(stateNoCapsAnswer)
	return a.resp, a.err
}

// stateSend sends the target with the given capabilities on c.
func stateSend(ctx context.Context, c *mcpclient.Client, t *stateTarget, caps json.RawMessage) (*mcpclient.Response, error) {
	return c.Do(ctx, t.Method, t.Params, mcpclient.WithCapabilities(caps))
}

// stateInput is one input request of an input_required result.
type stateInput struct{ key, method string }

// stateInputRequests lists an input_required result's inputRequests,
// sorted by key.
func stateInputRequests(result json.RawMessage) []stateInput {
	var r struct {
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
	}
	_ = json.Unmarshal(result, &r)
	var out []stateInput
	for _, k := range slices.Sorted(maps.Keys(r.InputRequests)) {
		out = append(out, stateInput{k, r.InputRequests[k].Method})
	}
	return out
}

// stateInputMethods lists the methods of an input_required result's
// inputRequests, sorted by key.
func stateInputMethods(result json.RawMessage) []string {
	var out []string
	for _, in := range stateInputRequests(result) {
		out = append(out, in.method)
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
