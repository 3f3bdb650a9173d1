package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// A trend is a model's figures over the last green reports, oldest first,
// ending with this run (report.ModelColumns.Trend). Three figures are
// drawn: the pass rate, the p95 of the model's calls and the cost per
// case.

// trendFigure is one figure of a trend point, with how to print it.
type trendFigure struct {
	Name   string
	Get    func(report.ModelFigures) *float64
	Format func(float64) string
	// Rate: higher is better and the scale is 0..1, so a fall from 100%
	// to 95% is drawn as what it is, not as a cliff.
	Rate bool
}

var trendFigures = []trendFigure{
	{"pass rate", func(f report.ModelFigures) *float64 { return f.Accuracy }, percent, true},
	{"p95 model call", func(f report.ModelFigures) *float64 { return f.P95Ms }, durMs, false},
	{"cost / case", func(f report.ModelFigures) *float64 { return f.CostPerCaseUSD }, usdText, false},
}

// TrendHeader heads the column TrendCell fills.
const TrendHeader = "Trend: pass · p95 · cost"

// TrendCell is a model's trend for a table cell of the PR comment: a
// sparkline each for the pass rate, the p95 model call and the cost per
// case, oldest first, in TrendHeader's order, then how many runs they
// span ("▇▇█▅ ▂▃▅█ ▃▃▄█ (4 runs)"); a figure no report has is "–". With
// fewer than two reports there is no trend: "–". It holds no report text,
// so it needs no escaping.
func TrendCell(c report.ModelColumns) string {
	if len(c.Trend) < 2 {
		return "–"
	}
	var parts []string
	some := false
	for _, f := range trendFigures {
		vals := make([]*float64, len(c.Trend))
		for i, p := range c.Trend {
			vals[i] = f.Get(p.ModelFigures)
		}
		s := sparkline(vals)
		if f.Rate {
			s = sparklineIn(vals, 0, 1)
		}
		if s == "" {
			s = "–"
		} else {
			some = true
		}
		parts = append(parts, s)
	}
	if !some {
		return "–"
	}
	return fmt.Sprintf("%s (%d runs)", strings.Join(parts, " "), len(c.Trend))
}

// htmlTrendChart is one figure of one model's trend as an SVG line chart
// of 160 × 36: points, one hover title per point, and the two ends.
type htmlTrendChart struct {
	Figure      string
	Points      string
	Dots        []htmlTrendDot
	First, Last string
	Class       string // "better", "worse" or "" by the figure's direction
}

type htmlTrendDot struct {
	X, Y  float64
	Title string
}

type htmlTrendRow struct {
	Model  string
	N      int
	Charts []*htmlTrendChart // nil: the figure is in fewer than two reports
}

// htmlTrends are the trend charts, one row per model with a trend.
func htmlTrends(cols []report.ModelColumns) []htmlTrendRow {
	var out []htmlTrendRow
	for _, c := range cols {
		if len(c.Trend) < 2 {
			continue
		}
		row := htmlTrendRow{Model: line(c.Model), N: len(c.Trend)}
		some := false
		for _, f := range trendFigures {
			ch := trendChart(c.Trend, f)
			some = some || ch != nil
			row.Charts = append(row.Charts, ch)
		}
		if some {
			out = append(out, row)
		}
	}
	return out
}

func trendChart(trend []report.TrendPoint, f trendFigure) *htmlTrendChart {
	type pt struct {
		i int
		v float64
	}
	var pts []pt
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, p := range trend {
		if v := f.Get(p.ModelFigures); v != nil {
			pts = append(pts, pt{i, *v})
			lo, hi = math.Min(lo, *v), math.Max(hi, *v)
		}
	}
	if len(pts) < 2 {
		return nil
	}
	if f.Rate {
		lo, hi = 0, 1
	}
	span := float64(len(trend) - 1)
	ch := &htmlTrendChart{Figure: f.Name, First: f.Format(pts[0].v), Last: f.Format(pts[len(pts)-1].v)}
	var coords []string
	for _, p := range pts {
		x, y := 4+152*float64(p.i)/span, 18.0
		if hi > lo {
			y = 32 - 28*(p.v-lo)/(hi-lo)
		}
		coords = append(coords, fmt.Sprintf("%.1f,%.1f", x, y))
		when := trend[p.i].Commit
		if len(when) > 7 {
			when = when[:7]
		}
		if !trend[p.i].FinishedAt.IsZero() {
			when = strings.TrimSpace(when + " " + trend[p.i].FinishedAt.UTC().Format("2006-01-02"))
		}
		if p.i == len(trend)-1 {
			when = "this run"
		}
		ch.Dots = append(ch.Dots, htmlTrendDot{X: x, Y: y, Title: fmt.Sprintf("%s: %s", line(orDash(when)), f.Format(p.v))})
	}
	ch.Points = strings.Join(coords, " ")
	first, last := pts[0].v, pts[len(pts)-1].v
	switch {
	case last == first:
	case (last > first) == f.Rate: // a rate is better higher, a time or a cost lower
		ch.Class = "better"
	default:
		ch.Class = "worse"
	}
	return ch
}
