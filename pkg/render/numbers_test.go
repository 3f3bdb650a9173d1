package render

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func f(v float64) *float64 { return &v }

// The numbers a reviewer reads, against values worked out by hand.
func TestDeltaPointsHasOneSignAndNoNegativeZero(t *testing.T) {
	for _, c := range []struct {
		d    float64
		want string
	}{
		{-0.0004, "0.0 pts"}, {0.0004, "0.0 pts"}, {0, "0.0 pts"},
		{-0.133333, "-13.3 pts"}, // 2/15 fewer
		{0.225, "+22.5 pts"},     // 9/40 attacks succeeded, 0/40 before
		{-1, "-100.0 pts"},
	} {
		if got := deltaPoints(c.d); got != c.want {
			t.Errorf("deltaPoints(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	if got := deltaWhole(-0.004); got != "" {
		t.Errorf("deltaWhole(-0.004) = %q, want nothing", got)
	}
	if got := relPercent(2030, 2030.4); got != "0%" {
		t.Errorf("relPercent = %q, want 0%%", got)
	}
	if got := moved(0.0004); got != "held" {
		t.Errorf("moved(0.0004) = %q", got)
	}
}

func TestSuiteChangeClipsBoundsToWhatIsPossible(t *testing.T) {
	for _, c := range []struct {
		name          string
		it            report.GateItem
		delta, surely string
	}{
		// 100% → 85%: drop 0.15; a bound of -14.9 pts would say the score
		// might have risen, which a score at 100% cannot: clipped to 0.
		{"at the ceiling", report.GateItem{Direction: report.Higher, BaselineValue: f(1), Drop: f(0.15), Bound: f(-0.149), Pairs: 8}, "-15.0 pts", "no clear fall"},
		// 50% → 36.7%: a bound of -174.5 pts is below the -50 possible.
		{"impossible bound", report.GateItem{Direction: report.Higher, BaselineValue: f(0.5), Drop: f(0.133), Bound: f(-1.745), Pairs: 3}, "-13.3 pts", "no clear fall"},
		// 60% → 0%: a bound of 90 pts is clipped to the 60 the score had.
		{"above the possible", report.GateItem{Direction: report.Higher, BaselineValue: f(0.6), Drop: f(0.6), Bound: f(0.9), Pairs: 5}, "-60.0 pts", "fell ≥ 60.0 pts"},
		// over-trigger 0% → 20%, lower is better: a rise, in its own units.
		{"lower is better", report.GateItem{Direction: report.Lower, BaselineValue: f(0), Drop: f(0.2), Bound: f(0.05), Pairs: 10}, "+20.0 pts", "rose ≥ 5.0 pts"},
		{"one case", report.GateItem{Direction: report.Higher, BaselineValue: f(1), Drop: f(0.2), Pairs: 1}, "-20.0 pts", "too few cases to tell"},
		{"not comparable", report.GateItem{Status: report.ItemNotComparable, Direction: report.Higher, BaselineValue: f(1), Drop: f(0.2), Bound: f(0.1), Pairs: 9}, "–", "–"},
	} {
		got := suiteChange(c.it)
		if got.Delta != c.delta || got.Surely != c.surely {
			t.Errorf("%s: got Δ %q, %q; want %q, %q", c.name, got.Delta, got.Surely, c.delta, c.surely)
		}
	}
}

func TestSpecURL(t *testing.T) {
	for spec, want := range map[string]string{
		"server/tools.mdx §Tool Result":                                         "https://modelcontextprotocol.io/specification/2026-07-28/server/tools#tool-result",
		"schema.ts DiscoverResult; server/discover.mdx §Caching":                "https://modelcontextprotocol.io/specification/2026-07-28/server/discover#caching",
		"server/tools.mdx §Error Handling (input validation errors), §Security": "https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling",
		"basic/versioning.mdx":                                                  "https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning",
		"schema.ts Tool; SEP-1303":                                              "",
		"javascript:alert(1).mdx §x":                                            "",
	} {
		if got := specURL(spec); got != want {
			t.Errorf("specURL(%q) = %q, want %q", spec, got, want)
		}
	}
}

// A suite sentence compares the paired cases on both sides, so its "from
// … to …" agrees with its Δ, and its verb follows the score's direction.
func TestSuiteSentenceAgreesWithItsDelta(t *testing.T) {
	for _, c := range []struct {
		it   report.GateItem
		want string
	}{
		// 8 paired cases at 100% now average 85% (the mean over all 9
		// cases, 84.4%, is not what the Δ compares); bound below 0.
		{report.GateItem{Kind: report.KindSuite, Score: report.ToolSelection, Status: report.ItemPass, Direction: report.Higher, Value: f(0.844), BaselineValue: f(1), Drop: f(0.15), Bound: f(-0.149), Pairs: 8, MaxDrop: f(0.02)},
			"Tool selection fell from 100.0% to 85.0% over 8 paired cases (Δ -15.0 pts), more than the 2.0 pts max-drop but no clear fall, so it passes"},
		{report.GateItem{Kind: report.KindSuite, Score: report.OverTrigger, Status: report.ItemInconclusive, Direction: report.Lower, Value: f(0.8), BaselineValue: f(0), Drop: f(0.8), Pairs: 1, MaxDrop: f(0.02)},
			"Over trigger rose from 0.0% to 80.0% over 1 paired case (Δ +80.0 pts), more than the 2.0 pts max-drop, with too few cases to tell whether it is real, so the result is inconclusive"},
		{report.GateItem{Kind: report.KindSuite, Score: report.ToolSelection, Status: report.ItemPass, Direction: report.Higher, Value: f(1), BaselineValue: f(1), Drop: f(0), Bound: f(0), Pairs: 29},
			"Tool selection held at 100.0% over 29 paired cases, within the 5.0 pts max-drop, so it passes"},
	} {
		if got := suiteSentence(c.it, 0.05); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// A run's reason that already says it called no tool is not followed by
// "called no tool" again; one that does not say so is.
func TestRunTextSaysCalledNoToolOnce(t *testing.T) {
	id := func(s string) string { return s }
	c := &Cause{Reason: "expected create_event first, called no tool", CalledKnown: true}
	if got := runWith(c, id, id); got != "expected create_event first, called no tool" {
		t.Errorf("got %q", got)
	}
	c = &Cause{Reason: "the answer left out the date", CalledKnown: true}
	if got := runWith(c, id, id); got != "the answer left out the date · called no tool" {
		t.Errorf("got %q", got)
	}
}
