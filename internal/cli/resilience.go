package cli

import (
	"context"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/resilience"
)

// runResilience runs Layer 2: faults injected into tool results and
// prompt injection planted in them, against the configured models, on
// the golden set's cases. It needs real models: the lexical baseline has
// no behaviour to judge, so without one the layer says so and measures
// nothing.
func (c *Command) runResilience(ctx context.Context, pl *pipeline, rep *report.Report) (notes []string, err error) {
	b := pl.behavior
	switch {
	case b.golden == "":
		return []string{`layer "resilience" was selected but no golden set is configured (golden: in mcp-eval.yaml, --golden, or the golden input); nothing was measured for it`}, nil
	case len(b.models) == 0:
		return []string{`layer "resilience" was selected but no model is configured (models: or --models): faults and injections test how a model copes, so nothing was measured for it`}, nil
	}
	set, err := golden.Load(b.golden)
	if err != nil {
		return nil, fmt.Errorf("golden set: %w", err)
	}
	var models []llm.Provider
	for _, spec := range b.models {
		p, err := llm.New(spec, b.endpoints, c.LookupEnv, llm.Options{})
		if err != nil {
			return nil, err
		}
		models = append(models, pl.rec.Provider(p, false))
	}
	var judge llm.Provider
	if b.judge != "" {
		j, err := llm.New(b.judge, b.endpoints, c.LookupEnv, llm.Options{})
		if err != nil {
			return nil, fmt.Errorf("judge: %w", err)
		}
		judge = pl.rec.Provider(j, true)
	}
	client, closeClient, err := openClient(ctx, pl.target, pl.reqTimeout, pl.probeTimeout, pl.rec.ObserveMCP)
	if err != nil {
		return nil, fmt.Errorf("Layer 2 could not reach %s: %w", pl.targetDesc, err)
	}
	defer closeClient()
	lt, err := client.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("Layer 2: listing the tools of %s: %w", pl.targetDesc, err)
	}
	res, err := resilience.Run(ctx, resilience.Config{
		Set: set, Models: models, Judge: judge, Tools: lt.Tools,
		Executor: &behavior.MCPExecutor{Client: client, Stubs: b.stubs},
		MaxSteps: b.maxSteps, Concurrency: b.concurrency,
	})
	if err != nil {
		return nil, err
	}
	rep.Resilience = res.Resilience
	for _, m := range res.Models {
		if !hasModel(rep.Models, m.ID) {
			rep.Models = append(rep.Models, m)
		}
	}
	return nil, nil
}

func hasModel(ms []report.Model, id string) bool {
	for _, m := range ms {
		if m.ID == id {
			return true
		}
	}
	return false
}
