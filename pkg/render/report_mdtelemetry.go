package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// maxWarnings is how many Layer 3 warnings the comment lists.
const maxWarnings = 5

// layer3Blocks: the run's cost and what could not be priced, the
// per-model columns beside the pass-rate matrix (with Δ vs the baseline
// and the cost trend), tokens and cost per model, and every latency
// distribution folded away.
func layer3Blocks(d *mdDoc, rep *report.Report, labels modelLabels) {
	t := rep.Telemetry
	head := []string{"#### Layer 3 · latency, tokens and cost", ""}
	// The run's cost is the one line at the top (runCostLine); here the
	// prices the per-model figures use.
	line := fmt.Sprintf("p50/p95 are nearest-rank, shown from %d samples on", report.MinPercentileSamples)
	if t.Prices != "" {
		line = "Costs at prices " + mdCode(t.Prices) + " · " + line
	}
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
	// The per-model table is in the heading's block: left out, they go
	// together; a heading over a line of prices said nothing.
	summary := mdBlock{head: head, prio: prioFocus, label: "Layer 3 summary"}
	if cols := modelColumns(rep); len(cols) > 0 {
		var rows []string
		for _, c := range cols {
			b := c.Baseline
			if b == nil || !comparableModel(rep, c.Model) {
				// No Δ where the gate says not comparable.
				b = &report.ModelFigures{}
			}
			// A figure and its Δ on one line; the models under the
			// matrix's labels: four long ids squeezed every figure into
			// two lines at 780 px.
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", labels.of(c.Model),
				nbsp(withDelta(rate(c.Now.Accuracy), pointChange(c.Now.Accuracy, b.Accuracy))),
				nbsp(withDelta(dur(c.Now.P95Ms), relChange(c.Now.P95Ms, b.P95Ms))),
				nbsp(withDelta(tokensPer(c.Now.TokensPerCase), relChange(c.Now.TokensPerCase, b.TokensPerCase))),
				nbsp(withDelta(usdOrUnknown(c.Now.CostPerCaseUSD), relChange(c.Now.CostPerCaseUSD, b.CostPerCaseUSD))),
				TrendCell(c)))
		}
		summary.head = append(summary.head, "", "**Per model** (Δ vs the baseline; the trend runs over the last green reports)", "")
		if labels.legend != "" {
			summary.head = append(summary.head, labels.legend, "")
		}
		summary.head = append(summary.head, "| Model | Accuracy | p95 model call | Tokens / case | Cost / case | "+TrendHeader+" |", "|---|---|---|---|---|---|")
		summary.rows, summary.what, summary.label = rows, "models", "Layer 3 per model"
	}
	d.add(summary)
	if len(t.Usage) > 0 {
		// Seven columns, tokens in one cell kept on one line: the table
		// must fit GitHub's 780 px comment column with four models.
		var rows []string
		for _, u := range t.Usage {
			tokens := figures(grouped(u.InputTokens), grouped(u.CachedInputTokens+u.CacheWriteTokens), grouped(u.OutputTokens))
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %s | %s | %s | %s |", mdCode(u.Model), mdText(u.Role), u.Calls, tokens,
				nbsp(usdOrUnknown(u.CostUSD)), nbsp(dashIfNil(u.CostPerCallUSD)), nbsp(dashIfNil(u.CostPerCaseUSD))))
		}
		d.add(mdBlock{head: details("Tokens and cost per model", []string{"Tokens: input (without cache) · cache read and write · output (reasoning included); per 1k tool calls and the split of cache reads and writes are in report.html.", "",
			"| Model | Role | Calls | Tokens in · cache · out | Cost | / call | / case |",
			"|---|---|--:|--:|--:|--:|--:|"}), rows: rows, tail: detailsEnd(), what: "models", prio: prioDetail, label: "tokens and cost"})
	}
	if len(t.Tools) > 0 {
		b := toolsBlock(t.Tools, labels)
		b.prio, b.label = prioDetail, "per tool call"
		d.add(b)
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
			[]string{"| Kind | Of | Model | n | p50 | p95 | max | Errors |", "|---|---|---|---|---|---|---|---|"}), rows: rows, tail: detailsEnd(), what: "rows", prio: prioLatency, label: "latency detail"})
	}
}

// Bounds of the per tool call table: up to maxToolRowsOpen rows it is
// shown open, more are folded away, and past maxToolRows the rest are in
// report.json and the HTML report.
const (
	maxToolRowsOpen = 8
	maxToolRows     = 30
)

