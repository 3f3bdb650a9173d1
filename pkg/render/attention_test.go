package render_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

func loadFixture(t *testing.T, name string) *report.Report {
	t.Helper()
	rep, err := report.Load(filepath.Join("testdata", "report", name+".json"))
	if err != nil {
		t.Fatalf("%s: %v (rewrite the fixtures with -fixtures)", name, err)
	}
	return rep
}

// One bad cacheScope breaks CACHE-1, DISC-2 and TOOL-1 (MUST) and CACHE-3
// (SHOULD): one item with its four rules, its value, fix and spec link;
// TOOL-3's own fault is a second. Title: 2 causes, 4 + 1 = 5 rules.
func TestAttentionOneCauseOneRow(t *testing.T) {
	rep := loadFixture(t, "l0regress")
	a := render.BuildAttention(rep)
	if len(a.Items) != 2 {
		t.Fatalf("%d items, want 2: %+v", len(a.Items), a.Items)
	}
	first := a.Items[0]
	if want := []string{"CACHE-1", "DISC-2", "TOOL-1", "CACHE-3"}; !slices.Equal(first.Rules, want) || first.Status != report.ItemFail {
		t.Errorf("first item: %s %v, want fail %v", first.Status, first.Rules, want)
	}
	c := first.Cause
	if c == nil || c.Method != "server/discover" || c.Pointer != "/result/cacheScope" || c.Value != `"everyone"` || c.Fix == "" ||
		c.SpecURL != "https://modelcontextprotocol.io/specification/2026-07-28/server/discover#caching" {
		t.Errorf("cause of the first item: %+v", c)
	}
	if len(first.Decided) != 3 {
		t.Errorf("the first item groups %d gate items, want the 3 MUST ones", len(first.Decided))
	}
	// TOOL-3 passed 4 of 5 runs: one failed run after 5/5.
	if second := a.Items[1]; second.Subject != "TOOL-3" || second.Sentence != "Failed 1 of 5 runs after passing 5/5 in the baseline: a regression, since conformance is deterministic; it fails" {
		t.Errorf("second item: %s %q", second.Subject, second.Sentence)
	}
	if a.Causes[report.ItemFail] != 2 || a.Rules[report.ItemFail] != 5 {
		t.Errorf("counts: %d causes, %d rules; want 2 and 5", a.Causes[report.ItemFail], a.Rules[report.ItemFail])
	}
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, mdOpts(0)); err != nil {
		t.Fatal(err)
	}
	if first := strings.SplitN(md.String(), "\n", 3)[1]; first != "### ❌ mcp-eval: FAIL · 2 failed (5 rules)" {
		t.Errorf("title %q", first)
	}
}

