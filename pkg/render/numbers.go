package render

import (
	"fmt"
	"math"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// One convention for every change a surface shows: Δ is new − baseline in
// the score's own units, so "+" means the score went up whichever way is
// good, and the words follow the score's direction: a lower-is-better
// score that went up "rose" (worse), never a "drop".

// deltaPoints is a change of a rate in points, "+22.5 pts" or "-15.0
// pts"; a change that rounds to zero is "0.0 pts", never "-0.0".
func deltaPoints(d float64) string {
	r := math.Round(d*1000) / 10
	if r == 0 {
		return "0.0 pts"
	}
	return fmt.Sprintf("%+.1f pts", r)
}

// deltaWhole is a change of a rate in whole points for a matrix cell,
// "" when it rounds to zero.
func deltaWhole(d float64) string {
	r := math.Round(100 * d)
	if r == 0 {
		return ""
	}
	return fmt.Sprintf("%+.0f", r)
}

// relPercent is a relative change, "+38%"; "0%" when it rounds to zero.
func relPercent(now, base float64) string {
	if base == 0 {
		return ""
	}
	r := math.Round(100 * (now/base - 1))
	if r == 0 {
		return "0%"
	}
	return fmt.Sprintf("%+.0f%%", r)
}

// pct1 is a rate as a percentage with one decimal, clipped to [0, 100]
// (an interval's end can fall outside; a rate cannot).
func pct1(v float64) string {
	v = math.Max(0, math.Min(1, v))
	s := fmt.Sprintf("%.1f%%", 100*v)
	if s == "-0.0%" {
		return "0.0%"
	}
	return s
}

// moved is the verb of a change: "rose", "fell" or "held" (rounded to a
// tenth of a point, as deltaPoints shows it).
func moved(d float64) string {
	switch r := math.Round(d * 1000); {
	case r > 0:
		return "rose"
	case r < 0:
		return "fell"
	}
	return "held"
}

// worse says whether a change of a score is in its bad direction.
func worse(dir report.Direction, d float64) bool {
	if dir == report.Lower {
		return d > 0
	}
	return d < 0
}

// SuiteChange is a suite score's comparison in words and numbers a reader
// can check: Δ in the score's units and what the gate's one-sided bound
// says for sure, clipped to what is possible.
type SuiteChange struct {
	// Delta is "+1.0 pts", "–" where the gate did not compare.
	Delta string
	// Surely is what the bound shows: "fell ≥ 3.0 pts", "no clear fall",
	// or "too few cases to tell" (one case, or no bound at all).
	Surely string
}

// suiteChange reads a suite item: Drop and Bound are in the good direction
// (a positive drop is worse), Delta is shown as new − baseline.
func suiteChange(it report.GateItem) SuiteChange {
	if it.Status == report.ItemNotComparable || it.Drop == nil || it.BaselineValue == nil {
		return SuiteChange{Delta: "–", Surely: "–"}
	}
	sign := -1.0 // higher is better: Δ = −drop
	bad := "fall"
	if it.Direction == report.Lower {
		sign, bad = 1, "rise"
	}
	c := SuiteChange{Delta: deltaPoints(sign * *it.Drop)}
	if it.Bound == nil || it.Pairs < 2 {
		c.Surely = "too few cases to tell"
		return c
	}
	// The drop in the good direction can only lie in [lo, hi]: a score at
	// 100% in the baseline cannot rise, one at 0% cannot fall.
	b := *it.BaselineValue
	lo, hi := b-1, b
	if it.Direction == report.Lower {
		lo, hi = -b, 1-b
	}
	bound := math.Max(lo, math.Min(hi, *it.Bound))
	if math.Round(bound*1000) <= 0 {
		c.Surely = "no clear " + bad
		return c
	}
	verb := "fell"
	if it.Direction == report.Lower {
		verb = "rose"
	}
	c.Surely = fmt.Sprintf("%s ≥ %.1f pts", verb, math.Round(bound*1000)/10)
	return c
}
