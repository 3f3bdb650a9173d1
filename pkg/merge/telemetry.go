package merge

import (
	"fmt"
	"math"
	"sort"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// mergeTelemetry joins Layer 3. Counts, tokens and money add up; a
// percentile does not, so latency rows are recomputed from the samples
// the shards kept, by dist (pkg/telemetry's one percentile rule). A row a shard
// kept no samples for (more than report.MaxLatencySamples) gets its
// histogram, which adds up exactly, and no percentiles, with a warning.
// The per-model columns are left to the caller (telemetry.Compare), which
// has the baseline.
func mergeTelemetry(shards []Shard, dist Distribution) *report.Telemetry {
	if shards[0].Report.Telemetry == nil {
		return nil
	}
	out := &report.Telemetry{Latency: []report.Latency{}, Usage: []report.Usage{}, Cases: []report.CaseUsage{}, Models: []report.ModelColumns{}, Warnings: []string{}}
	type lkey struct{ kind, subject, model string }
	type lacc struct {
		row     report.Latency
		samples []float64
		exact   bool
		bins    map[float64]*report.Bin
	}
	lat := map[lkey]*lacc{}
	var lorder []lkey
	addLatency := func(k lkey, l report.Latency) {
		a := lat[k]
		if a == nil {
			// The key's model: a row over every model has none, whichever
			// shard's row came first.
			a = &lacc{row: report.Latency{Kind: l.Kind, Subject: l.Subject, Model: k.model, Direction: report.Lower}, exact: true, bins: map[float64]*report.Bin{}}
			lat[k] = a
			lorder = append(lorder, k)
		}
		a.row.Samples += l.Samples
		a.row.Errors += l.Errors
		a.row.MaxMs = math.Max(a.row.MaxMs, l.MaxMs)
		if len(l.SamplesMs) != l.Samples {
			a.exact = false
		}
		a.samples = append(a.samples, l.SamplesMs...)
		for _, b := range l.Histogram {
			if a.bins[b.FromMs] == nil {
				bb := b
				bb.Count = 0
				a.bins[b.FromMs] = &bb
			}
			a.bins[b.FromMs].Count += b.Count
		}
	}
	toolModels := map[string]map[string]bool{}
	for _, s := range shards {
		for _, l := range s.Report.Telemetry.Latency {
			if l.Kind == report.LatencyTool && l.Model == "" {
				continue // the all-models row is rebuilt from the per-model rows below
			}
			addLatency(lkey{l.Kind, l.Subject, l.Model}, l)
			if l.Kind == report.LatencyTool {
				if toolModels[l.Subject] == nil {
					toolModels[l.Subject] = map[string]bool{}
				}
				toolModels[l.Subject][l.Model] = true
			}
		}
	}
	// As pkg/telemetry: a tool several models called gets a row over all
	// of them.
	for _, s := range shards {
		for _, l := range s.Report.Telemetry.Latency {
			if l.Kind == report.LatencyTool && l.Model != "" && len(toolModels[l.Subject]) > 1 {
				addLatency(lkey{l.Kind, l.Subject, ""}, l)
			}
		}
	}
	sort.SliceStable(lorder, func(i, j int) bool {
		a, b := lorder[i], lorder[j]
		return report.CompareLatency(report.Latency{Kind: a.kind, Subject: a.subject, Model: a.model},
			report.Latency{Kind: b.kind, Subject: b.subject, Model: b.model}) < 0
	})
	for _, k := range lorder {
		a := lat[k]
		r := a.row
		if a.exact && len(a.samples) > 0 {
			r.P50Ms, r.P95Ms, r.MaxMs, r.Histogram = dist(a.samples)
			if len(a.samples) <= report.MaxLatencySamples {
				r.SamplesMs = a.samples
			}
		} else {
			r.Histogram = []report.Bin{}
			for _, b := range a.bins {
				r.Histogram = append(r.Histogram, *b)
			}
			sort.Slice(r.Histogram, func(i, j int) bool { return r.Histogram[i].FromMs < r.Histogram[j].FromMs })
			if r.Samples >= report.MinPercentileSamples {
				out.Warnings = append(out.Warnings, fmt.Sprintf("latency of %s %s %s: a shard kept no samples (more than %d), so the merged row has no percentiles", k.kind, k.subject, k.model, report.MaxLatencySamples))
			}
		}
		if r.Histogram == nil {
			r.Histogram = []report.Bin{}
		}
		out.Latency = append(out.Latency, r)
	}

	type ukey struct{ model, role string }
	usage := map[ukey]*report.Usage{}
	var uorder []ukey
	cases := map[[2]string]*report.CaseUsage{}
	var corder [][2]string
	type tacc struct {
		row     report.ToolUsage
		samples []float64
		exact   bool
		tokens  float64
	}
	tools := map[[2]string]*tacc{}
	var torder [][2]string
	seenWarn := map[string]bool{}
	for _, s := range shards {
		t := s.Report.Telemetry
		if out.Prices == "" {
			out.Prices = t.Prices
		}
		for _, u := range t.Usage {
			k := ukey{u.Model, u.Role}
			m := usage[k]
			if m == nil {
				c := u
				usage[k] = &c
				uorder = append(uorder, k)
				continue
			}
			m.Calls += u.Calls
			m.CaseRuns += u.CaseRuns
			m.ToolCalls += u.ToolCalls
			m.InputTokens += u.InputTokens
			m.CachedInputTokens += u.CachedInputTokens
			m.CacheWriteTokens += u.CacheWriteTokens
			m.OutputTokens += u.OutputTokens
			m.ReasoningTokens += u.ReasoningTokens
			m.UnpricedCalls += u.UnpricedCalls
			m.CostUSD = addUSD(m.CostUSD, u.CostUSD)
			if m.ReusedRuns+u.ReusedRuns > 0 {
				m.ReusedCostUSD = addUSD(orZero(m.ReusedCostUSD, m.ReusedRuns), orZero(u.ReusedCostUSD, u.ReusedRuns))
			}
			m.ReusedRuns += u.ReusedRuns
			m.ReusedTokens += u.ReusedTokens
		}
		for _, c := range t.Cases {
			k := [2]string{c.Case, c.Model}
			m := cases[k]
			if m == nil {
				cc := c
				cases[k] = &cc
				corder = append(corder, k)
				continue
			}
			m.Runs += c.Runs
			m.ModelCalls += c.ModelCalls
			m.ToolCalls += c.ToolCalls
			m.Tokens += c.Tokens
			m.CostUSD = addUSD(m.CostUSD, c.CostUSD)
			m.CostPerRunUSD = per(m.CostUSD, m.Runs, 1)
		}
		for _, tu := range t.Tools {
			k := [2]string{tu.Tool, tu.Model}
			a := tools[k]
			if a == nil {
				a = &tacc{row: report.ToolUsage{Tool: tu.Tool, Model: tu.Model, CostUSD: usd(0)}, exact: true}
				tools[k] = a
				torder = append(torder, k)
			}
			a.row.Calls += tu.Calls
			a.row.Errors += tu.Errors
			a.row.Untimed += tu.Untimed
			a.row.Reused += tu.Reused
			a.tokens += tu.TokensPerCall * float64(tu.Calls-tu.Reused) // per call made now
			a.row.CostUSD = addUSD(a.row.CostUSD, tu.CostUSD)
			if timed := tu.Calls - tu.Untimed - tu.Reused; len(tu.SamplesMs) != timed {
				a.exact = false
			}
			a.samples = append(a.samples, tu.SamplesMs...)
			if tu.MaxMs != nil && (a.row.MaxMs == nil || *tu.MaxMs > *a.row.MaxMs) {
				m := *tu.MaxMs
				a.row.MaxMs = &m
			}
		}
		for _, w := range t.Warnings {
			if !seenWarn[w] {
				seenWarn[w] = true
				out.Warnings = append(out.Warnings, w)
			}
		}
	}
	sort.SliceStable(uorder, func(i, j int) bool {
		if uorder[i].model != uorder[j].model {
			return uorder[i].model < uorder[j].model
		}
		return uorder[i].role < uorder[j].role
	})
	for _, k := range uorder {
		u := usage[k]
		if u.UnpricedCalls > 0 {
			u.CostUSD = nil
		}
		u.CostPerCallUSD = per(u.CostUSD, u.Calls, 1)
		u.CostPerCaseUSD = per(u.CostUSD, u.CaseRuns, 1)
		if u.ReusedRuns > 0 {
			// The runs replayed from the cache count in the cost per
			// case at their stored usage (telemetry.usageRows).
			u.CostPerCaseUSD = per(addUSD(u.CostUSD, u.ReusedCostUSD), u.CaseRuns, 1)
		}
		u.CostPerToolCallUSD = per(u.CostUSD, u.ToolCalls, 1)
		u.CostPer1kToolCallsUSD = per(u.CostUSD, u.ToolCalls, 1000)
		out.Usage = append(out.Usage, *u)
	}
	sortPairs(corder)
	for _, k := range corder {
		out.Cases = append(out.Cases, *cases[k])
	}
	sortPairs(torder)
	for _, k := range torder {
		a := tools[k]
		r := a.row
		if a.exact && len(a.samples) > 0 {
			p50, p95, mx, _ := dist(a.samples)
			r.P50Ms, r.P95Ms, r.MaxMs = p50, p95, &mx
			if len(a.samples) <= report.MaxLatencySamples {
				r.SamplesMs = a.samples
			}
		}
		made := r.Calls - r.Reused // as pkg/telemetry: over the calls made now
		if made > 0 {
			r.TokensPerCall = math.Round(a.tokens/float64(made)*10) / 10
		}
		r.CostPerCallUSD = per(r.CostUSD, made, 1)
		out.Tools = append(out.Tools, r)
	}
	return out
}

// orZero is a cost of no runs as $0, and an unknown cost of some as nil.
func orZero(v *float64, runs int) *float64 {
	if v == nil && runs == 0 {
		return usd(0)
	}
	return v
}
