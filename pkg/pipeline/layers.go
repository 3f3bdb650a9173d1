package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/lexical"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/resilience"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
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

// modelRun is Layers 1 and 2 prepared: each layer's plan on its own
// session, under one meter; nil plans are layers that do not run.
type modelRun struct {
	l1      *behavior.Plan
	l2      *resilience.Plan
	tools   []mcpclient.Tool // Layer 1's, for the tool-surface hash
	closers []func()
	notes   []string
}

func (m *modelRun) close() {
	for _, c := range m.closers {
		c()
	}
}

// runModels runs Layers 1 and 2 into rep under one budget: both are
// prepared first, so that the spend preview, and the check that a money
// cap can be enforced, cover every model call of both before any is made.
// It returns notes for the gate section. An error is a harness or
// configuration error.
func (p *Plan) runModels(ctx context.Context, rec *telemetry.Recorder, rep *report.Report) ([]string, error) {
	meter := spend.NewMeter(p.Behavior.Budget, p.Prices, nil)
	m := &modelRun{}
	defer m.close()
	if p.Has(Behavior) {
		if err := p.prepareBehavior(ctx, rec, meter, m); err != nil {
			return nil, err
		}
	}
	if p.Has(Resilience) {
		if err := p.prepareResilience(ctx, rec, meter, m); err != nil {
			return nil, err
		}
	}
	if m.l1 == nil && m.l2 == nil {
		return m.notes, nil
	}
	preview := spend.NewPreview(meter.Prices(), time.Now())
	if m.l1 != nil {
		preview.Merge(m.l1.Preview())
	}
	if m.l2 != nil {
		m.l2.Estimate(preview)
	}
	if err := preview.Check(meter.Cap()); err != nil {
		return nil, err
	}
	if p.Env.Stdout != nil {
		fmt.Fprintln(p.Env.Stdout, preview)
	}
	if p.Behavior.PreviewOnly {
		return nil, ErrPreviewOnly
	}
	reused, fresh, stale := 0, 0, 0
	if m.l1 != nil {
		res, err := m.l1.Run(ctx)
		if err != nil {
			return nil, err
		}
		rep.Behavior = res.Behavior
		rep.Models = append(rep.Models, res.Models...)
		if rep.ToolSurfaceHash == "" {
			rep.ToolSurfaceHash = report.ToolSurfaceHash(mcpclient.ToolSurfaces(m.tools))
		}
		reused, fresh, stale = res.ReusedRuns, res.FreshRuns, res.StaleRuns
		m.notes = append(m.notes, res.Notes...)
	}
	if m.l2 != nil {
		res, err := m.l2.Run(ctx)
		if err != nil {
			return nil, err
		}
		rep.Resilience = res.Resilience
		for _, md := range res.Models {
			if !hasModel(rep.Models, md.ID) {
				rep.Models = append(rep.Models, md)
			}
		}
		m.notes = append(m.notes, res.Notes...)
	}
	rep.Spend = spend.Record(preview, meter, reused, fresh)
	rep.Spend.StaleRuns = stale
	return m.notes, nil
}

