package telemetry

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/pricing"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Summarize turns what was recorded into the report's telemetry section.
// The per-model columns (Models) need the Layer 1 results and the
// baseline: Compare fills them once the report has both.
func (r *Recorder) Summarize() report.Telemetry { return Summarize(r.Events(), r.prices) }

// Summarize is Recorder.Summarize over a copy of the events: a pure
// function, so a stored run can be re-costed with another table.
func Summarize(ev Events, prices *pricing.Table) report.Telemetry {
	t := report.Telemetry{Latency: []report.Latency{}, Usage: []report.Usage{}, Cases: []report.CaseUsage{}, Models: []report.ModelColumns{}, Warnings: []string{}}
	if len(ev.Models) > 0 || len(ev.Reused) > 0 {
		t.Prices = prices.Version()
	}
	costs := priceCalls(ev.Models, prices, &t)
	t.Latency = latencyRows(ev)
	t.Usage = usageRows(ev, costs, prices)
	t.Cases = caseRows(ev, costs)
	t.Tools = toolRows(ev, prices)
	if ev.Dropped > 0 {
		t.Warnings = append(t.Warnings, fmt.Sprintf("%d events past the recorder's limit were not kept: the figures cover the first ones only", ev.Dropped))
	}
	return t
}

// cost is one model call's price: known, or not.
type cost struct {
	usd   float64
	known bool
}

// price is what usage of model cost at at. Usage of no tokens costs
// nothing whatever the table says: there is nothing to price.
func price(prices *pricing.Table, model string, at time.Time, u llm.Usage) (cost, pricing.Quote) {
	if u == (llm.Usage{}) {
		return cost{known: true}, pricing.Quote{Known: true}
	}
	q := prices.Quote(model, at, u)
	return cost{usd: q.USD, known: q.Known}, q
}

// priceCalls prices every model call and warns once per model without a
// price. A call that reported no tokens costs nothing whatever the table
// says: there is nothing to price.
func priceCalls(calls []ModelCall, prices *pricing.Table, t *report.Telemetry) []cost {
	out := make([]cost, len(calls))
	warned := map[string]bool{}
	for i, c := range calls {
		var q pricing.Quote
		out[i], q = price(prices, c.Model, c.Start, c.Usage)
		if !out[i].known && !warned[c.Model] {
			warned[c.Model] = true
			t.Warnings = append(t.Warnings, q.Unknown+"; its cost is unknown")
		}
	}
	return out
}

// latencyRows are one row per method, per tool (and model), per model
// and role, and per model for whole case runs, in that order.
func latencyRows(ev Events) []report.Latency {
	type key struct{ kind, subject, model string }
	samples := map[key][]float64{}
	errs := map[key]int{}
	add := func(k key, v float64, failed bool) {
		samples[k] = append(samples[k], v)
		if failed {
			errs[k]++
		}
	}
	for _, c := range ev.MCP {
		if c.Raw {
			continue // sent by the conformance layer itself: not timed here
		}
		// A JSON-RPC error a Layer 0 probe drew is mostly the answer
		// it asked for (Layer 0 judges it), not a timing of the method:
		// counted, it made rows of methods the server does not serve
		// (ping, initialize, tasks/list on a modern server), which a
		// reader took for the server's. A probe that got no answer (a
		// timeout, a dropped connection) is still an error.
		if c.Probe && c.ErrKind == mcpclient.CallRPCError {
			continue
		}
		add(key{report.LatencyMethod, c.Method, ""}, ms(c.Elapsed), c.ErrKind != "")
	}
	toolModels := map[string]map[string]bool{}
	for _, c := range ev.Tools {
		if untimed(c) {
			continue // answered by the harness: no server round trip to time
		}
		add(key{report.LatencyTool, c.Tool, c.Model}, ms(c.Latency), c.IsError)
		if toolModels[c.Tool] == nil {
			toolModels[c.Tool] = map[string]bool{}
		}
		toolModels[c.Tool][c.Model] = true
	}
	// A tool used by several models also gets a row over all of them: the
	// server's latency does not depend on who asked.
	for _, c := range ev.Tools {
		if !untimed(c) && len(toolModels[c.Tool]) > 1 {
			add(key{report.LatencyTool, c.Tool, ""}, ms(c.Latency), c.IsError)
		}
	}
	for _, c := range ev.Models {
		add(key{report.LatencyModel, role(c.Judge, true), c.Model}, ms(c.Latency), c.Failed)
	}
	for _, c := range ev.Cases {
		if c.Scenario == "" { // Layer 1's case runs; Layer 2's differ by design
			add(key{report.LatencyCase, "", c.Model}, ms(c.Duration), c.Outcome == report.RunError)
		}
	}
	rows := make([]report.Latency, 0, len(samples))
	for k := range samples {
		p50, p95, mx, hist := Distribution(samples[k])
		rows = append(rows, report.Latency{Kind: k.kind, Subject: k.subject, Model: k.model, Samples: len(samples[k]), Errors: errs[k],
			P50Ms: p50, P95Ms: p95, MaxMs: mx, Histogram: hist, SamplesMs: kept(samples[k]), Direction: report.Lower})
	}
	slices.SortFunc(rows, report.CompareLatency)
	return rows
}

