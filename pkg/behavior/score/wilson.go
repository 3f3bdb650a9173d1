package score

import "math"

// Floors of the pass rate as fractions of N, applied as ⌈f·N⌉: a hard
// case must pass every run, a soft one 4 of 5.
const (
	FloorHard = 1.0
	FloorSoft = 0.8
)

// FloorFor is the floor fraction of a case kind ("hard" when unset).
func FloorFor(kind string) float64 {
	if kind == "soft" {
		return FloorSoft
	}
	return FloorHard
}

// Floor is ⌈f·n⌉, the passes n runs need. The epsilon keeps float noise
// from adding a run (0.7·10 is 7.000000000000001 in float64); it is the
// same rule as the gate's.
func Floor(f float64, n int) int {
	return int(math.Ceil(f*float64(n) - 1e-9))
}

// Interval is a confidence interval on a rate, both ends in [0, 1].
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Z95 is the two-sided 95% normal quantile.
const Z95 = 1.959963984540054

// Wilson is the 95% Wilson score interval of k successes in n trials: it
// stays inside [0, 1] and is honest at k = 0 or k = n, where the normal
// approximation collapses to a point. n = 0 gives [0, 1]: nothing known.
func Wilson(k, n int) Interval { return WilsonZ(k, n, Z95) }

// WilsonZ is the Wilson interval for quantile z.
func WilsonZ(k, n int, z float64) Interval {
	if n <= 0 {
		return Interval{Lo: 0, Hi: 1}
	}
	k = min(max(k, 0), n)
	p := float64(k) / float64(n)
	nf := float64(n)
	z2 := z * z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / denom
	lo, hi := center-half, center+half
	// At k = 0 and k = n the bound is exactly 0 or 1; rounding must not
	// move it.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return Interval{Lo: max(lo, 0), Hi: min(hi, 1)}
}
