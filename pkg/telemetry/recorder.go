// Package telemetry is Layer 3: it records what a run's requests, model
// calls and tool calls took in time, tokens and money, and summarises that
// into the report's telemetry section. Everything is measured in the
// harness; nothing is taken from the server's or the provider's word but
// the providers' token counts.
//
// One Recorder per run, shared by every goroutine of it:
//
//	rec := telemetry.NewRecorder(telemetry.Options{Prices: table})
//	cfg := mcpclient.Config{Observer: rec.ObserveMCP} // every MCP request, any layer
//	ctx = telemetry.WithPlace(ctx, telemetry.Place{Case: "weather", Run: 1}) // the runners do this per case run
//	model := rec.Provider(provider, false) // records every model call, placed by its context
//	rec.ToolCall(telemetry.ToolCall{Model: "openai:gpt-5-mini", Place: pl, Tool: "get_weather", Latency: d, Outcome: telemetry.ToolOK})
//	rec.CaseRun(telemetry.CaseRun{Model: "openai:gpt-5-mini", Place: pl, Duration: d, Outcome: report.RunPass})
//	t := rec.Summarize()
//	rep.Telemetry = &t
//	telemetry.Compare(rep, baseline, greenHistory) // the per-model columns, Δ and trend
//
// docs/telemetry.md says how the Layer 1 runner feeds it and why each
// figure is computed as it is.
package telemetry

import (
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/pricing"
)

// Options configure a Recorder. The zero value is the default.
type Options struct {
	// Prices cost the model calls (default pricing.Default(); pass
	// Default().With(override) for a user's price file).
	Prices *pricing.Table
	// MaxEvents bounds how many events of each kind are kept (default
	// DefaultMaxEvents); past it events are counted and a warning says
	// the figures cover the first ones only.
	MaxEvents int
	// Now stamps events recorded without a start time (default time.Now).
	Now func() time.Time
}

// DefaultMaxEvents is far above a real run (Layer 0 sends a few thousand
// requests; Layer 1 tens of thousands of calls at most) and small enough
// (tens of MB) that a runaway loop cannot exhaust memory.
const DefaultMaxEvents = 200_000

// ModelCall is one provider call.
type ModelCall struct {
	// Model is the model spec as configured and as the report's Model.ID
	// names it, e.g. "openai:gpt-5-mini"; it is what the price table is
	// looked up with.
	Model string
	// Judge is true for the judge's calls: they count toward the run's
	// cost, not toward the model under test.
	Judge bool
	// Place is the case run of the call (Case "" outside a case), with
	// its trace, for span export.
	Place
	// Start is when the call began (zero: Latency before it was
	// recorded); Latency is its wall time, retries included
	// (llm.Response.Latency).
	Start   time.Time
	Latency time.Duration
	Usage   llm.Usage
	Served  string // llm.Response.ServedModel
	// Failed is true when the call returned an error: its latency counts
	// (and its usage, when the provider reported any).
	Failed bool
}

// ToolCall is one tool call a model made in a case run.
type ToolCall struct {
	Model string
	Place
	Tool    string
	Start   time.Time
	Latency time.Duration
	// Outcome is how the call ended (ToolOK, ToolError, …).
	Outcome string
	// IsError is true when the call ended in an error result or failed.
	IsError bool
	// Stubbed calls were answered by eval.stubs, not the server: they
	// count as tool calls of the model, not in tool latency.
	Stubbed bool
	// Injected calls were answered with a Layer 2 fault in the server's
	// answer's place: tool calls of the model, but neither errors of the
	// tool (the per-tool table counted the faults as its failures) nor
	// timings of it.
	Injected bool
	// Reused calls belong to a case run replayed from the result cache:
	// made then, not now, so counted (with their stored result) but
	// neither timed nor priced. Without them a cached run's tools had no
	// row.
	Reused bool
	// TurnUsage is the usage of the model turn that made the call, and
	// TurnCalls how many calls that turn made: the call's share of the
	// model's cost is TurnUsage / TurnCalls.
	TurnUsage llm.Usage
	TurnCalls int
}

