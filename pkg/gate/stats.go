package gate

import (
	"math"
	"sort"
)

// The statistics of the gate, kept free of report types so the simulation
// test and docs/gate.md can reason about them directly.

// fisherLess is the one-sided p-value of Fisher's exact test that the new
// rate kNew/nNew is lower than the baseline's kBase/nBase: with both runs'
// successes pooled, the chance that the new run gets kNew or fewer of them
// by luck alone (hypergeometric, margins fixed).
func fisherLess(kBase, nBase, kNew, nNew int) float64 {
	s := kBase + kNew
	lo := max(0, s-nBase)
	p := 0.0
	for x := lo; x <= kNew; x++ {
		p += hyper(x, s, nBase, nNew)
	}
	return min(1, p)
}

// fisherMin is the smallest p-value fisherLess could give with these
// margins: the new run getting as few successes as the pooled total
// allows. Tarone's method leaves out tests that can never be significant.
func fisherMin(kBase, nBase, kNew, nNew int) float64 {
	s := kBase + kNew
	return hyper(max(0, s-nBase), s, nBase, nNew)
}

// hyper is P(X = x) for X the successes among nNew draws from nBase+nNew
// items of which s are successes.
func hyper(x, s, nBase, nNew int) float64 {
	n := nBase + nNew
	if x < 0 || x > s || x > nNew || nNew-x > n-s {
		return 0
	}
	return math.Exp(lnChoose(s, x) + lnChoose(n-s, nNew-x) - lnChoose(n, nNew))
}

func lnChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// taroneK is the Bonferroni divisor after Tarone (1990): the smallest K
// such that at most K of the tests could reach a p-value of alpha/K at
// all. Discrete tests on 5 runs mostly cannot (5/5 against 4/5 has a least
// p of 0.5), and counting them would make every test hopeless.
func taroneK(minP []float64, alpha float64) int {
	sorted := append([]float64(nil), minP...)
	sort.Float64s(sorted)
	for k := 1; k <= len(sorted); k++ {
		// tests able to reach alpha/k
		testable := sort.SearchFloat64s(sorted, math.Nextafter(alpha/float64(k), 1))
		if testable <= k {
			return k
		}
	}
	return max(1, len(sorted))
}

// pairedDrop is the suite comparison with the case as the unit.
type pairedDrop struct {
	n     int     // paired cases
	drop  float64 // mean drop in the good direction (positive = worse)
	se    float64 // its standard error
	bound float64 // one-sided lower confidence bound of the drop
}

// pair is one case's rate in the baseline and now, with the run counts the
// binomial variance floor needs.
type pair struct {
	base, new   float64
	nBase, nNew int
}

// pairedBound computes the mean paired drop and its one-sided lower bound
// at level 1-alpha: mean − t(1−alpha, n−1)·se. The standard error uses the
// larger of the paired sample variance and the binomial variance the run
// counts imply, so a handful of cases that happen to drop by exactly the
// same amount (sample variance 0) do not look certain.
func pairedBound(pairs []pair, higherIsBetter bool, alpha float64) pairedDrop {
	n := len(pairs)
	if n == 0 {
		return pairedDrop{}
	}
	d := make([]float64, n)
	var sum, binom float64
	for i, p := range pairs {
		d[i] = p.base - p.new
		if !higherIsBetter {
			d[i] = -d[i]
		}
		sum += d[i]
		// Pooled rate with half a success and half a failure added, so a
		// case at N/N on both sides still has some variance.
		pooled := (p.base*float64(p.nBase) + p.new*float64(p.nNew) + 0.5) / float64(p.nBase+p.nNew+1)
		binom += pooled * (1 - pooled) * (1/float64(p.nBase) + 1/float64(p.nNew))
	}
	mean := sum / float64(n)
	out := pairedDrop{n: n, drop: mean}
	if n < 2 {
		// One case is no evidence either way: the bound is unknown.
		out.bound = math.Inf(-1)
		out.se = math.Inf(1)
		return out
	}
	var ss float64
	for _, x := range d {
		ss += (x - mean) * (x - mean)
	}
	variance := math.Max(ss/float64(n-1), binom/float64(n))
	out.se = math.Sqrt(variance / float64(n))
	out.bound = mean - tQuantile(1-alpha, n-1)*out.se
	return out
}

// meanInterval is the mean of rates over cases with a two-sided interval
// at level 1-alpha (t, case as the unit, clamped to [0,1]).
func meanInterval(rates []float64, runs []int, alpha float64) (mean, lo, hi float64) {
	n := len(rates)
	if n == 0 {
		return 0, 0, 0
	}
	var sum, binom float64
	for i, r := range rates {
		sum += r
		p := (r*float64(runs[i]) + 0.5) / float64(runs[i]+1)
		binom += p * (1 - p) / float64(runs[i])
	}
	mean = sum / float64(n)
	if n < 2 {
		return mean, 0, 1
	}
	var ss float64
	for _, r := range rates {
		ss += (r - mean) * (r - mean)
	}
	se := math.Sqrt(math.Max(ss/float64(n-1), binom/float64(n)) / float64(n))
	half := tQuantile(1-alpha/2, n-1) * se
	return mean, math.Max(0, mean-half), math.Min(1, mean+half)
}

// tQuantile is the p-quantile of Student's t with df degrees of freedom,
// found by bisection on the CDF (p in (0.5, 1)).
func tQuantile(p float64, df int) float64 {
	lo, hi := 0.0, 1e3
	for hi-lo > 1e-9 { // about 40 halvings
		mid := (lo + hi) / 2
		if tCDF(mid, float64(df)) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// tCDF is P(T ≤ t) for t ≥ 0.
func tCDF(t, df float64) float64 {
	x := df / (df + t*t)
	return 1 - 0.5*betaInc(df/2, 0.5, x)
}

// betaInc is the regularised incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes §6.4 (modified Lentz).
func betaInc(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-14 {
			break
		}
	}
	return h
}

// floor is ⌈f·N⌉: runs out of n a case needs to meet floor fraction f. The
// epsilon keeps 0.8·5 = 4.000000000000001 from becoming 5.
func floor(f float64, n int) int {
	return int(math.Ceil(f*float64(n) - 1e-9))
}

// FloorRuns is how many of n runs a floor f needs, ⌈f·n⌉ as the gate
// counts it, for renderers that say a floor in words.
func FloorRuns(f float64, n int) int { return floor(f, n) }