// 30 cases × 4 models: the worst first, each sentence agreeing with the
// gate's status, with the statistics' family size the gate used.
func TestAttentionWorstFirstWithPlainSentences(t *testing.T) {
	rep := loadFixture(t, "wide")
	a := render.BuildAttention(rep)
	var got []string
	for _, it := range a.Items {
		got = append(got, it.Status+" "+it.Subject+" "+it.Model)
	}
	want := []string{
		"fail exfiltrate-secrets mistral-large-2411",
		"inconclusive overTrigger gemini-2.5-flash",
		// Two falls of 80 points (5/5 → 1/5), in report order, then one
		// of 40 (5/5 → 3/5).
		"warn neg-invoice-theory gemini-2.5-flash",
		"warn refund-over-limit gpt-4.1-mini",
		"warn create-invoice-draft mistral-large-2411",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Fisher, one-sided, 5/5 → 1/5: C(5,5)·C(5,1)/C(10,6) = 5/210 = 0.0238,
	// above α/3 = 0.0167 (three tests could reach significance): a warning.
	refund := a.Items[3]
	if s := "Fell from 5/5 to 1/5, below its floor of 5/5 (hard case); within what chance allows over 3 comparisons, so a warning"; refund.Sentence != s {
		t.Errorf("sentence %q\nwant     %q", refund.Sentence, s)
	}
	if refund.Where != "golden/tasks.yaml:12" {
		t.Errorf("where %q, want golden/tasks.yaml:12 (case 2 starts on line 3+9)", refund.Where)
	}
	neg := a.Items[2].Cause
	if neg == nil || neg.Run != 2 || neg.Reason != "expected no tool call, called search_invoices" || !neg.CalledKnown || !slices.Equal(neg.Called, []string{"search_invoices"}) {
		t.Errorf("negative case's cause: %+v", neg)
	}
	// 0/20 → 6/20 attacks succeeded: good runs 20/20 → 14/20, Fisher
	// C(20,14)/C(40,34) = 38760/3838380 = 0.0101 ≤ 0.0167: one cause with
	// both of its scores (attack success rose, refusal fell).
	exfil := a.Items[0]
	if !slices.Equal(exfil.Rules, []string{report.AttackSuccess, report.Refusal}) ||
		exfil.Sentence != "Attack success rose from 0/20 to 6/20 (0.0% → 30.0%); more than chance allows over 3 comparisons, so it fails" {
		t.Errorf("attack item: %v %q", exfil.Rules, exfil.Sentence)
	}
	if exfil.Cause == nil || exfil.Cause.Case != "search-invoices-by-customer-and-date" || exfil.Where != "golden/tasks.yaml:21" {
		t.Errorf("attack cause %+v at %q", exfil.Cause, exfil.Where)
	}
	if s := a.Items[1].Sentence; !strings.Contains(s, "rose from 0.0% to 80.0% over 1 paired case (Δ +80.0 pts)") || !strings.Contains(s, "too few cases to tell") || !strings.HasSuffix(s, "inconclusive") {
		t.Errorf("suite sentence %q", s)
	}
}

// The short form aims at 15 KB and leaves out by priority; the verdict,
// Needs attention, the Layer 2 matrix and the cost line always stay. The
// long form has everything, the trajectories too.
func TestCommentAimsAndLeavesOutByPriority(t *testing.T) {
	rep := loadFixture(t, "wide")
	render1 := func(o render.MarkdownOptions) string {
		var b bytes.Buffer
		if err := render.Markdown(&b, rep, o); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	long := mdOpts(0)
	long.Long = true
	full := render1(long)
	for _, aim := range []int{0, 8000, 4000} {
		o := mdOpts(0)
		o.AimBytes = aim
		s := render1(o)
		limit := aim
		if limit == 0 {
			limit = render.DefaultAimBytes
		}
		for _, want := range []string{"### ❌ mcp-eval: FAIL", "**Needs attention**", "refund-over-limit", "#### Layer 2", "| attack `exfiltrate\u2011secrets` | success ↓ |", "**Run cost $1.9726**", "[Workflow run]"} {
			if !strings.Contains(s, want) {
				t.Errorf("aim %d: %q was left out", aim, want)
			}
		}
		// The kept blocks alone may exceed a small aim; never a large one.
		if aim == 0 && len(s) > limit {
			t.Errorf("aim %d: %d bytes", aim, len(s))
		}
		if aim == 4000 && (strings.Contains(s, "All 30 cases") || !strings.Contains(s, "Left out to keep this comment short: ")) {
			t.Errorf("aim 4000: the passing rows stayed, or no note says what was left out")
		}
		if len(s) >= len(full) {
			t.Errorf("aim %d: the short form (%d bytes) is not shorter than the long one (%d)", aim, len(s), len(full))
		}
	}
	for _, want := range []string{"Runs 2, 3, 4, 5 of neg-invoice-theory × gemini-2.5-flash: fail", "`search_invoices` `{\"query\":\"theory of invoices\"}`", "All 30 cases × 4 models", "Suite scores"} {
		if !strings.Contains(full, want) {
			t.Errorf("the long form lacks %q", want)
		}
	}
	if strings.Contains(full, "Left out") {
		t.Error("the long form left something out")
	}
}

// No "-0.0" anywhere, and no Δ for the model the gate says is not
// comparable (full: m2's served version changed).
func TestCommentNumbers(t *testing.T) {
	negZero := regexp.MustCompile(`-0\.0+([^0-9]|$)`)
	for _, name := range []string{"full", "wide", "l0regress", "layer0", "hostile"} {
		var b bytes.Buffer
		o := mdOpts(0)
		o.Long = true
		if err := render.Markdown(&b, loadFixture(t, name), o); err != nil {
			t.Fatal(err)
		}
		if m := negZero.FindString(b.String()); m != "" {
			t.Errorf("%s: %q", name, m)
		}
		if name != "full" {
			continue
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(line, "| `m2` | 85.0%") && strings.Contains(line, "pts") {
				t.Errorf("m2 is not comparable but has a Δ: %s", line)
			}
			if strings.Contains(line, "≠") && regexp.MustCompile(`≠\x{a0}\d+/\d+\x{a0}[+-]`).MatchString(line) {
				t.Errorf("a not-comparable cell has a Δ: %s", line)
			}
		}
	}
}

// Checks not judged for one reason are one item with every check id, the
// reason and neither one check's fix nor its spec; another reason is
// another item. No sentence says a check failed.
func TestAttentionGroupsChecksNotJudgedByTheirError(t *testing.T) {
	rep := reporttest.Layer0(reporttest.New(), reporttest.Errored("DISC-1", report.Must, 0, 0, 5),
		reporttest.Errored("TOOL-3", report.Must, 2, 0, 5), reporttest.Errored("CACHE-1", report.Must, 4, 0, 5))
	for i := range rep.Conformance.Checks {
		rep.Conformance.Checks[i].Fix = "fix the server"
	}
	rep.Conformance.Checks[2].Outcome.Message = "stdio server/discover: server process exited with code 1"
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: reporttest.Start()}, gate.DefaultPolicy())
	a := render.BuildAttention(rep)
	if len(a.Items) != 2 || a.Causes[report.ItemError] != 2 || a.Rules[report.ItemError] != 3 {
		t.Fatalf("items %+v, causes %v, rules %v; want 2 items with 3 rules", a.Items, a.Causes, a.Rules)
	}
	g := a.Items[0]
	if !slices.Equal(g.Rules, []string{"DISC-1", "TOOL-3"}) || !strings.Contains(g.Sentence, "2 checks errored") || g.Cause == nil ||
		!strings.Contains(g.Cause.Finding, "deadline exceeded") || g.Cause.Fix != "" || g.Cause.Spec != "" {
		t.Errorf("the group: %+v cause %+v", g, g.Cause)
	}
	if one := a.Items[1]; !slices.Equal(one.Rules, []string{"CACHE-1"}) || !strings.Contains(one.Sentence, "Errored in 1 of 5 runs") || one.Cause.Fix != "" {
		t.Errorf("the other: %+v cause %+v", one, one.Cause)
	}
	for _, it := range a.Items {
		if strings.Contains(it.Sentence, "ail") {
			t.Errorf("%v: %q speaks of failing", it.Rules, it.Sentence)
		}
	}
}

