// Package pipeline runs a whole evaluation: one Plan, built from every
// source of settings in one overlay, and one Run that drives the layers,
// gates the report and writes the outputs. Every command (run, eval,
// check, action) is a choice of layers and outputs over this package, so a
// guarantee kept here (the verdict, the server's user, trace context, the
// budget, the cache, file modes) holds on every entry point.
package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/cassette"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/pricing"
	"github.com/mcp-eval/mcp-eval-action/pkg/redact"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
	"github.com/mcp-eval/mcp-eval-action/pkg/target"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// DefaultCacheDir is where Layer 1 keeps results and verdicts when
// eval.cache-dir is not set, relative to the config file (or the working
// directory): one directory, for actions/cache.
const DefaultCacheDir = ".mcp-eval-cache"

// Layer names, in run order.
const (
	Conformance = "conformance"
	Behavior    = "behavior"
	Resilience  = "resilience"
	Telemetry   = "telemetry"
)

var layerNames = []string{Conformance, Behavior, Resilience, Telemetry}

// Deadlines when no source sets one: a Layer 0 run takes seconds, a run
// that calls models takes minutes; neither is ever unbounded.
const (
	DefaultTimeout          = 2 * time.Minute
	DefaultModelRunTimeout  = 30 * time.Minute
	DefaultRequestTimeout   = 30 * time.Second
	DefaultProbeTimeout     = 5 * time.Second
	DefaultConformanceRuns  = 5
	DefaultConformanceLanes = check.DefaultConcurrency // check.Options.Concurrency says why
)

// Env is the world a run sees: the harness's environment, its streams and
// its redactor.
type Env struct {
	LookupEnv func(string) (string, bool)
	// Environ lists the environment (optional): the server-user policy
	// looks for any variable that holds a secret.
	Environ func() []string
	// Workspace is where report paths are relative to (GITHUB_WORKSPACE
	// on a runner, else the working directory).
	Workspace string
	// InAction is true when mcp-eval runs as the GitHub Action.
	InAction bool
	// Redact takes the run's secrets out of every output; Resolve adds
	// the header values and server keys it meets.
	Redact *redact.Redactor
	// Stdout gets progress (the Layer 1 preview), Stderr warnings.
	Stdout, Stderr io.Writer
	// ServerUser, when set, decides who a stdio server runs as instead of
	// the policy: tests that must run a server as root.
	ServerUser func() *transport.RunAs
}

func (e Env) lookup(k string) (string, bool) {
	if e.LookupEnv == nil {
		return "", false
	}
	return e.LookupEnv(k)
}

func (e Env) warnf(format string, a ...any) {
	if e.Stderr != nil {
		fmt.Fprintf(e.Stderr, "mcp-eval: warning: "+format+"\n", a...)
	}
}

// Plan is a whole run, resolved: nothing in it is a default waiting to be
// applied.
type Plan struct {
	Target     target.Target
	TargetDesc string
	// TargetFrom names the setting the server came from, "" for a flag.
	TargetFrom string
	// Build runs once before the server starts (server.build).
	Build  []string
	Layers []string
	// Conformance is Layer 0's runs, lanes, --only and call-tools.
	Conformance conformance.Options
	// ExactToolTokens asks each model's provider to count the tool
	// surface too (tool-tokens: exact).
	ExactToolTokens bool
	Behavior        BehaviorPlan
	// Shard, when set, runs one share of Layers 1 and 2 (and Layer 0 in
	// shard 1 only); the report records it for `mcp-eval report merge`.
	Shard *Shard
	// Prices is the run's one price table (the built-in one, or it with
	// the override file's models): the budget, the spend preview and
	// telemetry all price with it.
	Prices *pricing.Table
	Policy gate.Policy
	// Baseline is the last green report; nil means floors only, and
	// BaselineNote says why.
	Baseline     *report.Report
	BaselineRef  report.ReportRef
	BaselineNote string
	// History are earlier reports (any order; the gate and the trend keep
	// the green ones, the newest gate.history of them): `run --history
	// DIR`, or the action's artifact search.
	History []gate.Historic
	Timeout time.Duration
	Outputs Outputs
	// Notes go into the gate section for the reader.
	Notes []string
	// ServerUserNote says who the server runs as when that is not the
	// obvious choice.
	ServerUserNote string
	Env            Env

	// countTools counts the tool surface's tokens (nil:
	// tokens.Meter.ToolSurface). Tests set it to reach what a count that
	// fails, panics or hangs does to a run.
	countTools func(tools []llm.Tool, models []string) (*report.ToolTokens, error)
}

