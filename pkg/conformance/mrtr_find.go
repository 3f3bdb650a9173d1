package conformance

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Finding a request that answers input_required, and answering it. The
// harness declares what it can answer without a human or a model: form
// elicitation (it declines), sampling (a fixed text) and roots (none).

// mrtrCaps are the client capabilities MRTR checks declare.
var mrtrCaps = json.RawMessage(`{"elicitation":{"form":{}},"sampling":{},"roots":{}}`)

// mrtrTarget is a request that answered input_required.
type mrtrTarget struct {
	method string // tools/call, resources/read or prompts/get
	name   string // tool or prompt name, or resource URI
	params map[string]any
	first  *mcpclient.Result // the input_required answer
}

func (t *mrtrTarget) label() string {
	return fmt.Sprintf("%s %q", t.method, jsonrpc.Clip(t.name, 80))
}

func (t *mrtrTarget) ev() *check.Evidence { return check.FromResponse(t.first.Response) }

// mrtrMaxTries bounds the requests spent looking for an MRTR target.
const mrtrMaxTries = 8

// mrtrFind sends callable tools (with valid arguments), listed resources
// and prompts until one answers input_required. It skips the check when
// none does; err is a transport failure.
func mrtrFind(p *check.Pass) (*mrtrTarget, error) {
	tries := 0
	var candidates []mrtrTarget
	for _, ct := range callTargets(p) {
		candidates = append(candidates, mrtrTarget{method: "tools/call", name: ct.tool.Name, params: map[string]any{"name": ct.tool.Name, "arguments": ct.args}})
	}
	for _, r := range p.Env.Facts.Resources {
		candidates = append(candidates, mrtrTarget{method: "resources/read", name: r.URI, params: map[string]any{"uri": r.URI}})
	}
	for _, pr := range p.Env.Facts.Prompts {
		candidates = append(candidates, mrtrTarget{method: "prompts/get", name: pr.Name})
	}
	for _, c := range candidates {
		if tries == mrtrMaxTries {
			break
		}
		tries++
		if c.method == "prompts/get" {
			for _, pr := range p.Env.Facts.Prompts {
				if pr.Name == c.name {
					c.params = map[string]any{"name": pr.Name, "arguments": promptArgs(p, pr)}
					break
				}
			}
		}
		res, err := mrtrSend(p, c.method, c.params, mrtrCaps)
		if err != nil && schemaTransportErr(err) {
			return nil, err
		}
		// A malformed input_required result is a target too: MRTR-2 and
		// MRTR-3 judge its shape from the raw result.
		if res != nil && res.ResultType == mcpclient.ResultInputRequired {
			c.first = res
			return &c, nil
		}
	}
	if len(p.Env.CallableTools()) == 0 && len(p.Env.Facts.Resources)+len(p.Env.Facts.Prompts) == 0 {
		callSkip(p, "no callable tool, and no resource or prompt to try")
	} else {
		callSkip(p, "no callable tool, listed resource or prompt answered input_required")
	}
	return nil, nil
}

// mrtrSend sends one of the three MRTR methods with these capabilities.
func mrtrSend(p *check.Pass, method string, params map[string]any, caps json.RawMessage) (*mcpclient.Result, error) {
	opt := mcpclient.WithCapabilities(caps)
	switch method {
	case "tools/call":
		return p.Env.Client.CallTool(p.Ctx, params["name"].(string), params["arguments"], opt)
	case "resources/read":
		return p.Env.Client.ReadResource(p.Ctx, params["uri"].(string), opt)
	default:
		args, _ := params["arguments"].(map[string]string)
		return p.Env.Client.GetPrompt(p.Ctx, params["name"].(string), args, opt)
	}
}

// mrtrAnswers answers every input request the harness can: elicitations
// are declined (never accepting keeps calls free of side effects), sampling
// gets a fixed text, roots an empty list.
func mrtrAnswers(reqs map[string]json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, raw := range reqs {
		var r struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(raw, &r)
		switch r.Method {
		case "elicitation/create":
			out[k] = json.RawMessage(`{"action":"decline"}`)
		case "sampling/createMessage":
			out[k] = json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"mcp-eval: no model is attached to this test client"},"model":"mcp-eval","stopReason":"endTurn"}`)
		case "roots/list":
			out[k] = json.RawMessage(`{"roots":[]}`)
		}
	}
	return out
}

// mrtrRetry re-sends the target's request with inputResponses and a
// requestState of the caller's choice (raw JSON; nil leaves it out).
func mrtrRetry(p *check.Pass, t *mrtrTarget, responses map[string]json.RawMessage, state json.RawMessage) (*mcpclient.Response, error) {
	params := map[string]any{}
	for k, v := range t.params {
		params[k] = v
	}
	if responses != nil {
		params["inputResponses"] = responses
	}
	if state != nil {
		params["requestState"] = state
	}
	return p.Env.Client.Do(p.Ctx, t.method, params, mcpclient.WithCapabilities(mrtrCaps))
}

// mrtrTamper flips one character in the middle of a requestState, to
// another character of the same class so that it still decodes (base64,
// hex) and only an integrity check can tell.
func mrtrTamper(state string) string {
	if state == "" {
		return "x"
	}
	b := []byte(state)
	i := len(b) / 2
	c := b[i]
	switch {
	case c >= 'a' && c < 'z', c >= 'A' && c < 'Z', c >= '0' && c < '9':
		b[i] = c + 1
	case c == 'z':
		b[i] = 'a'
	case c == 'Z':
		b[i] = 'A'
	case c == '9':
		b[i] = '0'
	case c == 'A':
		b[i] = 'B'
	default:
		b[i] = 'A'
	}
	return string(b)
}

// mrtrOutcome classifies an answer to a retry: "error", "input_required",
// "complete", or "" with a problem for anything else.
func mrtrOutcome(resp *mcpclient.Response) (string, string) {
	if resp.Error != nil {
		return "error", ""
	}
	rt, ok := resp.ResultType()
	switch {
	case !ok:
		return "", "the result has no resultType"
	case rt == mcpclient.ResultComplete, rt == mcpclient.ResultInputRequired:
		return rt, ""
	}
	return "", fmt.Sprintf("resultType %q is neither \"complete\" nor \"input_required\"", jsonrpc.Clip(rt, 40))
}

// mrtrResultDef is the schema definition of a complete result per method.
var mrtrResultDef = map[string]string{
	"tools/call": "CallToolResult", "resources/read": "ReadResourceResult", "prompts/get": "GetPromptResult",
}

// mrtrRPC unwraps a JSON-RPC error from a typed helper's error.
func mrtrRPC(err error) (*mcpclient.RPCError, bool) { return errors.AsType[*mcpclient.RPCError](err) }
