package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

const evalExamples = `  mcp-eval eval --golden golden/tasks.yaml --cmd "node dist/server.js"        # no key: the baseline, no LLM
  mcp-eval eval --golden golden/tasks.yaml --models openai:gpt-5-mini,anthropic:claude-sonnet-4-5 --runs 5 --url http://127.0.0.1:3000/mcp
  mcp-eval eval --config mcp-eval.yaml --judge anthropic:claude-haiku-4-5 --max-usd 2
  mcp-eval eval --config mcp-eval.yaml --preview                               # the spend preview, no call
  mcp-eval eval --golden tasks.yaml --models openai-compatible:llama3.1@http://localhost:11434/v1 --cmd "./server" --fresh

Models: openai:MODEL (Responses API, key in OPENAI_API_KEY), anthropic:MODEL (ANTHROPIC_API_KEY),
openai-compatible:MODEL@BASE_URL (Chat Completions; OPENAI_COMPATIBLE_API_KEY if the server wants one),
or ENDPOINT:MODEL for an endpoints: entry of mcp-eval.yaml. Keys are read from the environment only.
With no model, the built-in lexical selector runs (labelled "baseline, no LLM"). Docs: docs/behavior.md.
`

// DefaultCacheDir is where Layer 1 keeps results and verdicts when
// eval.cache-dir is not set, relative to the config file (or the working
// directory): one directory, for actions/cache.
const DefaultCacheDir = ".mcp-eval-cache"

// behaviorSetup is Layer 1's settings after flag > input > file precedence.
type behaviorSetup struct {
	golden      string // file or directory; "" means nothing to run
	models      []string
	modelSets   config.Models // per trigger, for the action
	judge       string
	runs        int
	maxSteps    int
	concurrency int
	stubs       map[string]string
	cacheDir    string
	reuse       behavior.Reuse
	budget      behavior.Budget
	rateLimits  map[string]behavior.RateLimit
	endpoints   map[string]config.Endpoint
	previewOnly bool
}

// behaviorFromConfig reads golden:, models: and eval: (paths relative to
// the config file's directory).
func behaviorFromConfig(cfg *config.Config, dir string, b *behaviorSetup) {
	if cfg.Golden != "" {
		b.golden = filepath.Join(dir, cfg.Golden)
	}
	b.modelSets = cfg.Models
	b.models = append([]string(nil), cfg.Models.Default...)
	e := cfg.Eval
	b.judge = e.Judge
	if e.Runs > 0 {
		b.runs = e.Runs
	}
	b.maxSteps, b.concurrency = e.MaxSteps, e.Concurrency
	b.stubs = e.Stubs
	b.cacheDir = filepath.Join(dir, DefaultCacheDir)
	if e.CacheDir != "" {
		b.cacheDir = filepath.Join(dir, e.CacheDir)
	}
	b.budget = behavior.Budget{MaxTokens: e.Budget.MaxTokens, MaxUSD: e.Budget.MaxUSD}
	b.rateLimits = map[string]behavior.RateLimit{}
	for k, v := range e.RateLimits {
		b.rateLimits[k] = behavior.RateLimit{Concurrency: v.Concurrency, PerMinute: v.PerMinute}
	}
	b.endpoints = cfg.Endpoints
}

// modelsFor picks a config's model list for an action trigger: the
// schedule's nightly or weekly list (a cron with a day of week is weekly),
// workflow_dispatch's list, else default; an empty list falls back to
// default.
func modelsFor(m config.Models, trigger, cron string) []string {
	var pick []string
	switch trigger {
	case "schedule":
		pick = m.Nightly
		if weeklyCron(cron) {
			pick = m.Weekly
		}
	case "workflow_dispatch":
		pick = m.Dispatch
	}
	if len(pick) == 0 {
		pick = m.Default
	}
	return append([]string(nil), pick...)
}

// weeklyCron reports whether a five-field cron names days of the week.
func weeklyCron(cron string) bool {
	f := strings.Fields(cron)
	return len(f) == 5 && f[4] != "*" && f[4] != "?"
}