// BehaviorPlan is Layers 1 and 2's setup.
type BehaviorPlan struct {
	Golden      string // file or directory; "" means nothing to run
	GoldenShown string // how messages name Golden (Settings.GoldenShown)
	Models      []string
	Judge       string
	Runs        int
	MaxSteps    int
	Concurrency int
	Stubs       map[string]string
	CacheDir    string
	Reuse       behavior.Reuse
	Budget      spend.Budget
	RateLimits  map[string]behavior.RateLimit
	Endpoints   map[string]config.Endpoint
	PreviewOnly bool
	// Record and Replay are cassette directories (at most one is set):
	// both bypass the result cache, so that every model call is made, or
	// answered, in the run.
	Record, Replay string
}

// Outputs are the files a run writes; "" writes none of that kind.
type Outputs struct {
	Report, JUnit, Markdown, HTML string
	// RunURL links the Markdown to the workflow run.
	RunURL string
}

// Has reports whether the plan runs a layer.
func (p *Plan) Has(layer string) bool {
	for _, l := range p.Layers {
		if l == layer {
			return true
		}
	}
	return false
}

// Resolve turns stacked settings into a plan: it checks every value, opens
// nothing and starts nothing, except that it reads the local baseline. An
// error names the setting and what to do.
func Resolve(s Settings, env Env) (*Plan, error) {
	if env.Redact == nil {
		env.Redact = redact.FromEnv(env.Environ, env.LookupEnv)
	}
	if env.Workspace == "" {
		env.Workspace, _ = os.Getwd()
	}
	for _, k := range s.KeyEnvs {
		if v, ok := env.lookup(k); ok {
			env.Redact.Add(v)
		}
	}
	p := &Plan{Env: env, Notes: append([]string(nil), s.Notes...)}
	if err := p.resolveTarget(s); err != nil {
		return nil, err
	}
	layers, err := ResolveLayers(s.Layers)
	if err != nil {
		return nil, err
	}
	p.Layers = layers
	if len(s.Layers) == 0 && s.Golden != "" && !p.Has(Behavior) && !p.Has(Resilience) {
		// A golden set named and never run (and a misspelt path never
		// noticed) read as Layer 1 passing.
		note := fmt.Sprintf("golden: %s is set, but no layer that runs it is: layers: is not set anywhere, so only Layer 0 ran (set layers: [conformance, behavior], or --layers 0,1)", s.Golden)
		if _, err := os.Stat(s.Golden); err != nil {
			note += "; and it cannot be read: " + err.Error()
		}
		p.Notes = append(p.Notes, note)
	}
	if p.Shard, err = ParseShard(s.Shard); err != nil {
		return nil, err
	}
	if p.Shard != nil && p.Shard.Index > 1 && p.Has(Conformance) {
		// Layer 0 is cheap and not split: shard 1 runs it for the run.
		p.Layers = p.Layers[1:]
		p.Notes = append(p.Notes, fmt.Sprintf("shard %s: Layer 0 runs in shard 1 only", p.Shard))
	}
	if err := p.resolveConformance(s); err != nil {
		return nil, err
	}
	if err := p.resolveBehavior(s); err != nil {
		return nil, err
	}
	if p.Prices, err = resolvePrices(s); err != nil {
		return nil, err
	}
	if p.Policy, err = s.policy(); err != nil {
		return nil, err
	}
	p.Timeout = s.Timeout
	if p.Timeout == 0 {
		p.Timeout = DefaultTimeout
		if p.Has(Behavior) || p.Has(Resilience) {
			p.Timeout = DefaultModelRunTimeout
		}
	}
	p.Conformance.RequestTimeout, p.Conformance.ProbeTimeout = cmp.Or(s.RequestTimeout, DefaultRequestTimeout), cmp.Or(s.ProbeTimeout, DefaultProbeTimeout)
	if p.Timeout < 0 || p.Conformance.RequestTimeout < 0 || p.Conformance.ProbeTimeout < 0 {
		return nil, errors.New("--timeout, --request-timeout and --probe-timeout must be positive")
	}
	p.Outputs = Outputs{Report: s.Report, JUnit: s.JUnit, Markdown: s.Markdown, HTML: s.HTML, RunURL: s.RunURL}
	if s.Baseline != "" {
		p.LoadBaseline(s.Baseline)
	}
	if s.HistoryDir != "" {
		p.History = append(p.History, LoadHistory(p.Env.Workspace, s.HistoryDir, func(msg string) { p.Env.warnf("%s", msg) })...)
	}
	return p, nil
}

