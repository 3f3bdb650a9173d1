package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// Result is the answer to a request that may ask for input first
// (tools/call, resources/read, prompts/get; mrtr.mdx §Supported Requests).
type Result struct {
	Response   *Response
	ResultType string
	// MissingResultType is true when the result had no resultType: a
	// legacy server's result, read as "complete" and reported (on a modern
	// server it is a RES-1 failure, also read as complete here).
	MissingResultType bool
	// InputRequired is set when the server asks for input; answer it with
	// Continue.
	InputRequired *InputRequiredResult
	// Rounds counts the requests sent for this call (1 without MRTR).
	Rounds int
	// HeaderRetry is true when a -32020 made the client re-list the tools
	// and retry (streamable-http.mdx §Client Behavior).
	HeaderRetry bool
}

// InputHandler answers an MRTR input request: it gets inputRequests and
// returns inputResponses with the same keys.
type InputHandler func(ctx context.Context, requests map[string]InputRequest) (map[string]json.RawMessage, error)

// ErrUnknownResultType means a resultType the client does not know; a client
// MUST treat it as invalid (basic/index.mdx §ResultType).
var ErrUnknownResultType = errors.New("unknown resultType")

// CallTool calls a tool. An input_required answer is returned in
// Result.InputRequired for the caller to Continue; a -32020 on HTTP makes
// the client re-list the tools and retry once.
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*Result, error) {
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{"name": name, "arguments": args}
	resp, err := c.Do(ctx, "tools/call", params, opts...)
	retried := false
	if err == nil && resp.Error != nil && resp.Error.Code == jsonrpc.CodeHeaderMismatch && c.t.Kind() == "http" && c.Info().Era == EraModern {
		if _, lerr := c.ListTools(ctx); lerr == nil {
			retried = true
			resp, err = c.send(ctx, resp.Request)
		}
	}
	res, err := c.result("tools/call", resp, err)
	if res != nil {
		res.HeaderRetry = retried
	}
	return res, err
}

// ReadResource reads a resource by URI.
func (c *Client) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*Result, error) {
	resp, err := c.Do(ctx, "resources/read", map[string]any{"uri": uri}, opts...)
	return c.result("resources/read", resp, err)
}

// GetPrompt gets a prompt with arguments.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*Result, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	resp, err := c.Do(ctx, "prompts/get", params, opts...)
	return c.result("prompts/get", resp, err)
}

// Continue answers an input_required result: it re-sends the original
// request under a new id with inputResponses and the exact requestState
// (mrtr.mdx §Retrying; MRTR-5).
func (c *Client) Continue(ctx context.Context, prev *Result, responses map[string]json.RawMessage) (*Result, error) {
	if prev == nil || prev.InputRequired == nil || prev.Response == nil || prev.Response.Request == nil {
		return nil, errors.New("Continue needs a result that asked for input")
	}
	orig := prev.Response.Request
	req := &Request{Method: orig.Method, Params: maps.Clone(orig.Params), opts: orig.opts}
	delete(req.Params, "inputResponses")
	delete(req.Params, "requestState")
	if responses != nil {
		b, err := json.Marshal(responses)
		if err != nil {
			return nil, fmt.Errorf("encoding inputResponses: %w", err)
		}
		req.Params["inputResponses"] = b
	}
	if prev.InputRequired.RequestState != nil {
		req.Params["requestState"] = prev.InputRequired.RequestState
	}
	resp, err := c.send(ctx, req)
	res, err := c.result(orig.Method, resp, err)
	if res != nil {
		res.Rounds = prev.Rounds + 1
	}
	return res, err
}

// Resolve runs the MRTR loop with handler until the result is complete, for
// at most Config.MaxInputRounds rounds.
func (c *Client) Resolve(ctx context.Context, res *Result, handler InputHandler) (*Result, error) {
	for res != nil && res.InputRequired != nil {
		if res.Rounds >= c.cfg.MaxInputRounds {
			return res, fmt.Errorf("%s: still input_required after %d rounds", res.Response.Request.Method, res.Rounds)
		}
		reqs := map[string]InputRequest{}
		for k, raw := range res.InputRequired.InputRequests {
			var ir InputRequest
			if err := json.Unmarshal(raw, &ir); err != nil {
				return res, fmt.Errorf("input request %q is not {method, params}: %w", k, err)
			}
			reqs[k] = ir
		}
		var responses map[string]json.RawMessage
		if len(reqs) > 0 {
			var err error
			if responses, err = handler(ctx, reqs); err != nil {
				return res, fmt.Errorf("answering input requests: %w", err)
			}
		}
		next, err := c.Continue(ctx, res, responses)
		if err != nil {
			return next, err
		}
		res = next
	}
	return res, nil
}

func (c *Client) result(method string, resp *Response, err error) (*Result, error) {
	return ResultOf(method, resp, err)
}

// ResultOf reads what Do returned for a request that may ask for input
// (tools/call, resources/read, prompts/get) as CallTool, ReadResource and
// GetPrompt do: an error answer is an *RPCError, an input_required result
// sets InputRequired. It is for callers that send the request themselves
// (a response shared between checks); resp is only read.
func ResultOf(method string, resp *Response, err error) (*Result, error) {
	if err != nil {
		if resp == nil {
			return nil, err
		}
		return &Result{Response: resp, Rounds: 1}, err
	}
	res := &Result{Response: resp, Rounds: 1}
	if resp.Error != nil {
		return res, &RPCError{Method: method, Err: resp.Error, Response: resp}
	}
	rt, ok := resp.ResultType()
	switch {
	case !ok:
		res.ResultType = ResultComplete
		res.MissingResultType = true
	case rt == ResultComplete:
		res.ResultType = rt
	case rt == ResultInputRequired:
		res.ResultType = rt
		var ir InputRequiredResult
		if err := json.Unmarshal(resp.Result, &ir); err != nil {
			return res, fmt.Errorf("%s: input_required result is malformed: %w", method, err)
		}
		res.InputRequired = &ir
	default:
		res.ResultType = rt
		return res, fmt.Errorf("%s: %w %q", method, ErrUnknownResultType, jsonrpc.Clip(rt, 60))
	}
	return res, nil
}

// Tool decodes a complete tools/call result.
func (r *Result) Tool() (*CallToolResult, error) {
	if r.InputRequired != nil {
		return nil, errors.New("the result is input_required, not complete")
	}
	var out CallToolResult
	if err := json.Unmarshal(r.Response.Result, &out); err != nil {
		return nil, fmt.Errorf("tools/call result is not a CallToolResult: %w", err)
	}
	return &out, nil
}

// Complete asks for argument completions (completion/complete).
func (c *Client) Complete(ctx context.Context, ref map[string]any, argName, value string, opts ...CallOption) (*Response, error) {
	params := map[string]any{"ref": ref, "argument": map[string]any{"name": argName, "value": value}}
	return c.call(ctx, "completion/complete", params, opts...)
}
