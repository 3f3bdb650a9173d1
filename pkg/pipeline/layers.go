package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/lexical"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/resilience"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// cases loads the golden set and makes the providers of Layers 1 and 2,
// each measured by Layer 3.
func (p *Plan) cases(rec *telemetry.Recorder) (set *golden.Set, models []llm.Provider, judge llm.Provider, err error) {
	b := p.Behavior
	if set, err = golden.Load(b.Golden); err != nil {
		return nil, nil, nil, fmt.Errorf("golden set: %w", err)
	}
	for _, spec := range b.Models {
		m, err := llm.New(spec, b.Endpoints, p.Env.lookup, llm.Options{})
		if err != nil {
			return nil, nil, nil, err
		}
		models = append(models, rec.Provider(m, false))
	}
	if b.Judge != "" && b.Judge != "none" {
		j, err := llm.New(b.Judge, b.Endpoints, p.Env.lookup, llm.Options{})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("judge: %w", err)
		}
		judge = rec.Provider(j, true)
	}
	return set, models, judge, nil
}

// session opens the one client that Layers 1 and 2 share: one stdio
// process or one HTTP connection pool, through the same opener as Layer 0
// (the server's user, the environment allowlist, trace context, the
// observer), and lists the tools.
func (p *Plan) session(ctx context.Context, rec *telemetry.Recorder, layer string) (*mcpclient.Client, []mcpclient.Tool, error) {
	cl, err := p.Connect(ctx, rec.ObserveMCP)
	if err != nil {
		return nil, nil, fmt.Errorf("%s could not reach %s: %w", layer, p.TargetDesc, err)
	}
	lt, err := cl.ListTools(ctx)
	if err != nil {
		cl.Close()
		return nil, nil, fmt.Errorf("%s: listing the tools of %s: %w", layer, p.TargetDesc, err)
	}
	return cl, lt.Tools, nil
}

// runBehavior runs Layer 1 into rep: the golden set against every model
// (or the lexical baseline), on the plan's server. It returns notes for
// the gate section. An error is a harness or configuration error.
func (p *Plan) runBehavior(ctx context.Context, rec *telemetry.Recorder, rep *report.Report) ([]string, error) {
	b := p.Behavior
	if b.Golden == "" {
		return []string{`layer "behavior" was selected but no golden set is configured (golden: in mcp-eval.yaml, --golden, or the golden input); nothing was measured for it`}, nil
	}
	set, models, judge, err := p.cases(rec)
	if err != nil {
		return nil, err
	}
	var notes []string
	if len(models) == 0 {
		models = []llm.Provider{rec.Provider(lexical.New(), false)}
		notes = append(notes, fmt.Sprintf("Layer 1: no model is configured, so the built-in lexical selector ran (%s): it shows whether the tool descriptions are even lexically distinguishable, and is shown, not gated. Configure models: (or --models) for real models", behavior.BaselineLabel))
	}
	client, tools, err := p.session(ctx, rec, "Layer 1")
	if err != nil {
		return nil, err
	}
	defer client.Close()
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	for _, w := range golden.Hygiene(set, names) {
		p.Env.warnf("%s", render.TermLine(w.String()))
	}
	var cache *behavior.Cache
	if b.CacheDir != "" {
		if cache, err = behavior.OpenCache(b.CacheDir); err != nil {
			return nil, err
		}
	}
	cfg := behavior.Config{Set: set, Source: report.RelPath(p.Env.Workspace, abs(b.Golden)), Models: models, Judge: judge,
		Client: client, Stubs: b.Stubs, Tools: tools, Runs: b.Runs, MaxSteps: b.MaxSteps, Concurrency: b.Concurrency,
		RateLimits: b.RateLimits, Cache: cache, Reuse: b.Reuse, Budget: b.Budget, Telemetry: rec}
	plan, err := behavior.Prepare(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if p.Env.Stdout != nil {
		ids := make([]string, len(models))
		for i, m := range models {
			ids[i] = behavior.ReportModelID(m.ID())
		}
		fmt.Fprintf(p.Env.Stdout, "Layer 1: %d cases × %d runs × %s; cache %s reuses %s\n%s\n", len(set.Cases), cmp.Or(b.Runs, behavior.DefaultRuns),
			render.TermLine(strings.Join(ids, ", ")), render.TermLine(cmp.Or(b.CacheDir, "(none)")), b.Reuse, plan.Preview())
	}
	if b.PreviewOnly {
		return nil, ErrPreviewOnly
	}
	res, err := plan.Run(ctx)
	if err != nil {
		return nil, err
	}
	rep.Behavior = res.Behavior
	rep.Models = append(rep.Models, res.Models...)
	if rep.ToolSurfaceHash == "" {
		rep.ToolSurfaceHash = report.ToolSurfaceHash(mcpclient.ToolSurfaces(tools))
	}
	return append(notes, res.Notes...), nil
}

// runResilience runs Layer 2: faults injected into tool results and prompt
// injection planted in them, against the configured models, on the golden
// set's cases. The lexical baseline has no behaviour to judge, so without
// a model the layer says so and measures nothing.
func (p *Plan) runResilience(ctx context.Context, rec *telemetry.Recorder, rep *report.Report) ([]string, error) {
	b := p.Behavior
	switch {
	case b.Golden == "":
		return []string{`layer "resilience" was selected but no golden set is configured (golden: in mcp-eval.yaml, --golden, or the golden input); nothing was measured for it`}, nil
	case len(b.Models) == 0:
		return []string{`layer "resilience" was selected but no model is configured (models: or --models): faults and injections test how a model copes, so nothing was measured for it`}, nil
	}
	set, models, judge, err := p.cases(rec)
	if err != nil {
		return nil, err
	}
	client, tools, err := p.session(ctx, rec, "Layer 2")
	if err != nil {
		return nil, err
	}
	defer client.Close()
	res, err := resilience.Run(ctx, resilience.Config{
		Set: set, Models: models, Judge: judge, Tools: tools,
		Executor: &behavior.MCPExecutor{Client: client, Stubs: b.Stubs},
		MaxSteps: b.MaxSteps, Concurrency: b.Concurrency, Telemetry: rec,
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