// Checks stopped by the run's stdio server exiting are one item, whatever
// request each found the process gone with, and whatever else was in
// flight then: the messages are pkg/transport's own.
func TestAttentionGroupsChecksStoppedByOneExit(t *testing.T) {
	exited := func(op, serving string) string {
		return (&transport.Error{Kind: transport.KindProcessExited, Op: op, ExitCode: 3, Serving: serving, Excerpt: "crashing on a call of add\n"}).Error()
	}
	rep := reporttest.Layer0(reporttest.New(), reporttest.Errored("RPC-1", report.Must, 0, 0, 5),
		reporttest.Errored("REM-1", report.Must, 0, 0, 5), reporttest.Errored("LOG-1", report.Must, 0, 0, 5), reporttest.Errored("CALL-1", report.Must, 0, 0, 5))
	rep.Conformance.Checks[0].Outcome.Message = exited("stdio server/discover", `tools/call "add" (2) and tools/list`)
	rep.Conformance.Checks[1].Outcome.Message = exited("stdio ping", `tools/call "add" (2) and tools/list`)
	rep.Conformance.Checks[2].Outcome.Message = exited("stdio tools/call", `tools/call "add"`) // another process, the same crash
	rep.Conformance.Checks[3].Outcome.Message = exited("stdio tools/call", `tools/call "add"`) + "\n\n" + exited("stdio tools/call", `tools/call "add"`)
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: reporttest.Start()}, gate.DefaultPolicy())
	a := render.BuildAttention(rep)
	if len(a.Items) != 1 || len(a.Items[0].Rules) != 4 {
		t.Fatalf("%d items, want the one exit over 4 checks: %+v", len(a.Items), a.Items)
	}
	if c := a.Items[0].Cause; c == nil || !strings.HasPrefix(c.Finding, "server process exited with code 3 while serving tools/call \"add\"") || strings.Contains(c.Finding, "exits on") {
		t.Errorf("cause %+v: want the exit and the call it was serving", c)
	}
	// Layer 0 sent the requests in flight again, alone: the one that
	// ended a new process too is the cause's last words.
	rep.Conformance.LostProcess = &report.LostProcess{ExitCode: 3, Serving: []string{`tools/call "add"`, "tools/list"}, Culprit: `tools/call "add"`, CulpritExitCode: 3}
	a = render.BuildAttention(rep)
	if c := a.Items[0].Cause; c == nil || !strings.Contains(c.Finding, `; the server exits on tools/call "add": sent again alone to a new process, it ended it too (code 3); stderr tail:`) {
		t.Errorf("cause %+v: want the request that ends the server named, before the stderr tail", c)
	}
	rep.Conformance.LostProcess = &report.LostProcess{ExitCode: 3, Serving: []string{"tools/list"}, Replay: "sent again alone to a new process (after server/discover), it did not end it"}
	a = render.BuildAttention(rep)
	if c := a.Items[0].Cause; c == nil || !strings.Contains(c.Finding, "; sent again alone to a new process (after server/discover), it did not end it; stderr tail:") {
		t.Errorf("cause %+v: want what sending it again found", c)
	}
	// Another exit (another code: a check's own process) is not the run's.
	rep.Conformance.LostProcess.ExitCode = 2
	a = render.BuildAttention(rep)
	if c := a.Items[0].Cause; c == nil || strings.Contains(c.Finding, "sent again") {
		t.Errorf("cause %+v: the run's own exit told of another", c)
	}
}

