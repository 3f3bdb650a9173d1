package report

import (
	"cmp"
	"fmt"
	"time"
)

// Telemetry is Layer 3: what the run cost in time, tokens and money, as
// measured in the harness (package telemetry fills it; docs/telemetry.md).
// A money figure is absent when a price was unknown, never 0 for unknown.
type Telemetry struct {
	// Prices is the version of the price table the costs come from ("" when
	// no model call was made).
	Prices  string    `json:"prices"`
	Latency []Latency `json:"latency"`
	// Usage is tokens and cost per model and role.
	Usage []Usage `json:"usage"`
	// Cases is tokens and cost per case × model (Layer 1).
	Cases []CaseUsage `json:"cases"`
	// Tools is latency and cost per tool × model, over Layers 1 and 2
	// (absent from reports made before it was recorded).
	Tools []ToolUsage `json:"tools,omitempty"`
	// Models are the per-model columns shown beside the pass-rate matrix,
	// with the baseline's figures and the trend over earlier green reports
	// when the run was compared.
	Models []ModelColumns `json:"models"`
	// Warnings say what could not be measured or priced (model names in
	// them are untrusted text).
	Warnings []string `json:"warnings"`
}

// Latency kinds: what a Latency row measures.
const (
	LatencyMethod = "method" // MCP requests by method (Subject), all layers
	LatencyTool   = "tool"   // tool calls by tool (Subject) and model ("" for all models)
	LatencyModel  = "model"  // model calls by model; Subject "judge" for the judge's calls
	LatencyCase   = "case"   // whole case runs by model
)

// MinPercentileSamples is the fewest samples a percentile is given for:
// below it a row has only n and the maximum, since a p95 of a handful of
// samples is just the largest one or two.
const MinPercentileSamples = 20

// Latency is the distribution of one kind of round trip, measured in the
// harness. Percentiles are nearest-rank.
type Latency struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Model   string `json:"model"`
	Samples int    `json:"samples"`
	// Errors counts samples that ended in an error (a JSON-RPC error, a
	// transport failure, a failed model call); they are in Samples.
	Errors int `json:"errors"`
	// P50Ms and P95Ms are absent below MinPercentileSamples.
	P50Ms     *float64 `json:"p50Ms,omitempty"`
	P95Ms     *float64 `json:"p95Ms,omitempty"`
	MaxMs     float64  `json:"maxMs"`
	Histogram []Bin    `json:"histogram"`
	// SamplesMs are the samples themselves, in the order taken, when
	// there are at most MaxLatencySamples: a merge of shards recomputes
	// the percentiles from them (percentiles cannot be averaged).
	SamplesMs []float64 `json:"samplesMs,omitempty"`
	Direction Direction `json:"direction"` // always lower
}

// Bin is one bar of a latency histogram: samples in [FromMs, ToMs), the
// last bin open above (ToMs absent). Empty bins are left out.
type Bin struct {
	FromMs float64  `json:"fromMs"`
	ToMs   *float64 `json:"toMs,omitempty"`
	Count  int      `json:"count"`
}

// Usage roles.
const (
	RoleEval  = "eval"  // a model under test, in Layer 1's case runs
	RoleJudge = "judge" // the judge grading task completion
	// RoleResilience is a model under test in Layer 2's runs (faults and
	// injections): kept apart so that cost and tokens per case, and the
	// cost gate on them, are Layer 1's; the run's total counts both.
	RoleResilience = "resilience"
)