// kept are the samples a row carries for a merge of shards: all of
// them, or none above report.MaxLatencySamples (a cut sample would make
// the merged percentiles wrong, not approximate).
func kept(samples []float64) []float64 {
	if len(samples) > report.MaxLatencySamples {
		return nil
	}
	return slices.Clone(samples)
}

// usageRole is the usage row a model call or tool call belongs to: the
// judge's, Layer 1's (no scenario) or Layer 2's.
func usageRole(judge bool, scenario string) string {
	switch {
	case judge:
		return report.RoleJudge
	case scenario != "":
		return report.RoleResilience
	}
	return report.RoleEval
}

// role names a model call's role: for the usage rows "eval" or "judge";
// as a latency row's subject "" or "judge".
func role(judge, subject bool) string {
	switch {
	case judge:
		return report.RoleJudge
	case subject:
		return ""
	}
	return report.RoleEval
}

// money sums costs; unknown once any part is.
type money struct {
	usd      float64
	unpriced int
}

func (m *money) add(c cost) {
	if c.known {
		m.usd += c.usd
	} else {
		m.unpriced++
	}
}

// total is the sum, or nil when a part was unknown: a partial sum shown as
// a total would under-report.
func (m money) total() *float64 {
	if m.unpriced > 0 {
		return nil
	}
	return usd(m.usd)
}

// per divides a known total by n, nil for an unknown total or n = 0.
func per(total *float64, n int, scale float64) *float64 {
	if total == nil || n == 0 {
		return nil
	}
	return usd(*total / float64(n) * scale)
}

// usd rounds to a billionth of a dollar: far below any price, and it keeps
// float noise (0.30000000000000004) out of reports and goldens.
func usd(v float64) *float64 {
	r := math.Round(v*1e9) / 1e9
	return &r
}

type runKey struct {
	kase, model string
	run         int
}

// caseRunsOf counts case runs per model and per case × model: the runs
// the runner reported, or where it reported none for a model, the
// distinct runs its model calls name.
func caseRunsOf(ev Events) (perModel map[string]int, perCase map[[2]string]int) {
	reported := map[runKey]bool{}
	for _, c := range ev.Cases {
		if c.Scenario == "" {
			reported[runKey{c.Case, c.Model, c.Run}] = true
		}
	}
	reportedModel := map[string]bool{}
	for k := range reported {
		reportedModel[k.model] = true
	}
	for _, c := range ev.Models {
		if !c.Judge && c.Case != "" && c.Scenario == "" && !reportedModel[c.Model] {
			reported[runKey{c.Case, c.Model, c.Run}] = true
		}
	}
	perModel, perCase = map[string]int{}, map[[2]string]int{}
	for k := range reported {
		perModel[k.model]++
		perCase[[2]string{k.kase, k.model}]++
	}
	return perModel, perCase
}

