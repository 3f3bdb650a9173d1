package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/action"
	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// runAction is the GitHub Action's entry point (docs/action.md, "the
// mcp-eval action contract"): inputs and event from the runner's
// environment, the same pipeline as run, then outputs, summary,
// annotations and the sticky comment.
func runAction(ctx context.Context, c *Command, args []string) int {
	fs := c.newFlagSet("action", "", "  (run by action.yml and host/action.yml; reads INPUT_* and GITHUB_* variables)\n")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	getenv := func(k string) string {
		v, _ := c.LookupEnv(k)
		return v
	}
	r := &action.Runner{Getenv: getenv, Environ: c.Environ, Stdout: c.Stdout}
	plan, err := r.Plan()
	if err != nil {
		r.Error("mcp-eval: invalid input", err.Error())
		return ExitError
	}
	r.Announce(plan)
	ws := plan.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	pl := &pipeline{policy: gate.DefaultPolicy(), check: check.Options{Runs: 5}, timeout: defaultActionTimeout,
		reqTimeout: defaultRequestTimeout, probeTimeout: defaultProbeTimeout, runURL: plan.RunURL,
		reportPath: filepath.Join(ws, "report.json"), junitPath: filepath.Join(ws, "mcp-eval-junit.xml"), htmlPath: filepath.Join(ws, "report.html")}
	pl.behavior.cacheDir = filepath.Join(ws, DefaultCacheDir)
	cfgPath := plan.Inputs.Config
	if cfgPath == "" {
		if _, err := os.Stat(filepath.Join(ws, config.DefaultFile)); err == nil {
			cfgPath = filepath.Join(ws, config.DefaultFile)
		}
	} else if !filepath.IsAbs(cfgPath) {
		cfgPath = filepath.Join(ws, cfgPath)
	}
	if cfgPath != "" {
		cfg, err := config.Load(cfgPath)
		if err != nil {
			r.Error("mcp-eval: config", err.Error())
			return ExitError
		}
		if err := c.fromConfig(cfg, filepath.Dir(cfgPath), pl); err != nil {
			r.Error("mcp-eval: config", err.Error())
			return ExitError
		}
	}
	// Inputs win over the file; an empty input leaves the file's value.
	in := plan.Inputs
	var sf serverFlags
	sf.url, sf.cmd, sf.cwd = in.ServerURL, in.ServerCommand, ws
	sf.timeout, sf.requestTimeout, sf.probeTimeout, sf.maxResponse = pl.timeout, pl.reqTimeout, pl.probeTimeout, 4<<20
	if sf.url != "" || sf.cmd != "" {
		t, err := sf.conformanceTarget(c)
		if err != nil {
			r.Error("mcp-eval: server", err.Error())
			return ExitError
		}
		pl.target, pl.targetDesc = t, sf.target()
	}
	if pl.target.URL == "" && len(pl.target.Argv) == 0 {
		r.Error("mcp-eval: no server", "set the server-url or server-command input, or server in mcp-eval.yaml")
		return ExitError
	}
	pl.layers = nil
	for _, l := range plan.Layers {
		pl.layers = append(pl.layers, l.String())
	}
	if in.Runs > 0 {
		pl.check.Runs = in.Runs
		pl.behavior.runs = in.Runs
	}
	// Layer 1: the models input, else the config's list for this trigger;
	// a schedule makes every model call anew (its point is to see the
	// model change under you) but reuses judge verdicts.
	if len(plan.Models) > 0 {
		pl.behavior.models = append([]string(nil), plan.Models...)
	} else {
		pl.behavior.models = modelsFor(pl.behavior.modelSets, string(plan.Trigger), plan.Schedule)
	}
	if plan.Trigger == action.TriggerSchedule {
		pl.behavior.reuse = behavior.ReuseVerdicts
	}
	if in.Golden != "" {
		pl.behavior.golden = filepath.Join(ws, in.Golden)
	}
	if in.MaxDrop != nil {
		pl.policy.MaxDrop = *in.MaxDrop
	}
	if err := pl.policy.Validate(); err != nil {
		r.Error("mcp-eval: max-drop", err.Error())
		return ExitError
	}
	pl.notes = append(pl.notes, plan.Notes...)
	base := r.Baseline(ctx, plan, validateReport, acceptBaseline(pl.layers))
	if base.Report != nil {
		if b, err := report.Parse(base.Report); err == nil {
			pl.baseline = b
			pl.baselineRef = report.ReportRef{Path: base.Source, Commit: b.Run.Commit, WorkflowRunID: b.Run.WorkflowRunID, FinishedAt: b.Run.FinishedAt, ToolSurfaceHash: b.ToolSurfaceHash}
		}
	} else {
		pl.baselineNote = base.Note
	}
	rep, err := c.runPipeline(ctx, pl)
	if err != nil {
		r.Error("mcp-eval", err.Error())
		return ExitError
	}
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, render.MarkdownOptions{RunURL: plan.RunURL}); err != nil {
		r.Error("mcp-eval: summary", err.Error())
		return ExitError
	}
	res := action.Result{Verdict: rep.Gate.Verdict, Passed: rep.Gate.Verdict != report.GateFail, ReportPath: pl.reportPath,
		MarkdownBody: md.String(), Annotations: annotations(rep), Scores: scores(rep)}
	if _, err := r.Publish(ctx, plan, res); err != nil {
		fmt.Fprintln(c.Stderr, "mcp-eval action:", err)
		return ExitError
	}
	return exitFor(rep, pl.policy.FailOnInconclusive)
}

