package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/cassette"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/lexical"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/resilience"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// cases loads the golden set and makes the providers of Layers 1 and 2,
// each measured by Layer 3, and recorded into or answered from the run's
// cassette when there is one.
func (p *Plan) cases(rec *telemetry.Recorder, t *tape) (set *golden.Set, models []llm.Provider, judge llm.Provider, err error) {
	b := p.Behavior
	if set, err = golden.Load(b.Golden); err != nil {
		return nil, nil, nil, fmt.Errorf("golden set: %w", err)
	}
	open := func(spec string, judge bool) (llm.Provider, error) {
		if t.play != nil {
			// No key, no endpoint: the cassette answers, under the id
			// the recording's provider had.
			sp, err := llm.ParseSpec(spec)
			if err != nil {
				return nil, err
			}
			return t.play.Provider(sp.String(), judge), nil
		}
		m, err := llm.New(spec, b.Endpoints, p.Env.lookup, llm.Options{})
		if err != nil {
			return nil, err
		}
		if t.rec != nil {
			m = t.rec.Wrap(m, judge)
		}
		return m, nil
	}
	for _, spec := range b.Models {
		m, err := open(spec, false)
		if err != nil {
			return nil, nil, nil, err
		}
		models = append(models, rec.Provider(m, false))
	}
	if b.Judge != "" && b.Judge != "none" {
		j, err := open(b.Judge, true)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("judge: %w", err)
		}
		judge = rec.Provider(j, true)
	}
	return set, models, judge, nil
}

// tape is the run's cassette: a recorder (--record), a player (--replay)
// or neither.
type tape struct {
	rec  *cassette.Recorder
	play *cassette.Player
}

// openTape opens the run's cassette.
func (p *Plan) openTape() (*tape, error) {
	t := &tape{}
	switch b := p.Behavior; {
	case b.Record != "":
		t.rec = cassette.NewRecorder(p.Env.Redact)
	case b.Replay != "":
		pl, err := cassette.Open(b.Replay)
		if err != nil {
			return nil, fmt.Errorf("--replay (or eval.cassette): %w", err)
		}
		pl.Redact(p.Env.Redact)
		t.play = pl
	}
	return t, nil
}

// closeTape saves a recording, or puts what the replay answered into the
// report; either way with a note for the gate section.
func (p *Plan) closeTape(t *tape, rep *report.Report) ([]string, error) {
	switch {
	case t.rec != nil:
		info, err := t.rec.Save(p.Behavior.Record)
		if err != nil {
			return nil, fmt.Errorf("--record: %w", err)
		}
		note := fmt.Sprintf("cassette recorded: %d model exchanges, %s, in %s (%s); replay it with --replay, and keep that replayed report as the replay baseline",
			info.Exchanges, kib(info.Bytes), report.RelPath(p.Env.Workspace, abs(info.Path)), info.Hash)
		if info.Dropped > 0 {
			note += fmt.Sprintf("; %d exchanges were larger than the cassette keeps (%d KiB each, %d MiB in all) and will replay as stale", info.Dropped, cassette.MaxExchangeBytes>>10, cassette.MaxBytes>>20)
		}
		return []string{note}, nil
	case t.play != nil:
		info := t.play.Info()
		r := &report.Replay{Cassette: report.RelPath(p.Env.Workspace, abs(info.Path)), Hash: info.Hash, Answered: t.play.Served(), Stale: []report.StaleTurn{}}
		stale := t.play.Stale()
		for _, s := range stale {
			if len(r.Stale) == report.MaxStaleTurns {
				r.MoreStale++
				continue
			}
			r.Stale = append(r.Stale, report.StaleTurn{Model: s.Model, Judge: s.Judge, Case: s.Case, Run: s.Run, Scenario: s.Scenario, Turn: s.Turn, Diff: s.Diff})
		}
		rep.Replay = r
		return []string{fmt.Sprintf("replayed: every model answer of Layers 1 and 2 came from cassette %s (%s, %d answered, %d stale); the tool calls went to the live server. Replayed results are compared only with a baseline replayed from the same cassette",
			r.Cassette, r.Hash, r.Answered, len(stale))}, nil
	}
	return nil, nil
}

