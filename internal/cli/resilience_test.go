package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Layer 2 through mcp-eval run: the same golden set and fake models as
// Layer 1, faults and injections planted in the real server's results, and
// the rates in the report for the gate.
func TestRunLayer2FillsTheResilienceSection(t *testing.T) {
	e := newEvalEnv(t, "")
	code, out, errOut := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "resilience", "--out", e.path("report.json"))
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	rep, err := report.Load(e.path("report.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The golden set here names no faults: cases opt in with faults:, so
	// only the injection half runs (on every case that expects a call).
	if rep.Resilience == nil || len(rep.Resilience.Attacks) == 0 {
		t.Fatalf("no attack results in the resilience section\n%s", out)
	}
	for _, a := range rep.Resilience.Attacks {
		if len(a.Scores) != 2 || a.Scores[0].N == 0 {
			t.Fatalf("attack %s for %s has no counted runs: %+v", a.Attack, a.Model, a.Scores)
		}
	}
	if len(rep.Models) < 2 {
		t.Fatalf("models %+v", rep.Models)
	}
}

func TestRunLayer2WithoutModelsSaysSo(t *testing.T) {
	e := newEvalEnv(t, "")
	if err := os.WriteFile(e.path("no-models.yaml"), []byte("golden: tasks.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := e.run("run", "--config", e.path("no-models.yaml"), "--url", e.url, "--layers", "resilience", "--out", e.path("report.json"))
	rep, err := report.Load(e.path("report.json"))
	if err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	if rep.Resilience != nil {
		t.Fatal("nothing should be measured without a model")
	}
	if !strings.Contains(strings.Join(rep.Gate.Notes, "\n"), "no model is configured") {
		t.Fatalf("the gate notes should say why Layer 2 measured nothing: %q", rep.Gate.Notes)
	}
}

// A model that never calls a tool gives the payload no real result to go
// into: every attack run is left out of N. Layer 2 must say so on every
// surface, and the gate must not call it a pass.
func TestRunLayer2ThatMeasuredNothingSaysSoEverywhere(t *testing.T) {
	mute := func(r *llmfake.Request) llmfake.Reply {
		if r.Output != nil {
			return llmfake.Verdict(`{"verdict":"pass","reason":"fine"}`)
		}
		return llmfake.Text("I would rather not use any tool.")
	}
	e := newEvalEnvWith(t, "", mute)
	args := []string{"run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "resilience",
		"--out", e.path("report.json"), "--markdown", e.path("summary.md"), "--html", e.path("report.html")}
	code, out, errOut := e.run(args...)
	if code != ExitOK {
		t.Fatalf("exit %d (want 0: inconclusive warns)\n%s\n%s", code, out, errOut)
	}
	rep, err := report.Load(e.path("report.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Resilience
	if res == nil || len(res.Attacks) != 0 || len(res.Runs) == 0 {
		t.Fatalf("want runs and no attack rows: %+v", res)
	}
	total := map[string]int{}
	for _, u := range res.Unmeasured {
		if u.Kind != report.KindAttack || u.Measured() || u.Why[0].Outcome != "not-delivered" {
			t.Errorf("unmeasured row %+v: want attack runs, all not delivered", u)
		}
		if u.Subject == "all" {
			total[u.Model] = u.Runs
		}
	}
	if len(total) != 2 || total["openai:gpt-5-mini"]*2 != len(res.Runs) {
		t.Fatalf("per-model totals %v over %d runs", total, len(res.Runs))
	}
	want := fmt.Sprintf("%d of %d runs not measured: no tool gave a real result to plant the payload in", total["openai:gpt-5-mini"], total["openai:gpt-5-mini"])
	if !strings.Contains(out, want) || !strings.Contains(out, "nothing measured") || !strings.Contains(out, "verdict: INCONCLUSIVE") {
		t.Errorf("the terminal does not say Layer 2 measured nothing (%q):\n%s", want, out)
	}
	md, _ := os.ReadFile(e.path("summary.md"))
	if !strings.Contains(string(md), "Nothing measured") || !strings.Contains(string(md), strings.Replace(want, ":", `\:`, 1)) {
		t.Errorf("the Markdown summary does not say it:\n%s", md)
	}
	html, _ := os.ReadFile(e.path("report.html"))
	if !strings.Contains(string(html), `id="layer2-unmeasured"`) || !strings.Contains(string(html), want) {
		t.Errorf("the HTML does not say it")
	}
	// The gate: each model's Layer 2 is inconclusive, never passed, and
	// the notes say the layer measured nothing.
	var inconclusive int
	for _, it := range rep.Gate.Items {
		if it.Layer == 2 {
			if it.Status == report.ItemPass {
				t.Errorf("a Layer 2 item passed: %+v", it)
			}
			if it.Status == report.ItemInconclusive && it.Subject == "all" && strings.Contains(it.Reason, "not measured") {
				inconclusive++
			}
		}
	}
	if inconclusive != 2 || rep.Gate.Verdict != report.GateInconclusive || !strings.Contains(strings.Join(rep.Gate.Notes, "\n"), "Layer 2 measured nothing") {
		t.Errorf("gate: %d inconclusive Layer 2 items, verdict %s, notes %q", inconclusive, rep.Gate.Verdict, rep.Gate.Notes)
	}
	if code, _, _ := e.run(append(args, "--fail-on-inconclusive")...); code != ExitFindings {
		t.Errorf("--fail-on-inconclusive: exit %d, want 1", code)
	}
}

// A Layer 2 replay whose cassette went stale (the server's tool
// description changed) counts none of its runs, names them stale rather
// than stopped by a budget, and leaves the items inconclusive with what to
// do.
func TestLayer2StaleReplayIsNotABudgetStop(t *testing.T) {
	e := newEvalEnv(t, "")
	tape := e.path("tape")
	code, out, errOut := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "resilience", "--record", tape, "--out", e.path("recorded.json"))
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("record: exit %d\n%s\n%s", code, out, errOut)
	}
	changed := serveRef(t, refserver.Options{Describe: map[string]string{"get_weather": "Get today's weather for a city."}})
	code, out, errOut = e.runWith(noKeys, "run", "--config", e.path("mcp-eval.yaml"), "--url", changed, "--layers", "resilience", "--replay", tape, "--out", e.path("stale.json"))
	if code == ExitError {
		t.Fatalf("stale replay: harness error\n%s\n%s", out, errOut)
	}
	rep, err := report.Load(e.path("stale.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resilience == nil {
		t.Fatal("no resilience section")
	}
	stale := 0
	for _, u := range rep.Resilience.Unmeasured {
		for _, w := range u.Why {
			if w.Outcome == report.OutcomeBudget {
				t.Errorf("%s %s for %s: %d runs counted as stopped by the budget; no budget was set", u.Kind, u.Subject, u.Model, w.Runs)
			}
			if w.Outcome == report.OutcomeStale {
				stale += w.Runs
				if !strings.Contains(w.Reason, "stale") {
					t.Errorf("reason %q does not say stale", w.Reason)
				}
			}
		}
	}
	if stale == 0 {
		t.Fatalf("no run recorded as stale: %+v", rep.Resilience.Unmeasured)
	}
	found := false
	for _, it := range rep.Gate.Items {
		if it.Layer == 2 && it.Status == report.ItemInconclusive && strings.Contains(it.Reason, "record it again") {
			found = true
		}
		if it.Layer == 2 && strings.Contains(it.Reason, "budget") {
			t.Errorf("gate item %+v speaks of a budget", it)
		}
	}
	if !found {
		t.Errorf("no inconclusive Layer 2 item says to record again: %+v", rep.Gate.Items)
	}
	if strings.Contains(strings.Join(rep.Resilience.Notes, "\n"), "budget reached") {
		t.Errorf("notes speak of a budget: %q", rep.Resilience.Notes)
	}
}
