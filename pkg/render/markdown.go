package render

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// MarkdownOptions shape the Markdown body. The zero value renders a job
// summary: no marker, no run link, GitHub's comment limit.
type MarkdownOptions struct {
	// Marker is the hidden first line by which the sticky PR comment is
	// found again, e.g. "<!-- mcp-eval:ci -->": an HTML comment on one
	// line. Empty for none (the job summary).
	Marker string
	// RunURL links the workflow run; empty for no link. Only http(s).
	RunURL string
	// MaxBytes bounds the whole body (default DefaultMaxBytes). GitHub
	// rejects a comment over 65,536 characters; bytes are never fewer.
	MaxBytes int
}

// DefaultMaxBytes leaves room under GitHub's 65,536-character comment
// limit for what the caller may append.
const DefaultMaxBytes = 65000

// Markdown writes a report as GitHub-flavoured Markdown for the sticky PR
// comment and the job summary: the verdict, what needs attention, one
// section per layer present, the gate's details folded away, a link to the
// run. All text from the server, the models and the report file itself is
// escaped (see report_mdsafe.go); the body stays under opts.MaxBytes with a
// note when something had to be cut.
func Markdown(w io.Writer, rep *report.Report, opts MarkdownOptions) error {
	if opts.Marker != "" && !validMarker(opts.Marker) {
		return fmt.Errorf("render: marker %q must be one HTML comment on one line, like <!-- mcp-eval:ci -->", opts.Marker)
	}
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if limit < 1024 {
		return fmt.Errorf("render: a body limit of %d bytes is too small for a verdict and a note; use at least 1024", limit)
	}
	var d mdDoc
	var head []string
	if opts.Marker != "" {
		head = append(head, opts.Marker)
	}
	head = append(head, verdictHeading(rep), "", contextLine(rep))
	d.para(head...)
	if why := rep.Run.Cancelled; why != "" {
		d.para("> [!NOTE]\n> The run was cancelled (" + mdText(why) + ") before it finished: nothing is judged. No result of this run is a regression, and none becomes a baseline.")
	}
	if g := rep.Gate; g != nil {
		if g.Baseline == nil && g.BaselineNote != "" {
			d.para("> [!NOTE]\n> " + mdText(g.BaselineNote))
		}
		attentionBlock(&d, g)
	}
	if rep.Conformance != nil {
		layer0Blocks(&d, rep)
	}
	if rep.Behavior != nil {
		layer1Blocks(&d, rep)
	}
	if rep.Resilience != nil {
		layer2Blocks(&d, rep)
	}
	if rep.Telemetry != nil {
		layer3Blocks(&d, rep)
	}
	if rep.Gate != nil {
		gateDetails(&d, rep.Gate)
	}
	_, err := io.WriteString(w, d.render(limit, footer(rep, opts.RunURL)))
	return err
}

// validMarker accepts "<!-- … -->" with nothing inside that could end the
// comment early.
func validMarker(m string) bool {
	if !strings.HasPrefix(m, "<!--") || !strings.HasSuffix(m, "-->") || len(m) < 7 || strings.ContainsAny(m, "\r\n") {
		return false
	}
	inner := m[4 : len(m)-3]
	return !strings.Contains(inner, "--") && !strings.HasPrefix(inner, ">") && !strings.HasPrefix(inner, "->")
}

func verdictHeading(rep *report.Report) string {
	if g := rep.Gate; g != nil {
		icon := map[string]string{report.GatePass: "✅", report.GateFail: "❌", report.GateInconclusive: "⚠️", report.GateCancelled: "⏹️"}[g.Verdict]
		counts := statusCounts(g.Items)
		var parts []string
		for _, s := range []struct{ status, one, many string }{
			{report.ItemFail, "failed", "failed"}, {report.ItemInconclusive, "inconclusive", "inconclusive"},
			{report.ItemKnown, "known failure", "known failures"}, {report.ItemWarn, "warning", "warnings"},
		} {
			if n := counts[s.status]; n > 0 {
				parts = append(parts, plural(n, s.one, s.many))
			}
		}
		line := fmt.Sprintf("### %s mcp-eval: %s", icon, strings.ToUpper(mdText(g.Verdict)))
		if c := legacy(rep); c != nil {
			// Not a pass: the legacy mark heads it, and only a gate that
			// failed it keeps its own.
			if g.Verdict == report.GateFail {
				line = fmt.Sprintf("### ❌ mcp-eval: FAIL · %s %s server (speaks %s only)", legacyIcon, strings.ToLower(legacyWord), mdCode(legacySpeaks(c)))
			} else {
				line = fmt.Sprintf("### %s mcp-eval: %s · speaks %s only · %s", legacyIcon, legacyWord, mdCode(legacySpeaks(c)), legacyGate(g))
			}
		}
		if len(parts) > 0 {
			line += " · " + strings.Join(parts, " · ")
		}
		return line
	}
	if c := legacy(rep); c != nil {
		return fmt.Sprintf("### %s mcp-eval: conformance %s · speaks %s only (not gated)", legacyIcon, legacyWord, mdCode(legacySpeaks(c)))
	}
	if c := rep.Conformance; c != nil {
		icon := map[string]string{"pass": "✅", "fail": "❌"}[c.Verdict]
		return fmt.Sprintf("### %s mcp-eval: conformance %s (not gated)", icon, strings.ToUpper(mdText(c.Verdict)))
	}
	return "### mcp-eval report (not gated)"
}