// Tool call outcomes (ToolCall.Outcome, the outcome attribute of an
// execute_tool span).
const (
	ToolOK       = "ok"         // the server answered with a result
	ToolError    = "tool_error" // a result with isError, or a fault shown in its place
	ToolRPCError = "rpc_error"  // the server answered with a JSON-RPC error
	ToolStubbed  = "stubbed"    // eval.stubs answered; the server was not asked
	ToolRefused  = "refused"    // the harness refused it: no such tool, arguments not a JSON object
	ToolFailed   = "failed"     // the call ended the run: the server was lost, or asked for input the case lacks
)

// CaseRun is one run of a case against a model, end to end.
type CaseRun struct {
	Model string
	Place
	Start    time.Time
	Duration time.Duration
	Outcome  string // report.RunPass, RunFail, RunError, RunInconclusive; Layer 2's verdict outcome
}

// ReusedRun is a Layer 1 case run replayed from the result cache: no call
// was made now, but what a case costs counts it, at its stored usage, so
// that a run with part of its runs cached compares with a fresh one.
type ReusedRun struct {
	Model string
	Case  string
	Run   int
	Usage llm.Usage
	// At is when it was replayed: its tokens are priced as of then.
	At time.Time
}

// Recorder collects a run's events. Its methods are safe for concurrent
// use; recording is an append under a mutex, so it costs the measured
// calls nothing they would notice.
type Recorder struct {
	prices *pricing.Table
	limit  int
	now    func() time.Time

	mu      sync.Mutex
	mcp     []mcpclient.Call
	models  []ModelCall
	tools   []ToolCall
	cases   []CaseRun
	dropped int
	reused  []ReusedRun
}

// NewRecorder returns an empty recorder.
func NewRecorder(opts Options) *Recorder {
	r := &Recorder{prices: opts.Prices, limit: opts.MaxEvents, now: opts.Now}
	if r.prices == nil {
		r.prices = pricing.Default()
	}
	if r.limit <= 0 {
		r.limit = DefaultMaxEvents
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

// ObserveMCP records one MCP request; it is an mcpclient.Config.Observer.
func (r *Recorder) ObserveMCP(c mcpclient.Call) {
	keep(r, &r.mcp, c)
}

// ModelCall records one provider call.
func (r *Recorder) ModelCall(c ModelCall) {
	if c.Start.IsZero() {
		c.Start = r.now().Add(-c.Latency)
	}
	keep(r, &r.models, c)
}

// ToolCall records one tool call.
func (r *Recorder) ToolCall(c ToolCall) {
	if c.Start.IsZero() {
		c.Start = r.now().Add(-c.Latency)
	}
	keep(r, &r.tools, c)
}

// Reused records a case run replayed from the cache.
func (r *Recorder) Reused(c ReusedRun) {
	if c.At.IsZero() {
		c.At = r.now()
	}
	keep(r, &r.reused, c)
}

// CaseRun records one finished case run.
func (r *Recorder) CaseRun(c CaseRun) {
	if c.Start.IsZero() {
		c.Start = r.now().Add(-c.Duration)
	}
	keep(r, &r.cases, c)
}

// keep appends v to events under the recorder's lock, or counts it
// dropped past the limit.
func keep[T any](r *Recorder, events *[]T, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(*events) >= r.limit {
		r.dropped++
		return
	}
	*events = append(*events, v)
}

// Events is a copy of everything recorded, for exporters (package
// otelexport turns it into spans).
type Events struct {
	MCP    []mcpclient.Call
	Models []ModelCall
	Tools  []ToolCall
	Cases  []CaseRun
	Reused []ReusedRun
	// Dropped counts events past Options.MaxEvents.
	Dropped int
}

// Events returns a copy of the events recorded so far.
func (r *Recorder) Events() Events {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Events{
		MCP: append([]mcpclient.Call(nil), r.mcp...), Models: append([]ModelCall(nil), r.models...),
		Tools: append([]ToolCall(nil), r.tools...), Cases: append([]CaseRun(nil), r.cases...), Reused: append([]ReusedRun(nil), r.reused...), Dropped: r.dropped,
	}
}

// Prices is the table the recorder costs calls with.
func (r *Recorder) Prices() *pricing.Table { return r.prices }
