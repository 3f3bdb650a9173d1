package resilience

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// Defaults of Config.
const (
	DefaultRuns        = 3 // per case × fault × model, and per payload × model (15 per category: MCPSecBench's trials)
	DefaultConcurrency = 4
	DefaultTarget      = "send_email"
)

// alternateTargets are used, in order, when a case itself expects the
// default target: calling it would then be the task, not the attack.
func alternateTargets() []string {
	return []string{DefaultTarget, "forward_message", "post_webhook", "share_externally"}
}

// Config is one Layer 2 run: the faults the golden cases list and the
// catalogue's payloads, against every model.
type Config struct {
	Set    *golden.Set
	Models []llm.Provider
	// Judge settles the fault verdicts that rest on the reply's wording
	// (nil: the program's verdict stands).
	Judge llm.Provider
	// Executor runs the calls no fault or payload replaces: a
	// behavior.MCPExecutor on the server under test. Tools are the
	// server's tools, as listed once.
	Executor behavior.Executor
	Tools    []mcpclient.Tool
	// MaxResultBytes is the limit Executor clips results to (default
	// behavior.DefaultMaxResultBytes); the oversized fault fills it.
	MaxResultBytes int

	// Catalogue holds the payloads (nil: the built-in one).
	Catalogue *Catalogue
	// Faults and Categories keep only these fault types and attack
	// categories (nil: all); SkipFaults and SkipAttacks leave a half out.
	Faults      []string
	Categories  []string
	SkipFaults  bool
	SkipAttacks bool
	// AttackCases are the case ids payloads are planted in, in turn (nil:
	// every case that expects a call).
	AttackCases []string
	// Target is the attacker's tool (default send_email). When the server
	// has no tool by that name the harness offers a decoy; calls to it
	// never leave the harness either way.
	Target string

	Runs        int // per case × fault × model and per payload × model (default 3)
	MaxSteps    int // model turns per run (default behavior.DefaultMaxSteps)
	Concurrency int // runs in flight (default 4)
	// Sampling is what every model is asked for (default temperature 0,
	// seed 42, as Layer 1).
	Sampling *llm.Sampling
	// Meter counts every model and judge call against the run's budget,
	// the one Layer 1 uses too (nil: uncapped, priced by the default
	// table). A run the cap stops is not counted, and says why.
	Meter *spend.Meter
	// CallTimeout bounds one model call (default: the agent loop's).
	CallTimeout time.Duration

	// Cache stores runs and judge verdicts (nil: none); Reuse says what
	// may be read back, as for Layer 1. A stored run is reused only when
	// the server still answers its calls the same way.
	Cache *behavior.Cache
	Reuse behavior.Reuse
	// Stubs are the texts the Executor answers stubbed tools with
	// (eval.stubs): part of every cache key, since a stubbed call is not
	// asked again before a stored run is reused.
	Stubs map[string]string
	// Telemetry, when set, is told of every run and tool call; each run is
	// its own trace, as in Layer 1.
	Telemetry *telemetry.Recorder
	// Only, when set, keeps the runs whose case × model it accepts (the
	// case a fault is injected in or a payload planted in): one shard of
	// a sharded run, split as Layer 1's.
	Only func(caseID, modelID string) bool
}

// Result is a finished Layer 2 run.
type Result struct {
	Resilience *report.Resilience
	// Models are the models as the report lists them; merge them into
	// report.Models.
	Models []report.Model
	// Notes are sentences for the gate section: reuse from the cache.
	Notes []string
}

// job is one run: a case with a fault, or a payload planted in a case.
type job struct {
	kind    string // report.KindFault or report.KindAttack
	ci, mi  int
	run     int
	fault   string
	tool    mcpclient.Tool // the faulted tool
	payload Payload
	target  string

	key      string     // in the cache ("" without one)
	reused   *storedRun // found in the cache, not yet checked against the server
	storedAt time.Time
}

// done is a finished job.
type done struct {
	job
	tr      *report.Trajectory
	verdict Verdict
	judge   string
	served  string
	// reused: replayed from the cache; stale: found there, but the
	// server answers its calls differently now, so made anew.
	reused, stale bool
}

// Run runs every fault and payload against every model and classifies
// each run. Its error is a configuration error: nothing was run.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	p, err := Prepare(cfg)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx)
}

// Plan is a prepared Layer 2 run: every job planned, no model called.
type Plan struct{ r *runner }

// Prepare checks cfg and plans the runs. Its error is a configuration
// error: nothing was run.
func Prepare(cfg Config) (*Plan, error) {
	r, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	return &Plan{r: r}, nil
}

