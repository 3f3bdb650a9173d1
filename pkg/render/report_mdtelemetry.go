package render

import (
	"fmt"
	"io"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// maxWarnings is how many Layer 3 warnings the comment lists.
const maxWarnings = 5

// layer3Blocks: the run's cost and what could not be priced, the
// per-model columns beside the pass-rate matrix (with Δ vs the baseline
// and the cost trend), tokens and cost per model, and every latency
// distribution folded away.
func layer3Blocks(d *mdDoc, rep *report.Report) {
	t := rep.Telemetry
	head := []string{"#### Layer 3 · latency, tokens and cost", ""}
	line := "Run cost **" + runCost(t) + "**"
	if t.Prices != "" {
		line += " · prices " + mdCode(t.Prices)
	}
	line += fmt.Sprintf(" · p50/p95 are nearest-rank, shown from %d samples on", report.MinPercentileSamples)
	head = append(head, line)
	if len(t.Warnings) > 0 {
		// One callout, a few lines: a run with many unpriced models must
		// not push the rest of the comment out.
		warn := []string{"", "> [!WARNING]"}
		for i, w := range t.Warnings {
			if i == maxWarnings {
				warn = append(warn, fmt.Sprintf("> - … %d more in report.json", len(t.Warnings)-maxWarnings))
				break
			}
			warn = append(warn, "> - "+mdText(w))
		}
		head = append(head, warn...)
	}
	d.para(head...)
	if cols := modelColumns(rep); len(cols) > 0 {
		var rows []string
		for _, c := range cols {
			b := c.Baseline
			if b == nil {
				b = &report.ModelFigures{}
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", mdCode(c.Model),
				withDelta(rate(c.Now.Accuracy), pointChange(c.Now.Accuracy, b.Accuracy)),
				withDelta(dur(c.Now.P95Ms), relChange(c.Now.P95Ms, b.P95Ms)),
				withDelta(tokensPer(c.Now.TokensPerCase), relChange(c.Now.TokensPerCase, b.TokensPerCase)),
				withDelta(usdOrUnknown(c.Now.CostPerCaseUSD), relChange(c.Now.CostPerCaseUSD, b.CostPerCaseUSD)),
				trendCost(c)))
		}
		d.add(mdBlock{head: []string{"**Per model** (Δ vs the baseline; the trend runs over the last green reports)", "",
			"| Model | Accuracy | p95 model call | Tokens / case | Cost / case | Cost trend |", "|---|---|---|---|---|---|"}, rows: rows, what: "models"})
	}
	if len(t.Usage) > 0 {
		var rows []string
		for _, u := range t.Usage {
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |", mdCode(u.Model), mdText(u.Role), u.Calls,
				grouped(u.InputTokens), grouped(u.CachedInputTokens), grouped(u.CacheWriteTokens), grouped(u.OutputTokens), grouped(u.ReasoningTokens),
				usdOrUnknown(u.CostUSD), dashIfNil(u.CostPerCallUSD), dashIfNil(u.CostPerCaseUSD), dashIfNil(u.CostPer1kToolCallsUSD)))
		}
		d.add(mdBlock{head: []string{"**Tokens and cost** (input excludes cache reads and writes; output includes reasoning)", "",
			"| Model | Role | Calls | Input | Cache read | Cache write | Output | Reasoning | Cost | / call | / case | / 1k tool calls |",
			"|---|---|---|---|---|---|---|---|---|---|---|---|"}, rows: rows, what: "models"})
	}
	if len(t.Tools) > 0 {
		var rows []string
		for _, r := range t.Tools {
			c := toolCells(r)
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d | %s | %s | %s | %s | %s |", mdCode(r.Tool), mdCode(r.Model), c.calls, r.Errors,
				c.p50, c.p95, c.max, c.tokens, c.perCall))
		}
		d.add(mdBlock{head: []string{"**Per tool call** (latency of the calls that reached the server; cost of the model turns that made the calls, a turn with k calls giving each a k-th)", "",
			"| Tool | Model | Calls | Errors | p50 | p95 | max | Tokens / call | Cost / call |", "|---|---|---|---|---|---|---|---|---|"}, rows: rows, what: "tools"})
	}
	if len(t.Latency) > 0 {
		var rows []string
		for _, l := range t.Latency {
			of := mdText(latencyOf(l))
			if l.Kind == report.LatencyMethod || l.Kind == report.LatencyTool {
				of = mdCode(l.Subject) // a method or a server's tool name: shown verbatim
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d | %s | %s | %s | %d |", mdText(l.Kind), of, mdCode(l.Model),
				l.Samples, dur(l.P50Ms), dur(l.P95Ms), durMs(l.MaxMs), l.Errors))
		}
		d.add(mdBlock{head: details(fmt.Sprintf("Latency: %d distributions measured in the harness", len(rows)),
			[]string{"| Kind | Of | Model | n | p50 | p95 | max | Errors |", "|---|---|---|---|---|---|---|---|"}), rows: rows, tail: detailsEnd(), what: "rows"})
	}
}

