package behavior

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// SystemPrompt is what every model is told before a case's prompt. It is
// part of the result cache key (by LoopVersion): changing it re-runs
// everything.
const SystemPrompt = "You are an assistant connected to an MCP server. Use its tools when they help with the user's request, " +
	"taking arguments from the request. Do not call a tool when none is needed. When you have what you need, answer briefly."

// LoopVersion changes whenever the loop changes what a model sees or how a
// run is recorded; it is part of every result cache key.
const LoopVersion = "loop/1"

// Trajectory end states (report.Trajectory.End).
const (
	EndAnswered     = "answered"
	EndStepLimit    = "step-limit"
	EndInputMissing = "input-missing"
	EndBudget       = "budget"
	// EndStale: a replayed run's request was not in the cassette
	// (llm.ErrNoAnswer); like a budget stop, the run is not measured.
	EndStale = "stale"
	EndError = "error"
)

// Bounds of what a trajectory keeps; what the model sees is bounded by
// the executor (DefaultMaxResultBytes).
const (
	maxTextBytes   = 2 << 10  // one assistant text or tool result, as stored
	maxArgsBytes   = 16 << 10 // one call's arguments, as stored (they are scored)
	maxCallsPerRun = 64       // tool calls recorded per run
)

// DefaultMaxSteps is the step limit (model turns per run) when none is set.
const DefaultMaxSteps = 8

// Gate is asked before every provider call; an error stops the run with
// End "budget" and the error's text as the reason.
type Gate func() error

// Agent runs one case against one model: the model sees the server's
// tools, its calls are executed, the results fed back, up to MaxSteps
// model turns.
type Agent struct {
	Provider llm.Provider
	Executor Executor
	// Tools are offered to the model; a call to any other name is answered
	// with an error and never executed.
	Tools    []llm.Tool
	MaxSteps int
	Sampling llm.Sampling
	// Before, when set, is asked before each provider call (the budget);
	// After is told each call's usage.
	Before Gate
	After  func(llm.Usage)
	// CallTimeout bounds one provider call (default 2 minutes).
	CallTimeout time.Duration
	// Telemetry, when set, is told of every tool call, placed on the case
	// run of the context (telemetry.WithPlace) with the share of the model
	// turn that made it.
	Telemetry *telemetry.Recorder
}

// Run runs case c and returns its trajectory. It never fails: a provider
// or server error ends the trajectory with End "error" and the reason.
func (a *Agent) Run(ctx context.Context, c golden.Case) *report.Trajectory {
	start := time.Now()
	tr := &report.Trajectory{Turns: []report.Turn{}}
	defer func() { tr.DurationMs = time.Since(start).Milliseconds() }()
	steps := a.MaxSteps
	if steps <= 0 {
		steps = DefaultMaxSteps
	}
	offered := map[string]bool{}
	for _, t := range a.Tools {
		offered[t.Name] = true
	}
	msgs := []llm.Message{{Role: llm.User, Text: c.Prompt}}
	calls := 0
	for step := 0; ; step++ {
		if step >= steps {
			tr.End, tr.Reason = EndStepLimit, fmt.Sprintf("the model was still calling tools after %d turns (eval.max-steps)", steps)
			return tr
		}
		if a.Before != nil {
			if err := a.Before(); err != nil {
				tr.End, tr.Reason = EndBudget, err.Error()
				return tr
			}
		}
		resp, err := a.complete(ctx, msgs)
		if errors.Is(err, llm.ErrNoAnswer) {
			tr.End, tr.Reason = EndStale, clip(err.Error(), 1000)
			return tr
		}
		if err != nil {
			tr.End, tr.Reason = EndError, clip("model call failed: "+err.Error(), 500)
			return tr
		}
		tr.ModelCalls++
		tr.InputTokens += resp.Usage.InputTokens + resp.Usage.CachedInputTokens + resp.Usage.CacheWriteTokens
		tr.OutputTokens += resp.Usage.OutputTokens
		if a.After != nil {
			a.After(resp.Usage)
		}
		if resp.ServedModel != "" {
			tr.Served = clip(resp.ServedModel, 200)
		}
		tr.Dropped = mergeDropped(tr.Dropped, resp.Dropped)
		turn := report.Turn{StopReason: clip(resp.StopReason, 40), LatencyMs: resp.Latency.Milliseconds(),
			InputTokens: resp.Usage.InputTokens + resp.Usage.CachedInputTokens + resp.Usage.CacheWriteTokens, OutputTokens: resp.Usage.OutputTokens}
		if t := strings.TrimSpace(resp.Message.Text); t != "" {
			turn.Text = clipStored(t, tr)
			tr.Final = turn.Text
		}
		m := resp.Message
		m.Role = llm.Assistant
		msgs = append(msgs, m)
		if len(m.Calls) == 0 {
			tr.Turns = append(tr.Turns, turn)
			tr.End = EndAnswered
			return tr
		}
		results := make([]llm.ToolResult, 0, len(m.Calls))
		for _, call := range m.Calls {
			rec, res, stop := a.execute(ctx, c, call, offered, resp.Usage, len(m.Calls))
			if calls < maxCallsPerRun {
				turn.Calls = append(turn.Calls, rec(tr))
			} else {
				tr.Truncated = true
			}
			calls++
			if stop != nil {
				tr.Turns = append(tr.Turns, turn)
				var mi *MissingInputError
				if errors.As(stop, &mi) {
					tr.End, tr.Reason = EndInputMissing, clip(mi.Error(), 1000)
				} else {
					tr.End, tr.Reason = EndError, clip(stop.Error(), 500)
				}
				return tr
			}
			results = append(results, res)
		}
		tr.Turns = append(tr.Turns, turn)
		msgs = append(msgs, llm.Message{Role: llm.ToolRole, Results: results})
	}
}