// toolsBlock is the per tool call table. Six columns, figures that never
// break between number and unit, and the models under the matrix's
// labels (A, B … with the legend below, when the ids are long), so that
// it still reads in GitHub's comment column with four long model names
// beside tool names that cannot wrap (TestCommentFirstScreenAt780).
func toolsBlock(tools []report.ToolUsage, labels modelLabels) mdBlock {
	var rows []string
	names, models := map[string]bool{}, map[string]bool{}
	for i, r := range tools {
		names[r.Tool], models[r.Model] = true, true
		if i >= maxToolRows {
			continue
		}
		c := toolCells(r)
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", mdCode(clip(r.Tool, maxToolNameRunes)), labels.of(r.Model),
			c.callsWithErrors(), figures(c.p50, c.p95, c.max), nbsp(c.tokens), nbsp(c.perCall)))
	}
	var tail []string
	if labels.legend != "" {
		tail = []string{"", labels.legend}
	}
	if n := len(tools) - len(rows); n > 0 {
		tail = append(tail, "", fmt.Sprintf("… and %d more tool × model rows in `report.json` and the HTML report", n))
	}
	title := "**Per tool call** (latency: the calls that reached the server; tokens and cost: the model turn that made the call, shared among the calls it made)"
	table := []string{"| Tool | Model | Calls | Latency p50 · p95 · max | Model tokens / call | Cost / call |", "|---|---|--:|--:|--:|--:|"}
	if len(tools) <= maxToolRowsOpen {
		return mdBlock{head: append([]string{title, ""}, table...), rows: rows, tail: tail, what: "tool × model rows"}
	}
	summary := fmt.Sprintf("Per tool call: %d tools × %d models, latency, tokens and cost per call", len(names), len(models))
	return mdBlock{head: details(summary, append([]string{title, ""}, table...)), rows: rows, tail: append(tail, detailsEnd()...), what: "tool × model rows"}
}

// nbsp keeps a cell's figures on one line: GitHub wraps a narrow column
// at spaces, which splits "2.4 ms" into a number and a unit.
func nbsp(s string) string { return strings.ReplaceAll(s, " ", "\u00a0") }

// figures joins figures with " · " for one cell: each figure stays on one
// line, but the cell may wrap after a separator, so that with four long
// model ids the table still fits GitHub's 780 px comment column
// (TestCommentFirstScreenAt780) instead of scrolling sideways.
func figures(fs ...string) string {
	for i, f := range fs {
		fs[i] = nbsp(f)
	}
	return strings.Join(fs, "\u00a0· ")
}

// toolCellsOf are a per-tool row's cells, shared by Markdown and HTML.
type toolCellsOf struct {
	calls, errors, p50, p95, max, tokens, perCall string
	untimed, reused                               int
}

// callsWithErrors folds the failed and untimed calls into the calls
// column: a narrow table, and a count that stands out only when not 0.
func (c toolCellsOf) callsWithErrors() string {
	s := c.calls
	if c.errors != "0" {
		s += ", " + nbsp(c.errors+" failed")
	}
	if c.untimed > 0 {
		s += ", " + nbsp(fmt.Sprintf("%d untimed", c.untimed))
	}
	if c.reused > 0 {
		s += ", " + nbsp(fmt.Sprintf("%d reused", c.reused))
	}
	return s
}

func toolCells(r report.ToolUsage) toolCellsOf {
	c := toolCellsOf{calls: fmt.Sprint(r.Calls), errors: fmt.Sprint(r.Errors), untimed: r.Untimed, reused: r.Reused, p50: dur(r.P50Ms), p95: dur(r.P95Ms), max: "–",
		tokens: tokensPer(&r.TokensPerCall), perCall: dashIfNil(r.CostPerCallUSD)}
	if r.MaxMs != nil {
		c.max = durMs(*r.MaxMs)
	}
	if r.Calls-r.Reused > 0 {
		// Calls made now to divide by: an absent cost is a missing price.
		c.perCall = usdOrUnknown(r.CostPerCallUSD)
	} else if r.Reused > 0 {
		c.tokens = "–" // every call replayed: nothing spent now
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

// comparableModel is false for a model the gate marked not comparable
// (its served version changed): its figures get no Δ.
func comparableModel(rep *report.Report, model string) bool {
	if rep.Gate == nil {
		return true
	}
	for _, it := range rep.Gate.Items {
		if it.Kind == report.KindModel && it.Model == model && it.Status == report.ItemNotComparable {
			return false
		}
	}
	return true
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
	mw := modelWidth(rep)
	p("run cost %s · prices %s\n", runCost(t), orDash(Line(t.Prices)))
	for _, warn := range t.Warnings {
		p("  warning: %s\n", Line(warn))
	}
	for _, c := range modelColumns(rep) {
		b := c.Baseline
		if b == nil {
			b = &report.ModelFigures{}
		}
		p("  %-*s accuracy %s · p95 %s · tokens/case %s · cost/case %s\n", mw, Line(c.Model),
			withDelta(rate(c.Now.Accuracy), pointChange(c.Now.Accuracy, b.Accuracy)),
			withDelta(dur(c.Now.P95Ms), relChange(c.Now.P95Ms, b.P95Ms)),
			withDelta(tokensPer(c.Now.TokensPerCase), relChange(c.Now.TokensPerCase, b.TokensPerCase)),
			withDelta(usdOrUnknown(c.Now.CostPerCaseUSD), relChange(c.Now.CostPerCaseUSD, b.CostPerCaseUSD)))
	}
	for _, u := range t.Usage {
		p("  %-*s %-5s %d calls: %s in, %s cache read, %s cache write, %s out (%s reasoning) · %s\n", mw, Line(u.Model), Line(u.Role), u.Calls,
			grouped(u.InputTokens), grouped(u.CachedInputTokens), grouped(u.CacheWriteTokens), grouped(u.OutputTokens), grouped(u.ReasoningTokens), usdOrUnknown(u.CostUSD))
	}
	for _, l := range t.Latency {
		p("  %-6s %-24s %-*s n %-5d p50 %-8s p95 %-8s max %-8s errors %d\n", Line(l.Kind), Line(latencyOf(l)), mw, orDash(Line(l.Model)),
			l.Samples, dur(l.P50Ms), dur(l.P95Ms), durMs(l.MaxMs), l.Errors)
	}
}