// resolveTarget makes the target: the URL and headers, or the argv, the
// allowlisted environment and the user the server runs as.
// targetNamed is the server as errors name it: where it is, and the
// setting that said so when that was not a flag.
func (p *Plan) targetNamed() string {
	d := "the server started by " + p.Target.Describe()
	if p.Target.Kind() == "http" {
		d = "the server at " + p.Target.Describe()
	}
	if p.TargetFrom != "" {
		d += " (" + p.TargetFrom + ")"
	}
	return d
}

func (p *Plan) resolveTarget(s Settings) error {
	switch {
	case s.URL == "" && s.Command == "":
		return errors.New("no server to test: name the server under test with --url http://host:port/mcp or --cmd \"server args…\" (in the action: the server-url or server-command input), or set server.url or server.command in mcp-eval.yaml")
	case s.URL != "" && s.Command != "":
		return errors.New("--url and --cmd (server.url and server.command, the server-url and server-command inputs) are exclusive: test one server at a time")
	case s.MaxResponseBytes != 0 && s.MaxResponseBytes < 1024:
		return errors.New("--max-response-bytes must be at least 1024")
	}
	p.TargetFrom = s.ServerFrom
	maxBytes := s.MaxResponseBytes
	if maxBytes == 0 {
		maxBytes = transport.DefaultMaxMessageBytes
	}
	env := p.Env
	if _, err := target.ParseUserPolicy(s.User); err != nil {
		return fmt.Errorf("server user (--server-user, server.user, or the server-user input): %w", err)
	}
	if s.URL != "" {
		if len(s.ServerEnv) > 0 || len(s.PassEnv) > 0 || s.Build != "" {
			return errors.New("--server-env, --pass-env and server.build only apply to a stdio server (--cmd / server.command)")
		}
		h := http.Header{}
		for _, kv := range s.Headers {
			k, v, ok := strings.Cut(kv, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
				return fmt.Errorf("invalid --header (or server.headers entry) %q: want \"Name: value\" on one line", redactHeader(kv))
			}
			v, err := config.ExpandEnv(v, env.lookup)
			if err != nil {
				return fmt.Errorf("header %s: %w", k, err)
			}
			env.Redact.Add(v)
			h.Add(k, v)
		}
		if _, err := transport.NewHTTP(transport.HTTPConfig{URL: s.URL}); err != nil {
			return err
		}
		p.Target = target.Target{URL: s.URL, Header: h, MaxMessageBytes: maxBytes}
		p.TargetDesc = "http " + s.URL
		return nil
	}
	if len(s.Headers) > 0 {
		return errors.New("--header (server.headers) only applies to a --url server (stdio has no headers)")
	}
	argv, err := SplitCommand(s.Command)
	if err != nil {
		return fmt.Errorf("server command: %w", err)
	}
	srvEnv, err := transport.ServerEnv(s.PassEnv, s.ServerEnv, env.lookup)
	if err != nil {
		return err
	}
	env.Redact.AddServerEnv(srvEnv)
	runAs, why, note, err := p.serverUser(s.User, s.KeyEnvs)
	if err != nil {
		return err
	}
	p.ServerUserNote = note
	p.Target = target.Target{Argv: argv, Dir: s.Cwd, Env: srvEnv, MaxMessageBytes: maxBytes, RunAs: runAs, Why: why}
	p.TargetDesc = "stdio " + s.Command
	if s.Build != "" {
		if p.Build, err = SplitCommand(s.Build); err != nil {
			return fmt.Errorf("server.build: %w", err)
		}
	}
	return nil
}