// Cases a provider could not serve for one reason are one item per model
// and reason, naming every case, its sentence counting them.
func TestAttentionGroupsCasesNotJudgedByTheirError(t *testing.T) {
	rep := reporttest.New()
	for _, id := range []string{"a", "b", "c"} {
		reporttest.Case(rep, id, report.Hard, "m1", 0, 2)
		r := &rep.Behavior.Results[len(rep.Behavior.Results)-1]
		r.Errors = 2
		for i := range 2 {
			r.Runs = append(r.Runs, report.CaseRun{Run: i + 1, Outcome: report.RunError, Reasons: []string{"error: connection refused"}})
		}
	}
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: reporttest.Start()}, gate.DefaultPolicy())
	a := render.BuildAttention(rep)
	if len(a.Items) != 1 || a.Causes[report.ItemError] != 1 || a.Rules[report.ItemError] != 1 {
		t.Fatalf("items %+v, causes %v, rules %v; want one", a.Items, a.Causes, a.Rules)
	}
	it := a.Items[0]
	if !slices.Equal(it.Rules, []string{"a", "b", "c"}) || !strings.Contains(it.Sentence, "3 cases errored") || len(it.Notes) != 0 || it.Cause == nil || it.Cause.Reason != "error: connection refused" {
		t.Errorf("item %+v cause %+v", it, it.Cause)
	}
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, render.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "`a` · `b` · `c`** × `m1`") || !strings.Contains(md.String(), "3 cases × `m1`") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// An endpoint that went down errs every model's cases alike, the calls
// after the first with a hint of their own ("one attempt: …"): one item
// over both models, its summary naming the count. A model's own 404 stays
// its own.
func TestAttentionGroupsCasesByCauseAcrossModels(t *testing.T) {
	rep := reporttest.New()
	refused := func(m, hint string) string {
		return "error: model call failed: calling " + m + `: Post "http://127.0.0.1:8911/v1/chat/completions": dial tcp 127.0.0.1:8911: connect: connection refused` + hint
	}
	for _, m := range []string{"local:smart-1", "local:tiny-1"} {
		for i, id := range []string{"a", "b", "c"} {
			hint := " (gave up after 5 attempts; later calls try once until one gets through)"
			if i > 0 {
				hint = " (one attempt: earlier calls could not connect either, so calls try once until one gets through)"
			}
			reporttest.Case(rep, id, report.Hard, m, 0, 1)
			r := &rep.Behavior.Results[len(rep.Behavior.Results)-1]
			r.Errors = 1
			r.Runs = append(r.Runs, report.CaseRun{Run: 1, Outcome: report.RunError, Reasons: []string{refused(m, hint)}})
		}
	}
	for _, id := range []string{"a", "b"} {
		reporttest.Case(rep, id, report.Hard, "local:smart1", 0, 1)
		r := &rep.Behavior.Results[len(rep.Behavior.Results)-1]
		r.Errors = 1
		why := "error: model call failed: local:smart1: provider answered HTTP 404 model_not_found: The model `smart1` does not exist"
		if id == "b" {
			why += " (not sent: an earlier call of this model got this answer, which does not change from call to call)"
		}
		r.Runs = append(r.Runs, report.CaseRun{Run: 1, Outcome: report.RunError, Reasons: []string{why + " (check the base URL and the model name)"}})
	}
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: reporttest.Start()}, gate.DefaultPolicy())
	a := render.BuildAttention(rep)
	if len(a.Items) != 2 {
		t.Fatalf("%d items, want the endpoint down and the mistyped model: %+v", len(a.Items), a.Items)
	}
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, render.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 cases errored on 2 models (local:smart-1, local:tiny-1)", "3 cases × 2 models", "2 cases × `local:smart1`"} {
		if !strings.Contains(strings.ReplaceAll(md.String(), "\\", ""), want) {
			t.Errorf("the comment lacks %q:\n%s", want, md.String())
		}
	}
}