// usageRows are tokens and cost per model and role, models in name order,
// eval before judge.
func usageRows(ev Events, costs []cost, prices *pricing.Table) []report.Usage {
	type key struct{ model, role string }
	rows := map[key]*report.Usage{}
	spent := map[key]*money{}
	runs, _ := caseRunsOf(ev)
	tools := map[key]int{}
	for _, c := range ev.Tools {
		if !c.Reused { // the calls this run's model calls paid for
			tools[key{c.Model, usageRole(false, c.Scenario)}]++
		}
	}
	for i, c := range ev.Models {
		k := key{c.Model, usageRole(c.Judge, c.Scenario)}
		u := rows[k]
		if u == nil {
			u = &report.Usage{Model: c.Model, Role: k.role, Direction: report.Lower}
			switch k.role {
			case report.RoleEval:
				u.CaseRuns, u.ToolCalls = runs[c.Model], tools[k]
			case report.RoleResilience:
				u.ToolCalls = tools[k] // Layer 2 runs are not case runs: no cost per case
			}
			rows[k], spent[k] = u, &money{}
		}
		u.Calls++
		u.InputTokens += int64(c.Usage.InputTokens)
		u.CachedInputTokens += int64(c.Usage.CachedInputTokens)
		u.CacheWriteTokens += int64(c.Usage.CacheWriteTokens)
		u.OutputTokens += int64(c.Usage.OutputTokens)
		u.ReasoningTokens += int64(c.Usage.ReasoningTokens)
		spent[k].add(costs[i])
	}
	// Runs replayed from the cache cost nothing now, but a case costs
	// what they cost when made: counted in the case runs and the cost
	// per case at their stored usage, priced now, never in CostUSD.
	stored := map[key]*money{}
	for _, r := range ev.Reused {
		k := key{r.Model, report.RoleEval}
		u := rows[k]
		if u == nil {
			u = &report.Usage{Model: r.Model, Role: report.RoleEval, Direction: report.Lower, CaseRuns: runs[r.Model], ToolCalls: tools[k]}
			rows[k], spent[k] = u, &money{}
		}
		if stored[k] == nil {
			stored[k] = &money{}
		}
		u.CaseRuns++
		u.ReusedRuns++
		u.ReusedTokens += int64(r.Usage.InputTokens + r.Usage.CachedInputTokens + r.Usage.CacheWriteTokens + r.Usage.OutputTokens)
		c, _ := price(prices, r.Model, r.At, r.Usage)
		stored[k].add(c)
	}
	keys := make([]key, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].model != keys[j].model {
			return keys[i].model < keys[j].model
		}
		return keys[i].role < keys[j].role // eval < judge < resilience
	})
	out := make([]report.Usage, 0, len(keys))
	for _, k := range keys {
		u := rows[k]
		u.UnpricedCalls = spent[k].unpriced
		u.CostUSD = spent[k].total()
		u.CostPerCallUSD = per(u.CostUSD, u.Calls, 1)
		u.CostPerCaseUSD = per(u.CostUSD, u.CaseRuns, 1)
		if s := stored[k]; s != nil {
			u.ReusedCostUSD = s.total()
			all := money{usd: spent[k].usd + s.usd, unpriced: spent[k].unpriced + s.unpriced}
			u.CostPerCaseUSD = per(all.total(), u.CaseRuns, 1)
		}
		u.CostPerToolCallUSD = per(u.CostUSD, u.ToolCalls, 1)
		u.CostPer1kToolCallsUSD = per(u.CostUSD, u.ToolCalls, 1000)
		out = append(out, *u)
	}
	return out
}

