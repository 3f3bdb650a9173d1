package behavior

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior/score"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/pricing"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// Defaults of Config.
const (
	DefaultRuns        = 5
	DefaultConcurrency = 4
	defaultSeed        = 42
)

// BaselinePrefix starts the id of the built-in selector that runs when no
// model is configured; BaselineLabel is shown wherever it appears.
const (
	BaselinePrefix = "baseline:"
	BaselineLabel  = "baseline, no LLM"
)

// Config is one Layer 1 run: a golden set against every model, each case
// Runs times. The zero value of each optional field is its default.
type Config struct {
	Set *golden.Set
	// Source is the golden file as reports name it (relative to the
	// workspace). SourceOf, when set, names the file each case is in
	// the same way (a golden directory holds several files).
	Source   string
	SourceOf func(file string) string
	// Models run the cases, one matrix column each; Judge grades rubrics
	// and uncertain arguments (nil: no judge).
	Models []llm.Provider
	Judge  llm.Provider
	// Client is the server under test; its tools are offered to every
	// model and its calls executed, except tools named in Stubs, which
	// answer with their canned text and never reach the server.
	Client *mcpclient.Client
	Stubs  map[string]string
	// Reopen starts the server again after a call found it gone
	// (MCPExecutor.Reopen; nil: it stays lost).
	Reopen func(ctx context.Context) (*mcpclient.Client, error)
	// Executor and Tools replace Client (tests, benchmarks).
	Executor Executor
	Tools    []mcpclient.Tool

	Runs        int // per case and model (default 5)
	MaxSteps    int // model turns per run (default 8)
	Concurrency int // runs in flight over all models (default 4)
	RateLimits  map[string]RateLimit
	// Sampling is what every model is asked for (default temperature 0,
	// seed 42); the provider layer drops what a model rejects.
	Sampling *llm.Sampling

	// Cache stores results and verdicts (nil: none); Reuse says what may
	// be read back.
	Cache *Cache
	Reuse Reuse
	// Meter counts every model and judge call against the budget; the
	// pipeline shares one between Layers 1 and 2 (nil: a meter of its
	// own, capped by Budget and pricing with Prices, default
	// pricing.Default()).
	Meter  *spend.Meter
	Budget Budget
	Prices *pricing.Table
	// Only, when set, keeps the runs of the case × model pairs it accepts
	// (the model as ID gives it): one shard of a sharded run. Every case
	// is still listed and hashed, so that shards agree on the golden set.
	Only func(caseID, modelID string) bool
	// Now is the clock for cache ages (default time.Now).
	Now func() time.Time
	// Telemetry, when set, is told of every case run and tool call (the
	// model calls it sees through its Provider wrapper). Each run that
	// calls a model is its own trace (mcpclient.NewTraceFor), carried by
	// its MCP requests and its telemetry events.
	Telemetry *telemetry.Recorder
}

// Result is a finished Layer 1 run.
type Result struct {
	Behavior *report.Behavior
	// Models are the models as the report lists them (the judge is
	// Behavior.JudgeModel).
	Models  []report.Model
	Preview *spend.Preview
	// Spend is the meter's record when Layer 1 ended: with a shared
	// meter the pipeline records the whole run's instead.
	Spend *report.Spend
	// ReusedRuns and FreshRuns count runs answered from the cache and
	// made now; StaleRuns are the fresh runs made because a stored one
	// was found but the server answers its calls differently now.
	ReusedRuns, FreshRuns, StaleRuns int
	// Notes are sentences for the gate section: reuse, budget, judge.
	Notes []string
}

// job is one run of one case against one model.
type job struct {
	ci, run, mi int
	key         string
	reused      *cachedRun
	storedAt    time.Time
	// stale: a stored run was found but the server answers its calls
	// differently now, so it is made anew.
	stale bool
}

// cachedRun is a stored run result.
type cachedRun struct {
	Model      string            `json:"model"`
	Trajectory report.Trajectory `json:"trajectory"`
	Usage      llm.Usage         `json:"usage"`
	// Calls are the calls the run made on the server, asked again
	// before the run is reused.
	Calls []ServerCall `json:"calls"`
}

// done is a job's outcome.
type done struct {
	job
	tr    *report.Trajectory
	usage llm.Usage
	s     *scored
}

// Plan is a prepared run: cases hashed, tools listed, cache consulted,
// spend previewed; nothing has called a model yet.
type Plan struct {
	cfg      Config
	tools    []llm.Tool
	surface  string
	caseHash []string
	modelIDs []string
	// cacheIDs are the models in the result cache's keys: their ids,
	// with the revision of a built-in selector (llm.Revision).
	cacheIDs  []string
	jobs      []job
	preview   *spend.Preview
	toolChars int
	readOnly  map[string]bool
	recheck   *Revalidator
}

