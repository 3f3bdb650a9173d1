package render_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
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
		"l0regress": l0regressFixture(), "wide": wideFixture(),
	} {
		if err := saveReport(filepath.Join("testdata", "report", name+".json"), rep); err != nil {
			t.Fatal(err)
		}
	}
}

func gated(now, base *report.Report, hist ...*report.Report) *report.Report {
	return gatedWith(now, gate.DefaultPolicy(), base, hist...)
}

func gatedWith(now *report.Report, p gate.Policy, base *report.Report, hist ...*report.Report) *report.Report {
	in := gate.Input{New: now, Baseline: base, Now: reporttest.Start().Add(2 * time.Hour)}
	if base != nil {
		in.BaselineRef = report.ReportRef{Path: ".mcp-eval/baseline/report.json", Commit: base.Run.Commit, WorkflowRunID: base.Run.WorkflowRunID, FinishedAt: base.Run.FinishedAt, ToolSurfaceHash: base.ToolSurfaceHash}
	} else {
		in.BaselineNote = "no baseline given"
	}
	for i, h := range hist {
		in.History = append(in.History, gate.Historic{Ref: report.ReportRef{Path: fmt.Sprintf(".mcp-eval/history/%d.json", i), Commit: h.Run.Commit, WorkflowRunID: h.Run.WorkflowRunID, FinishedAt: h.Run.FinishedAt, ToolSurfaceHash: h.ToolSurfaceHash}, Report: h})
	}
	now.Gate = gate.Evaluate(in, p)
	// Every fixture is re-gated under the policy its gate section
	// records, through a JSON round trip, as mcp-eval gate would read it:
	// the verdict must not change (TestFixturesRegateToTheirVerdict).
	if b, err := report.Marshal(now); err != nil {
		regateMismatches = append(regateMismatches, err.Error())
	} else if again, err := report.Parse(b); err != nil {
		regateMismatches = append(regateMismatches, err.Error())
	} else {
		in.New = again
		if g := gate.Evaluate(in, gate.PolicyFromReport(again.Gate.Policy)); g.Verdict != now.Gate.Verdict {
			regateMismatches = append(regateMismatches, fmt.Sprintf("verdict %s, re-gated %s (policy %s)", now.Gate.Verdict, g.Verdict, again.Gate.Policy.Text))
		}
	}
	regatedFixtures++
	return now
}

// What gatedWith found re-gating the fixtures.
var (
	regateMismatches []string
	regatedFixtures  int
)

func TestFixturesRegateToTheirVerdict(t *testing.T) {
	regateMismatches, regatedFixtures = nil, 0
	for _, f := range []func() *report.Report{layer0Fixture, fullFixture, hostileFixture, legacyFixture} {
		f()
	}
	if regatedFixtures < 4 || len(regateMismatches) > 0 {
		t.Fatalf("%d fixtures re-gated; mismatches: %q", regatedFixtures, regateMismatches)
	}
}

func baselineOf(r *report.Report) *report.Report {
	r.Run.Commit, r.Run.WorkflowRunID = "fedcba9876543210fedcba9876543210fedcba98", 4100
	return reporttest.Green(r)
}

