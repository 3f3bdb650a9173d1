package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Flag groups. A command registers the groups it has; a flag name means
// the same thing on every command that has it.
const (
	flagsServer = 1 << iota // --url, --cmd, --header, … and the deadlines
	flagsConfig             // --config
	flagsLayers             // --layers
	flagsLayer0             // --conformance-runs, --conformance-concurrency, --call-tool, --only, --tool-tokens
	flagsLayer1             // --golden, --models, --runs, --concurrency, …
	flagsGate               // --baseline, --max-drop, --fail-on-inconclusive, the cost and tool-token gates, --lint
	flagsOutput             // --out, --junit, --markdown, --html
)

// planFlags are the flags that become pipeline.Settings: the command
// line's say, the strongest source.
type planFlags struct {
	fs     *flag.FlagSet
	groups int
	s      pipeline.Settings

	config                      string
	layers, only                multiFlag
	headers, serverEnv, passEnv multiFlag
	callTools                   multiFlag
	models                      string
	maxDrop                     string
	costIncrease, costPerRun    string
	toolTokens, toolTokensInc   string
	lint                        string
	failInc, fresh              bool
	verbose                     bool
}

func (f *planFlags) register(fs *flag.FlagSet, groups int) {
	f.fs, f.groups = fs, groups
	s := &f.s
	if groups&flagsServer != 0 {
		fs.StringVar(&s.URL, "url", "", "Streamable HTTP endpoint of the server, e.g. http://127.0.0.1:3000/mcp")
		fs.StringVar(&s.Command, "cmd", "", "command that starts a stdio server, e.g. \"node dist/server.js --stdio\" (split like a shell would, never run through one)")
		fs.StringVar(&s.Cwd, "cwd", "", "working directory for --cmd (default: the current one)")
		fs.Var(&f.headers, "header", "HTTP header `K:V` sent with every request, e.g. \"Authorization: Bearer $TOKEN\" (repeatable; values are never printed)")
		fs.Var(&f.serverEnv, "server-env", "environment variable `K=V` for the --cmd server (repeatable)")
		fs.Var(&f.passEnv, "pass-env", "pass this variable `NAME` from mcp-eval's environment to the --cmd server (repeatable); only PATH, HOME, LANG and TMPDIR pass by default")
		fs.StringVar(&s.User, "server-user", "", "who a --cmd server runs as: auto (unprivileged when mcp-eval runs as root in the action or with secrets in its environment), unprivileged, or current (default: server.user, else auto)")
		fs.DurationVar(&s.Timeout, "timeout", 0, "deadline for the whole run (default: 2m, or 30m when models run)")
		fs.DurationVar(&s.RequestTimeout, "request-timeout", 0, "deadline for each request (default: 30s)")
		fs.DurationVar(&s.ProbeTimeout, "probe-timeout", 0, "how long a stdio server may stay silent on server/discover before it is taken for a legacy server (default: 5s)")
		fs.Int64Var(&s.MaxResponseBytes, "max-response-bytes", 0, fmt.Sprintf("largest single response accepted from the server (default: %d)", transport.DefaultMaxMessageBytes))
	}
	if groups&flagsConfig != 0 {
		fs.StringVar(&f.config, "config", "", "configuration file (default: mcp-eval.yaml in the current directory, when present)")
	}
	if groups&flagsLayers != 0 {
		fs.Var(&f.layers, "layers", "layers to run: auto, all, or a comma list of 0-3 / conformance,behavior,resilience,telemetry (default: from the config, else Layer 0)")
	}
	if groups&flagsLayer0 != 0 {
		fs.IntVar(&s.ConformanceRuns, "conformance-runs", 0, "runs of each MUST check; it passes only at N/N (default: conformance.runs, else 5)")
		fs.IntVar(&s.ConformanceConcurrency, "conformance-concurrency", 0, "Layer 0 check runs in flight at once (default: 16), and up to twice as many runs of the checks that mostly wait")
		fs.Var(&f.callTools, "call-tool", "allow calling this tool `NAME` although it is not annotated readOnlyHint: true (repeatable; by default only read-only tools are called; a name the server does not list is noted, with the nearest listed name)")
		fs.Var(&f.only, "only", "run only these check ids or families, e.g. DISC or TOOL-3 (repeatable, or comma-separated)")
		fs.StringVar(&s.ToolTokens, "tool-tokens", "", "how the tool surface's tokens are counted: estimate (the embedded tokenizer) or exact (also each model's provider, at its token-counting endpoint, where its key is set) (default: conformance.tool-tokens, else estimate)")
	}
	if groups&flagsLayer1 != 0 {
		fs.StringVar(&s.Golden, "golden", "", "golden set: a YAML file or a directory of them (default: golden: in the config)")
		fs.StringVar(&f.models, "models", "", "comma list of models, e.g. openai:gpt-5-mini,anthropic:claude-sonnet-4-5 (default: models.default in the config; none: the baseline, no LLM)")
		fs.StringVar(&s.Judge, "judge", "", "model that grades rubrics and undecided arguments (default: eval.judge in the config; none: no judge)")
		fs.IntVar(&s.Runs, "runs", 0, "runs of each case per model (default: eval.runs, else 5)")
		fs.IntVar(&s.MaxSteps, "max-steps", 0, "model turns per run (default: eval.max-steps, else 8)")
		fs.IntVar(&s.Concurrency, "concurrency", 0, "Layer 1 runs in flight over all models (default: eval.concurrency, else 4)")
		fs.IntVar(&s.MaxTokens, "max-tokens", 0, "stop starting provider calls after this many tokens; the rest is inconclusive (default: eval.budget.max-tokens)")
		fs.Float64Var(&s.MaxUSD, "max-usd", 0, "stop starting provider calls after this much spend in USD (default: eval.budget.max-usd)")
		fs.StringVar(&s.Prices, "prices", "", "price override `FILE` (dated rows, the format of the built-in price table) for the budget, the preview and the report's cost (default: pricing.file in the config)")
		fs.StringVar(&s.CacheDir, "cache-dir", "", "directory of stored results and verdicts (default: eval.cache-dir, else "+pipeline.DefaultCacheDir+")")
		fs.StringVar(&s.Shard, "shard", "", "run shard `i/n` of Layers 1 and 2 (split by case × model, balanced on the baseline's durations; Layer 0 in shard 1 only); merge the shards' reports with mcp-eval report merge")
		fs.BoolVar(&f.fresh, "fresh", false, "make every model call anew instead of reusing stored results and verdicts (results are still stored)")
		fs.StringVar(&s.Record, "record", "", "store every model exchange of Layers 1 and 2 (a cassette) in `DIR`, for --replay; bypasses the result cache")
		fs.StringVar(&s.Replay, "replay", "", "answer every model request of Layers 1 and 2 from the cassette in `DIR` (no model, no key; tools still run on the server); bypasses the result cache")
	}
	if groups&flagsGate != 0 {
		fs.StringVar(&s.Baseline, "baseline", "", "report.json of the last green run to compare with (default: floors only)")
		fs.StringVar(&s.HistoryDir, "history", "", "earlier reports for the trend (pass rate, p95, cost per model) and drift warnings: a `DIR` of *.json or one FILE; the newest gate.history green ones are used")
		fs.StringVar(&f.maxDrop, "max-drop", "", "largest score drop that is not a regression, 0.02 or 2% (default: from the config, else 0.02)")
		fs.BoolVar(&f.failInc, "fail-on-inconclusive", false, "exit 1 when the gate cannot tell a drop from noise, or runs were left undecided")
		fs.StringVar(&f.costIncrease, "max-cost-increase", "", "largest rise of a model's cost per case over the baseline: a fraction (0.25) or a percentage (25%) (default: gate.max-cost-increase, else not gated)")
		fs.StringVar(&f.costPerRun, "max-cost-per-run", "", "most the run's model calls may cost, in `USD` (5 or $2.50) (default: gate.max-cost-per-run, else no cap)")
		fs.StringVar(&f.toolTokens, "max-tool-tokens", "", "most `TOKENS` the tools array may cost in every model request (default: gate.max-tool-tokens, else not gated)")
		fs.StringVar(&f.toolTokensInc, "max-tool-tokens-increase", "", "largest rise of the tools array's tokens over the baseline: a fraction (0.1) or a percentage (10%) (default: gate.max-tool-tokens-increase, else not gated)")
		fs.StringVar(&f.lint, "lint", "", "what a description-lint finding does: off, warn or fail (default: gate.lint, else warn)")
	}
	if groups&flagsOutput != 0 {
		fs.StringVar(&s.Report, "out", "", "write the report (report.json) to `FILE`")
		fs.StringVar(&s.JUnit, "junit", "", "also write JUnit XML to `FILE`")
		fs.StringVar(&s.Markdown, "markdown", "", "also write the Markdown summary to `FILE`")
		fs.StringVar(&s.HTML, "html", "", "also write the self-contained HTML report to `FILE`")
		fs.BoolVar(&f.verbose, "v", false, "list passing checks too")
	}
}

