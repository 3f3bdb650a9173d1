package gate_test

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

// A cancelled run is judged from its report alone: verdict cancelled, no
// items, whatever the baseline; re-gating it keeps it cancelled.
func TestCancelledRunIsNotJudged(t *testing.T) {
	base := reporttest.Green(reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5)))
	now := reporttest.New()
	now.Run.Cancelled = "terminated signal received"
	g := evaluate(t, now, base)
	if g.Verdict != report.GateCancelled || len(g.Items) != 0 || g.Baseline != nil {
		t.Fatalf("gate of a cancelled run: verdict %q, %d items, baseline %+v", g.Verdict, len(g.Items), g.Baseline)
	}
	if !strings.Contains(strings.Join(g.Notes, " "), "terminated signal received") {
		t.Errorf("notes do not say what stopped the run: %q", g.Notes)
	}
}

// A cancelled run's report, given as the baseline, is not compared with:
// floors only, and the note says why.
func TestCancelledReportIsNeverABaseline(t *testing.T) {
	cancelled := reporttest.New()
	cancelled.Run.Cancelled = "interrupt signal received"
	cancelled.Gate = &report.Gate{Verdict: report.GateCancelled}
	now := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5))
	g := evaluate(t, now, cancelled)
	if g.Baseline != nil || !strings.Contains(g.BaselineNote, "cancelled run, never a baseline") {
		t.Fatalf("baseline %+v, note %q", g.Baseline, g.BaselineNote)
	}
	if g.Verdict != report.GatePass {
		t.Errorf("verdict %q against floors only, want pass", g.Verdict)
	}
	// History skips it too: only pass reports are green.
	g = evaluate(t, reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5)), nil, cancelled)
	if len(g.History) != 0 {
		t.Errorf("history took the cancelled report: %+v", g.History)
	}
}