// runBehavior runs Layer 1 into rep: the golden set against every model
// (or the baseline), on the pipeline's server. It returns notes for the
// gate section and whether only the baseline ran. An error is a harness
// or configuration error (exit 2).
func (c *Command) runBehavior(ctx context.Context, pl *pipeline, rep *report.Report) (notes []string, baselineOnly bool, err error) {
	b := pl.behavior
	if b.golden == "" {
		return []string{`layer "behavior" was selected but no golden set is configured (golden: in mcp-eval.yaml, --golden, or the golden input); nothing was measured for it`}, false, nil
	}
	set, err := golden.Load(b.golden)
	if err != nil {
		return nil, false, fmt.Errorf("golden set: %w", err)
	}
	var models []llm.Provider
	if len(b.models) == 0 {
		p, err := baselineProvider()
		if err != nil {
			return nil, false, err
		}
		models, baselineOnly = []llm.Provider{p}, true
		notes = append(notes, fmt.Sprintf("Layer 1: no model is configured, so the built-in lexical selector ran (%s): it shows whether the tool descriptions are even lexically distinguishable, and is shown, not gated. Configure models: (or --models) for real models", behavior.BaselineLabel))
	}
	for _, spec := range b.models {
		p, err := llm.New(spec, b.endpoints, c.LookupEnv, llm.Options{})
		if err != nil {
			return nil, false, err
		}
		models = append(models, p)
	}
	var judge llm.Provider
	if b.judge != "" {
		if judge, err = llm.New(b.judge, b.endpoints, c.LookupEnv, llm.Options{}); err != nil {
			return nil, false, fmt.Errorf("judge: %w", err)
		}
	}
	var observer func(mcpclient.Call)
	if pl.rec != nil {
		// Layer 3 measures what Layer 1 does: every model call and every
		// MCP request it causes.
		observer = pl.rec.ObserveMCP
		for i := range models {
			models[i] = pl.rec.Provider(models[i], false)
		}
		if judge != nil {
			judge = pl.rec.Provider(judge, true)
		}
	}
	client, closeClient, err := openClient(ctx, pl.target, pl.reqTimeout, pl.probeTimeout, observer)
	if err != nil {
		return nil, false, fmt.Errorf("Layer 1 could not reach %s: %w", pl.targetDesc, err)
	}
	defer closeClient()
	lt, err := client.ListTools(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("Layer 1: listing the tools of %s: %w", pl.targetDesc, err)
	}
	var names []string
	for _, t := range lt.Tools {
		names = append(names, t.Name)
	}
	for _, w := range golden.Hygiene(set, names) {
		fmt.Fprintln(c.Stderr, "mcp-eval:", sanitize(w.String()))
	}
	var cache *behavior.Cache
	if b.cacheDir != "" {
		if cache, err = behavior.OpenCache(b.cacheDir); err != nil {
			return nil, false, err
		}
	}
	ws := workspace(c)
	cfg := behavior.Config{Set: set, Source: report.RelPath(ws, abs(b.golden)), Models: models, Judge: judge,
		Client: client, Stubs: b.stubs, Tools: lt.Tools, Runs: b.runs, MaxSteps: b.maxSteps, Concurrency: b.concurrency,
		RateLimits: b.rateLimits, Cache: cache, Reuse: b.reuse, Budget: b.budget}
	plan, err := behavior.Prepare(ctx, cfg)
	if err != nil {
		return nil, false, err
	}
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = behavior.ReportModelID(m.ID())
	}
	runs := b.runs
	if runs <= 0 {
		runs = behavior.DefaultRuns
	}
	fmt.Fprintf(c.Stdout, "Layer 1: %d cases × %d runs × %s; cache %s reuses %s\n%s\n", len(set.Cases), runs, sanitize(strings.Join(ids, ", ")),
		sanitize(orNone(b.cacheDir)), b.reuse, plan.Preview())
	if b.previewOnly {
		return notes, baselineOnly, errPreviewOnly
	}
	res, err := plan.Run(ctx)
	if err != nil {
		return nil, false, err
	}
	rep.Behavior = res.Behavior
	rep.Models = append(rep.Models, res.Models...)
	if rep.ToolSurfaceHash == "" {
		rep.ToolSurfaceHash = report.ToolSurfaceHash(lt.Tools)
	}
	return append(notes, res.Notes...), baselineOnly, nil
}