// toolCellsOf are a per-tool row's cells, shared by Markdown and HTML.
type toolCellsOf struct{ calls, p50, p95, max, tokens, perCall string }

func toolCells(r report.ToolUsage) toolCellsOf {
	c := toolCellsOf{calls: fmt.Sprint(r.Calls), p50: dur(r.P50Ms), p95: dur(r.P95Ms), max: "–",
		tokens: fmt.Sprintf("%.0f", r.TokensPerCall), perCall: dashIfNil(r.CostPerCallUSD)}
	if r.Untimed > 0 {
		c.calls += fmt.Sprintf(" (%d untimed)", r.Untimed)
	}
	if r.MaxMs != nil {
		c.max = durMs(*r.MaxMs)
	}
	return c
}

// dashIfNil is a derived cost: "–" when there is nothing to divide by or
// the cost is unknown (the total column says which).
func dashIfNil(v *float64) string {
	if v == nil {
		return "–"
	}
	return usdText(*v)
}

// costObserved is a cost gate item's value against the baseline's.
func costObserved(it report.GateItem) string {
	switch {
	case it.Value == nil:
		return "unknown"
	case it.BaselineValue != nil:
		return fmt.Sprintf("%s (was %s)", usdText(*it.Value), usdText(*it.BaselineValue))
	}
	return usdText(*it.Value)
}

// telemetryText is Layer 3 for a terminal.
func telemetryText(w io.Writer, rep *report.Report) {
	t := rep.Telemetry
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("run cost %s · prices %s\n", runCost(t), orDash(Line(t.Prices)))
	for _, warn := range t.Warnings {
		p("  warning: %s\n", Line(warn))
	}
	for _, c := range modelColumns(rep) {
		b := c.Baseline
		if b == nil {
			b = &report.ModelFigures{}
		}
		p("  %-24s accuracy %s · p95 %s · tokens/case %s · cost/case %s\n", Line(c.Model),
			withDelta(rate(c.Now.Accuracy), pointChange(c.Now.Accuracy, b.Accuracy)),
			withDelta(dur(c.Now.P95Ms), relChange(c.Now.P95Ms, b.P95Ms)),
			withDelta(tokensPer(c.Now.TokensPerCase), relChange(c.Now.TokensPerCase, b.TokensPerCase)),
			withDelta(usdOrUnknown(c.Now.CostPerCaseUSD), relChange(c.Now.CostPerCaseUSD, b.CostPerCaseUSD)))
	}
	for _, u := range t.Usage {
		p("  %-24s %-5s %d calls: %s in, %s cache read, %s cache write, %s out (%s reasoning) · %s\n", Line(u.Model), Line(u.Role), u.Calls,
			grouped(u.InputTokens), grouped(u.CachedInputTokens), grouped(u.CacheWriteTokens), grouped(u.OutputTokens), grouped(u.ReasoningTokens), usdOrUnknown(u.CostUSD))
	}
	for _, l := range t.Latency {
		p("  %-6s %-24s %-24s n %-5d p50 %-8s p95 %-8s max %-8s errors %d\n", Line(l.Kind), Line(latencyOf(l)), orDash(Line(l.Model)),
			l.Samples, dur(l.P50Ms), dur(l.P95Ms), durMs(l.MaxMs), l.Errors)
	}
}
