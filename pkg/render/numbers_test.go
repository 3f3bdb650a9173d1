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