func kib(n int64) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }

// session opens the one client that Layers 1 and 2 share: one stdio
// process or one HTTP connection pool, through the same opener as Layer 0
// (the server's user, the environment allowlist, trace context, the
// observer), and lists the tools.
func (p *Plan) session(ctx context.Context, rec *telemetry.Recorder, layer string) (*mcpclient.Client, []mcpclient.Tool, error) {
	cl, err := p.Connect(ctx, rec.ObserveMCP)
	if err != nil {
		return nil, nil, &unreachableError{fmt.Errorf("%s could not reach %s: %w", layer, p.targetNamed(), err)}
	}
	lt, err := cl.ListTools(ctx)
	if err != nil {
		cl.Close()
		return nil, nil, &unreachableError{fmt.Errorf("%s: listing the tools of %s: %w", layer, p.targetNamed(), err)}
	}
	return cl, lt.Tools, nil
}

// unreachableError is a layer's failure to open its session with the
// server (start or reach it, or list its tools) before it tested anything:
// Run writes an untested report for it when no layer has results yet, as
// it does when Layer 0 cannot reach the server.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// modelRun is Layers 1 and 2 prepared: each layer's plan on its own
// session, under one meter; nil plans are layers that do not run.
type modelRun struct {
	l1      *behavior.Plan
	l2      *resilience.Plan
	tools   []mcpclient.Tool // Layer 1's, for the tool-surface hash
	closers []func()
	closeMu sync.Mutex       // closers: a layer that starts its server again adds one mid-run
	stops   *transport.Stops // where the sessions' processes are stopped (closeLater)
	notes   []string
	// split is the shard's share of the units, made once for both
	// layers (nil: not sharded); info is the server as a session met it,
	// for a shard that runs no Layer 0.
	split *split
	info  mcpclient.Info
}

// shardOnly is the filter of this shard's units for a layer's config (nil
// when the run is not sharded). Both layers deal the same units: the
// golden set's cases × the Layer 1 models.
func (p *Plan) shardOnly(m *modelRun, set *golden.Set, models []llm.Provider) func(string, string) bool {
	if p.Shard == nil {
		return nil
	}
	if m.split == nil {
		var cases, ids []string
		for _, c := range set.Cases {
			cases = append(cases, c.ID)
		}
		for _, md := range models {
			ids = append(ids, md.ID())
		}
		var ref *report.ReportRef
		if p.Baseline != nil {
			ref = &p.BaselineRef
		}
		m.split = splitUnits(*p.Shard, cases, ids, behavior.ReportModelID, p.Baseline, ref)
	}
	return m.split.only
}

// closeLater has client closed with the layers: on stdio, stopped beside
// the run (transport.CloseAside), so that a server that ignores EOF holds
// it for no grace period once Layer 0 has found that it does.
func (m *modelRun) closeLater(client *mcpclient.Client) {
	if st, ok := client.Transport().(*transport.StdioTransport); ok && m.stops != nil {
		st.CloseAside(m.stops)
	}
	m.closeMu.Lock()
	m.closers = append(m.closers, func() { client.Close() })
	m.closeMu.Unlock()
}

func (m *modelRun) close() {
	m.closeMu.Lock()
	closers := m.closers
	m.closeMu.Unlock()
	for _, c := range closers {
		c()
	}
}

// reopen starts a stdio server again for a layer whose process exited
// mid-run (behavior.MCPExecutor.Reopen), through the one opener; nil for
// an HTTP server, which mcp-eval does not start.
func (p *Plan) reopen(rec *telemetry.Recorder, m *modelRun) func(context.Context) (*mcpclient.Client, error) {
	if p.Target.Argv == nil {
		return nil
	}
	return func(ctx context.Context) (*mcpclient.Client, error) {
		cl, err := p.Connect(ctx, rec.ObserveMCP)
		if err != nil {
			return nil, err
		}
		m.closeLater(cl)
		return cl, nil
	}
}

