package pipeline

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/tokens"
)

// Bounds of one model's exact count (two small requests): it is a
// side measurement, so a slow provider costs the run little.
const (
	exactCountTimeout   = 30 * time.Second
	exactAttemptTimeout = 15 * time.Second
	maxExactNote        = 300
)

// exactToolTokens asks each model of the run, at its provider's
// token-counting endpoint, what the tools add to a request as that
// provider is sent them (tool-tokens: exact). A model whose key is not
// in the environment, whose endpoint has no counting API, or whose
// provider refuses, gets a note instead: never a failed run, and never
// a request without the key.
func (p *Plan) exactToolTokens(ctx context.Context, tt *report.ToolTokens, tools []llm.Tool) {
	var specs []string
	for _, m := range p.modelsUsed() {
		if !slices.Contains(specs, m) {
			specs = append(specs, m)
		}
	}
	if len(specs) == 0 {
		tt.ExactNote = "tool-tokens: exact, but this run calls no model (Layers 1 and 2 do not run, or no model is configured), so no provider was asked"
		return
	}
	tt.ExactMethod = report.ExactMethod
	tt.Exact = []report.ToolTokenExact{}
	for _, spec := range specs {
		e := report.ToolTokenExact{Model: spec, Encoding: tokens.EncodingFor(spec)}
		if c := tt.Count(e.Encoding); c != nil {
			e.Estimate = c.Total
		}
		count, err := exactCount(ctx, spec, p.Behavior.Endpoints, p.Env.lookup, tools)
		switch {
		case errors.Is(err, llm.ErrNoCountEndpoint):
			e.Note = "not counted: its endpoint speaks Chat Completions, which has no token-counting API"
		case err != nil:
			e.Note = "not counted: " + jsonrpc.Clip(err.Error(), maxExactNote)
		default:
			e.Provider, e.Endpoint = count.Provider, count.Endpoint
			e.Tokens, e.WithTools, e.WithoutTools = &count.Tokens, count.WithTools, count.WithoutTools
		}
		tt.Exact = append(tt.Exact, e)
	}
}

func exactCount(ctx context.Context, spec string, endpoints map[string]config.Endpoint, lookup func(string) (string, bool), tools []llm.Tool) (*llm.ToolCount, error) {
	// llm.New fails, naming the variable, when the key is not set: no
	// request is made without it.
	prov, err := llm.New(spec, endpoints, lookup, llm.Options{Timeout: exactCountTimeout, AttemptTimeout: exactAttemptTimeout, MaxRetries: 1})
	if err != nil {
		return nil, err
	}
	c, ok := prov.(llm.ToolCounter)
	if !ok {
		return nil, llm.ErrNoCountEndpoint
	}
	return c.CountToolTokens(ctx, tools)
}
