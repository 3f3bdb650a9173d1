package telemetry

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func seq(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i + 1)
	}
	return s
}

// Nearest rank on known samples: x[⌈p/100·n⌉−1].
func TestPercentileNearestRank(t *testing.T) {
	for _, c := range []struct {
		samples []float64
		p, want float64
	}{
		{seq(20), 50, 10},  // ⌈10⌉ = 10th
		{seq(20), 95, 19},  // ⌈19⌉ = 19th: 0.95·20 must not round up to 20
		{seq(20), 100, 20}, // the maximum
		{seq(21), 50, 11},  // ⌈10.5⌉ = 11th
		{seq(21), 95, 20},  // ⌈19.95⌉ = 20th
		{seq(100), 95, 95},
		{seq(100), 99, 99},
		{seq(1), 50, 1},
		{[]float64{15, 20, 35, 40, 50}, 30, 20},  // the textbook example: ⌈1.5⌉ = 2nd
		{[]float64{15, 20, 35, 40, 50}, 40, 20},  // ⌈2⌉ = 2nd
		{[]float64{15, 20, 35, 40, 50}, 50, 35},  // ⌈2.5⌉ = 3rd
		{[]float64{15, 20, 35, 40, 50}, 100, 50}, // ⌈5⌉ = 5th
	} {
		if got := Percentile(c.samples, c.p); got != c.want {
			t.Errorf("p%v of %d samples: %v, want %v", c.p, len(c.samples), got, c.want)
		}
	}
}

// Below 20 samples a row has n and max only.
func TestDistributionNeedsTwentySamples(t *testing.T) {
	p50, p95, mx, hist := Distribution(seq(19))
	if p50 != nil || p95 != nil || mx != 19 {
		t.Errorf("19 samples: p50 %v p95 %v max %v, want no percentiles and max 19", p50, p95, mx)
	}
	if n := count(hist); n != 19 {
		t.Errorf("histogram holds %d samples, want 19", n)
	}
	// Shuffled input, 20 samples: percentiles appear, the input is untouched.
	in := []float64{20, 1, 19, 2, 18, 3, 17, 4, 16, 5, 15, 6, 14, 7, 13, 8, 12, 9, 11, 10}
	p50, p95, mx, _ = Distribution(in)
	if p50 == nil || *p50 != 10 || p95 == nil || *p95 != 19 || mx != 20 {
		t.Errorf("20 samples: p50 %v p95 %v max %v", p50, p95, mx)
	}
	if in[0] != 20 {
		t.Error("Distribution sorted its input")
	}
	if p50, p95, mx, hist := Distribution(nil); p50 != nil || p95 != nil || mx != 0 || hist == nil {
		t.Error("no samples: want nothing but an empty histogram")
	}
}

func count(bins []report.Bin) int {
	n := 0
	for _, b := range bins {
		n += b.Count
	}
	return n
}

func TestHistogramBins(t *testing.T) {
	bins := Histogram([]float64{0, 0.5, 1, 4.999, 5, 99.9, 100, 150000})
	want := []struct {
		from, to float64
		n        int
	}{{0, 1, 2}, {1, 2, 1}, {2, 5, 1}, {5, 10, 1}, {50, 100, 1}, {100, 200, 1}, {100000, -1, 1}}
	if len(bins) != len(want) {
		t.Fatalf("bins %+v", bins)
	}
	for i, w := range want {
		b := bins[i]
		to := -1.0
		if b.ToMs != nil {
			to = *b.ToMs
		}
		if b.FromMs != w.from || to != w.to || b.Count != w.n {
			t.Errorf("bin %d: [%v, %v) ×%d, want [%v, %v) ×%d", i, b.FromMs, to, b.Count, w.from, w.to, w.n)
		}
	}
}
