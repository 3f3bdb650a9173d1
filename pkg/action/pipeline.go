package action

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
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
		MaxDrop: in.MaxDrop, MaxCostIncrease: in.MaxCostIncrease, MaxCostPerRun: in.MaxCostPerRun,
		MaxToolTokens: in.MaxToolTokens, MaxToolTokensIncrease: in.MaxToolTokensInc, Lint: in.Lint, ToolTokens: in.ToolTokens, Trigger: string(p.Trigger), Schedule: p.Schedule, Notes: p.Notes,
		Shard: in.Shard}
	switch {
	case in.ServerURL != "":
		s.ServerFrom = "the server-url input"
	case in.ServerCommand != "":
		s.Cwd, s.ServerFrom = p.Workspace, "the server-command input"
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
	if in.Record != "" {
		s.Record = filepath.Join(p.Workspace, in.Record)
	}
	if in.Replay != "" {
		s.Replay = filepath.Join(p.Workspace, in.Replay)
	}
	// A fork's skipped model layers run replayed when the config names
	// a committed cassette (eval.cassette): the pipeline decides, since
	// only it reads the file.
	s.ForkReplay = p.Fork && p.Inputs.AutoLayers
	if p.Trigger == TriggerSchedule {
		// A schedule's point is to see the model change under you: every
		// model call is made anew; judge verdicts are reused.
		v := behavior.ReuseVerdicts
		s.Reuse = &v
	}
	return s
}

// UseBaseline hands what Runner.Baseline found to the plan: the baseline,
// and the green reports for trends and drift.
func UseBaseline(pl *pipeline.Plan, b Baseline) {
	for _, h := range b.History {
		rep, err := report.Parse(h.Report)
		if err != nil {
			continue // validated when fetched; a report this version cannot read adds nothing
		}
		src := fmt.Sprintf("run #%d (%s)", h.Run.Number, h.Run.HTMLURL)
		pl.History = append(pl.History, gate.Historic{Report: rep, Ref: report.ReportRef{Path: src, Commit: rep.Run.Commit,
			WorkflowRunID: rep.Run.WorkflowRunID, FinishedAt: rep.Run.FinishedAt, ToolSurfaceHash: rep.ToolSurfaceHash}})
	}
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
// layers this run compares; replay is the hash of the cassette this run
// replays ("" for a live run).
func AcceptBaseline(layers []string, replay string) func([]byte) (bool, string) {
	models := false
	for _, l := range layers {
		models = models || l == pipeline.Behavior || l == pipeline.Resilience
	}
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
		// A replayed run is compared with a run replayed from the same
		// cassette, a live one with a live one: the search walks on to
		// the report that can be compared instead of gating on floors.
		switch {
		case !models:
		case replay != "" && (rep.Replay == nil || rep.Replay.Hash != replay):
			return false, "it was not replayed from this run's cassette"
		case replay == "" && rep.Replay != nil:
			return false, "its models' answers were replayed from a cassette, and this run's are live"
		}
		return true, ""
	}
}

// ResultOf is what Publish needs of a gated report.
// A cancelled run is not passed, and has no annotations: what it cut
// short is no finding.
func ResultOf(rep *report.Report, reportPath, markdown string) Result {
	res := Result{Verdict: rep.Gate.Verdict, Passed: rep.Gate.Verdict != report.GateFail && rep.Gate.Verdict != report.GateError, ReportPath: reportPath,
		MarkdownBody: markdown, Annotations: annotations(rep), Scores: scores(rep)}
	if rep.Gate.Verdict == report.GateCancelled {
		res.Passed, res.Annotations, res.Scores = false, nil, nil
	}
	return res
}