// resolveConformance checks Layer 0's settings.
func (p *Plan) resolveConformance(s Settings) error {
	runs, lanes := cmp.Or(s.ConformanceRuns, DefaultConformanceRuns), cmp.Or(s.ConformanceConcurrency, DefaultConformanceLanes)
	if runs < 1 || runs > 100 {
		return fmt.Errorf("runs per MUST check must be 1..100, not %d (--conformance-runs, conformance.runs)", runs)
	}
	if lanes < 1 || lanes > 64 {
		return fmt.Errorf("Layer 0 concurrency must be 1..64, not %d (--conformance-concurrency)", lanes)
	}
	var only []string
	for _, o := range s.Only {
		for _, id := range strings.Split(o, ",") {
			if id = strings.TrimSpace(id); id != "" {
				only = append(only, id)
			}
		}
	}
	// A typo must not silently run nothing: --only is checked against
	// the registry before anything starts.
	if err := conformance.KnownIDs(only); err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	if err := config.CheckToolTokens(s.ToolTokens); err != nil {
		return fmt.Errorf("%w (--tool-tokens, the tool-tokens input, conformance.tool-tokens)", err)
	}
	p.ExactToolTokens = s.ToolTokens == config.ToolTokensExact
	p.Conformance.Runs, p.Conformance.Concurrency, p.Conformance.Only = runs, lanes, only
	p.Conformance.CallTools = append([]string(nil), s.CallTools...)
	return nil
}

// resolveBehavior checks Layers 1 and 2's settings and picks the models
// for the trigger.
func (p *Plan) resolveBehavior(s Settings) error {
	b := BehaviorPlan{Golden: s.Golden, GoldenShown: s.GoldenShown, Judge: s.Judge, Runs: s.Runs, MaxSteps: s.MaxSteps, Concurrency: s.Concurrency,
		Stubs: s.Stubs, CacheDir: s.CacheDir, RateLimits: s.RateLimits, Endpoints: s.Endpoints, PreviewOnly: s.PreviewOnly,
		Budget: spend.Budget{MaxTokens: s.MaxTokens, MaxUSD: s.MaxUSD}}
	for _, v := range []struct {
		name string
		val  int
	}{{"runs per case (--runs, eval.runs)", s.Runs}, {"--max-steps", s.MaxSteps}, {"--concurrency", s.Concurrency}, {"--max-tokens", s.MaxTokens}} {
		if v.val < 0 {
			return fmt.Errorf("%s must not be negative", v.name)
		}
	}
	if s.Runs > 100 {
		return fmt.Errorf("runs per case must be 1..100, not %d (--runs, eval.runs)", s.Runs)
	}
	if s.MaxUSD < 0 {
		return errors.New("--max-usd must not be negative")
	}
	b.Models = append([]string(nil), s.Models...)
	if len(b.Models) == 0 && s.ModelSets != nil {
		b.Models = modelsFor(*s.ModelSets, s.Trigger, s.Schedule)
	}
	if len(b.Models) == 1 && b.Models[0] == "none" {
		b.Models = nil
	}
	if s.Reuse != nil {
		b.Reuse = *s.Reuse
	}
	if b.CacheDir == "" {
		b.CacheDir = filepath.Join(p.Env.Workspace, DefaultCacheDir)
	}
	if err := p.resolveCassette(s, &b); err != nil {
		return err
	}
	p.Behavior = b
	return nil
}

// ReplayHash is the hash of the cassette the run replays, "" for a live
// run: the baseline search picks a report replayed from the same one.
func (p *Plan) ReplayHash() (string, error) {
	if p.Behavior.Replay == "" {
		return "", nil
	}
	return cassette.HashFile(p.Behavior.Replay)
}

