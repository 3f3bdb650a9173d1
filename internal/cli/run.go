package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/otelexport"
	"github.com/mcp-eval/mcp-eval-action/pkg/pricing"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

const runExamples = `  mcp-eval run                                   # reads ./mcp-eval.yaml
  mcp-eval run --config golden-examples/mcp-eval.yaml
  mcp-eval run --cmd "node dist/server.js" --baseline green.json --out report.json
`

// layerNames are the four layers in order; "auto" outside Actions means
// Layer 0 (the layers that need models are picked by the action's event).
var layerNames = []string{"conformance", "behavior", "resilience", "telemetry"}

// pipeline is one whole run, after flag > input/environment > file
// precedence has been applied.
type pipeline struct {
	target       conformance.Target
	targetDesc   string
	layers       []string
	check        check.Options
	callTools    []string
	policy       gate.Policy
	baseline     *report.Report
	baselineRef  report.ReportRef
	baselineNote string
	reportPath   string
	junitPath    string
	markdownPath string
	runURL       string
	timeout      time.Duration
	reqTimeout   time.Duration
	probeTimeout time.Duration
	notes        []string
	verbose      bool
	// build runs once before the server starts (server.build).
	build []string
	// rec measures every layer for Layer 3 (set by runPipeline).
	rec      *telemetry.Recorder
	htmlPath string
	// behavior is Layer 1's setup.
	behavior behaviorSetup
}

// runPipeline runs the selected layers, gates the result against the
// baseline, writes the outputs and prints the summary. The error is a
// harness error (exit 2); a regression is the report's gate verdict.
func (c *Command) runPipeline(ctx context.Context, pl *pipeline) (*report.Report, error) {
	ws := workspace(c)
	started := time.Now().UTC()
	if len(pl.build) > 0 {
		if err := c.buildServer(ctx, pl); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, pl.timeout)
	defer cancel()
	pl.rec = telemetry.NewRecorder(telemetry.Options{Prices: pricing.Default()})
	var rep *report.Report
	if contains(pl.layers, "conformance") {
		l0, tools, err := conformance.Run(ctx, pl.target, conformance.Options{Options: pl.check, CallTools: pl.callTools, RequestTimeout: pl.reqTimeout, ProbeTimeout: pl.probeTimeout, Observer: pl.rec.ObserveMCP})
		if err != nil {
			return nil, fmt.Errorf("could not test %s: %w", pl.targetDesc, err)
		}
		rep = report.FromConformance(l0, ws)
		rep.ToolSurfaceHash = report.ToolSurfaceHash(mcpclient.ToolSurfaces(tools))
	} else {
		rep = report.New()
		rep.Server = report.Server{Target: pl.targetDesc, Transport: pl.target.Kind()}
	}
	var missing, l1notes []string
	baselineOnly := false
	for _, l := range pl.layers {
		switch l {
		case "conformance", "telemetry":
			// Layer 3 runs nothing of its own: it measures the others.
		case "behavior":
			var err error
			l1notes, baselineOnly, err = c.runBehavior(ctx, pl, rep)
			if err != nil {
				return nil, err
			}
		case "resilience":
			notes, err := c.runResilience(ctx, pl, rep)
			if err != nil {
				return nil, err
			}
			l1notes = append(l1notes, notes...)
		default:
			missing = append(missing, l)
		}
	}
	rep.Run = c.runInfo(started)
	if contains(pl.layers, "telemetry") {
		t := pl.rec.Summarize()
		rep.Telemetry = &t
	}
	in := gate.Input{New: rep, Baseline: pl.baseline, BaselineRef: pl.baselineRef, BaselineNote: pl.baselineNote, Now: time.Now()}
	if baselineOnly {
		// The lexical baseline is a yardstick for the descriptions, not a
		// model: its results are shown, never gated.
		gated := *rep
		gated.Behavior = nil
		in.New = &gated
	}
	rep.Gate = gate.Evaluate(in, pl.policy)
	if !baselineOnly {
		settleLayer1(rep.Gate, rep.Behavior)
	}
	rep.Gate.Notes = append(rep.Gate.Notes, l1notes...)
	for _, l := range missing {
		// Said plainly rather than reported as a pass: these layers are
		// not in this version of mcp-eval yet.
		rep.Gate.Notes = append(rep.Gate.Notes, fmt.Sprintf("layer %q was selected but is not available in this version of mcp-eval; nothing was measured for it", l))
	}
	rep.Gate.Notes = append(rep.Gate.Notes, pl.notes...)
	if rep.Telemetry != nil {
		telemetry.Compare(rep, pl.baseline, nil)
	}
	c.exportTraces(ctx, rep, pl.rec)
	// Every output below (and the action's summary, comment and
	// annotations, made from the returned report) is made from the
	// redacted report: the server may have echoed a secret it was given.
	if err := c.redact.JSON(rep); err != nil {
		return rep, err
	}
	if pl.reportPath != "" {
		if err := report.Save(pl.reportPath, rep); err != nil {
			return rep, err
		}
	}
	if pl.junitPath != "" {
		if err := writeFile(pl.junitPath, func(f *os.File) error { return render.ReportJUnit(f, rep) }); err != nil {
			return rep, err
		}
	}
	if pl.markdownPath != "" {
		if err := writeFile(pl.markdownPath, func(f *os.File) error {
			return render.Markdown(f, rep, render.MarkdownOptions{RunURL: pl.runURL})
		}); err != nil {
			return rep, err
		}
	}
	if pl.htmlPath != "" {
		if err := writeFile(pl.htmlPath, func(f *os.File) error { return render.HTML(f, rep, render.HTMLOptions{}) }); err != nil {
			return rep, err
		}
	}
	if rep.Conformance != nil {
		render.ReportText(c.Stdout, rep, render.TextOptions{Verbose: pl.verbose, Only: []render.Section{render.SectionConformance}})
		fmt.Fprintln(c.Stdout)
	}
	matrixText(c.Stdout, rep)
	for _, l := range missing {
		fmt.Fprintf(c.Stdout, "layer %s: not available in this version; nothing measured\n", l)
	}
	render.GateText(c.Stdout, rep.Gate)
	if pl.reportPath != "" {
		fmt.Fprintf(c.Stdout, "report: %s\n", report.RelPath(ws, abs(pl.reportPath)))
	}
	return rep, nil
}