// runModels runs Layers 1 and 2 into rep under one budget: both are
// prepared first, so that the spend preview, and the check that a money
// cap can be enforced, cover every model call of both before any is made.
// It returns notes for the gate section. An error is a harness or
// configuration error.
func (p *Plan) runModels(ctx context.Context, rec *telemetry.Recorder, rep *report.Report, stops *transport.Stops) ([]string, error) {
	m := &modelRun{stops: stops}
	defer m.close()
	t, err := p.openTape()
	if err != nil {
		return nil, err
	}
	budget := p.Behavior.Budget
	if t.play != nil {
		// The recording's usage is counted, as the recording's, but no
		// cap applies: a replay spends nothing.
		budget = spend.Budget{}
	}
	meter := spend.NewMeter(budget, p.Prices, nil)
	replayable := func(layer string, layer2 bool) bool {
		if t.play == nil || !p.Has(layer) || t.play.Holds(layer2) {
			return p.Has(layer)
		}
		m.notes = append(m.notes, fmt.Sprintf("layer %q was not replayed: the cassette holds none of its model exchanges (record it with that layer selected)", layer))
		return false
	}
	if replayable(Behavior, false) {
		if err := p.prepareBehavior(ctx, rec, meter, m, t); err != nil {
			return nil, err
		}
	}
	if replayable(Resilience, true) {
		if err := p.prepareResilience(ctx, rec, meter, m, t); err != nil {
			return nil, err
		}
	}
	if m.split != nil {
		rep.Shard = m.split.record
	}
	if rep.Server.Name == "" && m.info.ServerInfo != nil {
		rep.Server.Name, rep.Server.Version = m.info.ServerInfo.Name, m.info.ServerInfo.Version
		rep.Server.Era, rep.Server.ProtocolVersion = string(m.info.Era), m.info.ProtocolVersion
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
	switch {
	case t.play != nil:
		// A replay asks no provider: nothing to preview or to cap.
		if p.Env.Stdout != nil {
			fmt.Fprintf(p.Env.Stdout, "spend preview: %d runs replayed from the cassette → no provider call, nothing spent\n", preview.Runs)
		}
	default:
		if err := preview.Check(meter.Cap()); err != nil {
			return nil, err
		}
		if p.Env.Stdout != nil {
			fmt.Fprintln(p.Env.Stdout, preview)
		}
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
			rep.Tools = toolNames(m.tools)
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
	notes, err := p.closeTape(t, rep)
	if err != nil {
		return nil, err
	}
	return append(m.notes, notes...), nil
}

// prepareBehavior prepares Layer 1: the golden set against every model
// (or the lexical baseline), on the plan's server.
func (p *Plan) prepareBehavior(ctx context.Context, rec *telemetry.Recorder, meter *spend.Meter, m *modelRun, t *tape) error {
	b := p.Behavior
	if b.Golden == "" {
		m.notes = append(m.notes, `layer "behavior" was selected but no golden set is configured (golden: in mcp-eval.yaml, --golden, or the golden input); nothing was measured for it`)
		return nil
	}
	set, models, judge, err := p.cases(rec, t)
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
	m.closeLater(client)
	m.info = client.Info()
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	for _, w := range golden.Hygiene(set, names) {
		if b.GoldenShown != "" {
			w.Pos.File = b.GoldenShown
		}
		p.Env.warnf("%s", render.TermLine(w.Pos.String()+": "+w.Advice()))
		if w.Code == golden.WarnUnknownTool {
			// A case that expects a tool the server no longer lists is
			// what a reviewer must see, in the comment too: with only the
			// lexical baseline, nothing else gates it.
			m.notes = append(m.notes, "golden set: "+w.Pos.String()+": "+w.Advice())
		}
	}
	cache, err := p.cache()
	if err != nil {
		return err
	}
	cfg := behavior.Config{Set: set, Source: report.RelPath(p.Env.Workspace, abs(b.Golden)),
		SourceOf: func(file string) string { return report.RelPath(p.Env.Workspace, abs(file)) }, Models: models, Judge: judge,
		Client: client, Reopen: p.reopen(rec, m), Stubs: b.Stubs, Tools: tools, Runs: b.Runs, MaxSteps: b.MaxSteps, Concurrency: b.Concurrency,
		RateLimits: b.RateLimits, Cache: cache, Reuse: b.Reuse, Meter: meter, Telemetry: rec, Only: p.shardOnly(m, set, models)}
	plan, err := behavior.Prepare(ctx, cfg)
	if err != nil {
		return err
	}
	if p.Env.Stdout != nil {
		ids := make([]string, len(models))
		for i, md := range models {
			ids[i] = behavior.ReportModelID(md.ID())
		}
		cached := fmt.Sprintf("cache %s reuses %s", render.TermLine(cmp.Or(b.CacheDir, "(none)")), b.Reuse)
		switch {
		case b.Record != "":
			cached = "recording the cassette in " + render.TermLine(b.Record) + " (no cache)"
		case b.Replay != "":
			cached = "replayed from the cassette in " + render.TermLine(b.Replay) + " (no model, no cache)"
		case b.GoldenShown != "":
			// golden init's one run of a copy of its draft, with a
			// cache of its own that is deleted after it.
			cached = "nothing reused, nothing kept"
		}
		fmt.Fprintf(p.Env.Stdout, "Layer 1: %d cases × %d runs × %s; %s\n", len(set.Cases), cmp.Or(b.Runs, behavior.DefaultRuns),
			render.TermLine(strings.Join(ids, ", ")), cached)
	}
	m.l1, m.tools = plan, tools
	return nil
}

// prepareResilience prepares Layer 2: faults injected into tool results
// and prompt injection planted in them, against the configured models, on
// the golden set's cases. The lexical baseline has no behaviour to judge,
// so without a model the layer says so and measures nothing.
func (p *Plan) prepareResilience(ctx context.Context, rec *telemetry.Recorder, meter *spend.Meter, m *modelRun, t *tape) error {
	b := p.Behavior
	switch {
	case b.Golden == "":
		m.notes = append(m.notes, `layer "resilience" was selected but no golden set is configured (golden: in mcp-eval.yaml, --golden, or the golden input); nothing was measured for it`)
		return nil
	case len(b.Models) == 0:
		m.notes = append(m.notes, `layer "resilience" was selected but no model is configured (models: or --models): faults and injections test how a model copes, so nothing was measured for it`)
		return nil
	}
	set, models, judge, err := p.cases(rec, t)
	if err != nil {
		return err
	}
	client, tools, err := p.session(ctx, rec, "Layer 2")
	if err != nil {
		return err
	}
	m.closeLater(client)
	m.info = client.Info()
	cache, err := p.cache()
	if err != nil {
		return err
	}
	plan, err := resilience.Prepare(resilience.Config{
		Set: set, Models: models, Judge: judge, Tools: tools,
		Executor: &behavior.MCPExecutor{Client: client, Stubs: b.Stubs, Reopen: p.reopen(rec, m)},
		MaxSteps: b.MaxSteps, Concurrency: b.Concurrency, Meter: meter, Telemetry: rec,
		Cache: cache, Reuse: b.Reuse, Stubs: b.Stubs, Only: p.shardOnly(m, set, models),
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
// (nil when none is configured). A recording or a replay uses none: a
// cassette must hold every model call of the run, and a replay must
// answer every one from the cassette, not from an earlier live run.
func (p *Plan) cache() (*behavior.Cache, error) {
	if p.Behavior.CacheDir == "" || p.Behavior.Record != "" || p.Behavior.Replay != "" {
		return nil, nil
	}
	c, err := behavior.OpenCache(p.Behavior.CacheDir)
	if rel := report.RelPath(p.Env.Workspace, abs(p.Behavior.CacheDir)); c != nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		c.Label = rel // outside the workspace: the path as it is
	}
	return c, err
}

func hasModel(ms []report.Model, id string) bool {
	for _, m := range ms {
		if m.ID == id {
			return true
		}
	}
	return false
}

// toolNames are the listed tools' names, in the server's order.
func toolNames(tools []mcpclient.Tool) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