func (a *Agent) complete(ctx context.Context, msgs []llm.Message) (*llm.Response, error) {
	d := a.CallTimeout
	if d <= 0 {
		d = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	resp, err := a.Provider.Complete(ctx, &llm.Request{System: SystemPrompt, Messages: msgs, Tools: a.Tools, ToolChoice: "auto", Sampling: a.Sampling})
	if err == nil && resp == nil {
		err = errors.New("the provider returned no response")
	}
	return resp, err
}

// execute runs one call. rec builds the stored record (clipping against
// the trajectory); res is what the model sees; stop ends the run.
func (a *Agent) execute(ctx context.Context, c golden.Case, call llm.ToolCall, offered map[string]bool, turn llm.Usage, turnCalls int) (rec func(*report.Trajectory) report.ToolCall, res llm.ToolResult, stop error) {
	res.CallID = call.ID
	var cr CallResult
	start := time.Now()
	refused := true
	switch {
	case call.ParseError != "" || call.Arguments == nil:
		why := call.ParseError
		if why == "" {
			why = "no arguments"
		}
		cr = CallResult{Content: "the arguments are not valid JSON (" + clip(why, 200) + "); send a JSON object", IsError: true}
	case !isObject(call.Arguments):
		cr = CallResult{Content: "the arguments must be a JSON object", IsError: true}
	case !offered[call.Name]:
		cr = CallResult{Content: fmt.Sprintf("there is no tool named %q; the tools are: %s", clip(call.Name, 100), toolNames(a.Tools)), IsError: true}
	default:
		refused = false
		cr, stop = a.Executor.Call(ctx, call.Name, call.Arguments, c.Inputs)
	}
	if a.Telemetry != nil {
		// Timed here, around the executor: the call's span then encloses
		// the MCP requests it made.
		a.Telemetry.ToolCall(telemetry.ToolCall{Model: a.Provider.ID(), Place: telemetry.PlaceOf(ctx), Tool: call.Name, Start: start,
			Latency: time.Since(start), Outcome: toolOutcome(cr, refused, stop), IsError: cr.IsError || stop != nil, Stubbed: cr.Stubbed,
			Injected: cr.Injected, TurnUsage: turn, TurnCalls: turnCalls})
	}
	res.Content, res.IsError = cr.Content, cr.IsError
	rec = func(tr *report.Trajectory) report.ToolCall {
		r := report.ToolCall{Name: clip(call.Name, 200), Result: clipStored(cr.Content, tr), IsError: cr.IsError, Stubbed: cr.Stubbed,
			InputRounds: cr.InputRounds, DurationMs: cr.Duration.Milliseconds()}
		switch {
		case call.Arguments != nil && json.Valid(call.Arguments) && len(call.Arguments) <= maxArgsBytes:
			r.Arguments = compactJSON(call.Arguments)
		case call.Arguments != nil && len(call.Arguments) > maxArgsBytes:
			r.ArgumentsRaw, r.ParseError = clip(string(call.Arguments), maxTextBytes), "arguments larger than the harness records"
			tr.Truncated = true
		default:
			r.ArgumentsRaw, r.ParseError = clipStored(call.ArgumentsRaw, tr), clip(call.ParseError, 300)
			if r.ParseError == "" {
				r.ParseError = "no arguments"
			}
		}
		return r
	}
	return rec, res, stop
}

// toolOutcome is how a call ended, for Layer 3.
func toolOutcome(cr CallResult, refused bool, stop error) string {
	switch {
	case stop != nil:
		return telemetry.ToolFailed
	case refused:
		return telemetry.ToolRefused
	case cr.Stubbed:
		return telemetry.ToolStubbed
	case cr.RPCError:
		return telemetry.ToolRPCError
	case cr.IsError:
		return telemetry.ToolError
	}
	return telemetry.ToolOK
}

func clipStored(s string, tr *report.Trajectory) string {
	if len(s) > maxTextBytes {
		tr.Truncated = true
	}
	return clip(s, maxTextBytes)
}

func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return json.RawMessage(b.Bytes())
}

func toolNames(tools []llm.Tool) string {
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func mergeDropped(have, more []string) []string {
	for _, d := range more {
		d = clip(d, 200)
		dup := false
		for _, h := range have {
			dup = dup || h == d
		}
		if !dup && len(have) < 10 {
			have = append(have, d)
		}
	}
	return have
}
