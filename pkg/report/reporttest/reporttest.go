// Package reporttest builds reports for tests: a few lines per report
// instead of nested literals, with valid hashes, directions and metadata.
package reporttest

import (
	"fmt"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Surface is the tool-surface hash New reports have.
func Surface() string {
	return report.ToolSurfaceHash([]report.ToolSurface{{Name: "get_weather", Description: "Current weather for a city"}})
}

// Start is the fixed start time of New reports, so goldens are stable.
func Start() time.Time { return time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC) }

// New is a report with run metadata, a server and two models, m1 and m2,
// and no layer.
func New() *report.Report {
	r := report.New()
	r.Run = report.Run{Commit: "0123456789abcdef0123456789abcdef01234567", Ref: "refs/heads/main", Event: "push", Repository: "acme/weather-mcp",
		WorkflowRunID: 4242, RunAttempt: 1, HarnessVersion: "0.1.0", StartedAt: Start(), FinishedAt: Start().Add(90 * time.Second)}
	r.Server = report.Server{Target: "node dist/server.js", Transport: "stdio", Name: "weather", Version: "1.2.0", Era: "modern", ProtocolVersion: "2026-07-28"}
	r.ToolSurfaceHash = Surface()
	r.Models = []report.Model{
		{ID: "m1", Provider: "acme", Requested: "m1", Served: "m1-2026-07-01"},
		{ID: "m2", Provider: "acme", Requested: "m2", Served: "m2-2026-06-15"},
	}
	return r
}

// At moves a report's run times, for history ordering.
func At(r *report.Report, finished time.Time) *report.Report {
	r.Run.StartedAt, r.Run.FinishedAt = finished.Add(-time.Minute), finished
	return r
}

// CaseHash is the definition hash of the case with this id.
func CaseHash(id string) string {
	h, err := report.Hash(map[string]string{"id": id})
	if err != nil {
		panic(err)
	}
	return h
}

// Score is k/N of a named score with its known direction (higher for
// names DirectionOf does not know).
func Score(name string, k, n int) report.Score {
	d, ok := report.DirectionOf(name)
	if !ok {
		d = report.Higher
	}
	return report.Score{Name: name, Direction: d, K: k, N: n}
}

// Case adds a case result: the case (defined once, soft unless kind says
// otherwise) run n times against model, passing k; its scores are the
// given ones, or one toolSelection score equal to k/n.
func Case(r *report.Report, id string, kind report.CaseKind, model string, k, n int, scores ...report.Score) *report.Report {
	if r.Behavior == nil {
		r.Behavior = &report.Behavior{RunsPerCase: n, Cases: []report.Case{}, Results: []report.CaseResult{}}
	}
	b := r.Behavior
	found := false
	for _, c := range b.Cases {
		found = found || c.ID == id
	}
	if !found {
		b.Cases = append(b.Cases, report.Case{ID: id, Hash: CaseHash(id), Kind: kind, Tags: []string{}, Source: "golden/" + id + ".yaml"})
	}
	if len(scores) == 0 {
		scores = []report.Score{Score(report.ToolSelection, k, n)}
	}
	b.Results = append(b.Results, report.CaseResult{Case: id, Model: model, Passed: report.Count{K: k, N: n}, Scores: scores, Notes: []string{}})
	return r
}

// Check is a Layer 0 result that passed k of n runs.
func Check(id string, level report.Level, k, n int) report.CheckResult {
	r := report.CheckResult{ID: id, Level: level, Family: family(id), FamilyTitle: conformance.FamilyTitle(family(id)), Spec: "spec.mdx §x", Doc: "rule " + id, Runs: n, Counts: map[report.CheckVerdict]int{}}
	if k > 0 {
		r.Counts[report.CheckPassed] = k
	}
	if k < n {
		r.Counts[report.CheckFailed] = n - k
		r.Verdict = report.CheckFailed
		r.Outcome = report.Outcome{Verdict: report.CheckFailed, Message: fmt.Sprintf("%s failed", id)}
		r.Flaky = k > 0
	} else {
		r.Verdict = report.CheckPassed
		r.Outcome = report.Outcome{Verdict: report.CheckPassed}
	}
	return r
}

// Errored is a Layer 0 result that passed k of n runs and errored in the
// others (the harness could not judge them), with failed of those failing
// instead.
func Errored(id string, level report.Level, k, failed, n int) report.CheckResult {
	r := Check(id, level, k, n)
	errored := n - k - failed
	r.Counts = map[report.CheckVerdict]int{}
	for v, c := range map[report.CheckVerdict]int{report.CheckPassed: k, report.CheckFailed: failed, report.CheckErrored: errored} {
		if c > 0 {
			r.Counts[v] = c
		}
	}
	// As check.Execute: errored runs judged nothing, so only a pass
	// beside a fail is flaky.
	r.Flaky = k > 0 && failed > 0
	if failed == 0 && errored > 0 {
		r.Verdict = report.CheckErrored
		r.Outcome = report.Outcome{Verdict: report.CheckErrored, Message: "run cancelled: context deadline exceeded"}
	}
	return r
}

func family(id string) string {
	for i := range id {
		if id[i] == '-' {
			return id[:i]
		}
	}
	return id
}

// Layer0 sets a modern Layer 0 section with these checks; its verdict is
// fail if a MUST check failed a run, else incomplete if one errored.
func Layer0(r *report.Report, checks ...report.CheckResult) *report.Report {
	c := &report.Conformance{Target: r.Server.Target, Transport: r.Server.Transport, Era: report.EraModern, ProtocolVersion: "2026-07-28",
		ServerInfo: &report.Implementation{Name: r.Server.Name, Version: r.Server.Version}, Verdict: report.ConformancePass, Runs: 5,
		Checks: checks, Unobservable: map[string]string{}, Probe: []report.ProbeStep{{Method: "server/discover", Outcome: "ok"}}, Notes: []string{}, DurationMs: 1234}
	for _, ch := range checks {
		switch {
		case ch.Level != report.Must:
		case ch.FailedARun():
			c.Verdict = report.ConformanceFail
		case ch.Unjudged() && c.Verdict == report.ConformancePass:
			c.Verdict = report.ConformanceIncomplete
		}
	}
	r.Conformance = c
	return r
}

// Legacy sets a Layer 0 section for a server that speaks 2025-11-25 only.
func Legacy(r *report.Report) *report.Report {
	r.Server.Era, r.Server.ProtocolVersion = "legacy", "2025-11-25"
	r.Conformance = &report.Conformance{Target: r.Server.Target, Transport: r.Server.Transport, Era: report.EraLegacy, ProtocolVersion: "2025-11-25",
		Verdict: report.ConformanceLegacy, Runs: 5, Checks: []report.CheckResult{}, Unobservable: map[string]string{}, Probe: []report.ProbeStep{}, Notes: []string{},
		Legacy: &report.LegacyReport{Speaks: "2025-11-25", Blockers: []report.LegacyBlocker{{ID: "no-discover", Found: "server/discover is not served", Instead: "implement server/discover"}}}}
	return r
}

// Green marks a report as gated pass, as a baseline or history entry is.
func Green(r *report.Report) *report.Report {
	r.Gate = &report.Gate{Verdict: report.GatePass, Method: "test", Policy: report.GatePolicy{Text: "test", MaxDrop: 0.02, Confidence: 0.95, FloorMust: 1, FloorHard: 1, FloorSoft: 0.8, HistoryDepth: 10},
		EvaluatedAt: r.Run.FinishedAt, History: []report.ReportRef{}, Items: []report.GateItem{}, Unmatched: []report.Unmatched{}, Notes: []string{}}
	return r
}
