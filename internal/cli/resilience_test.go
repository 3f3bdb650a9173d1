package cli

import (
	"os"
	"strings"
	"testing"

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