// exitFor maps a gated report to the exit code: 1 for a regression (and
// for inconclusive when asked), 0 otherwise.
func exitFor(rep *report.Report, failOnInconclusive bool) int {
	switch rep.Gate.Verdict {
	case report.GateFail:
		return ExitFindings
	case report.GateInconclusive:
		if failOnInconclusive {
			return ExitFindings
		}
	}
	return ExitOK
}

// runInfo fills the run metadata from the Actions environment, when there.
func (c *Command) runInfo(started time.Time) report.Run {
	get := func(k string) string {
		if c.LookupEnv == nil {
			return ""
		}
		v, _ := c.LookupEnv(k)
		return v
	}
	r := report.Run{Commit: get("GITHUB_SHA"), Ref: get("GITHUB_REF"), Event: get("GITHUB_EVENT_NAME"), Repository: get("GITHUB_REPOSITORY"),
		HarnessVersion: Version, StartedAt: started, FinishedAt: time.Now().UTC()}
	if !commitRE.MatchString(r.Commit) {
		r.Commit = "" // not a commit id: never let the environment break the report
	}
	r.WorkflowRunID, _ = strconv.ParseInt(get("GITHUB_RUN_ID"), 10, 64)
	r.RunAttempt, _ = strconv.Atoi(get("GITHUB_RUN_ATTEMPT"))
	return r
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// resolveLayers turns config or flag values (auto, 0-3, names) into layer
// names; auto outside the action means Layer 0.
func resolveLayers(vals []string) ([]string, error) {
	if len(vals) == 0 {
		return []string{"conformance"}, nil
	}
	seen := map[string]bool{}
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			switch part {
			case "", "auto":
				if part == "auto" {
					seen["conformance"] = true
				}
			case "0", "conformance":
				seen["conformance"] = true
			case "1", "behavior", "behaviour":
				seen["behavior"] = true
			case "2", "resilience":
				seen["resilience"] = true
			case "3", "telemetry":
				seen["telemetry"] = true
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
	return out, nil
}

// fromConfig builds the pipeline's server and settings from mcp-eval.yaml;
// paths in the file are relative to the file's directory.
func (c *Command) fromConfig(cfg *config.Config, dir string, pl *pipeline) error {
	// Model keys are named by key-env, whatever the variable is called.
	for _, ep := range cfg.Endpoints {
		if v, ok := c.LookupEnv(ep.KeyEnv); ok && ep.KeyEnv != "" {
			c.redact.add(v)
		}
	}
	s := cfg.Server
	switch {
	case s.URL != "":
		h, err := c.configHeaders(s.Headers)
		if err != nil {
			return err
		}
		pl.target = conformance.Target{URL: s.URL, Header: h}
		pl.targetDesc = "http " + s.URL
	case s.Command != "":
		argv, err := SplitCommand(s.Command)
		if err != nil {
			return fmt.Errorf("server.command: %w", err)
		}
		var set []string
		for _, k := range sortedKeys(s.Env) {
			set = append(set, k+"="+s.Env[k])
		}
		env, err := transport.ServerEnv(s.PassEnv, set, c.LookupEnv)
		if err != nil {
			return err
		}
		c.redact.addServerEnv(env)
		cwd := filepath.Join(dir, s.Cwd)
		pl.target = conformance.Target{Argv: argv, Dir: cwd, Env: env, RunAs: c.serverUser()}
		pl.targetDesc = "stdio " + s.Command
		if s.Build != "" {
			if pl.build, err = SplitCommand(s.Build); err != nil {
				return fmt.Errorf("server.build: %w", err)
			}
		}
	}
	if cfg.Conformance.Runs > 0 {
		pl.check.Runs = cfg.Conformance.Runs
	}
	pl.callTools = append(pl.callTools, cfg.Conformance.CallTools...)
	pl.check.Only = append(pl.check.Only, cfg.Conformance.Only...)
	if cfg.Gate.MaxDrop != nil {
		pl.policy.MaxDrop = *cfg.Gate.MaxDrop
	}
	pl.policy.MaxCostIncrease = cfg.Gate.MaxCostIncrease
	pl.policy.MaxCostPerRun = cfg.Gate.MaxCostPerRun
	if cfg.Gate.History > 0 {
		pl.policy.HistoryDepth = cfg.Gate.History
	}
	pl.policy.FailOnInconclusive = pl.policy.FailOnInconclusive || cfg.Gate.FailOnInconclusive
	behaviorFromConfig(cfg, dir, &pl.behavior)
	if len(cfg.Layers) > 0 {
		layers, err := resolveLayers(cfg.Layers)
		if err != nil {
			return err
		}
		pl.layers = layers
	}
	out := cfg.Output
	if out.Report != "" {
		pl.reportPath = filepath.Join(dir, out.Report)
	}
	if out.JUnit != "" {
		pl.junitPath = filepath.Join(dir, out.JUnit)
	}
	if out.Markdown != "" {
		pl.markdownPath = filepath.Join(dir, out.Markdown)
	}
	if out.HTML != "" {
		pl.htmlPath = filepath.Join(dir, out.HTML)
	}
	if cfg.Baseline.File != "" {
		pl.baselineNote = ""
		return c.loadBaseline(filepath.Join(dir, cfg.Baseline.File), pl)
	}
	return nil
}

func (c *Command) configHeaders(h map[string]string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, k := range sortedKeys(h) {
		v, err := config.ExpandEnv(h[k], c.LookupEnv)
		if err != nil {
			return nil, fmt.Errorf("server.headers.%s: %w", k, err)
		}
		c.redact.add(v)
		out[k] = []string{v}
	}
	return out, nil
}

// loadBaseline reads a local baseline report; an unusable one is a warning
// and the gate falls back to floors, never a crash.
func (c *Command) loadBaseline(path string, pl *pipeline) error {
	base, err := report.Load(path)
	if err != nil {
		fmt.Fprintf(c.Stderr, "mcp-eval: warning: baseline %s is unusable (%s); gating on floors only\n", sanitize(path), sanitizeText(brief(err)))
		pl.baselineNote = "baseline " + path + " is unusable"
		return nil
	}
	pl.baseline = base
	pl.baselineRef = ref(workspace(c), path, base)
	return nil
}

func runRun(ctx context.Context, c *Command, args []string) int {
	var sf serverFlags
	var (
		cfgPath, layers, baseline, out, junit, markdown, htmlOut, maxDrop string
		goldenPath, models                                                string
		runs                                                              int
		callTools                                                         multiFlag
		failInc, verbose, fresh                                           bool
	)
	fs := c.newFlagSet("run", "[--config mcp-eval.yaml] [flags]", runExamples)
	sf.register(fs)
	fs.StringVar(&cfgPath, "config", "", "configuration file (default: mcp-eval.yaml in the current directory, when present)")
	fs.StringVar(&layers, "layers", "", "layers to run: auto, all, or a comma list of 0-3 / conformance,behavior,resilience,telemetry (default: from the config, else Layer 0)")
	fs.IntVar(&runs, "runs", 0, "runs of each MUST check (default: from the config, else 5)")
	fs.Var(&callTools, "call-tool", "allow calling this tool `NAME` although it is not annotated readOnlyHint: true (repeatable)")
	fs.StringVar(&baseline, "baseline", "", "report.json of the last green run to compare with (default: floors only)")
	fs.StringVar(&maxDrop, "max-drop", "", "largest score drop that is not a regression, 0.02 or 2% (default: from the config, else 0.02)")
	fs.BoolVar(&failInc, "fail-on-inconclusive", false, "exit 1 when the gate cannot tell a drop from noise")
	fs.StringVar(&out, "out", "", "write the report to `FILE` (default: from the config, else report.json)")
	fs.StringVar(&junit, "junit", "", "also write JUnit XML to `FILE`")
	fs.StringVar(&markdown, "markdown", "", "also write the Markdown summary to `FILE`")
	fs.StringVar(&htmlOut, "html", "", "also write the self-contained HTML report to `FILE`")
	fs.BoolVar(&verbose, "v", false, "list passing checks too")
	fs.StringVar(&goldenPath, "golden", "", "Layer 1 golden set, a file or directory (default: golden: in the config)")
	fs.StringVar(&models, "models", "", "Layer 1 models, comma list (default: models.default in the config; none: the baseline, no LLM)")
	fs.BoolVar(&fresh, "fresh", false, "Layer 1: make every model call anew instead of reusing stored results")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintln(c.Stderr, "mcp-eval run:", sanitizeText(explain(err)))
		return ExitError
	}
	pl := &pipeline{policy: gate.DefaultPolicy(), layers: []string{"conformance"}, check: check.Options{Runs: 5}, timeout: sf.timeout, verbose: verbose, reportPath: "report.json"}
	pl.behavior.cacheDir = DefaultCacheDir
	cfgDir := "."
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
		cfgDir = filepath.Dir(cfgPath)
		if err := c.fromConfig(cfg, cfgDir, pl); err != nil {
			return fail(err)
		}
	}
	// Flags win over the file.
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
		return fail(errors.New("no server to test: set server.url or server.command in mcp-eval.yaml, or pass --url / --cmd"))
	}
	pl.timeout, pl.reqTimeout, pl.probeTimeout = sf.timeout, sf.requestTimeout, sf.probeTimeout
	if layers != "" {
		ls, err := resolveLayers([]string{layers})
		if err != nil {
			return fail(err)
		}
		pl.layers = ls
	}
	if contains(pl.layers, "behavior") && !flagSet(fs, "timeout") {
		pl.timeout = defaultModelRunTimeout
	}
	if runs != 0 {
		if runs < 1 || runs > 100 {
			return fail(errors.New("--runs must be 1..100"))
		}
		pl.check.Runs = runs
	}
	pl.callTools = append(pl.callTools, callTools...)
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
	if htmlOut != "" {
		pl.htmlPath = htmlOut
	}
	if baseline != "" {
		if err := c.loadBaseline(baseline, pl); err != nil {
			return fail(err)
		}
	}
	if err := knownIDs(pl.check.Only); err != nil {
		return fail(err)
	}
	if goldenPath != "" {
		pl.behavior.golden = goldenPath
	}
	if models != "" {
		pl.behavior.models = splitList(models)
	}
	if fresh {
		pl.behavior.reuse = behavior.ReuseNothing
	}
	rep, err := c.runPipeline(ctx, pl)
	if err != nil {
		return fail(err)
	}
	return exitFor(rep, pl.policy.FailOnInconclusive)
}