// caseRows are tokens and cost per case × model (the judge's calls
// excluded), by case then model.
func caseRows(ev Events, costs []cost) []report.CaseUsage {
	type key = [2]string
	rows := map[key]*report.CaseUsage{}
	spent := map[key]*money{}
	_, runs := caseRunsOf(ev)
	get := func(k key) *report.CaseUsage {
		if rows[k] == nil {
			rows[k], spent[k] = &report.CaseUsage{Case: k[0], Model: k[1], Runs: runs[k]}, &money{}
		}
		return rows[k]
	}
	for i, c := range ev.Models {
		if c.Judge || c.Case == "" || c.Scenario != "" {
			continue
		}
		k := key{c.Case, c.Model}
		r := get(k)
		r.ModelCalls++
		r.Tokens += int64(c.Usage.InputTokens + c.Usage.CachedInputTokens + c.Usage.CacheWriteTokens + c.Usage.OutputTokens)
		spent[k].add(costs[i])
	}
	for _, c := range ev.Tools {
		if c.Case != "" && c.Scenario == "" {
			get(key{c.Case, c.Model}).ToolCalls++
		}
	}
	keys := sortedPairs(rows)
	out := make([]report.CaseUsage, 0, len(keys))
	for _, k := range keys {
		r := rows[k]
		r.CostUSD = spent[k].total()
		r.CostPerRunUSD = per(r.CostUSD, r.Runs, 1)
		out = append(out, *r)
	}
	return out
}

// untimed: a call the harness answered itself (a stub, a refused call)
// has no server round trip to time, nor has one replayed from the cache.
func untimed(c ToolCall) bool {
	return c.Stubbed || c.Injected || c.Reused || c.Outcome == ToolStubbed || c.Outcome == ToolRefused
}

// toolRows are latency and cost per tool × model, by tool then model. A
// call's cost is its turn's price over the turn's calls: what the model
// spent deciding to make it.
func toolRows(ev Events, prices *pricing.Table) []report.ToolUsage {
	type key = [2]string
	type acc struct {
		row     report.ToolUsage
		samples []float64
		tokens  float64
		spent   money
	}
	rows := map[key]*acc{}
	for _, c := range ev.Tools {
		k := key{c.Tool, c.Model}
		a := rows[k]
		if a == nil {
			a = &acc{row: report.ToolUsage{Tool: c.Tool, Model: c.Model}}
			rows[k] = a
		}
		a.row.Calls++
		if c.IsError && !c.Injected {
			a.row.Errors++
		}
		switch {
		case c.Reused:
			// Counted, with its stored result; its tokens and cost were
			// spent by the run that made it, not by this one.
			a.row.Reused++
			continue
		case untimed(c):
			a.row.Untimed++
		default:
			a.samples = append(a.samples, ms(c.Latency))
		}
		n := max(c.TurnCalls, 1)
		u := c.TurnUsage
		a.tokens += float64(u.InputTokens+u.CachedInputTokens+u.CacheWriteTokens+u.OutputTokens) / float64(n)
		p, _ := price(prices, c.Model, c.Start, u)
		p.usd /= float64(n)
		a.spent.add(p)
	}
	keys := sortedPairs(rows)
	out := make([]report.ToolUsage, 0, len(keys))
	for _, k := range keys {
		a := rows[k]
		r := a.row
		if len(a.samples) > 0 {
			p50, p95, mx, _ := Distribution(a.samples)
			r.P50Ms, r.P95Ms, r.MaxMs = p50, p95, &mx
			r.SamplesMs = kept(a.samples)
		}
		made := r.Calls - r.Reused // the calls this run paid for
		if made > 0 {
			r.TokensPerCall = math.Round(a.tokens/float64(made)*10) / 10
		}
		r.CostUSD = a.spent.total()
		r.CostPerCallUSD = per(r.CostUSD, made, 1)
		out = append(out, r)
	}
	return out
}

// sortedPairs are the keys of a map keyed by (case or tool, model), in
// that order.
func sortedPairs[V any](m map[[2]string]V) [][2]string {
	keys := make([][2]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	return keys
}