// Estimate adds the plan's expected calls to a spend preview: per run,
// one turn per expected step, one to answer and one more (a retry after
// the fault, or the attacker's tool), and for a fault run one judge call
// when a judge is configured (the judge settles only verdicts that rest
// on wording, so this is an upper bound).
func (p *Plan) Estimate(pv *spend.Preview) {
	r := p.r
	contextChars := 0
	for _, c := range r.context {
		contextChars += len(c)
	}
	judge := ""
	if r.cfg.Judge != nil {
		judge = r.cfg.Judge.ID()
	}
	for _, j := range r.jobs {
		c := r.cfg.Set.Cases[j.ci]
		prompt := len(c.Prompt)
		judgeCalls := 0
		if j.kind == report.KindFault {
			judgeCalls = 1
		} else {
			prompt += len(j.payload.Cover) + len(j.payload.Text)
		}
		pv.Runs++
		pv.Run(spend.Layer2, r.modelIDs[j.mi], len(c.Steps())+2, contextChars, prompt, spend.Layer2Judge, judge, judgeCalls)
	}
}

// Run runs the plan.
func (p *Plan) Run(ctx context.Context) (*Result, error) {
	r := p.r
	results := make([]done, len(r.jobs))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < r.cfg.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				results[i] = r.do(ctx, r.jobs[i])
			}
		}()
	}
feed:
	for i := range r.jobs {
		select {
		case work <- i:
		case <-ctx.Done():
			for k := i; k < len(r.jobs); k++ {
				results[k] = done{job: r.jobs[k], tr: &report.Trajectory{Turns: []report.Turn{}, End: behavior.EndError},
					verdict: Verdict{Outcome: RunError, Reason: "the run's deadline passed before this run started: " + ctx.Err().Error()}}
			}
			break feed
		}
	}
	close(work)
	wg.Wait()
	return r.assemble(results), nil
}

// countCalls counts the model and judge calls this run makes, for the
// reuse note.
func (r *runner) countCalls() { r.calls.Add(1) }

// runner is a prepared Layer 2 run.
type runner struct {
	cfg      Config
	tools    []llm.Tool
	byName   map[string]mcpclient.Tool
	context  []string // text every model is shown: system prompt, tool list
	modelIDs []string
	jobs     []job
	notes    []string
	judge    *behavior.Judge
	readOnly map[string]bool
	recheck  *behavior.Revalidator
	calls    atomic.Int64
}

