package render_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

// The stored inputs of the golden tests, testdata/report/*.json, are
// written by this file so they stay valid as the report grows:
//
//	go test ./pkg/render -run TestWriteFixtures -fixtures
//
// then review the diff, and rewrite the goldens with -update.
var writeFixtures = flag.Bool("fixtures", false, "rewrite the input reports in testdata/report")

func TestWriteFixtures(t *testing.T) {
	if !*writeFixtures {
		t.Skip("run with -fixtures to rewrite testdata/report/*.json")
	}
	for name, rep := range map[string]*report.Report{
		"layer0": layer0Fixture(), "full": fullFixture(), "hostile": hostileFixture(), "ungated": ungatedFixture(), "legacy": legacyFixture(),
	} {
		if err := report.Save(filepath.Join("testdata", "report", name+".json"), rep); err != nil {
			t.Fatal(err)
		}
	}
}

func gated(now, base *report.Report, hist ...*report.Report) *report.Report {
	in := gate.Input{New: now, Baseline: base, Now: reporttest.Start().Add(2 * time.Hour)}
	if base != nil {
		in.BaselineRef = report.ReportRef{Path: ".mcp-eval/baseline/report.json", Commit: base.Run.Commit, WorkflowRunID: base.Run.WorkflowRunID, FinishedAt: base.Run.FinishedAt, ToolSurfaceHash: base.ToolSurfaceHash}
	} else {
		in.BaselineNote = "no baseline given"
	}
	for i, h := range hist {
		in.History = append(in.History, gate.Historic{Ref: report.ReportRef{Path: fmt.Sprintf(".mcp-eval/history/%d.json", i), Commit: h.Run.Commit, WorkflowRunID: h.Run.WorkflowRunID, FinishedAt: h.Run.FinishedAt, ToolSurfaceHash: h.ToolSurfaceHash}, Report: h})
	}
	now.Gate = gate.Evaluate(in, gate.DefaultPolicy())
	return now
}

func baselineOf(r *report.Report) *report.Report {
	r.Run.Commit, r.Run.WorkflowRunID = "fedcba9876543210fedcba9876543210fedcba98", 4100
	return reporttest.Green(r)
}

func layer0Checks(tool3, cache1 int) []check.Result {
	checks := []check.Result{
		reporttest.Check("DISC-1", check.Must, 5, 5), reporttest.Check("TOOL-3", check.Must, tool3, 5),
		reporttest.Check("CACHE-1", check.Must, cache1, 5), reporttest.Check("LOG-2", check.Should, 0, 1),
		reporttest.Check("RPC-1", check.Must, 5, 5),
	}
	skip := reporttest.Check("AUTH-1", check.Must, 0, 1)
	skip.Verdict, skip.Counts, skip.Outcome = check.Skipped, map[check.Verdict]int{check.Skipped: 1}, check.Outcome{Verdict: check.Skipped, Message: "the server has no authorization"}
	return append(checks, skip)
}

func layer0Fixture() *report.Report {
	base := baselineOf(reporttest.Layer0(reporttest.New(), layer0Checks(5, 2)...))
	now := reporttest.Layer0(reporttest.New(), layer0Checks(4, 2)...)
	return gated(now, base)
}

func behaviour(r *report.Report, scale func(i int, model string) int) *report.Report {
	for i := range 8 {
		id := fmt.Sprintf("weather-%d", i)
		kind := report.Soft
		if i < 2 {
			kind = report.Hard
		}
		for _, m := range []string{"m1", "m2"} {
			k := scale(i, m)
			reporttest.Case(r, id, kind, m, k, 5, reporttest.Score(report.ToolSelection, k, 5), reporttest.Score(report.ArgumentCorrectness, min(5, k+1), 5), reporttest.Score(report.TaskCompletion, k, 5))
		}
	}
	reporttest.Case(r, "no-tool-needed", report.Soft, "m1", 5, 5, reporttest.Score(report.OverTrigger, 0, 5))
	for i := range r.Behavior.Cases {
		if r.Behavior.Cases[i].ID == "no-tool-needed" {
			r.Behavior.Cases[i].Negative = true
			r.Behavior.Cases[i].Tags = []string{"negative"}
		}
	}
	r.Behavior.JudgeModel, r.Behavior.RubricHash = "judge-1", reporttest.CaseHash("rubric-1")
	r.Behavior.GoldenSetHash = reporttest.CaseHash("golden-set")
	return r
}

