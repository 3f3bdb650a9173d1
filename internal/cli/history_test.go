package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// `run --history DIR` reads the earlier reports in DIR: the gate walks the
// green ones (drift, slow slides) and the per-model columns carry the
// trend over them, which report.html draws and the comment shows.
func TestRunHistoryDrawsTheTrend(t *testing.T) {
	e := newEvalEnv(t, "")
	hist := e.path("history")
	if err := os.MkdirAll(hist, 0o755); err != nil {
		t.Fatal(err)
	}
	base := []string{"run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "1,3", "--runs", "1", "--cache-dir", e.path("cache")}
	for i, name := range []string{"a.json", "b.json"} {
		args := append(append([]string{}, base...), "--out", filepath.Join(hist, name))
		if i > 0 {
			args = append(args, "--fresh")
		}
		if code, out, errOut := e.run(args...); code != ExitOK {
			t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, out, errOut)
		}
	}
	// Not a report: skipped with a warning, the run goes on.
	os.WriteFile(filepath.Join(hist, "junk.json"), []byte("{"), 0o644)
	args := append(append([]string{}, base...), "--history", hist, "--out", e.path("now.json"), "--html", e.path("now.html"), "--markdown", e.path("now.md"), "--fresh")
	code, out, errOut := e.run(args...)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "skipping history report") {
		t.Errorf("no warning about junk.json:\n%s", errOut)
	}
	rep, err := report.Load(e.path("now.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Gate.History) != 2 {
		t.Errorf("the gate walked %d history reports, want 2: %+v", len(rep.Gate.History), rep.Gate.History)
	}
	if len(rep.Telemetry.Models) != 2 {
		t.Fatalf("%d model columns, want 2", len(rep.Telemetry.Models))
	}
	for _, c := range rep.Telemetry.Models {
		if len(c.Trend) != 3 || c.Trend[2].Accuracy == nil || *c.Trend[2].Accuracy != 1 {
			t.Errorf("%s: trend %+v, want the two earlier reports and this run", c.Model, c.Trend)
		}
	}
	page, _ := os.ReadFile(e.path("now.html"))
	if n := strings.Count(string(page), `<svg class="trend"`); n < 4 {
		t.Errorf("report.html has %d trend charts, want pass rate and p95 for both models at least", n)
	}
	md, _ := os.ReadFile(e.path("now.md"))
	if !strings.Contains(string(md), "(3 runs) |") {
		t.Errorf("the comment has no trend over 3 runs:\n%s", md)
	}
}