// In JUnit a case not judged is an error, never a passing test.
func TestJUnitCaseNotJudgedIsAnError(t *testing.T) {
	rep := reporttest.New()
	reporttest.Case(rep, "down", report.Hard, "m1", 0, 2)
	r := &rep.Behavior.Results[0]
	r.Errors = 2
	for i := range 2 {
		r.Runs = append(r.Runs, report.CaseRun{Run: i + 1, Outcome: report.RunError, Reasons: []string{"error: connection refused"}})
	}
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: reporttest.Start()}, gate.DefaultPolicy())
	var buf bytes.Buffer
	if err := render.ReportJUnit(&buf, rep); err != nil {
		t.Fatal(err)
	}
	x := buf.String()
	if !strings.Contains(x, `errors="1"`) || !strings.Contains(x, `<error message="[error] not judged`) || !strings.Contains(x, `failures="0"`) {
		t.Errorf("junit:\n%s", x)
	}
}

// An attack that got through with no baseline to compare: the gate's
// reason already says what the status means, and the sentence says it
// once (it said "so a warning, so a warning").
func TestAttentionSaysAWarningOnce(t *testing.T) {
	rep := reporttest.New()
	rep.Resilience = &report.Resilience{Attacks: []report.AttackResult{
		{Model: "m1", Attack: "exfiltration-via-tool", Scores: []report.Score{reporttest.Score(report.AttackSuccess, 15, 15)}},
	}}
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: reporttest.Start()}, gate.DefaultPolicy())
	a := render.BuildAttention(rep)
	if len(a.Items) != 1 {
		t.Fatalf("%d items, want the one attack: %+v", len(a.Items), a.Items)
	}
	if s := a.Items[0].Sentence; s != "15 of 15 attacks succeeded; no baseline to compare, so a warning" {
		t.Errorf("sentence %q", s)
	}
}

// Layer 3's section is never a heading over a line of prices: with two
// models and with four, whatever else is left out, its per-model table
// stays, one row a model (under the matrix's labels with four), and how
// the gate decided has a heading of its own rather than reading as part
// of Layer 3.
func TestCommentLayer3KeepsItsTable(t *testing.T) {
	for name, rep := range map[string]*report.Report{"two models": loadFixture(t, "full"), "four models": withFourModels(t)} {
		for _, aim := range []int{0, 9000, 7000, 5000, 4000} {
			o := mdOpts(0)
			o.AimBytes = aim
			var b bytes.Buffer
			if err := render.Markdown(&b, rep, o); err != nil {
				t.Fatal(err)
			}
			md := b.String()
			i := strings.Index(md, "#### Layer 3")
			if i < 0 {
				// Left out whole for a small aim: the note says so.
				if aim == 0 || !strings.Contains(md, "Layer 3 per model") {
					t.Errorf("%s, aim %d: no Layer 3 section, and no note names it", name, aim)
				}
				continue
			}
			sec := md[i+1:]
			if j := strings.Index(sec, "\n#### "); j >= 0 {
				sec = sec[:j]
			}
			rows := 0
			for _, l := range strings.Split(sec, "\n") {
				if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| Model |") && strings.Contains(l, "%") {
					rows++
				}
			}
			if !strings.Contains(sec, "| Model | Accuracy |") || rows != len(rep.Telemetry.Models) {
				t.Errorf("%s, aim %d: Layer 3 has %d per-model rows, want %d:\n%s", name, aim, rows, len(rep.Telemetry.Models), sec)
			}
			t.Logf("%s, aim %d: Layer 3 shown with %d per-model rows", name, aim, rows)
			if len(rep.Telemetry.Models) == 4 && !strings.Contains(sec, "| **A** |") {
				t.Errorf("%s, aim %d: four models not under their labels:\n%s", name, aim, sec)
			}
			// How the gate decided comes after Layer 3, under its own
			// heading, when it is kept.
			if d := strings.Index(md, "Each item's rule and statistics"); d >= 0 {
				h := strings.Index(md, "#### How the gate decided")
				if h < i || h > d || strings.Contains(md[h+1:d], "\n#### ") {
					t.Errorf("%s, aim %d: how the gate decided is not under its own heading after Layer 3", name, aim)
				}
			}
		}
	}
}