// Deadlines of an action run: generous, since CI machines are slow, but
// never unbounded.
const (
	defaultActionTimeout  = 30 * time.Minute
	defaultRequestTimeout = 30 * time.Second
	defaultProbeTimeout   = 10 * time.Second
)

func validateReport(b []byte) error {
	_, err := report.Parse(b)
	return err
}

// acceptBaseline takes a run's report as the baseline only when it passed
// the gate (an inconclusive run never becomes a baseline) and holds the
// layers this run compares.
func acceptBaseline(layers []string) func([]byte) (bool, string) {
	return func(b []byte) (bool, string) {
		rep, err := report.Parse(b)
		if err != nil {
			return false, "unreadable report: " + brief(err)
		}
		if rep.Gate == nil || rep.Gate.Verdict != report.GatePass {
			return false, "its gate verdict is not pass"
		}
		for _, l := range layers {
			switch {
			case l == "conformance" && rep.Conformance == nil,
				l == "behavior" && rep.Behavior == nil,
				l == "resilience" && rep.Resilience == nil:
				return false, "it has no " + l + " results"
			}
		}
		return true, ""
	}
}

// annotations are the failed MUST checks and regressions, as errors.
func annotations(rep *report.Report) []action.Annotation {
	var out []action.Annotation
	if rep.Conformance != nil {
		for _, r := range rep.Conformance.Checks {
			if r.Level == check.Must && (r.Verdict == check.Failed || r.Verdict == check.Errored) {
				out = append(out, action.Annotation{Title: r.ID + " " + r.Doc, Message: r.Outcome.Message + " (fix: " + r.Fix + ")"})
			}
		}
	}
	if rep.Gate != nil {
		for _, it := range rep.Gate.Items {
			if it.Status == report.ItemFail {
				out = append(out, action.Annotation{Title: "regression " + it.Subject, Message: it.Reason})
			}
		}
	}
	return out
}

// scores are the main number of each layer that ran, single-line.
func scores(rep *report.Report) map[string]string {
	out := map[string]string{}
	if c := rep.Conformance; c != nil {
		pass, total := 0, 0
		for _, r := range c.Checks {
			if r.Level != check.Must || r.Verdict == check.Skipped {
				continue
			}
			total++
			if r.Verdict == check.Passed || r.Verdict == check.Warned {
				pass++
			}
		}
		out["conformance"] = fmt.Sprintf("%d/%d", pass, total)
	}
	if b := rep.Behavior; b != nil {
		var k, n int
		for _, r := range b.Results {
			k, n = k+r.Passed.K, n+r.Passed.N
		}
		out["behavior"] = fmt.Sprintf("%d/%d", k, n)
	}
	return out
}