// buildTimeout bounds server.build: a build that hangs must not hang CI.
const buildTimeout = 10 * time.Minute

// buildServer runs server.build in the server's directory with the
// server's environment, and shows the end of its output when it fails.
func (c *Command) buildServer(ctx context.Context, pl *pipeline) error {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, pl.build[0], pl.build[1:]...)
	cmd.Dir, cmd.Env = pl.target.Dir, pl.target.Env
	var out tailWriter
	cmd.Stdout, cmd.Stderr = &out, &out
	fmt.Fprintf(c.Stderr, "mcp-eval: building the server: %s\n", sanitize(strings.Join(pl.build, " ")))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("server.build %q failed: %v\n%s", strings.Join(pl.build, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// tailWriter keeps the last 16 KiB written.
type tailWriter struct{ b []byte }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 16<<10 {
		t.b = t.b[len(t.b)-16<<10:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string { return string(t.b) }

// exportTraces sends the run's spans over OTLP/HTTP when the standard
// OTEL_EXPORTER_OTLP_* variables name an endpoint. Export is best effort:
// a collector that is down is a warning, never a failed run.
func (c *Command) exportTraces(ctx context.Context, rep *report.Report, rec *telemetry.Recorder) {
	cfg, ok, err := otelexport.FromEnv(c.LookupEnv)
	if err != nil {
		fmt.Fprintf(c.Stderr, "mcp-eval: warning: OTLP export: %s\n", sanitize(err.Error()))
		return
	}
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	exp, err := otelexport.New(ctx, cfg)
	if err == nil {
		err = otelexport.Export(ctx, exp, rep, rec.Events())
		_ = exp.Shutdown(ctx)
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "mcp-eval: warning: OTLP export: %s\n", sanitize(err.Error()))
	}
}