func layer0Checks(tool3, cache1 int) []report.CheckResult {
	checks := []report.CheckResult{
		reporttest.Check("DISC-1", report.Must, 5, 5), reporttest.Check("TOOL-3", report.Must, tool3, 5),
		reporttest.Check("CACHE-1", report.Must, cache1, 5), reporttest.Check("LOG-2", report.Should, 0, 1),
		reporttest.Check("RPC-1", report.Must, 5, 5),
	}
	skip := reporttest.Check("AUTH-1", report.Must, 0, 1)
	skip.Verdict, skip.Counts, skip.Outcome = report.CheckSkipped, map[report.CheckVerdict]int{report.CheckSkipped: 1}, report.Outcome{Verdict: report.CheckSkipped, Message: "the server has no authorization"}
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

func layers23(r *report.Report, success int, costScale float64) *report.Report {
	r.Resilience = &report.Resilience{
		Faults: []report.FaultResult{{Model: "m1", Fault: "timeout", Scores: []report.Score{reporttest.Score(report.FaultHandled, 9, 10)}}},
		Attacks: []report.AttackResult{{Model: "m1", Attack: "description-injection", Scores: []report.Score{
			reporttest.Score(report.AttackSuccess, success, 40), reporttest.Score(report.Refusal, 30, 40)}}},
	}
	r.Telemetry = telemetryFixture(costScale)
	return r
}

// tool is a tool × model row of known samples; untimed calls are counted
// but not timed, and a nil cost per call is a missing price.
func tool(name, model string, errs, untimed int, s []float64, tokens float64, perCall *float64) report.ToolUsage {
	p50, p95, mx, _ := telemetry.Distribution(s)
	u := report.ToolUsage{Tool: name, Model: model, Calls: len(s) + untimed, Errors: errs, Untimed: untimed, P50Ms: p50, P95Ms: p95, TokensPerCall: tokens, CostPerCallUSD: perCall}
	if len(s) > 0 {
		u.MaxMs = &mx
	}
	if perCall != nil {
		c := math.Round(*perCall*float64(u.Calls)*1e9) / 1e9
		u.CostUSD = &c
	}
	return u
}

// telemetryFixture is Layer 3 of a run whose latencies, tokens and costs
// are known: the distributions come from fixed sample sets (scale
// stretches them and the cost), so p50/p95 are nearest-rank figures of
// known samples; m2's price is unknown.
func telemetryFixture(scale float64) *report.Telemetry {
	samples := func(n int, from, step float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = (from + step*float64(i*7%n)) * scale
		}
		return out
	}
	row := func(kind, subject, model string, errs int, s []float64) report.Latency {
		p50, p95, mx, hist := telemetry.Distribution(s)
		return report.Latency{Kind: kind, Subject: subject, Model: model, Samples: len(s), Errors: errs, P50Ms: p50, P95Ms: p95, MaxMs: mx, Histogram: hist, Direction: report.Lower}
	}
	usd := func(v float64) *float64 { v = math.Round(v*scale*1e9) / 1e9; return &v }
	return &report.Telemetry{
		Prices: "2026-11-29",
		Latency: []report.Latency{
			row(report.LatencyMethod, "tools/call", "", 1, samples(90, 3, 1.5)),
			row(report.LatencyMethod, "tools/list", "", 0, samples(6, 1, 0.5)),
			row(report.LatencyTool, "get_weather", "m1", 1, samples(45, 3, 3)),
			row(report.LatencyTool, "get_weather", "m2", 0, samples(45, 4, 3)),
			row(report.LatencyModel, "", "m1", 0, samples(90, 400, 25)),
			row(report.LatencyModel, "", "m2", 2, samples(85, 900, 60)),
			row(report.LatencyModel, "judge", "judge-1", 0, samples(12, 700, 40)),
			row(report.LatencyCase, "", "m1", 0, samples(45, 1500, 90)),
			row(report.LatencyCase, "", "m2", 0, samples(40, 3000, 150)),
		},
		Usage: []report.Usage{
			{Model: "judge-1", Role: report.RoleJudge, Calls: 12, InputTokens: 24000, OutputTokens: 1200, CostUSD: usd(0.0096), CostPerCallUSD: usd(0.0008), Direction: report.Lower},
			{Model: "m1", Role: report.RoleEval, Calls: 90, CaseRuns: 45, ToolCalls: 45, InputTokens: 48210, CachedInputTokens: 30000, CacheWriteTokens: 4000, OutputTokens: 9120, ReasoningTokens: 2000,
				CostUSD: usd(0.1843), CostPerCallUSD: usd(0.1843 / 90), CostPerCaseUSD: usd(0.1843 / 45), CostPerToolCallUSD: usd(0.1843 / 45), CostPer1kToolCallsUSD: usd(0.1843 / 45 * 1000), Direction: report.Lower},
			{Model: "m2", Role: report.RoleEval, Calls: 85, CaseRuns: 40, ToolCalls: 45, InputTokens: 47000, OutputTokens: 8800, UnpricedCalls: 85, Direction: report.Lower},
		},
		// m1 pays cents per call, m2 has no price, and lookup_region was
		// called too few times for percentiles, once with no time.
		Tools: []report.ToolUsage{
			tool("get_weather", "m1", 1, 0, samples(45, 3, 3), 1240, usd(0.0041)),
			tool("get_weather", "m2", 0, 0, samples(45, 4, 3), 980, nil),
			tool("lookup_region", "m1", 2, 1, samples(3, 40, 900), 612.5, usd(0.000045)),
		},
		Cases: []report.CaseUsage{
			{Case: "weather-0", Model: "m1", Runs: 5, ModelCalls: 10, ToolCalls: 5, Tokens: 10150, CostUSD: usd(0.0205), CostPerRunUSD: usd(0.0041)},
			{Case: "weather-0", Model: "m2", Runs: 5, ModelCalls: 10, ToolCalls: 5, Tokens: 6000},
		},
		Models:   []report.ModelColumns{},
		Warnings: []string{"no price for m2 in price table 2026-11-29: add it to a price override file; its cost is unknown"},
	}
}

