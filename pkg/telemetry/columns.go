package telemetry

import (
	"math"
	"sort"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// TrendDepth is how many earlier green reports a trend shows.
const TrendDepth = 10

// Compare sets rep.Telemetry.Models to Columns(rep, baseline, history):
// call it once the report has its Layer 1 results and telemetry, with the
// baseline and the earlier reports the gate is given (nil for none). It
// does nothing to a report without telemetry.
func Compare(rep, baseline *report.Report, history []*report.Report) {
	if rep.Telemetry == nil {
		return
	}
	rep.Telemetry.Models = Columns(rep, baseline, history)
}

// Columns are the per-model columns of rep: accuracy, p95 of the model's
// calls, tokens and cost per case, with the baseline's figures and the
// trend over the green reports of history (gate verdict pass), oldest
// first, ending with rep itself. Models come in the report's order, then
// any others its results or usage name, by name.
func Columns(rep, baseline *report.Report, history []*report.Report) []report.ModelColumns {
	out := []report.ModelColumns{}
	trend := greenTrend(history)
	for _, m := range columnModels(rep) {
		now := Figures(rep, m)
		c := report.ModelColumns{Model: m, Now: now, Trend: []report.TrendPoint{}}
		if baseline != nil {
			if b := Figures(baseline, m); b != (report.ModelFigures{}) {
				c.Baseline = &b
			}
		}
		for _, h := range trend {
			if f := Figures(h, m); f != (report.ModelFigures{}) {
				c.Trend = append(c.Trend, report.TrendPoint{Commit: h.Run.Commit, FinishedAt: h.Run.FinishedAt, ModelFigures: f})
			}
		}
		if len(c.Trend) > 0 {
			c.Trend = append(c.Trend, report.TrendPoint{Commit: rep.Run.Commit, FinishedAt: rep.Run.FinishedAt, ModelFigures: now})
		}
		out = append(out, c)
	}
	return out
}

// Figures are model's headline figures in rep, each absent when rep
// cannot give it.
func Figures(rep *report.Report, model string) report.ModelFigures {
	var f report.ModelFigures
	if b := rep.Behavior; b != nil {
		var c report.Count
		for _, r := range b.Results {
			if r.Model == model {
				c.K += r.Passed.K
				c.N += r.Passed.N
			}
		}
		if c.N > 0 {
			a := round(c.Rate(), 1e6)
			f.Accuracy = &a
		}
	}
	t := rep.Telemetry
	if t == nil {
		return f
	}
	for _, l := range t.Latency {
		if l.Kind == report.LatencyModel && l.Subject == "" && l.Model == model && l.P95Ms != nil {
			p := *l.P95Ms
			f.P95Ms = &p
		}
	}
	for _, u := range t.Usage {
		if u.Model == model && u.Role == report.RoleEval && u.CaseRuns > 0 {
			tok := round(u.TokensPerCase(), 1e3)
			f.TokensPerCase = &tok
			if u.CostPerCaseUSD != nil {
				c := *u.CostPerCaseUSD
				f.CostPerCaseUSD = &c
			}
		}
	}
	return f
}

func round(v, scale float64) float64 { return math.Round(v*scale) / scale }

// greenTrend keeps the reports the gate called green, oldest first, the
// newest TrendDepth of them: an inconclusive or failed run is no
// reference, as for the gate's own history walk.
func greenTrend(history []*report.Report) []*report.Report {
	var green []*report.Report
	for _, h := range history {
		if h != nil && h.Gate != nil && h.Gate.Verdict == report.GatePass {
			green = append(green, h)
		}
	}
	sort.SliceStable(green, func(i, j int) bool { return green[i].Run.FinishedAt.Before(green[j].Run.FinishedAt) })
	if len(green) > TrendDepth {
		green = green[len(green)-TrendDepth:]
	}
	return green
}

// columnModels are the models with Layer 1 results or eval usage, in the
// report's model order, then the rest by name.
func columnModels(rep *report.Report) []string {
	used := map[string]bool{}
	if rep.Behavior != nil {
		for _, r := range rep.Behavior.Results {
			used[r.Model] = true
		}
	}
	if rep.Telemetry != nil {
		for _, u := range rep.Telemetry.Usage {
			if u.Role == report.RoleEval {
				used[u.Model] = true
			}
		}
	}
	var out []string
	for _, m := range rep.Models {
		if used[m.ID] {
			out = append(out, m.ID)
			delete(used, m.ID)
		}
	}
	var rest []string
	for m := range used {
		rest = append(rest, m)
	}
	sort.Strings(rest)
	return append(out, rest...)
}
