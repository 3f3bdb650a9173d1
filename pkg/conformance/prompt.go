package conformance

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// PROMPT: prompts (server/prompts.mdx; checklist §1.10).

func promptServed(f *check.Facts) bool {
	return f.Has("prompts") || f.PromptsErr == nil && len(f.Prompts) > 0
}

const promptNotServed = "the server does not declare the prompts capability"

// promptMaxGets bounds how many prompts one check gets.
const promptMaxGets = 3

// promptNoSuchPrompt is a prompt name no server has.
const promptNoSuchPrompt = "mcp-eval-no-such-prompt-4b8e1f"

// promptArgs fills a prompt's required arguments: with the first value
// completion/complete offers when the server declares completions, else
// with a plain word. Arguments the server then rejects make the prompt
// unusable for the harness, not a finding.
func promptArgs(p *check.Pass, pr mcpclient.Prompt) map[string]string {
	args := map[string]string{}
	for _, a := range pr.Arguments {
		if !a.Required {
			continue
		}
		args[a.Name] = "example"
		if !p.Env.Facts.Has("completions") {
			continue
		}
		// The same request COMP-1 and COMP-3 send: the repetition's answer.
		resp, err := p.Do("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": pr.Name}, "argument": map[string]any{"name": a.Name, "value": ""}})
		if err != nil || resp == nil || resp.Error != nil {
			continue
		}
		var r struct {
			Completion struct {
				Values []string `json:"values"`
			} `json:"completion"`
		}
		if json.Unmarshal(resp.Result, &r) == nil && len(r.Completion.Values) > 0 {
			args[a.Name] = r.Completion.Values[0]
		}
	}
	return args
}

// promptGetParams is the get of pr every check of a repetition shares
// (Pass.Do): the same params make the same observation.
func promptGetParams(p *check.Pass, pr mcpclient.Prompt) map[string]any {
	return map[string]any{"name": pr.Name, "arguments": promptArgs(p, pr)}
}

var PROMPT1 = &check.Check{
	ID: "PROMPT-1", Level: check.Must, Transports: check.Both,
	Spec: "server/prompts.mdx §Listing Prompts, §Getting a Prompt; schema.ts ListPromptsResult, GetPromptResult",
	Doc:  "prompts/list gives valid ListPromptsResult pages, the same on every connection; prompts/get gives a GetPromptResult or an InputRequiredResult",
	Fix:  "answer prompts/list with {resultType, prompts, ttlMs, cacheScope} and prompts/get with {resultType, messages: [...]}",
	Run: func(p *check.Pass) error {
		if !promptServed(p.Env.Facts) {
			p.Skipf(promptNotServed)
			return nil
		}
		lr, ok, err := schemaJudgeList(p, "prompts/list", "prompts", "ListPromptsResult")
		if err != nil {
			return err
		}
		if ok {
			if err := rsrcSameOnFresh(p, "prompts/list", "prompts", "name", lr); err != nil {
				return err
			}
		}
		// The first prompts in one repetition, a sample and what went wrong
		// in the others (Pass.Cases).
		prompts := p.Env.Facts.Prompts[:min(len(p.Env.Facts.Prompts), promptMaxGets)]
		err = p.Cases("gets", len(prompts), func(i int) error {
			pr := prompts[i]
			res, err := observedResult(p, "prompts/get", promptGetParams(p, pr))
			name := jsonrpc.Clip(pr.Name, 80)
			if err != nil {
				if rpc, isRPC := errors.AsType[*mcpclient.RPCError](err); isRPC {
					if rpc.Code() != jsonrpc.CodeInvalidParams && rpc.Code() != jsonrpc.CodeMissingRequiredClientCapability {
						p.Failf(check.FromResponseAt(rpc.Response, "/error/code"), "prompts/get %q gave error %d (%s): %s", name, rpc.Code(), jsonrpc.CodeName(rpc.Code()), jsonrpc.Clip(rpc.Err.Message, 120))
					}
					return nil // -32602: the harness's arguments did not fit
				}
				if schemaTransportErr(err) {
					return err
				}
				p.Failf(nil, "prompts/get %q: %v", name, err)
				return nil
			}
			ev := check.FromResponse(res.Response)
			if res.InputRequired != nil {
				return nil // MRTR checks judge it
			}
			if res.MissingResultType {
				p.Failf(absentInResponse(ev, res.Response, "/result/resultType"), "prompts/get %q result has no resultType", name)
			}
			problems, at, err := schemaOracleAt("GetPromptResult", res.Response.Result)
			if err != nil {
				return err
			}
			if problems != "" {
				p.Failf(atResponse(ev, res.Response, check.InResult(at)), "prompts/get %q is not a valid GetPromptResult: %s", name, problems)
				return nil
			}
			p.Passf(ev, "prompts/get %q returned a valid GetPromptResult", name)
			return nil
		})
		if err != nil {
			return err
		}
		if ok {
			p.Passf(toolEvidence(lr), "prompts/list: %d prompts, valid and the same on a fresh connection", len(lr.Items))
		}
		return nil
	},
}

var PROMPT2 = &check.Check{
	ID: "PROMPT-2", Level: check.Should, Transports: check.Both,
	Spec: "server/prompts.mdx §Error Handling",
	Doc:  "an unknown prompt name and a missing required argument give -32602 (internal errors -32603)",
	Fix:  "answer prompts/get for an unknown name or without a required argument with JSON-RPC error -32602",
	Run: func(p *check.Pass) error {
		if !promptServed(p.Env.Facts) {
			p.Skipf(promptNotServed)
			return nil
		}
		if err := promptExpect32602(p, promptNoSuchPrompt, nil, "unknown prompt "+fmt.Sprintf("%q", promptNoSuchPrompt), false); err != nil {
			return err
		}
		for _, pr := range p.Env.Facts.Prompts {
			for _, a := range pr.Arguments {
				if !a.Required {
					continue
				}
				args := promptArgs(p, pr)
				delete(args, a.Name)
				return promptExpect32602(p, pr.Name, args, fmt.Sprintf("prompt %q without its required argument %q", jsonrpc.Clip(pr.Name, 80), jsonrpc.Clip(a.Name, 80)), true)
			}
		}
		return nil
	},
}

// promptExpect32602 gets a prompt that must fail with -32602; allowInput
// accepts an input_required answer (a server may ask for a missing
// argument through MRTR instead).
func promptExpect32602(p *check.Pass, name string, args map[string]string, what string, allowInput bool) error {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	resp, err := p.Do("prompts/get", params)
	if err != nil {
		return err
	}
	ev := check.FromResponse(resp)
	rt, _ := resp.ResultType()
	switch {
	case resp.Error == nil && rt == mcpclient.ResultInputRequired && allowInput:
		p.Passf(ev, "prompts/get of %s asked for input", what)
	case resp.Error == nil:
		p.Failf(atResponse(ev, resp, "/result"), "prompts/get of %s succeeded, want error -32602", what)
	case resp.Error.Code != jsonrpc.CodeInvalidParams:
		p.Failf(atResponse(ev, resp, "/error/code"), "prompts/get of %s gave error %d (%s), want -32602", what, resp.Error.Code, jsonrpc.CodeName(resp.Error.Code))
	default:
		p.Passf(ev, "prompts/get of %s gave -32602", what)
	}
	return nil
}

var promptFamily = family{name: "PROMPT", title: "prompts", checks: []*check.Check{PROMPT1, PROMPT2}}
