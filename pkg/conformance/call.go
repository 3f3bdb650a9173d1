package conformance

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonschema"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// CALL: tools/call (server/tools.mdx §Calling Tools, §Tool Result, §Error
// Handling; checklist §1.8).

// callSample is one call of a tool with valid arguments and its outcome.
type callSample struct {
	target callTarget
	res    *mcpclient.Result
	// rpc is the JSON-RPC error the call got, if any.
	rpc *mcpclient.RPCError
	// err is any other client-side error (unknown resultType, malformed).
	err error
	// tool is the decoded complete result (nil unless complete).
	tool *mcpclient.CallToolResult
}

func (s *callSample) ev() *check.Evidence {
	if s.res != nil {
		return check.FromResponse(s.res.Response)
	}
	if s.rpc != nil {
		return check.FromResponse(s.rpc.Response)
	}
	return nil
}

// at is the sample's evidence located at ptr in its response; absent: at
// a member ptr names that the response lacks.
func (s *callSample) at(ptr string, absent bool) *check.Evidence {
	resp := (*mcpclient.Response)(nil)
	switch {
	case s.res != nil:
		resp = s.res.Response
	case s.rpc != nil:
		resp = s.rpc.Response
	}
	return atProblem(s.ev(), resp, problem{at: ptr, absent: absent})
}

// callResultAt locates a member of a tool result, or its absence.
func callResultAt(resp *mcpclient.Response, member string) *check.Evidence {
	var r map[string]json.RawMessage
	_ = json.Unmarshal(resp.Result, &r)
	_, has := r[member]
	return atProblem(nil, resp, problem{at: check.Pointer("result", member), absent: !has})
}