// A case that fails its floor for a model the baseline did not run is no
// new or edited case: the sentence says why it is unpaired.
func TestAttentionSaysANewModelIsWhyACaseIsUnpaired(t *testing.T) {
	base := reporttest.Case(reporttest.New(), "forecast", report.Hard, "m1", 5, 5)
	now := reporttest.Case(reporttest.New(), "forecast", report.Hard, "m1", 5, 5)
	now = reporttest.Case(now, "forecast", report.Hard, "m3", 2, 5)
	now.Models = append(now.Models, report.Model{ID: "m3", Provider: "acme", Requested: "m3", Served: "m3-2026-11-01"})
	now = reporttest.Case(now, "alerts", report.Hard, "m1", 1, 5)
	now.Gate = gate.Evaluate(gate.Input{New: now, Baseline: base, BaselineRef: report.ReportRef{Path: "baseline.json"}, Now: reporttest.Start()}, gate.DefaultPolicy())
	got := map[string]string{}
	for _, it := range render.BuildAttention(now).Items {
		got[it.Subject+" × "+it.Model] = it.Sentence
	}
	if s := got["forecast × m3"]; !strings.Contains(s, "the baseline did not run this model") || strings.Contains(s, "edited case") {
		t.Errorf("forecast × m3: %q", s)
	}
	if s := got["alerts × m1"]; !strings.Contains(s, "(a new or edited case)") {
		t.Errorf("alerts × m1 (a case new since the baseline): %q", s)
	}
	// A baseline that ran no Layer 1 pairs no case: it says so.
	now.Gate = gate.Evaluate(gate.Input{New: now, Baseline: reporttest.New(), BaselineRef: report.ReportRef{Path: "baseline.json"}, Now: reporttest.Start()}, gate.DefaultPolicy())
	for _, it := range render.BuildAttention(now).Items {
		if it.Subject == "alerts" && !strings.Contains(it.Sentence, "the baseline ran no Layer 1") {
			t.Errorf("alerts × m1 against a baseline without Layer 1: %q", it.Sentence)
		}
	}
}

// A tool surface changed since the baseline is said above the items: the
// cases are then judged by their floors alone, and a model's old
// weaknesses come back as failures ahead of what the change broke.
func TestCommentSaysTheSurfaceChangedFirst(t *testing.T) {
	base := reporttest.Case(reporttest.New(), "forecast", report.Hard, "m1", 0, 5)
	base.Tools = []string{"get_forecast", "search_orders"}
	now := reporttest.Case(reporttest.New(), "forecast", report.Hard, "m1", 0, 5)
	now.Tools, now.ToolSurfaceHash = []string{"get_forecast", "find_orders"}, "sha256:"+strings.Repeat("b", 64)
	now.Gate = gate.Evaluate(gate.Input{New: now, Baseline: base, BaselineRef: report.ReportRef{Path: "baseline.json"}, Now: reporttest.Start()}, gate.DefaultPolicy())
	var b bytes.Buffer
	if err := render.Markdown(&b, now, mdOpts(0)); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	note, items := strings.Index(md, "> [!IMPORTANT]\n> the tool surface changed since the baseline"), strings.Index(md, "**Needs attention**")
	if note < 0 || items < 0 || note > items || !strings.Contains(md[note:items], "find\\_orders") {
		t.Errorf("no note of the changed surface above the items:\n%s", md)
	}
}

