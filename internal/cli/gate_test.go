package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/lexical"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

// save writes a report into dir and returns its path.
func save(t *testing.T, dir, name string, r *report.Report) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := saveReport(p, r); err != nil {
		t.Fatal(err)
	}
	return p
}

func layer0(tool3 int) *report.Report {
	return reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", check.Must, 5, 5), reporttest.Check("TOOL-3", check.Must, tool3, 5))
}

func TestGateExitCodesAndVerdictInReport(t *testing.T) {
	dir := t.TempDir()
	base := save(t, dir, "green.json", reporttest.Green(layer0(5)))

	// A MUST check that passed 5/5 in the baseline fails now: exit 1, and
	// the verdict is written back into the report.
	bad := save(t, dir, "bad.json", layer0(4))
	code, out, stderr := run(t, "gate", "--report", bad, "--baseline", base)
	if code != ExitFindings || !strings.Contains(out, "verdict: FAIL") || !strings.Contains(out, "TOOL-3") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	r, err := report.Load(bad)
	if err != nil || r.Gate == nil || r.Gate.Verdict != report.GateFail || r.Gate.Baseline == nil {
		t.Fatalf("verdict not written into the report: %v %+v", err, r.Gate)
	}
	if r.Gate.Baseline.Path != filepath.ToSlash(mustRel(t, base)) {
		t.Errorf("baseline path %q is not relative to the workspace", r.Gate.Baseline.Path)
	}

	// Same as the baseline: exit 0; --out leaves the input alone.
	good := save(t, dir, "good.json", layer0(5))
	out2 := filepath.Join(dir, "gated.json")
	if code, out, _ := run(t, "gate", "--report", good, "--baseline", base, "--out", out2); code != ExitOK || !strings.Contains(out, "verdict: PASS") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if r, _ := report.Load(good); r.Gate != nil {
		t.Error("--out given, but the input report was changed")
	}
	if r, err := report.Load(out2); err != nil || r.Gate.Verdict != report.GatePass {
		t.Errorf("--out: %v", err)
	}
}

// Runs that errored are not the server's failures: the gate says they
// were not judged and exits 2, as the README promises for a harness that
// could not do its job, and every view says the same.
func TestGateErroredRunsExit2(t *testing.T) {
	dir := t.TempDir()
	base := save(t, dir, "green.json", reporttest.Green(layer0(5)))
	errored := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", check.Must, 5, 5), reporttest.Errored("TOOL-3", check.Must, 2, 0, 5))
	p := save(t, dir, "errored.json", errored)
	code, out, stderr := run(t, "gate", "--report", p, "--baseline", base)
	if code != ExitError || !strings.Contains(out, "verdict: ERROR") || !strings.Contains(out, "Errored in 3 of 5 runs") || strings.Contains(out, "Failed") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	if !strings.Contains(stderr, "not judged") {
		t.Errorf("stderr %q: want why the exit is 2", stderr)
	}
	if r, err := report.Load(p); err != nil || r.Gate.Verdict != report.GateError {
		t.Fatalf("verdict not written: %v", err)
	}
	code, md, stderr := run(t, "report", "--in", p, "--format", "markdown")
	if code != ExitOK || !strings.Contains(md, "mcp-eval: ERROR") || !strings.Contains(md, "not judged") || strings.Contains(md, "To fix") {
		t.Fatalf("report markdown: exit %d\n%s\n%s", code, md, stderr)
	}
	// A failed run next to errored ones is a failure: exit 1.
	mixed := save(t, dir, "mixed.json", reporttest.Layer0(reporttest.New(), reporttest.Errored("DISC-1", check.Must, 3, 1, 5), reporttest.Errored("TOOL-3", check.Must, 2, 0, 5)))
	if code, out, _ := run(t, "gate", "--report", mixed, "--baseline", base); code != ExitFindings || !strings.Contains(out, "verdict: FAIL") {
		t.Errorf("a failed run beside errored ones: exit %d\n%s", code, out)
	}
}

