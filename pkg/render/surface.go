package render

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// What the tool surface costs and which waivers are in force, in one line
// each, for every renderer: the text, Markdown and HTML views say the same.

// toolTokensLine is the tools array's tokens in each encoding, with the
// change against the baseline the gate saw, then the largest tools:
// "625 tokens (o200k_base, +20 (+3.3%) vs baseline) · 606 (cl100k_base:
// gpt-4) · largest: search_invoices 250, …". "" when nothing was counted.
func toolTokensLine(rep *report.Report) string {
	tt := rep.ToolTokens
	if tt == nil || len(tt.Counts) == 0 {
		return ""
	}
	var parts []string
	for i, c := range tt.Counts {
		label := c.Encoding
		if i > 0 && len(c.Models) > 0 {
			label += ": " + strings.Join(c.Models, ", ")
		}
		if d := toolTokensDelta(rep.Gate, c); d != "" {
			label += ", " + d + " vs baseline"
		}
		unit := ""
		if i == 0 {
			unit = " tokens"
		}
		parts = append(parts, fmt.Sprintf("%d%s (%s)", c.Total, unit, label))
	}
	var big []string
	for i, t := range tt.Counts[0].Tools {
		if i == 3 {
			big = append(big, fmt.Sprintf("%d more", len(tt.Counts[0].Tools)-3))
			break
		}
		big = append(big, fmt.Sprintf("%s %d", t.Name, t.Tokens))
	}
	return strings.Join(parts, " · ") + " · largest: " + strings.Join(big, ", ")
}

// exactTokensLines are the providers' own counts (tool-tokens: exact),
// one per model, each beside the embedded estimate for that model:
// "anthropic:claude-x: 712 exact (provider) at POST /v1/messages/count_tokens
// · 625 o200k_base estimate", or why that model was not counted.
func exactTokensLines(rep *report.Report) []string {
	tt := rep.ToolTokens
	if tt == nil {
		return nil
	}
	var out []string
	if tt.ExactNote != "" {
		out = append(out, tt.ExactNote)
	}
	for _, e := range tt.Exact {
		est := fmt.Sprintf("%d %s estimate", e.Estimate, e.Encoding)
		if e.Tokens == nil {
			out = append(out, fmt.Sprintf("%s: %s · %s", e.Model, e.Note, est))
			continue
		}
		out = append(out, fmt.Sprintf("%s: %d exact (provider) at %s · %s", e.Model, *e.Tokens, e.Endpoint, est))
	}
	return out
}

// exactTokensMethod is the short form of report.ExactMethod for labels.
const exactTokensMethod = "exact: the tools' share of a request as the provider counts it (a fixed message with the tools minus without, the provider's own tool prompt included); the gates read the estimate"

// toolTokensDelta is the change of c's total against the baseline, from
// the gate's item for its encoding ("" without a baseline count).
func toolTokensDelta(g *report.Gate, c report.ToolTokenCount) string {
	if g == nil {
		return ""
	}
	for _, it := range g.Items {
		if it.Kind != report.KindToolTokens || it.Subject != c.Encoding || it.BaselineValue == nil {
			continue
		}
		b := int(math.Round(*it.BaselineValue))
		d := c.Total - b
		if b == 0 {
			return fmt.Sprintf("%+d", d)
		}
		return fmt.Sprintf("%+d (%+.1f%%)", d, 100*float64(d)/float64(b))
	}
	return ""
}

// activeWaivers are the waivers that waived something in this report.
func activeWaivers(g *report.Gate) []report.WaiverState {
	if g == nil {
		return nil
	}
	var out []report.WaiverState
	for _, w := range g.Waivers {
		if w.State == report.WaiverActive {
			out = append(out, w)
		}
	}
	return out
}

func waiverLabel(w report.WaiverState) string {
	if w.Case != "" {
		return gate.WaiverName(w.GateWaiver)
	}
	s := w.Check
	if w.Transport != "" {
		s += " (" + w.Transport + ")"
	}
	return s
}

// surfaceText prints the tool-surface line and the active waivers under
// Layer 0 in the terminal.
func surfaceText(w io.Writer, rep *report.Report) {
	if l := toolTokensLine(rep); l != "" {
		fmt.Fprintf(w, "tool surface: %s\n", Line(l))
	}
	for _, l := range exactTokensLines(rep) {
		fmt.Fprintf(w, "tool tokens of %s\n", Line(l))
	}
	for _, wv := range activeWaivers(rep.Gate) {
		fmt.Fprintf(w, "waived: %s until %s: %s\n", Line(waiverLabel(wv)), wv.Until, Line(wv.Reason))
	}
}

// surfaceBlocks adds the tool-surface line and the active waivers to the
// Markdown (PR comment, job summary).
func surfaceBlocks(d *mdDoc, rep *report.Report) {
	var lines []string
	if l := toolTokensLine(rep); l != "" {
		lines = append(lines, "**Tool surface:** "+mdText(l)+" <sub>(the tools array as sent to a model, counted offline)</sub>")
	}
	if ex := exactTokensLines(rep); len(ex) > 0 {
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, "**Tool tokens per provider:** <sub>("+mdText(exactTokensMethod)+")</sub>")
		if n := rep.ToolTokens.ExactNote; n != "" {
			lines = append(lines, "- "+mdText(n))
		}
		for _, e := range rep.ToolTokens.Exact {
			est := fmt.Sprintf("%d %s estimate", e.Estimate, mdText(e.Encoding))
			if e.Tokens == nil {
				lines = append(lines, fmt.Sprintf("- %s: %s · %s", mdCode(e.Model), mdText(e.Note), est))
				continue
			}
			lines = append(lines, fmt.Sprintf("- %s: **%d** exact (provider) at %s · %s", mdCode(e.Model), *e.Tokens, mdCode(e.Endpoint), est))
		}
	}
	if ws := activeWaivers(rep.Gate); len(ws) > 0 {
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, "**Waivers in force:**")
		for _, w := range ws {
			lines = append(lines, fmt.Sprintf("- %s until %s: %s", mdCode(waiverLabel(w)), mdText(w.Until), mdText(w.Reason)))
		}
	}
	if len(lines) > 0 {
		d.para(prioFocus, "the tool surface and waivers", lines...)
	}
}