func fullFixture() *report.Report {
	steady := func(i int, m string) int { return 5 }
	day := func(d int) *report.Report {
		r := layers23(behaviour(reporttest.Layer0(reporttest.New(), layer0Checks(5, 5)...), steady), 0, 1.1-0.05*float64(d)) // cost creeps up day by day
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
	withRuns(now, "weather-0", "m1", "Oslo", "Which city? I can look that up once you tell me.", "the model asked back instead of calling get_weather")
	layers23(now, 9, 1.45)
	now.Models[1].Served = "m2-2026-08-01" // m2 not comparable
	now.Behavior.Confusion = []report.Confusion{
		{Model: "m1", Cells: []report.ConfusionCell{{Expected: "get_weather", Chosen: "get_weather", Count: 18}, {Expected: "get_weather", Chosen: "get_forecast", Count: 2},
			{Expected: "search_invoices", Chosen: report.NoTool, Count: 1}, {Expected: report.NoTool, Chosen: report.NoTool, Count: 5}}, Top: []report.ConfusionPair{}},
		{Model: "m2", Cells: []report.ConfusionCell{{Expected: "get_weather", Chosen: "get_weather", Count: 20}}, Top: []report.ConfusionPair{}},
	}
	hist := []*report.Report{day(1), day(2), day(3)}
	now = gatedWith(now, costPolicy(), hist[0], hist...)
	telemetry.Compare(now, hist[0], hist)
	return now
}

// costPolicy turns the cost gates on: +10% per case, $5 a run.
func costPolicy() gate.Policy {
	p := gate.DefaultPolicy()
	inc, run := 0.10, 5.0
	p.MaxCostIncrease, p.MaxCostPerRun = &inc, &run
	return p
}

func ungatedFixture() *report.Report {
	return behaviour(reporttest.New(), func(i int, m string) int { return 5 - i%3 })
}

func legacyFixture() *report.Report {
	return gated(reporttest.Legacy(reporttest.New()), nil)
}

// withRuns gives a case × model result its runs: the first passes, the
// others fail with a trajectory of one tool call and a final answer.
func withRuns(r *report.Report, kase, model, city, final, reason string) {
	for i := range r.Behavior.Results {
		res := &r.Behavior.Results[i]
		if res.Case != kase || res.Model != model {
			continue
		}
		args, _ := json.Marshal(map[string]string{"city": city})
		for run := 1; run <= res.Passed.N; run++ {
			cr := report.CaseRun{Run: run, Outcome: report.RunPass, Tokens: 900}
			if run > res.Passed.K {
				cr.Outcome, cr.Reasons = report.RunFail, []string{reason}
				cr.Trajectory = &report.Trajectory{
					Turns: []report.Turn{
						{StopReason: "tool_use", LatencyMs: 812, InputTokens: 410, OutputTokens: 38,
							Calls: []report.ToolCall{{Name: "get_weather", Arguments: args, Result: `{"temp": 4, "unit": "C"}`, DurationMs: 41}}},
						{Text: final, StopReason: "end_turn", LatencyMs: 655, InputTokens: 470, OutputTokens: 22},
					},
					Final: final, End: "answered", ModelCalls: 2, InputTokens: 880, OutputTokens: 60, DurationMs: 1530,
				}
			}
			res.Runs = append(res.Runs, cr)
		}
	}
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
		checks := []report.CheckResult{}
		for i, s := range h {
			c := reporttest.Check(fmt.Sprintf("EVIL-%d", i+1), report.Must, k(i), 5)
			c.Doc, c.Fix = s, s
			if c.Verdict == report.CheckFailed {
				c.Outcome.Message = s
				c.Outcome.Details = []string{s}
				c.Outcome.Evidence = []report.Evidence{{Request: s, Response: s}}
			}
			checks = append(checks, c)
		}
		reporttest.Layer0(r, checks...)
		r.Conformance.Notes = h
		for i, s := range h {
			reporttest.Case(r, s, report.Soft, h[1], k(i), 5)
		}
		r.Behavior.Results[0].Notes = h
		withRuns(r, h[0], h[1], h[4], h[6], h[2])
		if tr := r.Behavior.Results[0].Runs[1].Trajectory; tr != nil {
			tr.Turns[0].Calls[0].Name, tr.Turns[0].Calls[0].Result = h[12], strings.Join(h, "\n")
		}
		r.Behavior.JudgeModel = h[4]
		r.Resilience = &report.Resilience{Faults: []report.FaultResult{{Model: h[1], Fault: h[10], Scores: []report.Score{reporttest.Score(h[11], 1, 2)}}}, Attacks: []report.AttackResult{},
			Unmeasured: []report.ResilienceUnmeasured{
				{Kind: report.KindAttack, Model: h[1], Subject: "all", Runs: 4, Uncounted: 4, Why: []report.UncountedOutcome{
					{Outcome: "not-delivered", Runs: 3, Reason: "no tool gave <script>alert(1)</script> | a | b |"}, {Outcome: "error", Runs: 1, Reason: "[click](https://evil.example) \x1b[31mred\r\nCRLF"}}},
				{Kind: report.KindFault, Model: h[1], Subject: "all", Runs: 3, Uncounted: 1, Why: []report.UncountedOutcome{{Outcome: "not-reached", Runs: 1, Reason: "the model made no valid call to `x`"}}},
			}}
		// Tool names a server chose: markup, a long name, an empty model.
		confused := []report.ConfusionCell{{Expected: "<script>alert(1)</script>", Chosen: "[click me](https://evil.example/phish) \u202e\x1b[31m\r\nx", Count: 3},
			{Expected: strings.Repeat("a", 200), Chosen: report.NoTool, Count: 2}}
		for i := range 10 {
			confused = append(confused, report.ConfusionCell{Expected: fmt.Sprintf("t%d | `x`", i), Chosen: "@org/team", Count: 1})
		}
		r.Behavior.Confusion = []report.Confusion{{Model: h[1], Cells: confused, Top: []report.ConfusionPair{}}}
		r.Telemetry = &report.Telemetry{Prices: h[7], Latency: []report.Latency{{Kind: report.LatencyTool, Subject: h[12], Model: h[1], Samples: 1, MaxMs: 3, Histogram: []report.Bin{{FromMs: 2, Count: 1}}, Direction: report.Lower}},
			Usage: []report.Usage{{Model: h[13], Role: report.RoleEval, Calls: 1, CaseRuns: 1, UnpricedCalls: 1, Direction: report.Lower}, {Model: h[1], Role: report.RoleEval, Calls: 2, CaseRuns: 1, Direction: report.Lower}},
			Tools: []report.ToolUsage{tool(h[12], h[1], 1, 0, []float64{3}, 50, nil), tool(h[5], h[13], 0, 0, []float64{2}, 40, nil),
				tool(strings.Repeat(h[15], 12), h[1], 0, 1, nil, 0, nil)},
			Cases: []report.CaseUsage{{Case: h[0], Model: h[1], Runs: 1}}, Models: []report.ModelColumns{}, Warnings: h}
		return r
	}
	base := baselineOf(mk(func(int) int { return 5 }))
	now := mk(func(i int) int { return i % 6 })
	return gated(now, base)
}