// callSamples calls up to maxCallTargets callable tools with valid
// arguments. It skips the check when there is nothing to call; err is a
// transport failure.
// A filter narrows the targets; unfiltered says why none is left.
func callSamples(p *check.Pass, filter func(callTarget) bool, unfiltered string) ([]*callSample, error) {
	if !toolServed(p.Env.Facts) {
		p.Skipf(toolNotServed)
		return nil, nil
	}
	targets := callTargets(p)
	if len(targets) == 0 {
		callSkipNoTarget(p)
		return nil, nil
	}
	if filter != nil {
		if targets = slices.DeleteFunc(targets, func(ct callTarget) bool { return !filter(ct) }); len(targets) == 0 {
			callSkip(p, unfiltered)
			return nil, nil
		}
	}
	// The calls are independent: send them together.
	targets = targets[:min(len(targets), maxCallTargets)]
	out := make([]*callSample, len(targets))
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, ct := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = callOne(p, ct)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// callOne calls one target; err is a transport failure.
func callOne(p *check.Pass, ct callTarget) (*callSample, error) {
	// The tool is one the harness may call and the arguments are built
	// the same way every time: CALL-1, -4, -5, -6 and -7 judge the
	// repetition's one call of it.
	res, err := observedResult(p, "tools/call", map[string]any{"name": ct.tool.Name, "arguments": ct.args})
	s := &callSample{target: ct, res: res}
	if err != nil {
		if rpc, ok := errors.AsType[*mcpclient.RPCError](err); ok {
			s.rpc = rpc
		} else if schemaTransportErr(err) {
			return nil, err
		} else {
			s.err = err
		}
	}
	if s.err == nil && s.rpc == nil && res != nil && res.InputRequired == nil {
		if tr, err := res.Tool(); err == nil {
			s.tool = tr
		} else {
			s.err = err
		}
	}
	return s, nil
}

// callName labels a sample in messages.
func callName(s *callSample) string { return fmt.Sprintf("%q", jsonrpc.Clip(s.target.tool.Name, 80)) }

var CALL1 = &check.Check{
	ID: "CALL-1", Level: check.Must, Transports: check.Both,
	Spec: "schema.ts CallToolResult, CallToolResultResponse; server/tools.mdx §Tool Result",
	Doc:  "a tools/call result is either resultType \"complete\" and a valid CallToolResult, or \"input_required\"",
	Fix:  "return {resultType: \"complete\", content: [...], isError?, structuredContent?} (or an InputRequiredResult)",
	Run: func(p *check.Pass) error {
		samples, err := callSamples(p, nil, "")
		if err != nil || samples == nil {
			return err
		}
		judged := 0
		for _, s := range samples {
			ev := s.ev()
			switch {
			case s.rpc != nil:
				continue // an error is not a result; ERR checks judge codes
			case s.err != nil:
				p.Failf(ev, "tools/call %s: %v", callName(s), s.err)
				judged++
				continue
			case s.res.InputRequired != nil:
				judged++
				continue // the MRTR checks judge the interim result
			}
			judged++
			if s.res.MissingResultType {
				p.Failf(absentInResponse(ev, s.res.Response, "/result/resultType"), "tools/call %s result has no resultType, want \"complete\" or \"input_required\"", callName(s))
			}
			problems, at, err := schemaOracleAt("CallToolResult", s.res.Response.Result)
			if err != nil {
				return err
			}
			if problems != "" {
				p.Failf(atResponse(ev, s.res.Response, check.InResult(at)), "tools/call %s result is not a valid CallToolResult: %s", callName(s), problems)
				continue
			}
			p.Passf(ev, "tools/call %s returned a valid CallToolResult", callName(s))
		}
		if judged == 0 {
			p.Skipf("every tools/call with valid arguments returned a JSON-RPC error")
		}
		return nil
	},
}

// callNoSuchTool is a tool name no server has.
const callNoSuchTool = "mcp-eval-no-such-tool-7f3a9c"

var CALL2 = &check.Check{
	ID: "CALL-2", Level: check.Must, Transports: check.Both,
	Spec: "server/tools.mdx §Error Handling; schema.ts InvalidParamsError (unknown tool)",
	Doc:  "calling an unknown tool gives a JSON-RPC error (-32602 in the spec), not a tool result",
	Fix:  "answer tools/call for an unknown name with a JSON-RPC error -32602, not isError: true",
	Run: func(p *check.Pass) error {
		if !toolServed(p.Env.Facts) {
			p.Skipf(toolNotServed)
			return nil
		}
		// The error sweep's request (errProvoke), which RPC-2, HTTP-7 and
		// the ERR checks judge too.
		r, err := errAnswer(p, errWhatTool)
		if r == nil {
			if err == nil {
				err = fmt.Errorf("tools/call of %q: the error sweep did not send it (a harness bug)", callNoSuchTool)
			}
			return err
		}
		if r.raw == nil {
			return fmt.Errorf("tools/call of the unknown tool %q: %s", callNoSuchTool, r.describe())
		}
		if e, ok := r.rpcError(); ok {
			if e.Code != jsonrpc.CodeInvalidParams {
				p.Warnf(r.evidenceAt("/error/code"), "unknown tool %q gave error %d (%s); the spec uses -32602", callNoSuchTool, e.Code, jsonrpc.CodeName(e.Code))
				return nil
			}
			p.Passf(r.evidence(), "unknown tool gave error -32602")
			return nil
		}
		if r.has("error") {
			p.Warnf(r.evidenceAt("/error"), "unknown tool %q gave an error without an integer code (RPC-2 judges its shape); the spec uses -32602", callNoSuchTool)
			return nil
		}
		var res struct {
			ResultType string `json:"resultType"`
			IsError    bool   `json:"isError"`
		}
		_ = json.Unmarshal(r.result(), &res)
		switch {
		case res.ResultType == mcpclient.ResultInputRequired:
			p.Failf(r.evidenceAt("/result/resultType"), "unknown tool %q got an input_required result, want a JSON-RPC error", callNoSuchTool)
		case res.IsError:
			p.Failf(r.evidenceAt("/result/isError"), "unknown tool %q got a tool result with isError: true, want a JSON-RPC error (-32602)", callNoSuchTool)
		default:
			p.Failf(r.evidenceAt("/result"), "unknown tool %q got a successful result, want a JSON-RPC error (-32602)", callNoSuchTool)
		}
		return nil
	},
}

var CALL3 = &check.Check{
	ID: "CALL-3", Level: check.Must, Transports: check.Both,
	Spec: "server/tools.mdx §Error Handling (input validation errors), §Security; SEP-1303",
	Doc:  "arguments that break the inputSchema do not produce a normal success (isError: true expected; -32602 tolerated)",
	Fix:  "validate arguments against inputSchema and answer bad input with isError: true and an explanation",
	Run: func(p *check.Pass) error {
		if !toolServed(p.Env.Facts) {
			p.Skipf(toolNotServed)
			return nil
		}
		targets := callTargets(p)
		if len(targets) == 0 {
			callSkipNoTarget(p)
			return nil
		}
		for _, ct := range targets {
			args, how, ok := callBreakArgs(ct)
			if !ok {
				continue
			}
			return callJudgeInvalid(p, ct, args, how)
		}
		callSkip(p, "no callable tool has an inputSchema the harness can build invalid arguments for (a required property or a typed property)")
		return nil
	},
}

func callJudgeInvalid(p *check.Pass, ct callTarget, args map[string]any, how string) error {
	name := jsonrpc.Clip(ct.tool.Name, 80)
	res, err := p.Env.Client.CallTool(p.Ctx, ct.tool.Name, args)
	if err != nil {
		if rpc, ok := errors.AsType[*mcpclient.RPCError](err); ok {
			ev := check.FromResponseAt(rpc.Response, "/error/code")
			if rpc.Code() == jsonrpc.CodeInvalidParams {
				p.Warnf(ev, "tools/call %q %s gave error -32602; the spec reports input validation as a tool execution error (isError: true) (AMB-4)", name, how)
			} else {
				p.Warnf(ev, "tools/call %q %s gave error %d (%s); the spec expects isError: true (or -32602)", name, how, rpc.Code(), jsonrpc.CodeName(rpc.Code()))
			}
			return nil
		}
		if schemaTransportErr(err) {
			return err
		}
		p.Failf(nil, "tools/call %q %s: %v", name, how, err)
		return nil
	}
	ev := check.FromResponse(res.Response)
	if res.InputRequired != nil {
		p.Warnf(atResponse(ev, res.Response, "/result/resultType"), "tools/call %q %s got input_required instead of a validation error", name, how)
		return nil
	}
	tr, err := res.Tool()
	if err != nil {
		p.Failf(atResponse(ev, res.Response, "/result"), "tools/call %q %s: %v", name, how, err)
		return nil
	}
	if !tr.IsError {
		p.Failf(callResultAt(res.Response, "isError"), "tools/call %q %s succeeded; arguments that break inputSchema must not produce a normal result", name, how)
		return nil
	}
	if len(tr.Content) == 0 {
		p.Warnf(callResultAt(res.Response, "content"), "tools/call %q %s gave isError: true without explanatory content", name, how)
		return nil
	}
	p.Passf(ev, "tools/call %q %s gave isError: true", name, how)
	return nil
}

var CALL4 = &check.Check{
	ID: "CALL-4", Level: check.Must, Transports: check.Both,
	Spec: "server/tools.mdx §Output Schema",
	Doc:  "a successful result of a tool with an outputSchema has structuredContent that validates against it",
	Fix:  "return structuredContent that conforms to the tool's outputSchema on every successful call",
	Run: func(p *check.Pass) error {
		hasOutput := func(ct callTarget) bool {
			return len(ct.tool.OutputSchema) > 0 && string(ct.tool.OutputSchema) != "null"
		}
		samples, err := callSamples(p, hasOutput, "no callable tool declares an outputSchema")
		if err != nil || samples == nil {
			return err
		}
		judged := 0
		for _, s := range samples {
			ev := s.ev()
			if s.tool == nil || s.tool.IsError {
				continue // errors need no structured result (AMB-20)
			}
			out, err := schemaCompileTool(p.Env, s.target.tool.OutputSchema)
			if err != nil {
				continue // SCHEMA-1..4 report the schema itself
			}
			judged++
			if len(s.tool.StructuredContent) == 0 {
				p.Failf(callResultAt(s.res.Response, "structuredContent"), "tools/call %s succeeded without structuredContent although the tool declares an outputSchema", callName(s))
				continue
			}
			switch err := out.Validate(s.tool.StructuredContent); {
			case err == nil:
				p.Passf(ev, "tools/call %s structuredContent conforms to its outputSchema", callName(s))
			case jsonschema.KindOf(err) != "":
				p.Warnf(s.at("/result/structuredContent", false), "tools/call %s structuredContent could not be judged: %v", callName(s), err)
			default:
				at := "/result/structuredContent"
				if ve, ok := errors.AsType[*jsonschema.ValidationError](err); ok && len(ve.Problems) > 0 {
					at += ve.Problems[0].At
				}
				p.Failf(s.at(at, false), "tools/call %s structuredContent does not conform to its outputSchema: %v", callName(s), err)
			}
		}
		if judged == 0 {
			p.Skipf("no call of a tool with a usable outputSchema succeeded")
		}
		return nil
	},
}

var CALL5 = &check.Check{
	ID: "CALL-5", Level: check.Should, Transports: check.Both,
	Spec: "server/tools.mdx §Structured Content (AMB-5)",
	Doc:  "when structuredContent is present, content also holds a text block with the same JSON serialized",
	Fix:  "add a text content block with the JSON of structuredContent for clients that do not read it",
	Run: func(p *check.Pass) error {
		samples, err := callSamples(p, nil, "")
		if err != nil || samples == nil {
			return err
		}
		judged := 0
		for _, s := range samples {
			if s.tool == nil || len(s.tool.StructuredContent) == 0 {
				continue
			}
			judged++
			if callMirrored(s.tool) {
				p.Passf(s.ev(), "tools/call %s mirrors structuredContent in a text block", callName(s))
				continue
			}
			p.Failf(callResultAt(s.res.Response, "content"), "tools/call %s has structuredContent but no text block holding the same JSON", callName(s))
		}
		if judged == 0 {
			p.Skipf("no call returned structuredContent")
		}
		return nil
	},
}

// callMirrored reports whether a text block holds structuredContent's JSON.
func callMirrored(tr *mcpclient.CallToolResult) bool {
	for _, c := range tr.Content {
		var b struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(c, &b) == nil && b.Type == "text" && schemaSameJSON([]byte(b.Text), tr.StructuredContent) {
			return true
		}
	}
	return false
}

// callBlockDefs maps a content block type to its schema definition.
var callBlockDefs = map[string]string{
	"text": "TextContent", "image": "ImageContent", "audio": "AudioContent",
	"resource_link": "ResourceLink", "resource": "EmbeddedResource",
}

// callBlockProblems lists what is wrong with one content block: its shape
// against the concrete definition, and base64 data.
func callBlockProblems(raw json.RawMessage) ([]string, error) {
	ps, err := callBlockProblemsAt(raw)
	return msgs(ps), err
}

// callBlockProblemsAt is callBlockProblems with where each problem is: a
// pointer into the block.
func callBlockProblemsAt(raw json.RawMessage) ([]problem, error) {
	var b struct {
		Type     string `json:"type"`
		Data     string `json:"data"`
		Resource *struct {
			Blob *string `json:"blob"`
		} `json:"resource"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return []problem{{msg: fmt.Sprintf("is %s, want a content block object", shown(raw))}}, nil
	}
	def, ok := callBlockDefs[b.Type]
	if !ok {
		return []problem{{at: "/type", msg: fmt.Sprintf("has type %q, want text, image, audio, resource_link or resource", jsonrpc.Clip(b.Type, 40))}}, nil
	}
	var out []problem
	problems, at, err := schemaOracleAt(def, raw)
	if err != nil {
		return nil, err
	}
	if problems != "" {
		out = append(out, problem{at: at, msg: fmt.Sprintf("(%s) is not a valid %s: %s", b.Type, def, problems)})
	}
	if (b.Type == "image" || b.Type == "audio") && !callBase64(b.Data) {
		out = append(out, problem{at: "/data", msg: fmt.Sprintf("(%s) data is not base64: %q", b.Type, jsonrpc.Clip(b.Data, 40))})
	}
	if b.Type == "resource" && b.Resource != nil && b.Resource.Blob != nil && !callBase64(*b.Resource.Blob) {
		out = append(out, problem{at: "/resource/blob", msg: fmt.Sprintf("(resource) blob is not base64: %q", jsonrpc.Clip(*b.Resource.Blob, 40))})
	}
	return out, nil
}

// callBase64 reports whether s is standard base64 (RFC 4648 §4, padded).
func callBase64(s string) bool {
	_, err := base64.StdEncoding.Strict().DecodeString(s)
	return err == nil
}

var CALL6 = &check.Check{
	ID: "CALL-6", Level: check.Must, Transports: check.Both,
	Spec: "schema.ts ContentBlock; server/tools.mdx §Tool Result; server/prompts.mdx (base64 data)",
	Doc:  "every content block of a tool result is a valid text, image, audio, resource_link or resource block; binary data is base64",
	Fix:  "send content blocks exactly as the schema defines them, with base64 data and a mimeType for images and audio",
	Run: func(p *check.Pass) error {
		samples, err := callSamples(p, nil, "")
		if err != nil || samples == nil {
			return err
		}
		blocks := 0
		for _, s := range samples {
			if s.tool == nil {
				continue
			}
			for i, raw := range s.tool.Content {
				blocks++
				problems, err := callBlockProblemsAt(raw)
				if err != nil {
					return err
				}
				for _, pr := range problems {
					p.Failf(s.at(check.Pointer("result", "content", i)+pr.at, false), "tools/call %s content[%d] %s", callName(s), i, pr.msg)
				}
			}
		}
		if blocks == 0 {
			p.Skipf("no complete tool result carried content blocks")
			return nil
		}
		p.Passf(nil, "%d content blocks judged", blocks)
		return nil
	},
}

var CALL7 = &check.Check{
	ID: "CALL-7", Level: check.Info, Transports: check.Both,
	Spec: "server/tools.mdx §Resource Links",
	Doc:  "resource links returned by tools need not appear in resources/list (noted, never a failure)",
	Fix:  "nothing to fix: list linked resources if clients should find them on their own",
	Run: func(p *check.Pass) error {
		samples, err := callSamples(p, nil, "")
		if err != nil || samples == nil {
			return err
		}
		listed := map[string]bool{}
		for _, r := range p.Env.Facts.Resources {
			listed[r.URI] = true
		}
		links := 0
		for _, s := range samples {
			if s.tool == nil {
				continue
			}
			for _, raw := range s.tool.Content {
				var b struct {
					Type string `json:"type"`
					URI  string `json:"uri"`
				}
				if json.Unmarshal(raw, &b) != nil || b.Type != "resource_link" {
					continue
				}
				links++
				where := "also listed by resources/list"
				if !listed[b.URI] {
					where = "not in resources/list, which the spec allows"
				}
				p.Passf(s.ev(), "tools/call %s links %q, %s", callName(s), jsonrpc.Clip(b.URI, 120), where)
			}
		}
		if links == 0 {
			p.Skipf("no tool result carried a resource_link")
		}
		return nil
	},
}

var callFamily = family{name: "CALL", title: "tools/call", checks: []*check.Check{CALL1, CALL2, CALL3, CALL4, CALL5, CALL6, CALL7}}