// defaultModelRunTimeout bounds a whole run that calls models when
// --timeout is not given: model calls take seconds each, so the two
// minutes that suit Layer 0 are too short, but a run is never unbounded.
const defaultModelRunTimeout = 30 * time.Minute

// flagSet reports whether the command line set a flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// errPreviewOnly ends a run after the spend preview (eval --preview).
var errPreviewOnly = errors.New("preview only")

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// openClient connects one client to the server for Layers 1 and 2: one
// stdio process or one HTTP connection pool, shared by every run. It opens
// the target like every other layer (package target), so the server runs
// as the same user as in Layer 0.
func openClient(ctx context.Context, t conformance.Target, reqTimeout, probeTimeout time.Duration, observer func(mcpclient.Call)) (*mcpclient.Client, func(), error) {
	cl, err := t.Connect(ctx, false, mcpclient.Config{RequestTimeout: reqTimeout, ProbeTimeout: probeTimeout, Observer: observer})
	if err != nil {
		return nil, nil, err
	}
	return cl, func() { cl.Close() }, nil
}

// settleLayer1 applies what the gate cannot see to its verdict: case runs
// the budget or a silent judge left undecided are not in the results, so
// they make a passing verdict inconclusive, never a pass.
func settleLayer1(g *report.Gate, b *report.Behavior) {
	if g == nil || b == nil {
		return
	}
	for _, inc := range b.Inconclusive {
		g.Items = append(g.Items, report.GateItem{Layer: 1, Kind: report.KindCase, Subject: inc.Case, Model: inc.Model, Direction: report.Higher,
			Status: report.ItemInconclusive, Rule: "every run of a case is decided",
			Reason: fmt.Sprintf("%d runs not decided: %s", inc.Runs, inc.Reason)})
		if g.Verdict == report.GatePass {
			g.Verdict = report.GateInconclusive
		}
	}
}

// matrixText prints Layer 1 as a case × model matrix of passed runs.
func matrixText(w io.Writer, rep *report.Report) {
	b := rep.Behavior
	if b == nil {
		return
	}
	var models []string
	for _, m := range rep.Models {
		for _, r := range b.Results {
			if r.Model == m.ID {
				models = append(models, m.ID)
				break
			}
		}
	}
	cell := map[[2]string]string{}
	for _, r := range b.Results {
		s := fmt.Sprintf("%d/%d", r.Passed.K, r.Passed.N)
		if r.Reused > 0 {
			s += "*"
		}
		cell[[2]string{r.Case, r.Model}] = s
	}
	for _, inc := range b.Inconclusive {
		if _, ok := cell[[2]string{inc.Case, inc.Model}]; !ok {
			cell[[2]string{inc.Case, inc.Model}] = "?"
		}
	}
	width := 4
	for _, cs := range b.Cases {
		width = max(width, len(cs.ID))
	}
	width = min(width, 40)
	fmt.Fprintf(w, "\n== Layer 1 · behaviour: passed runs per case (%d runs each; * reused from the cache, ? not decided) ==\n", b.RunsPerCase)
	for i, m := range models {
		fmt.Fprintf(w, "  [%d] %s\n", i+1, sanitize(m))
	}
	fmt.Fprintf(w, "  %-*s", width, "case")
	for i := range models {
		fmt.Fprintf(w, " %8s", "["+strconv.Itoa(i+1)+"]")
	}
	fmt.Fprintln(w)
	for _, cs := range b.Cases {
		id := sanitize(cs.ID)
		if len(id) > width {
			id = id[:width-1] + "…"
		}
		fmt.Fprintf(w, "  %-*s", width, id)
		for _, m := range models {
			v, ok := cell[[2]string{cs.ID, m}]
			if !ok {
				v = "–"
			}
			fmt.Fprintf(w, " %8s", v)
		}
		fmt.Fprintln(w)
	}
	for _, m := range models {
		var line []string
		for _, name := range []string{report.ToolSelection, report.ArgumentCorrectness, report.SequenceOrder, report.OverTrigger, report.TaskCompletion} {
			var k, n int
			for _, r := range b.Results {
				if r.Model != m {
					continue
				}
				for _, s := range r.Scores {
					if s.Name == name {
						k, n = k+s.K, n+s.N
					}
				}
			}
			if n > 0 {
				line = append(line, fmt.Sprintf("%s %d/%d (%.0f%%)", name, k, n, 100*float64(k)/float64(n)))
			}
		}
		fmt.Fprintf(w, "  %s: %s\n", sanitize(m), strings.Join(line, ", "))
	}
	if s := b.Spend; s != nil {
		cost := "cost unknown (" + s.Used.USDUnknown + ")"
		if s.Used.USD != nil {
			cost = fmt.Sprintf("$%.4f", *s.Used.USD)
		}
		fmt.Fprintf(w, "  spend: %d provider calls, %d tokens, %s; %d runs reused, %d made now\n", s.Used.Calls, s.Used.Tokens, sanitize(cost), s.ReusedRuns, s.FreshRuns)
		if s.Reached {
			fmt.Fprintf(w, "  budget reached: %s\n", sanitize(s.Reason))
		}
	}
}