func layers23(r *report.Report, success int) *report.Report {
	r.Resilience = &report.Resilience{
		Faults: []report.FaultResult{{Model: "m1", Fault: "timeout", Scores: []report.Score{reporttest.Score(report.FaultHandled, 9, 10)}}},
		Attacks: []report.AttackResult{{Model: "m1", Attack: "description-injection", Scores: []report.Score{
			reporttest.Score(report.AttackSuccess, success, 40), reporttest.Score(report.Refusal, 30, 40)}}},
	}
	r.Telemetry = &report.Telemetry{
		Latency: []report.Latency{{Model: "m1", Tool: "get_weather", Samples: 80, P50Ms: 118, P95Ms: 342, MaxMs: 910, Direction: report.Lower}},
		Usage: []report.Usage{
			{Model: "m1", InputTokens: 48210, OutputTokens: 9120, CostUSD: 0.1843, Direction: report.Lower},
			{Model: "m2", InputTokens: 47000, OutputTokens: 8800, CostUSD: 0.0412, Direction: report.Lower},
		},
	}
	return r
}

func fullFixture() *report.Report {
	steady := func(i int, m string) int { return 5 }
	day := func(d int) *report.Report {
		r := layers23(behaviour(reporttest.Layer0(reporttest.New(), layer0Checks(5, 5)...), steady), 0)
		reporttest.At(r, reporttest.Start().Add(-time.Duration(d)*24*time.Hour))
		return baselineOf(r)
	}
	now := behaviour(reporttest.Layer0(reporttest.New(), layer0Checks(5, 5)...), func(i int, m string) int {
		switch {
		case i == 0 && m == "m1":
			return 1 // a hard case collapses: new failure, and likely drift
		case i == 3:
			return 3 // soft, below the floor, within noise
		case i >= 4 && m == "m2":
			return 4
		}
		return 5
	})
	reporttest.Case(now, "added-case", report.Soft, "m1", 4, 5)
	layers23(now, 9)
	now.Models[1].Served = "m2-2026-08-01" // m2 not comparable
	return gated(now, day(1), day(1), day(2), day(3))
}

func ungatedFixture() *report.Report {
	return behaviour(reporttest.New(), func(i int, m string) int { return 5 - i%3 })
}

func legacyFixture() *report.Report {
	return gated(reporttest.Legacy(reporttest.New()), nil)
}

// hostile is text a server or model could send to break a PR comment.
func hostile() []string {
	return []string{
		"<img src=x onerror=alert(1)>",
		"@octocat and @org/team please look",
		"[click me](https://evil.example/phish)",
		"![pixel](https://evil.example/p.png)",
		"line one\nline two | with | pipes",
		"``back`ticks``",
		"\u202egnp.exe\u202c and \u2066isolate\u2069",
		"# heading **bold** _em_ ~~strike~~",
		"<!-- hidden --> <details><summary>x</summary>",
		"see www.evil.example or https://evil.example/x",
		"fixes #123 and acme/repo#7",
		"ends with a backslash\\",
		"&#x202E; &lt;script&gt;",
		"`",
		"\x1b[31mred\x1b[0m\r\nCRLF",
		"| a | b |\n|---|---|",
		"::set-output name=x::y",
	}
}

func hostileFixture() *report.Report {
	h := hostile()
	mk := func(k func(i int) int) *report.Report {
		r := reporttest.New()
		r.Server.Name, r.Server.Version = h[0], h[5]
		r.Server.Target = h[9]
		r.Run.HarnessVersion = h[3]
		r.Models = []report.Model{{ID: h[1], Provider: h[2], Requested: h[1], Served: h[6]}}
		checks := []check.Result{}
		for i, s := range h {
			c := reporttest.Check(fmt.Sprintf("EVIL-%d", i+1), check.Must, k(i), 5)
			c.Doc, c.Fix = s, s
			if c.Verdict == check.Failed {
				c.Outcome.Message = s
				c.Outcome.Details = []string{s}
				c.Outcome.Evidence = []check.Evidence{{Request: s, Response: s}}
			}
			checks = append(checks, c)
		}
		reporttest.Layer0(r, checks...)
		r.Conformance.Notes = h
		for i, s := range h {
			reporttest.Case(r, s, report.Soft, h[1], k(i), 5)
		}
		r.Behavior.Results[0].Notes = h
		r.Behavior.JudgeModel = h[4]
		r.Resilience = &report.Resilience{Faults: []report.FaultResult{{Model: h[1], Fault: h[10], Scores: []report.Score{reporttest.Score(h[11], 1, 2)}}}, Attacks: []report.AttackResult{}}
		r.Telemetry = &report.Telemetry{Latency: []report.Latency{{Model: h[1], Tool: h[12], Samples: 1, P50Ms: 1, P95Ms: 2, MaxMs: 3, Direction: report.Lower}}, Usage: []report.Usage{{Model: h[13], Direction: report.Lower}}}
		return r
	}
	base := baselineOf(mk(func(int) int { return 5 }))
	now := mk(func(i int) int { return i % 6 })
	return gated(now, base)
}