// settings returns what the command line says, after parsing.
func (f *planFlags) settings() (pipeline.Settings, error) {
	s := f.s
	s.Headers, s.ServerEnv, s.PassEnv = f.headers, f.serverEnv, f.passEnv
	s.CallTools, s.Only, s.Layers = f.callTools, f.only, f.layers
	if s.URL != "" && (len(f.serverEnv) > 0 || len(f.passEnv) > 0 || s.Cwd != "") {
		return s, errors.New("--server-env, --pass-env and --cwd only apply to a --cmd server")
	}
	if f.models != "" {
		s.Models = splitList(f.models)
	}
	if s.Prices != "" {
		s.PricesFrom = "--prices"
	}
	if f.fresh {
		s.Reuse = ptr(behavior.ReuseNothing)
	}
	if f.failInc {
		s.FailOnInconclusive = ptr(true)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--timeout", s.Timeout}, {"--request-timeout", s.RequestTimeout}, {"--probe-timeout", s.ProbeTimeout}} {
		if d.v < 0 || (d.v == 0 && f.isSet(d.name[2:])) {
			return s, fmt.Errorf("%s must be positive", d.name)
		}
	}
	for _, n := range []struct {
		group int
		name  string
		v     int
	}{{flagsLayer0, "conformance-runs", s.ConformanceRuns}, {flagsLayer0, "conformance-concurrency", s.ConformanceConcurrency}, {flagsLayer1, "runs", s.Runs}, {flagsLayer1, "concurrency", s.Concurrency}} {
		switch {
		case f.groups&n.group == 0:
		case n.v < 0:
			return s, fmt.Errorf("--%s must not be negative", n.name)
		case n.v == 0 && f.isSet(n.name):
			return s, fmt.Errorf("--%s must be at least 1", n.name)
		}
	}
	if f.maxDrop != "" {
		v, err := gate.ParseMaxDrop(f.maxDrop)
		if err != nil {
			return s, err
		}
		s.MaxDrop = &v
	}
	var err error
	if s.MaxCostIncrease, err = costFlag("max-cost-increase", f.costIncrease, gate.ParseCostIncrease); err != nil {
		return s, err
	}
	if s.MaxCostPerRun, err = costFlag("max-cost-per-run", f.costPerRun, gate.ParseUSD); err != nil {
		return s, err
	}
	if s.MaxToolTokens, err = tokensFlag(f.toolTokens); err != nil {
		return s, err
	}
	if s.MaxToolTokensIncrease, err = costFlag("max-tool-tokens-increase", f.toolTokensInc, gate.ParseToolTokensIncrease); err != nil {
		return s, err
	}
	if err := gate.CheckLint(f.lint); err != nil {
		return s, errors.New("--" + strings.TrimPrefix(err.Error(), gate.ErrPolicy.Error()+": "))
	}
	s.Lint = f.lint
	return s, nil
}

// costFlag parses a cost gate flag with the parser mcp-eval.yaml and the
// action inputs use; empty says nothing (nil). The error names the flag.
func costFlag(name, v string, parse func(string) (float64, error)) (*float64, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	f, err := parse(v)
	if err != nil {
		return nil, errors.New("--" + strings.TrimPrefix(err.Error(), gate.ErrPolicy.Error()+": "))
	}
	return &f, nil
}

// tokensFlag parses --max-tool-tokens; empty says nothing (nil).
func tokensFlag(v string) (*int, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	n, err := gate.ParseToolTokens(v)
	if err != nil {
		return nil, errors.New("--" + strings.TrimPrefix(err.Error(), gate.ErrPolicy.Error()+": "))
	}
	return &n, nil
}

// isSet reports whether the command line set a flag.
func (f *planFlags) isSet(name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

func ptr[T any](v T) *T { return &v }
