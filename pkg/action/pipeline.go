package action

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Deadlines of an action run: generous, since CI machines are slow, but
// never unbounded.
const (
	defaultTimeout        = 30 * time.Minute
	defaultRequestTimeout = 30 * time.Second
	defaultProbeTimeout   = 10 * time.Second
)

// Defaults are the action's defaults, the weakest source: the outputs the
// workflow uploads, in the workspace.
func (p Plan) Defaults() pipeline.Settings {
	ws := p.Workspace
	return pipeline.Settings{Timeout: defaultTimeout, RequestTimeout: defaultRequestTimeout, ProbeTimeout: defaultProbeTimeout,
		MaxResponseBytes: 4 << 20, CacheDir: filepath.Join(ws, pipeline.DefaultCacheDir),
		Report: filepath.Join(ws, "report.json"), JUnit: filepath.Join(ws, "mcp-eval-junit.xml"), HTML: filepath.Join(ws, "report.html"),
		RunURL: p.RunURL}
}

// ConfigPath is mcp-eval.yaml's path: the config input, else the
// workspace's file when there is one ("" when there is none).
func (p Plan) ConfigPath(exists func(string) bool) string {
	if c := p.Inputs.Config; c != "" {
		if filepath.IsAbs(c) {
			return c
		}
		return filepath.Join(p.Workspace, c)
	}
	if def := filepath.Join(p.Workspace, config.DefaultFile); exists(def) {
		return def
	}
	return ""
}

// Settings are what the inputs and the event say: stronger than the
// file. An empty input leaves the file's value.
func (p Plan) Settings() pipeline.Settings {
	in := p.Inputs
	s := pipeline.Settings{URL: in.ServerURL, Command: in.ServerCommand, User: in.ServerUser, Runs: in.Runs, Models: in.Models,
		MaxDrop: in.MaxDrop, MaxCostIncrease: in.MaxCostIncrease, MaxCostPerRun: in.MaxCostPerRun, Trigger: string(p.Trigger), Schedule: p.Schedule, Notes: p.Notes}
	if in.ServerCommand != "" {
		s.Cwd = p.Workspace
	}
	for _, l := range p.Layers {
		s.Layers = append(s.Layers, l.String())
	}
	if in.Golden != "" {
		s.Golden = filepath.Join(p.Workspace, in.Golden)
	}
	if in.Prices != "" {
		s.Prices, s.PricesFrom = filepath.Join(p.Workspace, in.Prices), "the prices input"
	}
	if p.Trigger == TriggerSchedule {
		// A schedule's point is to see the model change under you: every
		// model call is made anew; judge verdicts are reused.
		v := behavior.ReuseVerdicts
		s.Reuse = &v
	}
	return s
}

// UseBaseline hands what Runner.Baseline found to the plan.
func UseBaseline(pl *pipeline.Plan, b Baseline) {
	if b.Report == nil {
		pl.Baseline, pl.BaselineNote = nil, b.Note
		return
	}
	rep, err := report.Parse(b.Report)
	if err != nil {
		pl.Baseline, pl.BaselineNote = nil, "baseline "+b.Source+" is unreadable"
		return
	}
	pl.Baseline, pl.BaselineNote = rep, ""
	pl.BaselineRef = report.ReportRef{Path: b.Source, Commit: rep.Run.Commit, WorkflowRunID: rep.Run.WorkflowRunID, FinishedAt: rep.Run.FinishedAt, ToolSurfaceHash: rep.ToolSurfaceHash}
}

// ValidReport checks that b is a report.json this version reads.
func ValidReport(b []byte) error {
	_, err := report.Parse(b)
	return err
}

// AcceptBaseline takes a run's report as the baseline only when it passed
// the gate (an inconclusive run never becomes a baseline) and holds the
// layers this run compares.
func AcceptBaseline(layers []string) func([]byte) (bool, string) {
	return func(b []byte) (bool, string) {
		rep, err := report.Parse(b)
		if err != nil {
			return false, "unreadable report: " + pipeline.Brief(err)
		}
		if rep.Gate == nil || rep.Gate.Verdict != report.GatePass || rep.Run.Cancelled != "" {
			return false, "its gate verdict is not pass"
		}
		for _, l := range layers {
			switch {
			case l == pipeline.Conformance && rep.Conformance == nil,
				l == pipeline.Behavior && rep.Behavior == nil,
				l == pipeline.Resilience && rep.Resilience == nil:
				return false, "it has no " + l + " results"
			}
		}
		return true, ""
	}
}

// ResultOf is what Publish needs of a gated report.
// A cancelled run is not passed, and has no annotations: what it cut
// short is no finding.
func ResultOf(rep *report.Report, reportPath, markdown string) Result {
	res := Result{Verdict: rep.Gate.Verdict, Passed: rep.Gate.Verdict != report.GateFail, ReportPath: reportPath,
		MarkdownBody: markdown, Annotations: annotations(rep), Scores: scores(rep)}
	if rep.Gate.Verdict == report.GateCancelled {
		res.Passed, res.Annotations, res.Scores = false, nil, nil
	}
	return res
}

// annotations are the failed MUST checks and regressions, as errors.
func annotations(rep *report.Report) []Annotation {
	var out []Annotation
	if rep.Conformance != nil {
		for _, r := range rep.Conformance.Checks {
			if r.Level == report.Must && (r.Verdict == report.CheckFailed || r.Verdict == report.CheckErrored) {
				out = append(out, Annotation{Title: r.ID + " " + r.Doc, Message: r.Outcome.Message + " (fix: " + r.Fix + ")"})
			}
		}
	}
	if rep.Gate != nil {
		for _, it := range rep.Gate.Items {
			if it.Status == report.ItemFail {
				out = append(out, Annotation{Title: "regression " + it.Subject, Message: it.Reason})
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
			if r.Level != report.Must || r.Verdict == report.CheckSkipped {
				continue
			}
			total++
			if r.Verdict == report.CheckPassed || r.Verdict == report.CheckWarned {
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