// Usage is the tokens and cost of one model in one role. Token counts are
// kept apart as the provider layer normalises them: InputTokens exclude
// cache reads and writes, OutputTokens include ReasoningTokens.
type Usage struct {
	Model string `json:"model"`
	Role  string `json:"role"`
	// Calls are model calls; CaseRuns the case runs they served (0 for
	// the judge); ToolCalls the tool calls the model made.
	Calls             int   `json:"calls"`
	CaseRuns          int   `json:"caseRuns"`
	ToolCalls         int   `json:"toolCalls"`
	InputTokens       int64 `json:"inputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens"`
	CacheWriteTokens  int64 `json:"cacheWriteTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	ReasoningTokens   int64 `json:"reasoningTokens"`
	// CostUSD is absent when any call could not be priced (UnpricedCalls
	// counts them); so are the costs derived from it.
	CostUSD       *float64 `json:"costUSD,omitempty"`
	UnpricedCalls int      `json:"unpricedCalls"`
	// ReusedRuns are the case runs (of CaseRuns) replayed from the result
	// cache, and ReusedTokens their stored tokens: not spent now, so not in
	// the tokens and CostUSD above, but in the per-case figures (tokens per
	// case, CostPerCaseUSD), so that a partly cached run compares with a
	// fresh one.
	ReusedRuns   int   `json:"reusedRuns,omitempty"`
	ReusedTokens int64 `json:"reusedTokens,omitempty"`
	// ReusedCostUSD is what the reused runs' stored tokens cost at
	// today's prices; absent with none, or when one could not be priced.
	ReusedCostUSD *float64 `json:"reusedCostUSD,omitempty"`
	// Derived costs, absent when their count is 0: per model call, per
	// case run, per tool call and per 1,000 tool calls.
	CostPerCallUSD        *float64  `json:"costPerCallUSD,omitempty"`
	CostPerCaseUSD        *float64  `json:"costPerCaseUSD,omitempty"`
	CostPerToolCallUSD    *float64  `json:"costPerToolCallUSD,omitempty"`
	CostPer1kToolCallsUSD *float64  `json:"costPer1kToolCallsUSD,omitempty"`
	Direction             Direction `json:"direction"` // always lower
}

// Tokens is every token of the usage: input, cache read, cache write and
// output (reasoning is part of output).
func (u Usage) Tokens() int64 {
	return u.InputTokens + u.CachedInputTokens + u.CacheWriteTokens + u.OutputTokens
}

// TokensPerCase is the tokens of a case run, reused runs at their stored
// tokens; 0 without case runs.
func (u Usage) TokensPerCase() float64 {
	if u.CaseRuns == 0 {
		return 0
	}
	return float64(u.Tokens()+u.ReusedTokens) / float64(u.CaseRuns)
}

// CaseUsage is the tokens and cost of one case × model over its runs (the
// judge's calls not included).
type CaseUsage struct {
	Case       string `json:"case"`
	Model      string `json:"model"`
	Runs       int    `json:"runs"`
	ModelCalls int    `json:"modelCalls"`
	ToolCalls  int    `json:"toolCalls"`
	Tokens     int64  `json:"tokens"`
	// CostUSD is over all runs, CostPerRunUSD the mean of one run; both
	// absent when a call could not be priced.
	CostUSD       *float64 `json:"costUSD,omitempty"`
	CostPerRunUSD *float64 `json:"costPerRunUSD,omitempty"`
}

// ToolUsage is one tool × model over the run's case runs (Layers 1 and 2).
// Latency is of the calls that reached the server; cost is the model's:
// the turns that made the calls, a turn with k calls giving each a k-th.
type ToolUsage struct {
	Tool  string `json:"tool"`
	Model string `json:"model"`
	// Calls are every call the model made to the tool; Errors those that
	// ended in an error (tool error, JSON-RPC error, the run lost), not a
	// Layer 2 fault shown in the server's answer's place; Untimed those
	// answered by the harness (a stub, a refused call, Layer 2's fault or
	// its answer for the attacker's tool),
	// which are in Calls but not in the latency.
	Calls   int `json:"calls"`
	Errors  int `json:"errors"`
	Untimed int `json:"untimed"`
	// Reused are the calls of Layer 1 case runs replayed from the result
	// cache: in Calls (and Errors, at their stored result, which the
	// server gave again before the reuse), not in the latency, the
	// tokens or the cost (per call: over the calls made now).
	Reused int `json:"reused,omitempty"`
	// P50Ms and P95Ms are absent below MinPercentileSamples timed calls;
	// MaxMs without any.
	P50Ms *float64 `json:"p50Ms,omitempty"`
	P95Ms *float64 `json:"p95Ms,omitempty"`
	MaxMs *float64 `json:"maxMs,omitempty"`
	// SamplesMs are the timed calls' latencies, as Latency.SamplesMs.
	SamplesMs []float64 `json:"samplesMs,omitempty"`
	// TokensPerCall is the mean share of model tokens per call.
	TokensPerCall float64 `json:"tokensPerCall"`
	// CostUSD and CostPerCallUSD are absent when a turn could not be priced.
	CostUSD        *float64 `json:"costUSD,omitempty"`
	CostPerCallUSD *float64 `json:"costPerCallUSD,omitempty"`
}

// ModelColumns are one model's columns beside the pass-rate matrix.
type ModelColumns struct {
	Model    string        `json:"model"`
	Now      ModelFigures  `json:"now"`
	Baseline *ModelFigures `json:"baseline,omitempty"`
	// Trend are the figures in earlier green reports, oldest first, then
	// this run's.
	Trend []TrendPoint `json:"trend"`
}

// ModelFigures are a model's headline figures in one report; each is
// absent when that report cannot give it.
type ModelFigures struct {
	// Accuracy is passed runs over decided runs across all cases (Layer 1).
	Accuracy *float64 `json:"accuracy,omitempty"`
	// P95Ms is the p95 of the model's calls (absent below
	// MinPercentileSamples).
	P95Ms          *float64 `json:"p95Ms,omitempty"`
	TokensPerCase  *float64 `json:"tokensPerCase,omitempty"`
	CostPerCaseUSD *float64 `json:"costPerCaseUSD,omitempty"`
}

// TrendPoint is a model's figures in one report of the trend.
type TrendPoint struct {
	Commit     string    `json:"commit"`
	FinishedAt time.Time `json:"finishedAt"`
	ModelFigures
}

// TotalCostUSD is the whole run's model cost, every model and role: known
// only when every call was priced.
func (t *Telemetry) TotalCostUSD() (usd float64, known bool) {
	for _, u := range t.Usage {
		if u.CostUSD == nil || u.UnpricedCalls > 0 {
			return 0, false
		}
		usd += *u.CostUSD
	}
	return usd, true
}

// telemetryOK checks what the schema cannot: percentiles only from
// MinPercentileSamples on and in order, errors within samples, one usage
// row per model and role (the gate and the columns look rows up by them).
func telemetryOK(t *Telemetry, bad func(string, ...any)) {
	for i, l := range t.Latency {
		loc := fmt.Sprintf("/telemetry/latency/%d", i)
		if (l.P50Ms != nil || l.P95Ms != nil) && l.Samples < MinPercentileSamples {
			bad("%s: percentiles of %d samples; below %d a row has n and max only", loc, l.Samples, MinPercentileSamples)
		}
		if l.P50Ms != nil && l.P95Ms != nil && (*l.P50Ms > *l.P95Ms || *l.P95Ms > l.MaxMs) {
			bad("%s: p50 %v, p95 %v and max %v are not in order", loc, *l.P50Ms, *l.P95Ms, l.MaxMs)
		}
		if len(l.SamplesMs) > 0 && len(l.SamplesMs) != l.Samples {
			bad("%s: %d samples kept of %d", loc, len(l.SamplesMs), l.Samples)
		}
		if l.Errors > l.Samples {
			bad("%s: %d errors in %d samples", loc, l.Errors, l.Samples)
		}
	}
	seen := map[[2]string]bool{}
	for i, u := range t.Usage {
		k := [2]string{u.Model, u.Role}
		if seen[k] {
			bad("/telemetry/usage/%d: model %q as %s appears twice", i, u.Model, u.Role)
		}
		seen[k] = true
		if u.UnpricedCalls > u.Calls {
			bad("/telemetry/usage/%d: %d unpriced calls of %d", i, u.UnpricedCalls, u.Calls)
		}
		if u.UnpricedCalls > 0 && u.CostUSD != nil {
			bad("/telemetry/usage/%d: a cost although %d calls have no price (an unknown cost is absent, never a partial sum)", i, u.UnpricedCalls)
		}
	}
}

// CompareLatency orders latency rows as a report lists them: method rows,
// then tool, model-call and case-run rows; within a kind by subject, then
// model. Every producer of rows (a run's summary, a merge of shards) sorts
// by it.
func CompareLatency(a, b Latency) int {
	rank := map[string]int{LatencyMethod: 0, LatencyTool: 1, LatencyModel: 2, LatencyCase: 3}
	if a.Kind != b.Kind {
		return cmp.Compare(rank[a.Kind], rank[b.Kind])
	}
	if a.Subject != b.Subject {
		return cmp.Compare(a.Subject, b.Subject)
	}
	return cmp.Compare(a.Model, b.Model)
}
