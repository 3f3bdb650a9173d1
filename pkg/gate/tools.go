package gate

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The server's tools against the baseline's: a tool the baseline listed
// and the server no longer does breaks every client and prompt that calls
// it, and a tool whose calls all error now did not before. Neither is a
// rule of the spec, and a tool may be removed on purpose, so both warn:
// the reviewer sees them in Needs attention; a model's case that needed
// the tool fails on its own floor.

const (
	// toolErrorMinCalls is how many calls each side needs before an
	// error rate is compared.
	toolErrorMinCalls = 3
	// A tool's calls "error now" when at least toolErrorNow of them
	// errored, against at most toolErrorBefore in the baseline.
	toolErrorNow    = 0.5
	toolErrorBefore = 0.1
	// toolsNamed bounds the new tools named beside a removed one.
	toolsNamed = 5
)

// tools adds the items of the tools the baseline listed and the server no
// longer does, and of the tools whose calls error now.
func (e *evaluation) tools() {
	e.brokenTools()
	if e.base == nil {
		return
	}
	// A listing that failed or found nothing says nothing about which
	// tools went: Layer 0 reports the listing itself.
	if len(e.base.Tools) > 0 && len(e.new.Tools) > 0 {
		var added []string
		for _, t := range e.new.Tools {
			if !slices.Contains(e.base.Tools, t) {
				added = append(added, t)
			}
		}
		for _, t := range e.base.Tools {
			if slices.Contains(e.new.Tools, t) {
				continue
			}
			reason := "listed in the baseline, not now: clients and prompts that call it break"
			if len(added) > 0 {
				named := added[:min(len(added), toolsNamed)]
				more := ""
				if len(added) > toolsNamed {
					more = fmt.Sprintf(" and %d more", len(added)-toolsNamed)
				}
				reason += fmt.Sprintf(" (renamed? new since the baseline: %s%s)", strings.Join(named, ", "), more)
			}
			e.add(report.GateItem{Layer: 0, Kind: report.KindTool, Subject: t, Status: report.ItemWarn,
				Rule: "a tool the baseline listed is still listed", Reason: reason})
		}
	}
	e.toolErrors()
	e.toolLatency()
}

// brokenTools warns of a tool that answered every call of Layer 1 with an
// error result: its cases pass on the choice of tool and arguments while
// nothing was done, and with no rubric and no baseline nothing else says
// so (a user's trial: a tool that threw on every call scored 3/3). Known
// broken in the baseline too, or compared there per model by Layer 3's
// error rule, it is not said again.
func (e *evaluation) brokenTools() {
	now := toolCallsOf(e.new)
	if len(now) == 0 {
		return
	}
	var base map[string]toolCalls
	if e.base != nil {
		base = toolCallsOf(e.base)
	}
	comparedByLayer3 := e.base != nil && e.base.Telemetry != nil && e.new.Telemetry != nil
	for _, name := range slices.Sorted(maps.Keys(now)) {
		c := now[name]
		if c.calls < toolErrorMinCalls || c.errors < c.calls {
			continue
		}
		if b, ok := base[name]; ok && (b.errors == b.calls || comparedByLayer3) {
			continue
		}
		reason := fmt.Sprintf("all %d calls of %s in Layer 1 (%s) answered an error result", c.calls, name, plural(len(c.models), "model", "models"))
		if c.example != "" {
			reason += ", e.g. " + c.example
		}
		if c.passing > 0 {
			reason += fmt.Sprintf("; %s that called it passed on the choice of tool and arguments, though the tool did nothing", plural(c.passing, "run", "runs"))
		}
		e.add(report.GateItem{Layer: 1, Kind: report.KindTool, Subject: name, Status: report.ItemWarn,
			Rule:   fmt.Sprintf("a tool the models call answers at least one of its calls (of %d or more) with something other than an error (a warning)", toolErrorMinCalls),
			Reason: reason})
	}
}

// toolCalls are one tool's calls over a report's Layer 1 runs: not the
// stubbed ones, which the server never saw.
type toolCalls struct {
	calls, errors, passing int
	models                 []string
	example                string // the first error result, clipped and quoted (clipCause)
}