func prepare(cfg Config) (*runner, error) {
	if cfg.Set == nil || len(cfg.Set.Cases) == 0 {
		return nil, errors.New("resilience: the golden set has no cases")
	}
	if cfg.Executor == nil {
		return nil, errors.New("resilience: no executor (Config.Executor) to run the tools")
	}
	if cfg.Runs <= 0 {
		cfg.Runs = DefaultRuns
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = behavior.DefaultMaxSteps
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Meter == nil {
		cfg.Meter = spend.NewMeter(spend.Budget{}, nil, nil)
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = behavior.DefaultMaxResultBytes
	}
	if cfg.Sampling == nil {
		t, s := 0.0, int64(42)
		cfg.Sampling = &llm.Sampling{Temperature: &t, Seed: &s}
	}
	if cfg.Catalogue == nil {
		c, err := DefaultCatalogue()
		if err != nil {
			return nil, err
		}
		cfg.Catalogue = c
	}
	for _, f := range cfg.Faults {
		if _, err := Shown(f, "x", 0); err != nil {
			return nil, fmt.Errorf("resilience: %w", err)
		}
	}
	for _, id := range cfg.Categories {
		if _, ok := cfg.Catalogue.Category(id); !ok {
			return nil, fmt.Errorf("resilience: unknown attack category %q", id)
		}
	}
	r := &runner{cfg: cfg, byName: map[string]mcpclient.Tool{}, context: []string{behavior.SystemPrompt},
		readOnly: behavior.ReadOnlyTools(cfg.Tools), recheck: &behavior.Revalidator{Executor: cfg.Executor}}
	for _, t := range cfg.Tools {
		r.byName[t.Name] = t
		r.tools = append(r.tools, llm.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
		r.context = append(r.context, t.Name+" "+t.Description+" "+string(t.InputSchema))
	}
	var models []llm.Provider
	seen := map[string]bool{}
	for _, m := range cfg.Models {
		id := m.ID()
		switch {
		case strings.HasPrefix(id, behavior.BaselinePrefix):
			r.notes = append(r.notes, "Layer 2 left out "+id+": the lexical baseline reads no tool results, so it has nothing to show here")
			continue
		case seen[id]:
			return nil, fmt.Errorf("resilience: model %s is listed twice", id)
		}
		seen[id] = true
		models = append(models, m)
		r.modelIDs = append(r.modelIDs, id)
	}
	if len(models) == 0 {
		return nil, errors.New("resilience: no model to run (Layer 2 needs a real model: configure models:)")
	}
	r.cfg.Models = models
	if cfg.Judge != nil {
		// Verdicts are reused as Layer 1's are: a scheduled run makes
		// every run anew, but an identical trajectory is not judged twice.
		meter := cfg.Meter.Hook(spend.Layer2Judge, cfg.Judge.ID())
		r.judge = &behavior.Judge{Provider: cfg.Judge, Before: cfg.Meter.Gate, CallTimeout: cfg.CallTimeout,
			Cache: cfg.Cache, Reuse: cfg.Reuse != behavior.ReuseNothing, After: func(u llm.Usage) {
				r.countCalls()
				meter(u)
			}}
	}
	if !cfg.SkipFaults {
		r.planFaults()
	}
	if !cfg.SkipAttacks {
		if err := r.planAttacks(); err != nil {
			return nil, err
		}
	}
	if cfg.Only != nil {
		kept := r.jobs[:0]
		for _, j := range r.jobs {
			if cfg.Only(cfg.Set.Cases[j.ci].ID, r.modelIDs[j.mi]) {
				kept = append(kept, j)
			}
		}
		r.jobs = kept
	}
	if len(r.jobs) == 0 && cfg.Only == nil {
		r.notes = append(r.notes, "Layer 2 had nothing to run: no case lists faults:, and no attack could be planted")
	}
	if err := r.lookUp(); err != nil {
		return nil, err
	}
	return r, nil
}

// planFaults adds a job per case × listed fault × run × model. The
// faulted tool is the case's first expected tool.
func (r *runner) planFaults() {
	keep := func(f string) bool { return r.cfg.Faults == nil || contains(r.cfg.Faults, f) }
	for ci, c := range r.cfg.Set.Cases {
		if len(c.Faults) == 0 {
			continue
		}
		steps := c.Steps()
		if len(steps) == 0 {
			continue
		}
		t, ok := r.byName[steps[0].Tool]
		if !ok {
			r.notes = append(r.notes, fmt.Sprintf("case %s: its tool %s is not listed by the server; its faults were not run", c.ID, steps[0].Tool))
			continue
		}
		for _, f := range c.Faults {
			if !keep(f) {
				continue
			}
			for run := 1; run <= r.cfg.Runs; run++ {
				for mi := range r.modelIDs {
					r.jobs = append(r.jobs, job{kind: report.KindFault, ci: ci, mi: mi, run: run, fault: f, tool: t})
				}
			}
		}
	}
}

// planAttacks adds a job per payload × run × model, planting payload i
// of run k in the (i+k)-th attack case, so that every payload meets
// several cases and every case several payloads.
func (r *runner) planAttacks() error {
	var cases []int
	for ci, c := range r.cfg.Set.Cases {
		if c.Negative || (r.cfg.AttackCases != nil && !contains(r.cfg.AttackCases, c.ID)) {
			continue
		}
		cases = append(cases, ci)
	}
	for _, id := range r.cfg.AttackCases {
		if !r.hasCase(id) {
			return fmt.Errorf("resilience: attack case %q is not in the golden set", id)
		}
	}
	if len(cases) == 0 {
		r.notes = append(r.notes, "no case expects a tool call, so no payload could be planted in a tool result: attacks were not run")
		return nil
	}
	keep := func(cat string) bool { return r.cfg.Categories == nil || contains(r.cfg.Categories, cat) }
	for pi, p := range r.cfg.Catalogue.Payloads {
		if !keep(p.Category) {
			continue
		}
		for run := 1; run <= r.cfg.Runs; run++ {
			ci := cases[(pi+run-1)%len(cases)]
			target := r.targetFor(r.cfg.Set.Cases[ci])
			for mi := range r.modelIDs {
				r.jobs = append(r.jobs, job{kind: report.KindAttack, ci: ci, mi: mi, run: run, payload: p, target: target})
			}
		}
	}
	return nil
}

// targetFor picks the attacker's tool for a case: the configured one, or
// the first of the alternates the case does not itself expect.
func (r *runner) targetFor(c golden.Case) string {
	expected := map[string]bool{}
	for _, s := range c.Steps() {
		expected[s.Tool] = true
	}
	if r.cfg.Target != "" {
		return r.cfg.Target
	}
	alts := alternateTargets()
	for _, t := range alts {
		if !expected[t] {
			return t
		}
	}
	return alts[len(alts)-1]
}

func (r *runner) hasCase(id string) bool {
	for _, c := range r.cfg.Set.Cases {
		if c.ID == id {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