// Prepare checks cfg, lists the server's tools and looks every run up in
// the cache. Its errors are configuration errors: nothing was run.
func Prepare(ctx context.Context, cfg Config) (*Plan, error) {
	if cfg.Set == nil || len(cfg.Set.Cases) == 0 {
		return nil, errors.New("behavior: the golden set has no cases")
	}
	if len(cfg.Models) == 0 {
		return nil, errors.New("behavior: no model to run (configure models:, pass --models, or run the baseline)")
	}
	if cfg.Runs <= 0 {
		cfg.Runs = DefaultRuns
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Meter == nil {
		cfg.Meter = spend.NewMeter(cfg.Budget, cfg.Prices, cfg.Now)
	}
	cfg.Budget, cfg.Prices = cfg.Meter.Cap(), cfg.Meter.Prices()
	if cfg.Sampling == nil {
		t, s := 0.0, int64(defaultSeed)
		cfg.Sampling = &llm.Sampling{Temperature: &t, Seed: &s}
	}
	if cfg.Executor == nil {
		if cfg.Client == nil {
			return nil, errors.New("behavior: no server (Config.Client) to run the tools on")
		}
		cfg.Executor = &MCPExecutor{Client: cfg.Client, Stubs: cfg.Stubs, Reopen: cfg.Reopen}
	}
	if cfg.Tools == nil {
		if cfg.Client == nil {
			return nil, errors.New("behavior: no tools (Config.Tools) and no server to list them")
		}
		lt, err := cfg.Client.ListTools(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the server's tools: %w", err)
		}
		cfg.Tools = lt.Tools
	}
	seen := map[string]bool{}
	p := &Plan{cfg: cfg, surface: report.ToolSurfaceHash(mcpclient.ToolSurfaces(cfg.Tools)),
		readOnly: ReadOnlyTools(cfg.Tools), recheck: &Revalidator{Executor: cfg.Executor}}
	for _, m := range cfg.Models {
		id := m.ID()
		if seen[id] {
			return nil, fmt.Errorf("behavior: model %s is listed twice", id)
		}
		seen[id] = true
		p.modelIDs = append(p.modelIDs, id)
		if rev := llm.Revision(m); rev != "" {
			id += "@" + rev
		}
		p.cacheIDs = append(p.cacheIDs, id)
	}
	for _, t := range cfg.Tools {
		p.tools = append(p.tools, llm.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		p.toolChars += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	params, err := report.Hash(map[string]any{"loop": LoopVersion, "system": SystemPrompt, "maxSteps": cfg.MaxSteps, "sampling": cfg.Sampling, "stubs": cfg.Stubs})
	if err != nil {
		return nil, fmt.Errorf("behavior: hashing the parameters: %w", err)
	}
	for _, c := range cfg.Set.Cases {
		h, err := report.Hash(c.Definition())
		if err != nil {
			return nil, fmt.Errorf("%s: case %s cannot be hashed: %w", c.Pos, c.ID, err)
		}
		p.caseHash = append(p.caseHash, h)
	}
	p.preview = spend.NewPreview(cfg.Prices, cfg.Now())
	judge := ""
	if cfg.Judge != nil {
		judge = cfg.Judge.ID()
	}
	// Case-major order: when the budget runs out, whole cases are left
	// for every model, rather than whole models for every case.
	for ci, c := range cfg.Set.Cases {
		for run := 1; run <= cfg.Runs; run++ {
			for mi, id := range p.modelIDs {
				if cfg.Only != nil && !cfg.Only(c.ID, id) {
					continue
				}
				j := job{ci: ci, run: run, mi: mi, key: cacheKey("result", LoopVersion, p.caseHash[ci], p.surface, p.cacheIDs[mi], params, fmt.Sprint(run))}
				if cfg.Cache != nil && cfg.Reuse == ReuseAll {
					var cr cachedRun
					if at, ok := cfg.Cache.get(kindResult, j.key, &cr); ok && cr.Model == id {
						j.reused, j.storedAt = &cr, at
					}
				}
				if j.reused != nil {
					// The key says the case, tools and model are the same;
					// only the server can say whether it still answers the
					// same way. Asked now, so that the preview (and the
					// money cap checked against it) counts the runs it
					// refuses.
					if v := p.recheck.Check(ctx, j.reused.Calls); v != Valid {
						j.reused, j.stale = nil, v == Stale
					}
				}
				p.preview.Runs++
				if j.reused != nil {
					p.preview.Reused++
				} else {
					estimate(p.preview, id, judge, p.toolChars, c)
				}
				p.jobs = append(p.jobs, j)
			}
		}
	}
	if err := p.preview.Check(cfg.Budget); err != nil {
		return nil, err
	}
	return p, nil
}

// Preview is the spend estimate of the runs the cache cannot answer.
func (p *Plan) Preview() *spend.Preview { return p.preview }

// Run runs the plan: every case × run × model, Concurrency at a time,
// under per-provider rate limits and the budget.
func (p *Plan) Run(ctx context.Context) (*Result, error) {
	cfg := p.cfg
	m := cfg.Meter
	lims := &limiters{conf: cfg.RateLimits}
	models := make([]llm.Provider, len(cfg.Models))
	for i, mp := range cfg.Models {
		models[i] = lims.wrap(mp)
	}
	sc := &scorer{}
	if cfg.Judge != nil {
		jp := lims.wrap(cfg.Judge)
		sc.judge = &Judge{Provider: jp, Cache: cfg.Cache, Reuse: cfg.Reuse != ReuseNothing, Before: m.Gate,
			After: m.Hook(spend.Judge, cfg.Judge.ID())}
	}
	results := make([]done, len(p.jobs))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] = p.do(ctx, p.jobs[i], models[p.jobs[i].mi], m, sc)
			}
		}()
	}
