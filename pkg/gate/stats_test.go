package gate

import (
	"math"
	"testing"
)

func TestFisherLess(t *testing.T) {
	cases := []struct {
		kb, nb, kn, nn int
		want           float64
	}{
		{5, 5, 4, 5, 0.5},          // one miss: nothing
		{5, 5, 0, 5, 1.0 / 252},    // all gone: clear
		{5, 5, 1, 5, 6.0 / 252},    // 6 successes, new has 1
		{5, 5, 5, 5, 1},            // equal
		{18, 20, 10, 20, 0.006907}, // exact sum of hypergeometric terms
		{0, 5, 0, 5, 1},            // nothing to lose
		{3, 5, 5, 5, 1},            // better now
		{9, 10, 6, 10, 0.151703},
		{45, 50, 35, 50, 0.011417},
	}
	for _, c := range cases {
		got := fisherLess(c.kb, c.nb, c.kn, c.nn)
		if math.Abs(got-c.want) > 1e-5 {
			t.Errorf("fisherLess(%d/%d, %d/%d) = %.5f, want %.5f", c.kb, c.nb, c.kn, c.nn, got, c.want)
		}
	}
}

func TestFisherMin(t *testing.T) {
	if got := fisherMin(5, 5, 4, 5); math.Abs(got-0.5) > 1e-12 {
		t.Errorf("fisherMin(5/5, 4/5) = %v, want 0.5", got)
	}
	if got := fisherMin(5, 5, 5, 5); got != 1 {
		t.Errorf("fisherMin(5/5, 5/5) = %v, want 1", got)
	}
}

func TestTaroneK(t *testing.T) {
	// Only two tests can reach 0.05/2: K = 2.
	if k := taroneK([]float64{0.001, 0.004, 0.5, 0.5, 1, 1, 0.2}, 0.05); k != 2 {
		t.Errorf("taroneK = %d, want 2", k)
	}
	if k := taroneK(nil, 0.05); k != 1 {
		t.Errorf("taroneK(nil) = %d, want 1", k)
	}
	// Everything testable: plain Bonferroni.
	if k := taroneK([]float64{1e-9, 1e-9, 1e-9}, 0.05); k != 3 {
		t.Errorf("taroneK = %d, want 3", k)
	}
}

func TestTQuantile(t *testing.T) {
	for _, c := range []struct {
		p    float64
		df   int
		want float64
	}{{0.95, 19, 1.7291}, {0.95, 1, 6.3138}, {0.975, 9, 2.2622}, {0.99, 49, 2.4049}, {0.95, 1000, 1.6464}} {
		if got := tQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-3 {
			t.Errorf("tQuantile(%v, %d) = %.4f, want %.4f", c.p, c.df, got, c.want)
		}
	}
}

func TestFloor(t *testing.T) {
	for _, c := range []struct {
		f    float64
		n    int
		want int
	}{{0.8, 5, 4}, {1, 5, 5}, {0.8, 3, 3}, {0.8, 10, 8}, {0.8, 1, 1}, {0.5, 5, 3}} {
		if got := floor(c.f, c.n); got != c.want {
			t.Errorf("⌈%v·%d⌉ = %d, want %d", c.f, c.n, got, c.want)
		}
	}
}

func TestPairedBoundZeroVarianceIsNotCertain(t *testing.T) {
	// Two cases that each lost exactly one run of five: the sample variance
	// is 0, the binomial floor keeps the bound honest.
	pairs := []pair{{1, 0.8, 5, 5}, {1, 0.8, 5, 5}}
	pd := pairedBound(pairs, true, 0.05)
	if math.Abs(pd.drop-0.2) > 1e-12 || pd.bound > 0.02 {
		t.Errorf("drop %.3f bound %.3f: want drop 0.2 with a bound under 0.02", pd.drop, pd.bound)
	}
}