func mustRel(t *testing.T, p string) string {
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, p)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// inconclusivePair is a genuinely ambiguous drop: half of 50 cases lose
// one of 10 runs (0.05), a real drop whose bound does not clear max-drop.
func inconclusivePair(t *testing.T, dir string) (string, string) {
	b, n := reporttest.New(), reporttest.New()
	for i := range 50 {
		id := fmt.Sprintf("c%02d", i)
		k := 9
		if i < 25 {
			k = 8
		}
		reporttest.Case(b, id, report.Soft, "m1", 9, 10)
		reporttest.Case(n, id, report.Soft, "m1", k, 10)
	}
	return save(t, dir, "base.json", reporttest.Green(b)), save(t, dir, "new.json", n)
}

func TestGateInconclusive(t *testing.T) {
	dir := t.TempDir()
	base, now := inconclusivePair(t, dir)
	code, out, stderr := run(t, "gate", "--report", now, "--baseline", base)
	if code != ExitOK || !strings.Contains(out, "verdict: INCONCLUSIVE") || !strings.Contains(stderr, "warning: the verdict is inconclusive") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	if code, _, _ := run(t, "gate", "--report", now, "--baseline", base, "--fail-on-inconclusive"); code != ExitFindings {
		t.Errorf("--fail-on-inconclusive: exit %d, want 1", code)
	}
}

