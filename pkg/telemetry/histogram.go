package telemetry

import "github.com/mcp-eval/mcp-eval-action/pkg/report"

// binEdges are the histogram's bin edges in milliseconds: a 1-2-5 series
// from 1 ms to 100 s. Fixed edges make the histograms of two reports
// comparable bin by bin, and a log scale fits latencies that span five
// orders of magnitude (a local stdio call next to a model call). An array
// value, so no caller can change it.
func binEdges() [17]float64 {
	return [...]float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000}
}

// Histogram counts samples (milliseconds, any order) into the fixed bins,
// leaving out empty ones; the last bin is open above 100 s.
func Histogram(samples []float64) []report.Bin {
	edges := binEdges()
	var counts [len(edges)]int
	for _, v := range samples {
		i := len(edges) - 1
		for j := 1; j < len(edges); j++ {
			if v < edges[j] {
				i = j - 1
				break
			}
		}
		counts[i]++
	}
	bins := []report.Bin{}
	for i, n := range counts {
		if n == 0 {
			continue
		}
		b := report.Bin{FromMs: edges[i], Count: n}
		if i+1 < len(edges) {
			to := edges[i+1]
			b.ToMs = &to
		}
		bins = append(bins, b)
	}
	return bins
}

// BinEdges returns the histogram's bin edges in milliseconds, for charts
// that lay bins out on one fixed scale.
func BinEdges() []float64 {
	e := binEdges()
	return e[:]
}