feed:
	for i := range p.jobs {
		select {
		case work <- i:
		case <-ctx.Done():
			// Jobs never handed out end as errors below.
			for k := i; k < len(p.jobs); k++ {
				tr := &report.Trajectory{Turns: []report.Turn{}, End: EndError, Reason: "the run's deadline passed before this run started: " + ctx.Err().Error()}
				c := p.cfg.Set.Cases[p.jobs[k].ci]
				results[k] = done{job: p.jobs[k], tr: tr, s: &scored{run: score.Evaluate(score.RunOutcome{Case: &c, Err: tr.Reason})}}
			}
			break feed
		}
	}
	close(work)
	wg.Wait()
	return p.assemble(results, m), nil
}

// do runs or replays one job and scores it.
func (p *Plan) do(ctx context.Context, j job, model llm.Provider, m *spend.Meter, sc *scorer) done {
	c := p.cfg.Set.Cases[j.ci]
	d := done{job: j}
	start := time.Now()
	if j.reused == nil {
		// One trace per case run: its MCP requests carry it (through the
		// executor's client), and Layer 3 places its model calls, tool
		// calls and the run itself on it (a no-op without a recorder).
		tc := mcpclient.NewTraceFor(ctx)
		ctx = telemetry.WithPlace(mcpclient.WithTrace(ctx, tc), telemetry.PlaceFor(c.ID, j.run, "", tc))
	}
	if j.reused != nil {
		d.tr, d.usage = &j.reused.Trajectory, j.reused.Usage
		if p.cfg.Telemetry != nil {
			p.cfg.Telemetry.Reused(telemetry.ReusedRun{Model: p.modelIDs[j.mi], Case: c.ID, Run: j.run, Usage: j.reused.Usage})
			for _, t := range j.reused.Trajectory.Turns {
				for _, call := range t.Calls {
					p.cfg.Telemetry.ToolCall(telemetry.ToolCall{Model: p.modelIDs[j.mi], Tool: call.Name, Reused: true,
						IsError: call.IsError, Stubbed: call.Stubbed})
				}
			}
		}
	} else {
		id := p.modelIDs[j.mi]
		var mu sync.Mutex
		log := &CallLog{Inner: p.cfg.Executor, ReadOnly: p.readOnly}
		a := &Agent{Provider: model, Executor: log, Tools: p.tools, MaxSteps: p.cfg.MaxSteps, Sampling: *p.cfg.Sampling,
			Telemetry: p.cfg.Telemetry, Before: m.Gate, After: func(u llm.Usage) {
				if !strings.HasPrefix(id, BaselinePrefix) { // the baseline calls no provider
					m.Add(spend.Layer1, id, u)
				}
				mu.Lock()
				d.usage = addUsage(d.usage, u)
				mu.Unlock()
			}}
		d.tr = a.Run(ctx, c)
		if p.cfg.Cache != nil && storable(d.tr) {
			// A failed write only costs a re-run next time.
			_ = p.cfg.Cache.put(kindResult, j.key, cachedRun{Model: id, Trajectory: *d.tr, Usage: d.usage, Calls: log.Calls()})
		}
	}
	d.s = sc.score(ctx, c, d.tr)
	if p.cfg.Telemetry != nil && j.reused == nil {
		p.cfg.Telemetry.CaseRun(telemetry.CaseRun{Model: p.modelIDs[j.mi], Place: telemetry.PlaceOf(ctx), Start: start,
			Duration: time.Since(start), Outcome: d.s.outcome()})
	}
	return d
}

// storable: errors and budget stops are not results, and must be retried.
func storable(tr *report.Trajectory) bool {
	return tr.End == EndAnswered || tr.End == EndStepLimit || tr.End == EndInputMissing
}

func addUsage(a, b llm.Usage) llm.Usage {
	a.InputTokens += b.InputTokens
	a.CachedInputTokens += b.CachedInputTokens
	a.CacheWriteTokens += b.CacheWriteTokens
	a.OutputTokens += b.OutputTokens
	a.ReasoningTokens += b.ReasoningTokens
	return a
}

// ReportModelID is how the report names a model: its id, with the
// baseline's label added so that it is never taken for an LLM.
func ReportModelID(id string) string {
	if strings.HasPrefix(id, BaselinePrefix) && !strings.Contains(id, BaselineLabel) {
		return id + " (" + BaselineLabel + ")"
	}
	return id
}
