package gate

import (
	"fmt"
	"slices"
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