// prepareBehavior prepares Layer 1: the golden set against every model
// (or the lexical baseline), on the plan's server.
func (p *Plan) prepareBehavior(ctx context.Context, rec *telemetry.Recorder, meter *spend.Meter, m *modelRun) error {
	b := p.Behavior
	if b.Golden == "" {
		m.notes = append(m.notes, `layer "behavior" was selected but no golden set is configured (golden: in mcp-eval.yaml, --golden, or the golden input); nothing was measured for it`)
		return nil
	}
	set, models, judge, err := p.cases(rec)
	if err != nil {
		return err
	}
	if len(models) == 0 {
		models = []llm.Provider{rec.Provider(lexical.New(), false)}
		m.notes = append(m.notes, fmt.Sprintf("Layer 1: no model is configured, so the built-in lexical selector ran (%s): it shows whether the tool descriptions are even lexically distinguishable, and is shown, not gated. Configure models: (or --models) for real models", behavior.BaselineLabel))
	}
	client, tools, err := p.session(ctx, rec, "Layer 1")
	if err != nil {
		return err
	}
	m.closers = append(m.closers, func() { client.Close() })
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	for _, w := range golden.Hygiene(set, names) {
		p.Env.warnf("%s", render.TermLine(w.String()))
	}
	cache, err := p.cache()
	if err != nil {
		return err
	}
	cfg := behavior.Config{Set: set, Source: report.RelPath(p.Env.Workspace, abs(b.Golden)),
		SourceOf: func(file string) string { return report.RelPath(p.Env.Workspace, abs(file)) }, Models: models, Judge: judge,
		Client: client, Stubs: b.Stubs, Tools: tools, Runs: b.Runs, MaxSteps: b.MaxSteps, Concurrency: b.Concurrency,
		RateLimits: b.RateLimits, Cache: cache, Reuse: b.Reuse, Meter: meter, Telemetry: rec}
	plan, err := behavior.Prepare(ctx, cfg)
	if err != nil {
		return err
	}
	if p.Env.Stdout != nil {
		ids := make([]string, len(models))
		for i, md := range models {
			ids[i] = behavior.ReportModelID(md.ID())
		}
		fmt.Fprintf(p.Env.Stdout, "Layer 1: %d cases × %d runs × %s; cache %s reuses %s\n", len(set.Cases), cmp.Or(b.Runs, behavior.DefaultRuns),
			render.TermLine(strings.Join(ids, ", ")), render.TermLine(cmp.Or(b.CacheDir, "(none)")), b.Reuse)
	}
	m.l1, m.tools = plan, tools
	return nil
}

// prepareResilience prepares Layer 2: faults injected into tool results
// and prompt injection planted in them, against the configured models, on
// the golden set's cases. The lexical baseline has no behaviour to judge,
// so without a model the layer says so and measures nothing.
func (p *Plan) prepareResilience(ctx context.Context, rec *telemetry.Recorder, meter *spend.Meter, m *modelRun) error {
	b := p.Behavior
	switch {
	case b.Golden == "":
		m.notes = append(m.notes, `layer "resilience" was selected but no golden set is configured (golden: in mcp-eval.yaml, --golden, or the golden input); nothing was measured for it`)
		return nil
	case len(b.Models) == 0:
		m.notes = append(m.notes, `layer "resilience" was selected but no model is configured (models: or --models): faults and injections test how a model copes, so nothing was measured for it`)
		return nil
	}
	set, models, judge, err := p.cases(rec)
	if err != nil {
		return err
	}
	client, tools, err := p.session(ctx, rec, "Layer 2")
	if err != nil {
		return err
	}
	m.closers = append(m.closers, func() { client.Close() })
	cache, err := p.cache()
	if err != nil {
		return err
	}
	plan, err := resilience.Prepare(resilience.Config{
		Set: set, Models: models, Judge: judge, Tools: tools,
		Executor: &behavior.MCPExecutor{Client: client, Stubs: b.Stubs},
		MaxSteps: b.MaxSteps, Concurrency: b.Concurrency, Meter: meter, Telemetry: rec,
		Cache: cache, Reuse: b.Reuse,
	})
	if err != nil {
		return err
	}
	if p.Env.Stdout != nil {
		fmt.Fprintf(p.Env.Stdout, "Layer 2: faults and injections × %s\n", render.TermLine(strings.Join(b.Models, ", ")))
	}
	m.l2 = plan
	return nil
}

// cache opens the directory both layers keep their runs and verdicts in
// (nil when none is configured).
func (p *Plan) cache() (*behavior.Cache, error) {
	if p.Behavior.CacheDir == "" {
		return nil, nil
	}
	return behavior.OpenCache(p.Behavior.CacheDir)
}

func hasModel(ms []report.Model, id string) bool {
	for _, m := range ms {
		if m.ID == id {
			return true
		}
	}
	return false
}