func statusCounts(items []report.GateItem) map[string]int {
	m := map[string]int{}
	for _, it := range items {
		m[it.Status]++
	}
	return m
}

// contextLine says what was tested, where, and against what.
func contextLine(rep *report.Report) string {
	s := rep.Server
	var parts []string
	name := strings.TrimSpace(s.Name + " " + s.Version)
	if name == "" {
		name = s.Target
	}
	parts = append(parts, "server "+mdCode(name))
	if s.Era != "" {
		parts = append(parts, mdText(strings.TrimSpace(s.Era+" "+s.ProtocolVersion)))
	}
	if s.Transport != "" {
		parts = append(parts, mdText(s.Transport))
	}
	if c := rep.Run.Commit; c != "" {
		parts = append(parts, "commit "+mdCode(shortSHA(c)))
	}
	if g := rep.Gate; g != nil && g.Baseline != nil {
		b := "baseline commit " + mdCode(shortSHA(g.Baseline.Commit))
		if g.Baseline.WorkflowRunID != 0 {
			b += fmt.Sprintf(" (run %d)", g.Baseline.WorkflowRunID)
		}
		parts = append(parts, b)
	}
	return strings.Join(parts, " · ")
}

func shortSHA(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	return c
}

// footer is the link to the run and the harness version; it is always
// written, whatever was cut.
func footer(rep *report.Report, runURL string) []string {
	var parts []string
	if u := safeURL(runURL); u != "" {
		parts = append(parts, "[Workflow run](<"+u+">)")
	}
	v := "mcp-eval"
	if rep.Run.HarnessVersion != "" {
		v += " " + mdCode(rep.Run.HarnessVersion)
	}
	parts = append(parts, v)
	return []string{"", "---", "<sub>" + strings.Join(parts, " · ") + "</sub>"}
}

// safeURL keeps an http(s) URL usable inside <…> link syntax, or returns
// "" for anything else.
func safeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	s := u.String()
	return strings.NewReplacer("<", "%3C", ">", "%3E", " ", "%20", "\n", "", "\r", "").Replace(s)
}

// statusMark is one symbol per gate status, explained in the legend.
func statusMark(status string) string {
	switch status {
	case report.ItemPass:
		return "✓"
	case report.ItemFail:
		return "✗"
	case report.ItemInconclusive:
		return "⚠"
	case report.ItemKnown:
		return "●"
	case report.ItemWarn:
		return "!"
	case report.ItemNotComparable:
		return "≠"
	}
	return "·"
}

const legend = "<sub>✓ pass · ✗ fail · ⚠ inconclusive · ● known failure · ! warning · ≠ not comparable · · shown only</sub>"

// attentionBlock lists what moved the verdict: failures, then
// inconclusive items.
func attentionBlock(d *mdDoc, g *report.Gate) {
	var rows []string
	for _, status := range []string{report.ItemFail, report.ItemInconclusive} {
		for _, it := range g.Items {
			if it.Status == status {
				rows = append(rows, fmt.Sprintf("| %s | %d | %s | %s | %s | %s |", statusMark(it.Status), it.Layer, mdCode(it.Subject), mdCode(it.Model), observed(it), mdText(it.Reason)))
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	d.add(mdBlock{head: []string{"**Needs attention**", "", "| | Layer | Item | Model | Observed | Reason |", "|---|---|---|---|---|---|"}, rows: rows, what: "items"})
}

// observed is an item's value in a few characters: k/N against the
// baseline, or a suite score's drop and bound.
func observed(it report.GateItem) string {
	switch {
	case it.Kind == report.KindCost || it.Kind == report.KindRunCost:
		return costObserved(it)
	case it.New != nil && it.Baseline != nil:
		return fmt.Sprintf("%d/%d (was %d/%d)", it.New.K, it.New.N, it.Baseline.K, it.Baseline.N)
	case it.New != nil:
		return fmt.Sprintf("%d/%d", it.New.K, it.New.N)
	case it.Drop != nil && it.Bound != nil:
		return fmt.Sprintf("drop %s, bound %s", points(*it.Drop), points(*it.Bound))
	case it.Drop != nil:
		return "drop " + points(*it.Drop)
	}
	return "–"
}

func points(v float64) string { return fmt.Sprintf("%+.1f pts", 100*v) }

func percent(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// details wraps lines in a collapsed section.
func details(summary string, head []string) []string {
	return append([]string{"<details><summary>" + summary + "</summary>", ""}, head...)
}

func detailsEnd() []string { return []string{"", "</details>"} }