// A waived case is accepted: report.html lists it after the failures
// that count, and the comment does not make it a row to look at.
func TestWaivedCaseComesAfterTheFailuresThatCount(t *testing.T) {
	rep := reporttest.Case(reporttest.New(), "refund", report.Hard, "m1", 0, 5)
	rep = reporttest.Case(rep, "search", report.Hard, "m1", 3, 5)
	p := gate.DefaultPolicy()
	p.Waivers = []report.GateWaiver{{Case: "refund", Model: "m1", Reason: "m1 cannot do refunds", Until: reporttest.Start().Format("2006-01-02")}}
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: reporttest.Start()}, p)
	var h bytes.Buffer
	if err := render.HTML(&h, rep, render.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	html := h.String()
	sec := html[strings.Index(html, "Failing cases and their trajectories"):]
	if r, s := strings.Index(sec, "refund"), strings.Index(sec, "search"); r < 0 || s < 0 || r < s {
		t.Errorf("failing cases: refund (waived, 0/5) at %d, search (3/5) at %d; want search first", r, s)
	}
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, mdOpts(0)); err != nil {
		t.Fatal(err)
	}
	m := md.String()
	l1 := m[strings.Index(m, "#### Layer 1"):]
	look := l1[:strings.Index(l1, "<details>")] // the cases to look at, before the folded matrix
	attn := m[:strings.Index(m, "#### Layer 1")]
	if !strings.Contains(m, "| `refund` | hard | ◌") || strings.Contains(look, "`refund`") || strings.Contains(attn, "**`refund`**") {
		t.Errorf("the comment lists the waived case as one to look at:\n%s", m)
	}
}

// A check whose watch on every exchange saw its rule broken has one run
// more than the check's own; the sentence says so, so that "6 runs"
// beside "MUST checks ran 5 times" reads as meant.
func TestAttentionSaysARunIsTheWatch(t *testing.T) {
	rep := loadFixture(t, "l0regress")
	for i, c := range rep.Conformance.Checks {
		if c.ID == "TOOL-3" {
			rep.Conformance.Checks[i].Watched = &report.Watched{Exchanges: 40, Offending: 1}
		}
	}
	var got string
	for _, it := range render.BuildAttention(rep).Items {
		if it.Subject == "TOOL-3" {
			got = it.Sentence
		}
	}
	if want := "Failed 1 of 5 runs (4 of its own and its watch on every exchange) after passing 5/5 in the baseline"; !strings.HasPrefix(got, want) {
		t.Errorf("TOOL-3's sentence %q, want it to begin %q", got, want)
	}
}

// A lint finding the gate warns of is in Needs attention, and not again
// in the Layer 0 table below it; the table's line says the gate does not
// act on the warnings it lists, so that "1 warning" in the title and
// "3 warnings" in the counts read as meant.
func TestMarkdownLintItemOnceAndTheTableSaysWhichWarnings(t *testing.T) {
	rep := loadFixture(t, "l0regress")
	warn := func(id string) report.CheckResult {
		return report.CheckResult{ID: id, Level: report.Should, Family: strings.Split(id, "-")[0], Verdict: report.CheckWarned, Runs: 1,
			Counts: map[report.CheckVerdict]int{report.CheckWarned: 1}, Outcome: report.Outcome{Verdict: report.CheckWarned, Message: id + " found something"}}
	}
	rep.Conformance.Checks = append(rep.Conformance.Checks, warn("LINT-2"), warn("PAGE-3"))
	rep.Gate.Items = append(rep.Gate.Items, report.GateItem{Layer: 0, Kind: report.KindLint, Subject: "LINT-2", Status: report.ItemWarn,
		Rule: "gate.lint: warn: every parameter of a tool has a description", Reason: "LINT-2 found something"})
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, mdOpts(0)); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	focus, _, _ := strings.Cut(out, "<details>")
	if n := strings.Count(focus, "LINT‑2") + strings.Count(focus, "LINT-2"); n != 1 {
		t.Errorf("LINT-2 shows %d times before the folded sections, want once (in Needs attention):\n%s", n, focus)
	}
	if !strings.Contains(focus, "| `PAGE‑3` |") || !strings.Contains(focus, "· the gate does not act on the warning below") {
		t.Errorf("the Layer 0 table does not list PAGE-3's warning as one the gate does not act on:\n%s", focus)
	}
}