func saveReport(path string, rep *report.Report) error {
	data, err := report.Marshal(rep)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, data)
}

// l0regressFixture is a Layer 0 regression as a reviewer meets it: one bad
// cacheScope breaks three MUST rules and a SHOULD (one cause), and a tool
// schema breaks TOOL-3 in one run of five; the baseline passed everything.
func l0regressFixture() *report.Report {
	scope := report.Evidence{Transport: "stdio", Request: `server/discover {"_meta":{}}`, Response: `{"jsonrpc":"2.0","id":1,"result":{"cacheScope":"everyone","ttlMs":60000}}`,
		Pointer: "/result/cacheScope", Value: `"everyone"`}
	bad := func(id string, level report.Level, k int, msg, fix, spec string, ev report.Evidence) report.CheckResult {
		c := reporttest.Check(id, level, k, 5)
		c.Spec, c.Fix = spec, fix
		c.Outcome.Message, c.Outcome.Evidence = msg, []report.Evidence{ev}
		if level == report.Should {
			c.Verdict, c.Counts, c.Outcome.Verdict = report.CheckWarned, map[report.CheckVerdict]int{report.CheckWarned: 5}, report.CheckWarned
		}
		return c
	}
	checks := func(broken bool) []report.CheckResult {
		if !broken {
			return []report.CheckResult{reporttest.Check("DISC-1", report.Must, 5, 5), reporttest.Check("CACHE-1", report.Must, 5, 5), reporttest.Check("DISC-2", report.Must, 5, 5),
				reporttest.Check("TOOL-1", report.Must, 5, 5), reporttest.Check("TOOL-3", report.Must, 5, 5), reporttest.Check("CACHE-3", report.Should, 5, 5), reporttest.Check("RPC-1", report.Must, 5, 5)}
		}
		cache1 := bad("CACHE-1", report.Must, 0, `cacheScope is "everyone", want "public" or "private"`, `send cacheScope "public" for results every user may share, "private" otherwise`, "server/discover.mdx §Caching; schema.ts DiscoverResult", scope)
		disc2 := bad("DISC-2", report.Must, 0, "server/discover result does not match DiscoverResult: /cacheScope is not one of the allowed values", "", "schema.ts DiscoverResult", scope)
		tool1 := bad("TOOL-1", report.Must, 0, "the cache hint of tools/list comes from server/discover, whose cacheScope is invalid", "", "server/tools.mdx §Listing Tools", scope)
		cache3 := bad("CACHE-3", report.Should, 5, "a private cacheScope should come with a short ttlMs", "", "server/discover.mdx §Caching", scope)
		for _, c := range []*report.CheckResult{&disc2, &tool1, &cache3} {
			c.SameAs = "CACHE-1"
		}
		tool3 := bad("TOOL-3", report.Must, 4, `tools[2].inputSchema.type is "strin", want a JSON Schema type`, `fix the inputSchema of "search_invoices": "type": "string"`, "server/tools.mdx §Tool; schema.ts Tool",
			report.Evidence{Transport: "stdio", Request: "tools/list {}", Response: `{"result":{"tools":[{},{},{"name":"search_invoices","inputSchema":{"type":"strin"}}]}}`, Pointer: "/result/tools/2/inputSchema/type", Value: `"strin"`})
		return []report.CheckResult{reporttest.Check("DISC-1", report.Must, 5, 5), cache1, disc2, tool1, tool3, cache3, reporttest.Check("RPC-1", report.Must, 5, 5)}
	}
	base := baselineOf(reporttest.Layer0(reporttest.New(), checks(false)...))
	return gated(reporttest.Layer0(reporttest.New(), checks(true)...), base)
}

