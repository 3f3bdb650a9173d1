package telemetry

import (
	"math"
	"slices"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of sorted
// samples: the smallest sample with at least p% of the samples at or
// below it, x[⌈p/100·n⌉−1]. Nearest rank never invents a value between
// two samples, so every figure in a report is a latency that happened.
// It panics on an empty slice or p outside (0, 100].
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 || !(p > 0 && p <= 100) {
		panic("telemetry: Percentile needs samples and 0 < p ≤ 100")
	}
	// The product is rounded to 1e-9 before the ceiling, so 0.95·20 = 19
	// (19.000000000000004 in floating point) is rank 19, not 20.
	rank := int(math.Ceil(math.Round(p/100*float64(len(sorted))*1e9) / 1e9))
	return sorted[max(rank, 1)-1]
}

// Distribution summarises samples (milliseconds) into a Latency row's
// numbers: p50 and p95 from report.MinPercentileSamples samples on, the
// maximum, and the histogram. The samples are not modified.
func Distribution(samples []float64) (p50, p95 *float64, maxMs float64, hist []report.Bin) {
	if len(samples) == 0 {
		return nil, nil, 0, []report.Bin{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	if len(s) >= report.MinPercentileSamples {
		a, b := Percentile(s, 50), Percentile(s, 95)
		p50, p95 = &a, &b
	}
	return p50, p95, s[len(s)-1], Histogram(s)
}

// ms converts a duration to milliseconds with microsecond resolution, the
// resolution every latency in a report has.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
