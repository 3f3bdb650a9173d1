package gate_test

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

func replayed(r *report.Report, hash string, stale ...report.StaleTurn) *report.Report {
	r.Replay = &report.Replay{Cassette: "tape/cassette.json", Hash: hash, Answered: 10, Stale: append([]report.StaleTurn{}, stale...)}
	return r
}

const (
	tapeA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	tapeB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// A replayed run is compared only with a baseline replayed from the same
// cassette; against any other its Layers 1 and 2 are gated on floors,
// while the baseline's Layer 0 is still compared.
func TestReplayIsComparedOnlyWithTheSameCassette(t *testing.T) {
	mk := func() *report.Report {
		r := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 5, 5))
		return reporttest.Case(r, "weather", report.Soft, "m1", 5, 5)
	}
	now := func() *report.Report {
		r := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", report.Must, 0, 5))
		return replayed(reporttest.Case(r, "weather", report.Soft, "m1", 3, 5), tapeA)
	}
	// The same cassette: the 5/5 → 3/5 drop is compared (noise at N=5).
	g := evaluate(t, now(), replayed(mk(), tapeA))
	wantStatus(t, one(t, g, report.KindCase, "weather", "m1"), report.ItemWarn, "within run-to-run noise")

	for name, base := range map[string]*report.Report{"live": mk(), "another cassette": replayed(mk(), tapeB)} {
		g := evaluate(t, now(), base)
		if g.Baseline == nil {
			t.Fatalf("%s: the baseline's Layer 0 was dropped too", name)
		}
		wantStatus(t, one(t, g, report.KindCase, "weather", "m1"), report.ItemFail, "floors only")
		wantStatus(t, one(t, g, report.KindCheck, "DISC-1", ""), report.ItemFail)
		if !strings.Contains(strings.Join(g.Notes, "\n"), "Layers 1 to 3 are gated on floors only") {
			t.Errorf("%s: notes %q", name, g.Notes)
		}
		// Set aside, not missing: a trial read "the baseline has no
		// Layer 1 results" of a baseline that had 36.
		if strings.Contains(strings.Join(g.Notes, "\n"), "has no Layer 1 results") {
			t.Errorf("%s: notes say the baseline has no Layer 1: %q", name, g.Notes)
		}
	}
	// A live run against a replayed baseline: the same refusal.
	live := reporttest.Case(reporttest.New(), "weather", report.Soft, "m1", 3, 5)
	g = evaluate(t, live, replayed(reporttest.Case(reporttest.New(), "weather", report.Soft, "m1", 5, 5), tapeA))
	if g.Baseline != nil || !strings.Contains(g.BaselineNote, "this run called the models") || !strings.Contains(g.BaselineNote, "floors only") {
		t.Errorf("baseline %+v, note %q", g.Baseline, g.BaselineNote)
	}
}

func TestStaleTurnsAreInconclusiveItems(t *testing.T) {
	st := report.StaleTurn{Model: "m1", Case: "weather", Run: 1, Turn: 2, Diff: `Messages[2].Results[0].Content: recorded "sunny", now "rainy"`}
	st2 := st
	st2.Run = 2
	g := evaluate(t, replayed(reporttest.New(), tapeA, st, st2), nil)
	it := one(t, g, report.KindCassette, "weather", "m1")
	wantStatus(t, it, report.ItemInconclusive, `cassette stale at case weather, run 1, turn 2: Messages[2].Results[0].Content: recorded "sunny", now "rainy"`)
	if g.Verdict != report.GateInconclusive {
		t.Errorf("verdict %s", g.Verdict)
	}
}