func TestGateBadInput(t *testing.T) {
	dir := t.TempDir()
	good := save(t, dir, "good.json", layer0(5))
	corrupt := filepath.Join(dir, "corrupt.json")
	os.WriteFile(corrupt, []byte(`{"schemaVersion": 1, "run": `), 0o644)
	future := filepath.Join(dir, "future.json")
	os.WriteFile(future, []byte(`{"schemaVersion": 7}`), 0o644)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gate"}, "--report is required"},
		// The policy is checked before any report is read: the missing
		// file is not what is reported.
		{[]string{"gate", "--report", "/nonexistent.json", "--max-drop", "lots"}, `max-drop "lots" is not a number`},
		{[]string{"gate", "--report", "/nonexistent.json", "--max-drop", "1.5"}, "max-drop 1.5 is out of range"},
		{[]string{"gate", "--report", "/nonexistent.json", "--history-depth", "-1"}, "history depth -1"},
		{[]string{"gate", "--report", corrupt}, "not valid JSON"},
		{[]string{"gate", "--report", future}, "schemaVersion 7"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != ExitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}

	// A broken baseline is a warning and floors only, never a failure.
	code, out, stderr := run(t, "gate", "--report", good, "--baseline", corrupt)
	if code != ExitOK || !strings.Contains(stderr, "baseline") || !strings.Contains(stderr, "floors only") || !strings.Contains(out, "unusable") {
		t.Errorf("corrupt baseline: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
}

func TestGateHistory(t *testing.T) {
	dir := t.TempDir()
	hist := filepath.Join(dir, "history")
	os.Mkdir(hist, 0o755)
	for i := range 3 {
		r := reporttest.Case(reporttest.New(), "steady", report.Soft, "m1", 5, 5)
		reporttest.At(r, reporttest.Start().AddDate(0, 0, -i))
		save(t, hist, "h"+string(rune('0'+i))+".json", reporttest.Green(r))
	}
	os.WriteFile(filepath.Join(hist, "junk.json"), []byte("not json"), 0o644)
	base := filepath.Join(hist, "h0.json")
	now := save(t, dir, "new.json", reporttest.Case(reporttest.New(), "steady", report.Soft, "m1", 1, 5))
	code, out, stderr := run(t, "gate", "--report", now, "--baseline", base, "--history", hist)
	if !strings.Contains(out, "Likely model drift") || !strings.Contains(stderr, "skipping history report") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
}

// TestGateMatchesTheCLIComposition holds gate.Evaluate, which now reads
// every rule from the report, to what runPipeline composed before: the
// lexical baseline gated as if Layer 1 had not run, and settleLayer1
// applied after the gate otherwise.
func TestGateMatchesTheCLIComposition(t *testing.T) {
	lex := behavior.ReportModelID(lexical.ID)
	withLex := func(r *report.Report) *report.Report {
		r.Models = append(r.Models, report.Model{ID: lex, Provider: behavior.BaselineLabel, Requested: "lexical"})
		return r
	}
	if !gate.IsLexicalBaseline(withLex(reporttest.New()), lex) {
		t.Fatalf("the gate does not recognise %q, as pkg/behavior writes the lexical selector", lex)
	}
	suite := func(model string, k int, undecided ...string) *report.Report {
		r := withLex(layer0(5))
		for _, id := range []string{"a", "b", "c", "d"} {
			reporttest.Case(r, id, report.Hard, model, k, 5)
		}
		for _, id := range undecided {
			r.Behavior.Inconclusive = append(r.Behavior.Inconclusive, report.Inconclusive{Case: id, Model: model, Runs: 2, Reason: "the judge did not answer"})
		}
		return r
	}
	// composed is the gate section runPipeline wrote before the gate read
	// these rules itself.
	composed := func(rep, base *report.Report, baselineOnly bool) *report.Gate {
		seen := *rep
		if baselineOnly {
			seen.Behavior = nil
		} else if rep.Behavior != nil {
			b := *rep.Behavior
			b.Inconclusive = nil // the gate did not read them
			seen.Behavior = &b
		}
		g := gate.Evaluate(gate.Input{New: &seen, Baseline: base, Now: reporttest.Start()}, gate.DefaultPolicy())
		if !baselineOnly {
			settleLayer1(g, rep.Behavior)
		}
		return g
	}
	for _, tc := range []struct {
		name         string
		now, base    *report.Report
		baselineOnly bool
	}{
		{"a model, all decided", suite("m1", 5), suite("m1", 5), false},
		{"a model, runs undecided", suite("m1", 5, "b", "c"), suite("m1", 5), false},
		{"a model fails, runs undecided", suite("m1", 0, "b"), suite("m1", 5), false},
		{"no baseline, runs undecided", suite("m1", 5, "a"), nil, false},
		{"the lexical baseline", suite(lex, 0), suite(lex, 5), true},
		{"the lexical baseline, runs undecided", suite(lex, 5, "a"), nil, true},
		{"the lexical baseline, Layer 0 fails", reporttest.Layer0(suite(lex, 0, "a"), reporttest.Check("TOOL-3", check.Must, 4, 5)), layer0(5), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := composed(tc.now, tc.base, tc.baselineOnly)
			got := gate.Evaluate(gate.Input{New: tc.now, Baseline: tc.base, Now: reporttest.Start()}, gate.DefaultPolicy())
			if got.Verdict != want.Verdict {
				t.Errorf("verdict %s, the CLI gave %s", got.Verdict, want.Verdict)
			}
			judged := []report.GateItem{}
			for _, it := range got.Items {
				if it.Model == lex {
					if it.Status != report.ItemInfo {
						t.Errorf("the lexical baseline's %s %s is %s, want info", it.Kind, it.Subject, it.Status)
					}
					continue
				}
				judged = append(judged, it)
			}
			if !reflect.DeepEqual(judged, want.Items) {
				t.Errorf("items differ from the CLI's\ngot  %+v\nwant %+v", judged, want.Items)
			}
			if !reflect.DeepEqual(got.Unmatched, want.Unmatched) {
				t.Errorf("unmatched %+v, the CLI gave %+v", got.Unmatched, want.Unmatched)
			}
		})
	}
}

// TestGateAppliesTheRecordedPolicy: a report gated before is gated again
// under the policy it records, field by field, and a flag given
// overrides only its own field.
func TestGateAppliesTheRecordedPolicy(t *testing.T) {
	dir := t.TempDir()
	base, now := inconclusivePair(t, dir)
	gated := filepath.Join(dir, "gated.json")
	if code, _, _ := run(t, "gate", "--report", now, "--baseline", base, "--fail-on-inconclusive", "--max-cost-per-run", "$5", "--out", gated); code != ExitFindings {
		t.Fatalf("first gate: exit %d, want 1", code)
	}
	code, out, stderr := run(t, "gate", "--report", gated, "--baseline", base)
	if code != ExitFindings || !strings.Contains(out, "fail on inconclusive") || !strings.Contains(out, "max-cost-per-run $5") {
		t.Errorf("again, no flags: exit %d, want 1 under the recorded policy\nstdout %s\nstderr %s", code, out, stderr)
	}
	if code, _, _ := run(t, "gate", "--report", gated, "--baseline", base, "--fail-on-inconclusive=false"); code != ExitOK {
		t.Errorf("--fail-on-inconclusive=false: exit %d, want 0", code)
	}
	r, err := report.Load(gated)
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Gate.Policy; p.FailOnInconclusive || p.MaxCostPerRunUSD == nil || *p.MaxCostPerRunUSD != 5 {
		t.Errorf("recorded after the override: %+v", p)
	}
	// An empty value turns a recorded cost gate off.
	if code, out, _ := run(t, "gate", "--report", gated, "--baseline", base, "--max-cost-per-run="); code != ExitOK || strings.Contains(out, "max-cost-per-run") {
		t.Errorf("--max-cost-per-run=: exit %d\n%s", code, out)
	}

	// A recorded max-drop: the drop of 0.05 is within 0.1.
	wide := filepath.Join(dir, "wide.json")
	if code, _, _ := run(t, "gate", "--report", now, "--baseline", base, "--max-drop", "10%", "--max-cost-increase", "0.5", "--out", wide); code != ExitOK {
		t.Fatalf("max-drop 10%%: exit %d", code)
	}
	if code, out, _ := run(t, "gate", "--report", wide, "--baseline", base); code != ExitOK || !strings.Contains(out, "verdict: PASS") || !strings.Contains(out, "max-cost-increase 0.5") {
		t.Errorf("again under max-drop 0.1: exit %d\n%s", code, out)
	}
	if code, out, _ := run(t, "gate", "--report", wide, "--baseline", base, "--max-drop", "0.02"); code != ExitOK || !strings.Contains(out, "verdict: INCONCLUSIVE") {
		t.Errorf("--max-drop 0.02 over the recorded 0.1: exit %d\n%s", code, out)
	}
	// Without --baseline the floors apply, and the gate says what the
	// report was compared with before.
	if _, _, stderr := run(t, "gate", "--report", wide); !strings.Contains(stderr, "was gated against") {
		t.Errorf("no --baseline: stderr %q", stderr)
	}

	// Cost flags are policy: checked before any report is read.
	for _, args := range [][]string{{"--max-cost-per-run", "lots"}, {"--max-cost-increase", "-1"}} {
		code, _, stderr := run(t, append([]string{"gate", "--report", "/nonexistent.json"}, args...)...)
		if code != ExitError || !strings.Contains(stderr, args[0][2:]) {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming the flag", args, code, stderr)
		}
	}
}

// TestGateRepeatsTheVerdictOfItsWriter gates reports as runPipeline
// writes them (gate section, recorded policy) and wants the same verdict
// and exit code from mcp-eval gate.
func TestGateRepeatsTheVerdictOfItsWriter(t *testing.T) {
	dir := t.TempDir()
	lex := behavior.ReportModelID(lexical.ID)
	mk := func(model string, k int, undecided bool) *report.Report {
		r := layer0(5)
		r.Models = append(r.Models, report.Model{ID: lex, Provider: behavior.BaselineLabel, Requested: "lexical"})
		for _, id := range []string{"a", "b", "c"} {
			reporttest.Case(r, id, report.Hard, model, k, 5)
		}
		if undecided {
			r.Behavior.Inconclusive = []report.Inconclusive{{Case: "b", Model: model, Runs: 2, Reason: "the budget was reached"}}
		}
		return r
	}
	legacyPolicy := gate.DefaultPolicy()
	legacyPolicy.FailOnLegacy = true
	strict := gate.DefaultPolicy()
	strict.FailOnInconclusive = true
	for i, tc := range []struct {
		name      string
		now, base *report.Report
		p         gate.Policy
		want      int
	}{
		{"undecided runs", mk("m1", 5, true), mk("m1", 5, false), gate.DefaultPolicy(), ExitOK},
		{"undecided runs, fail on inconclusive", mk("m1", 5, true), mk("m1", 5, false), strict, ExitFindings},
		{"a new failure", mk("m1", 0, false), mk("m1", 5, false), gate.DefaultPolicy(), ExitFindings},
		{"the lexical baseline below its floors", mk(lex, 0, true), mk(lex, 5, false), strict, ExitOK},
		{"legacy", reporttest.Legacy(reporttest.New()), nil, gate.DefaultPolicy(), ExitOK},
		{"legacy, fail on legacy", reporttest.Legacy(reporttest.New()), nil, legacyPolicy, ExitFindings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.now
			r.Gate = gate.Evaluate(gate.Input{New: r, Baseline: tc.base, Now: reporttest.Start()}, tc.p)
			if code := exitFor(r); code != tc.want {
				t.Fatalf("the writer's exit %d, want %d (verdict %s)", code, tc.want, r.Gate.Verdict)
			}
			path := save(t, dir, fmt.Sprintf("r%d.json", i), r)
			args := []string{"gate", "--report", path}
			if tc.base != nil {
				args = append(args, "--baseline", save(t, dir, fmt.Sprintf("b%d.json", i), tc.base))
			}
			code, out, stderr := run(t, args...)
			if code != tc.want {
				t.Errorf("mcp-eval gate: exit %d, want %d\nstdout %s\nstderr %s", code, tc.want, out, stderr)
			}
			again, err := report.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if again.Gate.Verdict != r.Gate.Verdict {
				t.Errorf("verdict %s, the writer's %s", again.Gate.Verdict, r.Gate.Verdict)
			}
		})
	}
}