func toolCallsOf(rep *report.Report) map[string]toolCalls {
	if rep.Behavior == nil {
		return nil
	}
	out := map[string]toolCalls{}
	for _, r := range rep.Behavior.Results {
		for _, run := range r.Runs {
			if run.Trajectory == nil || run.Outcome == report.RunError {
				// A run that errored (the server lost, a provider
				// down) says nothing of what the tool answers.
				continue
			}
			called := map[string]bool{}
			for _, t := range run.Trajectory.Turns {
				for _, call := range t.Calls {
					if call.Stubbed || call.ParseError != "" {
						continue
					}
					c := out[call.Name]
					c.calls++
					if call.IsError {
						c.errors++
						if c.example == "" {
							c.example = clipCause(strings.TrimSpace(call.Result))
						}
					}
					if !slices.Contains(c.models, r.Model) {
						c.models = append(c.models, r.Model)
					}
					if !called[call.Name] && run.Outcome == report.RunPass {
						c.passing++
					}
					called[call.Name] = true
					out[call.Name] = c
				}
			}
		}
	}
	return out
}

const (
	// A tool's calls are "slow now" when their median is at least
	// toolSlowFactor times the baseline's and toolSlowMs more, over at
	// least toolSlowMinSamples timed calls on each side.
	toolSlowFactor     = 5
	toolSlowMs         = 100
	toolSlowMinSamples = 5
)

// toolLatency warns of a tool whose calls became much slower than in the
// baseline (Layer 3 times them; latency is not gated, and a tool 1,000
// times slower passed without a word in a user's trial).
func (e *evaluation) toolLatency() {
	if e.new.Telemetry == nil || e.base.Telemetry == nil {
		return
	}
	type key struct{ tool, model string }
	base := map[key]report.Latency{}
	for _, l := range e.base.Telemetry.Latency {
		if l.Kind == report.LatencyTool {
			base[key{l.Subject, l.Model}] = l
		}
	}
	for _, l := range e.new.Telemetry.Latency {
		b, ok := base[key{l.Subject, l.Model}]
		if l.Kind != report.LatencyTool || !ok {
			continue
		}
		now, nok := medianMs(l)
		was, bok := medianMs(b)
		if !nok || !bok || now < toolSlowFactor*was || now-was < toolSlowMs {
			continue
		}
		who := "over every model"
		if l.Model != "" {
			who = "called by " + l.Model
		}
		e.add(report.GateItem{Layer: 3, Kind: report.KindTool, Subject: l.Subject, Model: l.Model, Status: report.ItemWarn,
			Value: ptr(now), BaselineValue: ptr(was), Direction: report.Lower,
			Rule:   fmt.Sprintf("a tool's median call time stays under %d× the baseline's, or within %d ms of it (latency is not gated: a warning)", toolSlowFactor, toolSlowMs),
			Reason: fmt.Sprintf("median call %s %s, against %s in the baseline (%d and %d timed calls)", msText(now), who, msText(was), l.Samples, b.Samples)})
	}
}

// medianMs is a latency row's median: its p50, or the median of its kept
// samples below the percentile's minimum; ok is false with too few.
func medianMs(l report.Latency) (float64, bool) {
	if l.P50Ms != nil {
		return *l.P50Ms, true
	}
	if len(l.SamplesMs) < toolSlowMinSamples {
		return 0, false
	}
	s := append([]float64(nil), l.SamplesMs...)
	sort.Float64s(s)
	return s[(len(s)-1)/2], true
}

// msText is a duration in ms as a person reads it.
func msText(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.2f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}

// toolErrors warns of a tool a model called whose calls mostly error now
// and seldom did in the baseline, per model (Layer 3's tool usage).
func (e *evaluation) toolErrors() {
	if e.new.Telemetry == nil || e.base.Telemetry == nil {
		return
	}
	type key struct{ tool, model string }
	base := map[key]report.ToolUsage{}
	for _, u := range e.base.Telemetry.Tools {
		base[key{u.Tool, u.Model}] = u
	}
	for _, u := range e.new.Telemetry.Tools {
		b, ok := base[key{u.Tool, u.Model}]
		if !ok || u.Calls < toolErrorMinCalls || b.Calls < toolErrorMinCalls {
			continue
		}
		now, before := float64(u.Errors)/float64(u.Calls), float64(b.Errors)/float64(b.Calls)
		if now < toolErrorNow || before > toolErrorBefore {
			continue
		}
		e.add(report.GateItem{Layer: 3, Kind: report.KindTool, Subject: u.Tool, Model: u.Model, Status: report.ItemWarn,
			Rule:   fmt.Sprintf("a tool's calls error no more often than in the baseline (warned from %s of its calls, with at most %s before)", percent(toolErrorNow), percent(toolErrorBefore)),
			Reason: fmt.Sprintf("%d of %d calls errored (tool error, JSON-RPC error or lost), against %d of %d in the baseline", u.Errors, u.Calls, b.Errors, b.Calls)})
	}
}

// plural is "1 run", "3 runs".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