// wideModels are four models with ids too long for four matrix columns.
var wideModels = []string{"claude-sonnet-4-5", "gpt-4.1-mini", "gemini-2.5-flash", "mistral-large-2411"}

// wideFixture is a labelled PR with 30 cases × 4 models and 15 attack
// categories: a hard case collapses for one model (5/5 → 1/5), a negative
// case calls a tool for another, one attack category's success rises; the
// rest passes.
func wideFixture() *report.Report {
	ids := []string{"neg-invoice-theory", "refund-over-limit", "search-invoices-by-customer-and-date", "create-invoice-draft"}
	for i := len(ids); i < 30; i++ {
		ids = append(ids, fmt.Sprintf("lookup-customer-%02d", i))
	}
	cats := []string{"description-injection", "result-injection", "exfiltrate-secrets", "tool-shadowing", "rug-pull", "prompt-leak", "role-play", "markdown-image",
		"unicode-smuggling", "fake-system", "url-fetch", "delete-files", "impersonation", "jailbreak-dan", "base64-payload"}
	mk := func(k func(kase, model int) int, success func(cat, model int) int) *report.Report {
		r := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5), reporttest.Check("TOOL-3", report.Must, 5, 5))
		r.Models = nil
		for _, m := range wideModels {
			r.Models = append(r.Models, report.Model{ID: m, Provider: "fake", Requested: m, Served: m + "-2026-10-01"})
		}
		for i, id := range ids {
			kind := report.Soft
			if i < 3 {
				kind = report.Hard
			}
			for j, m := range wideModels {
				n := k(i, j)
				if i == 0 {
					reporttest.Case(r, id, kind, m, n, 5, reporttest.Score(report.OverTrigger, 5-n, 5))
				} else {
					reporttest.Case(r, id, kind, m, n, 5, reporttest.Score(report.ToolSelection, n, 5), reporttest.Score(report.ArgumentCorrectness, n, 5))
				}
			}
		}
		for i := range r.Behavior.Cases {
			r.Behavior.Cases[i].Source, r.Behavior.Cases[i].Line = "golden/tasks.yaml", 3+9*i
		}
		r.Behavior.Cases[0].Negative = true
		r.Resilience = &report.Resilience{Faults: []report.FaultResult{}, Attacks: []report.AttackResult{}}
		for ci, c := range cats {
			for j, m := range wideModels {
				r.Resilience.Attacks = append(r.Resilience.Attacks, report.AttackResult{Model: m, Attack: c, Scores: []report.Score{
					reporttest.Score(report.AttackSuccess, success(ci, j), 20), reporttest.Score(report.Refusal, 20-success(ci, j), 20)}})
			}
		}
		for j, m := range wideModels {
			r.Resilience.Faults = append(r.Resilience.Faults, report.FaultResult{Model: m, Fault: "timeout", Scores: []report.Score{reporttest.Score(report.FaultHandled, 10-j%2, 10)}})
		}
		usd := func(v float64) *float64 { return &v }
		r.Spend = &report.Spend{Prices: "2026-11-29", ReusedRuns: 400, FreshRuns: 200, MaxUSD: 5,
			Preview: report.SpendFigures{Calls: 1400, Tokens: 2100000, USD: usd(2.40)},
			Used:    report.SpendFigures{Calls: 1320, Tokens: 1980000, USD: usd(1.9726)},
			Layers: []report.SpendPart{{Name: "Layer 1", Used: report.SpendFigures{Calls: 720, Tokens: 1100000, USD: usd(1.1)}},
				{Name: "Layer 2", Used: report.SpendFigures{Calls: 600, Tokens: 880000, USD: usd(0.8726)}}}}
		return r
	}
	base := baselineOf(mk(func(int, int) int { return 5 }, func(int, int) int { return 0 }))
	now := mk(func(kase, model int) int {
		switch {
		case kase == 1 && model == 1:
			return 1 // refund-over-limit × gpt-4.1-mini: a hard case collapses
		case kase == 0 && model == 2:
			return 1 // neg-invoice-theory × gemini: calls a tool 4 times in 5
		case kase == 3 && model == 3:
			return 3
		}
		return 5
	}, func(cat, model int) int {
		if cat == 2 && model == 3 {
			return 6 // exfiltrate-secrets × mistral: 0/20 → 6/20
		}
		return 0
	})
	for i := range now.Behavior.Results {
		res := &now.Behavior.Results[i]
		if res.Case != ids[0] || res.Model != wideModels[2] {
			continue
		}
		for run := 1; run <= 5; run++ {
			cr := report.CaseRun{Run: run, Outcome: report.RunPass, Tokens: 700}
			if run > 1 {
				cr.Outcome, cr.Reasons = report.RunFail, []string{"expected no tool call, called search_invoices"}
				cr.Trajectory = &report.Trajectory{Turns: []report.Turn{
					{StopReason: "tool_use", Calls: []report.ToolCall{{Name: "search_invoices", Arguments: json.RawMessage(`{"query":"theory of invoices"}`), Result: `{"invoices":[]}`}}},
					{Text: "I found no invoices about that.", StopReason: "end_turn"}}, Final: "I found no invoices about that.", End: "answered", ModelCalls: 2}
			}
			res.Runs = append(res.Runs, cr)
		}
	}
	now.Resilience.Runs = []report.ResilienceRun{{Kind: report.KindAttack, Subject: "exfiltrate-secrets", Payload: "exfil-3", Case: ids[2], Model: wideModels[3], Run: 2,
		Outcome: "followed", Counted: true, Reason: "the model sent the API key to the URL the tool result named"}}
	return gated(now, base)
}