func runEval(ctx context.Context, c *Command, args []string) int {
	var sf serverFlags
	var (
		cfgPath, goldenPath, models, judge, cacheDir, out, junit, markdown, baseline, maxDrop string
		runs, maxSteps, concurrency, maxTokens                                                int
		maxUSD                                                                                float64
		fresh, preview, failInc                                                               bool
	)
	fs := c.newFlagSet("eval", "--golden FILE [--models M1,M2] [--runs N] (--url URL | --cmd \"…\") [flags]", evalExamples)
	sf.register(fs)
	fs.StringVar(&cfgPath, "config", "", "configuration file (default: mcp-eval.yaml in the current directory, when present)")
	fs.StringVar(&goldenPath, "golden", "", "golden set: a YAML file or a directory of them (default: golden: in the config)")
	fs.StringVar(&models, "models", "", "comma list of models, e.g. openai:gpt-5-mini,anthropic:claude-sonnet-4-5 (default: models.default in the config; none: the baseline, no LLM)")
	fs.StringVar(&judge, "judge", "", "model that grades rubrics and undecided arguments (default: eval.judge in the config; none: no judge)")
	fs.IntVar(&runs, "runs", 0, "runs of each case per model (default: eval.runs, else 5)")
	fs.IntVar(&maxSteps, "max-steps", 0, "model turns per run (default: eval.max-steps, else 8)")
	fs.IntVar(&concurrency, "concurrency", 0, "runs in flight over all models (default: eval.concurrency, else 4)")
	fs.IntVar(&maxTokens, "max-tokens", 0, "stop starting provider calls after this many tokens; the rest is inconclusive (default: eval.budget.max-tokens)")
	fs.Float64Var(&maxUSD, "max-usd", 0, "stop starting provider calls after this much spend in USD (default: eval.budget.max-usd)")
	fs.StringVar(&cacheDir, "cache-dir", "", "directory of stored results and verdicts (default: eval.cache-dir, else "+DefaultCacheDir+")")
	fs.BoolVar(&fresh, "fresh", false, "make every call anew instead of reusing stored results and verdicts (results are still stored)")
	fs.BoolVar(&preview, "preview", false, "print the spend preview and exit without calling a model")
	fs.StringVar(&out, "out", "", "write the report to `FILE` (default: from the config, else report.json)")
	fs.StringVar(&junit, "junit", "", "also write JUnit XML to `FILE`")
	fs.StringVar(&markdown, "markdown", "", "also write the Markdown summary to `FILE`")
	fs.StringVar(&baseline, "baseline", "", "report.json of the last green run to compare with (default: floors only)")
	fs.StringVar(&maxDrop, "max-drop", "", "largest score drop that is not a regression, 0.02 or 2% (default: from the config, else 0.02)")
	fs.BoolVar(&failInc, "fail-on-inconclusive", false, "exit 1 when the gate cannot tell a drop from noise, or runs were left undecided")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintln(c.Stderr, "mcp-eval eval:", sanitizeText(explain(err)))
		return ExitError
	}
	if !flagSet(fs, "timeout") {
		sf.timeout = defaultModelRunTimeout
	}
	pl := &pipeline{policy: gate.DefaultPolicy(), check: check.Options{Runs: 5}, timeout: sf.timeout, reportPath: "report.json"}
	pl.behavior.cacheDir = DefaultCacheDir
	if cfgPath == "" {
		if _, err := os.Stat(config.DefaultFile); err == nil {
			cfgPath = config.DefaultFile
		}
	}
	if cfgPath != "" {
		cfg, err := config.Load(cfgPath)
		if err != nil {
			return fail(err)
		}
		if err := c.fromConfig(cfg, filepath.Dir(cfgPath), pl); err != nil {
			return fail(err)
		}
	}
	// eval is Layer 1 alone, whatever the config's layers say.
	pl.layers = []string{"behavior"}
	if sf.url != "" || sf.cmd != "" {
		if err := sf.validate(); err != nil {
			return fail(err)
		}
		t, err := sf.conformanceTarget(c)
		if err != nil {
			return fail(err)
		}
		pl.target, pl.targetDesc = t, sf.target()
	}
	if pl.target.URL == "" && len(pl.target.Argv) == 0 {
		return fail(errors.New("no server to test: pass --url / --cmd, or set server.url or server.command in mcp-eval.yaml"))
	}
	pl.timeout, pl.reqTimeout, pl.probeTimeout = sf.timeout, sf.requestTimeout, sf.probeTimeout
	b := &pl.behavior
	if goldenPath != "" {
		b.golden = goldenPath
	}
	if b.golden == "" {
		return fail(errors.New("no golden set: pass --golden FILE, or set golden: in mcp-eval.yaml (docs/behavior.md)"))
	}
	if models != "" {
		b.models = splitList(models)
	}
	if judge != "" {
		b.judge = judge
	}
	for _, v := range []struct {
		name string
		val  int
		dst  *int
	}{{"--runs", runs, &b.runs}, {"--max-steps", maxSteps, &b.maxSteps}, {"--concurrency", concurrency, &b.concurrency}, {"--max-tokens", maxTokens, &b.budget.MaxTokens}} {
		if v.val < 0 {
			return fail(fmt.Errorf("%s must not be negative", v.name))
		}
		if v.val > 0 {
			*v.dst = v.val
		}
	}
	if b.runs > 100 {
		return fail(errors.New("--runs must be 1..100"))
	}
	if maxUSD < 0 {
		return fail(errors.New("--max-usd must not be negative"))
	}
	if maxUSD > 0 {
		b.budget.MaxUSD = maxUSD
	}
	if cacheDir != "" {
		b.cacheDir = cacheDir
	}
	if fresh {
		b.reuse = behavior.ReuseNothing
	}
	b.previewOnly = preview
	if maxDrop != "" {
		v, err := gate.ParseMaxDrop(maxDrop)
		if err != nil {
			return fail(err)
		}
		pl.policy.MaxDrop = v
	}
	pl.policy.FailOnInconclusive = pl.policy.FailOnInconclusive || failInc
	if err := pl.policy.Validate(); err != nil {
		return fail(err)
	}
	if out != "" {
		pl.reportPath = out
	}
	if junit != "" {
		pl.junitPath = junit
	}
	if markdown != "" {
		pl.markdownPath = markdown
	}
	if baseline != "" {
		if err := c.loadBaseline(baseline, pl); err != nil {
			return fail(err)
		}
	}
	rep, err := c.runPipeline(ctx, pl)
	if errors.Is(err, errPreviewOnly) {
		return ExitOK
	}
	if err != nil {
		return fail(err)
	}
	return exitFor(rep, pl.policy.FailOnInconclusive)
}

// splitList reads a comma list, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}