// settleLayer1 is what the CLI applied after the gate before the gate read
// these rules itself, kept here as the reference TestGateMatchesTheCLIComposition
// holds the gate to.
func settleLayer1(g *report.Gate, b *report.Behavior) {
	if g == nil || b == nil {
		return
	}
	for _, inc := range b.Inconclusive {
		g.Items = append(g.Items, report.GateItem{Layer: 1, Kind: report.KindCase, Subject: inc.Case, Model: inc.Model, Direction: report.Higher,
			Status: report.ItemInconclusive, Rule: "every run of a case is decided",
			Reason: fmt.Sprintf("%d runs not decided: %s", inc.Runs, inc.Reason)})
		if g.Verdict == report.GatePass {
			g.Verdict = report.GateInconclusive
		}
	}
}

// The terminal's matrix marks a cell whose runs errored: a refused model
// endpoint read as "0/2" in every cell, a model failing every case.
func TestMatrixMarksErroredRuns(t *testing.T) {
	rep := reporttest.New()
	rep.Behavior = &report.Behavior{RunsPerCase: 2, Cases: []report.Case{{ID: "weather"}, {ID: "hello"}},
		Results: []report.CaseResult{
			{Case: "weather", Model: "m1", Passed: report.Count{K: 0, N: 2}, Errors: 2},
			{Case: "hello", Model: "m1", Passed: report.Count{K: 2, N: 2}},
		}}
	var b strings.Builder
	matrixText(&b, rep)
	if !strings.Contains(b.String(), " 0/2e") || strings.Contains(b.String(), " 2/2e") || !strings.Contains(b.String(), "e some runs errored") {
		t.Errorf("matrix:\n%s", b.String())
	}
}