// annotations are what the gate did not pass, worst first: failed items
// as errors, then those not judged, inconclusive and warned ones as
// warnings, each naming
// the case × model and, for a golden case, the file and line it starts
// on, so the annotation lands on the golden set in the PR's diff.
// Without a gate (nothing judged) the failed MUST checks stand alone.
func annotations(rep *report.Report) []Annotation {
	var out []Annotation
	if rep.Gate == nil {
		if rep.Conformance != nil {
			for _, r := range rep.Conformance.Checks {
				switch {
				case r.Level != report.Must:
				case r.Verdict == report.CheckFailed:
					out = append(out, checkAnnotation(r, "error", "failed", ""))
				case r.Verdict == report.CheckErrored:
					out = append(out, checkAnnotation(r, "warning", "not judged", ""))
				}
			}
		}
		return out
	}
	checks := map[string]report.CheckResult{}
	if rep.Conformance != nil {
		for _, r := range rep.Conformance.Checks {
			checks[r.ID] = r
		}
	}
	cases := map[string]report.Case{}
	failedRun := map[[2]string]string{}
	if b := rep.Behavior; b != nil {
		for _, c := range b.Cases {
			cases[c.ID] = c
		}
		for _, r := range b.Results {
			for _, run := range r.Runs {
				if run.Outcome != report.RunPass && len(run.Reasons) > 0 {
					failedRun[[2]string{r.Case, r.Model}] = run.Reasons[0]
					break
				}
			}
		}
	}
	items := append([]report.GateItem(nil), rep.Gate.Items...)
	rank := map[string]int{report.ItemFail: 0, report.ItemError: 1, report.ItemInconclusive: 2, report.ItemWarn: 3}
	items = slices.DeleteFunc(items, func(it report.GateItem) bool { _, ok := rank[it.Status]; return !ok })
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if rank[a.Status] != rank[b.Status] {
			return rank[a.Status] < rank[b.Status]
		}
		if a.Layer != b.Layer {
			return a.Layer < b.Layer
		}
		return itemRate(a) < itemRate(b)
	})
	for _, it := range items {
		level := "warning"
		if it.Status == report.ItemFail {
			level = "error"
		}
		if r, ok := checks[it.Subject]; ok && it.Kind == report.KindCheck {
			out = append(out, checkAnnotation(r, level, statusWords[it.Status], it.Reason))
			continue
		}
		a := Annotation{Level: level, Title: itemTitle(it), Message: it.Reason}
		if c, ok := cases[it.Subject]; ok && (it.Kind == report.KindCase || it.Kind == report.KindDrift || it.Kind == report.KindSlide) {
			a.File, a.Line = c.Source, c.Line
			if why := failedRun[[2]string{it.Subject, it.Model}]; why != "" {
				a.Message += "; first failing run: " + why
			}
		}
		out = append(out, a)
	}
	return out
}

// checkAnnotation names a Layer 0 check with what it found and the fix.
// A check not judged gets its error alone: the fix and the spec are for a
// server that broke the rule, and no run saw that.
func checkAnnotation(r report.CheckResult, level, word, reason string) Annotation {
	msg := r.Outcome.Message
	if msg == "" {
		msg = reason
	}
	if word == statusWords[report.ItemError] {
		return Annotation{Level: level, Title: r.ID + " " + word + ": " + r.Doc, Message: msg}
	}
	if len(r.Outcome.Evidence) > 0 {
		if e := r.Outcome.Evidence[0]; e.Pointer != "" {
			msg += fmt.Sprintf(" (at %s: %s)", e.Pointer, e.Value)
		}
	}
	if r.Fix != "" {
		msg += " Fix: " + r.Fix
	}
	if r.Spec != "" {
		msg += " Spec: " + r.Spec
	}
	return Annotation{Level: level, Title: r.ID + " " + word + ": " + r.Doc, Message: msg}
}

var statusWords = map[string]string{report.ItemFail: "failed", report.ItemError: "not judged", report.ItemInconclusive: "inconclusive", report.ItemWarn: "warning"}

// itemTitle names what an item judged and on which model, then its
// status: "case neg-invoice-theory × openai:gpt-4o failed". (No colon:
// a title's colon reaches the log escaped.)
func itemTitle(it report.GateItem) string {
	kind := map[string]string{report.KindCheck: "", report.KindSuite: "score", report.KindCost: "", report.KindRunCost: ""}
	k, ok := kind[it.Kind]
	if !ok {
		k = it.Kind
	}
	t := strings.TrimSpace(k + " " + it.Subject)
	if it.Score != "" && it.Kind != report.KindSuite {
		t += " (" + it.Score + ")"
	}
	if it.Model != "" {
		t += " × " + it.Model
	}
	return t + " " + statusWords[it.Status]
}

// itemRate orders items of one status and layer: the lowest pass rate
// (the hardest fall) first; items without counts last.
func itemRate(it report.GateItem) float64 {
	if it.New == nil || it.New.N == 0 {
		return 2
	}
	r := it.New.Rate()
	if it.Direction == report.Lower {
		r = 1 - r
	}
	return r
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
	if r := rep.Resilience; r != nil {
		// Runs where the model held up: a fault handled, an attack
		// resisted.
		fk, fn, ak, an := render.HeldUp(r)
		k, n := fk+ak, fn+an
		out["resilience"] = fmt.Sprintf("%d/%d", k, n)
	}
	if t := rep.Telemetry; t != nil {
		// The run's model cost in USD; empty (still written) when a price
		// is unknown: "0" would read as free.
		out["telemetry"] = ""
		if v, known := t.TotalCostUSD(); known {
			out["telemetry"] = strconv.FormatFloat(v, 'f', 4, 64)
		}
	}
	return out
}