// resolveCassette checks --record and --replay, and turns a fork pull
// request's skipped Layers 1 and 2 into a replay when the config names a
// committed cassette.
func (p *Plan) resolveCassette(s Settings, b *BehaviorPlan) error {
	b.Record, b.Replay = s.Record, s.Replay
	if b.Record != "" && b.Replay != "" {
		return errors.New("--record and --replay (the record and replay inputs) are exclusive: record with the models, or replay without them")
	}
	if s.ForkReplay && b.Replay == "" && b.Record == "" && s.Cassette != "" {
		b.Replay = s.Cassette
		for _, l := range []string{Behavior, Resilience} {
			if !p.Has(l) {
				p.Layers = append(p.Layers, l)
			}
		}
		p.Layers, _ = ResolveLayers(p.Layers)
		p.Notes = append(p.Notes, fmt.Sprintf("Layers 1 and 2 were replayed from the committed cassette %s (eval.cassette), since a fork pull request has no model keys: the models' answers are the recorded ones, the tool calls went to this server", report.RelPath(p.Env.Workspace, abs(s.Cassette))))
	}
	if b.Replay != "" && (b.Budget != spend.Budget{}) {
		// Nothing is spent: a cap would only stop runs the recording made,
		// and they would go stale.
		b.Budget = spend.Budget{}
		p.Notes = append(p.Notes, "the budget (--max-tokens, --max-usd, eval.budget) does not apply to a replay: no model is called")
	}
	if (b.Record != "" || b.Replay != "") && !p.Has(Behavior) && !p.Has(Resilience) {
		p.Notes = append(p.Notes, "a cassette was named (--record, --replay), but neither Layer 1 nor Layer 2 runs: no model is called, so nothing was recorded or replayed")
		b.Record, b.Replay = "", ""
	}
	return nil
}

// resolvePrices builds the run's price table. A bad override file is a
// usage error before anything runs: a price silently dropped would make
// the budget, the preview and the report cost nothing or unknown.
func resolvePrices(s Settings) (*pricing.Table, error) {
	t := pricing.Default()
	if s.Prices == "" {
		return t, nil
	}
	o, err := pricing.Load(s.Prices)
	if err != nil {
		return nil, fmt.Errorf("price override file (%s): %w", cmp.Or(s.PricesFrom, "--prices"), err)
	}
	return t.With(o), nil
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

// ResolveLayers turns config or flag values (auto, all, 0-3, names) into
// layer names in run order; auto outside the action means Layer 0.
func ResolveLayers(vals []string) ([]string, error) {
	if len(vals) == 0 {
		return []string{Conformance}, nil
	}
	seen := map[string]bool{}
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			switch part = strings.TrimSpace(part); part {
			case "":
			case "auto", "0", Conformance:
				seen[Conformance] = true
			case "1", Behavior, "behaviour":
				seen[Behavior] = true
			case "2", Resilience:
				seen[Resilience] = true
			case "3", Telemetry:
				seen[Telemetry] = true
			case "all":
				for _, l := range layerNames {
					seen[l] = true
				}
			default:
				return nil, fmt.Errorf("unknown layer %q: use auto, all, 0-3 or conformance, behavior, resilience, telemetry", part)
			}
		}
	}
	var out []string
	for _, l := range layerNames {
		if seen[l] {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		out = []string{Conformance}
	}
	return out, nil
}

// LoadBaseline reads a local baseline report; an unusable one is a
// warning and the gate falls back to floors, never a crash.
func (p *Plan) LoadBaseline(path string) {
	base, err := report.Load(path)
	if err != nil {
		p.Env.warnf("baseline %s is unusable (%s); gating on floors only", path, Brief(err))
		p.Baseline, p.BaselineNote = nil, fmt.Sprintf("baseline %s is unusable (%s)", report.RelPath(p.Env.Workspace, abs(path)), Brief(err))
		return
	}
	p.Baseline, p.BaselineRef, p.BaselineNote = base, Ref(p.Env.Workspace, path, base), ""
}

// Ref points at a report read from path.
func Ref(ws, path string, r *report.Report) report.ReportRef {
	return report.ReportRef{Path: report.RelPath(ws, abs(path)), Commit: r.Run.Commit, WorkflowRunID: r.Run.WorkflowRunID,
		FinishedAt: r.Run.FinishedAt, ToolSurfaceHash: r.ToolSurfaceHash}
}

// Brief is an error on one line, with at most its first detail: enough
// for a warning and a note in the report, where a schema error's full
// list would drown the verdict.
func Brief(err error) string {
	lines := strings.Split(err.Error(), "\n")
	if len(lines) > 2 {
		lines = append(lines[:2], "…")
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " ")
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// redactHeader keeps a header's name and hides its value, which is often a
// token.
func redactHeader(kv string) string {
	if k, _, ok := strings.Cut(kv, ":"); ok {
		return k + ": ***"
	}
	return "***"
}