// A report gated on the last day of a case waiver is gated again later
// with the same verdict: its waivers are judged on the day it was gated.
func TestGateJudgesWaiversOnTheRecordedDay(t *testing.T) {
	dir := t.TempDir()
	r := reporttest.Case(layer0(5), "refund", report.Hard, "m2", 0, 5)
	day := time.Now().AddDate(0, 0, -10).UTC()
	p := gate.DefaultPolicy()
	p.Waivers = []report.GateWaiver{{Case: "refund", Model: "m2", Reason: "m2 cannot do refunds", Until: day.Format(time.DateOnly)}}
	r.Gate = gate.Evaluate(gate.Input{New: r, Now: day}, p)
	if r.Gate.Verdict != report.GatePass {
		t.Fatalf("gated on the waiver's last day: %s", r.Gate.Verdict)
	}
	path := save(t, dir, "gated.json", r)
	code, out, stderr := run(t, "gate", "--report", path)
	if code != ExitOK || !strings.Contains(out, "verdict: PASS") {
		t.Fatalf("gated again ten days later: exit %d, want 0\nstdout %s\nstderr %s", code, out, stderr)
	}
	again, err := report.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(again.Gate.Notes, "\n"); !strings.Contains(notes, "as of "+day.Format(time.DateOnly)) {
		t.Errorf("the gate does not say which day its waivers were judged on: %q", notes)
	}
}
