package render

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// MarkdownOptions shape the Markdown body. The zero value renders the PR
// comment's short form without a marker; Long renders the job summary.
type MarkdownOptions struct {
	// Marker is the hidden first line by which the sticky PR comment is
	// found again, e.g. "<!-- mcp-eval:ci -->": an HTML comment on one
	// line. Empty for none (the job summary).
	Marker string
	// RunURL links the workflow run; empty for no link. Only http(s).
	RunURL string
	// Artifact names the run's artifact that holds report.html, linked
	// from the top of the body (on the run page's artifact list).
	Artifact string
	// MaxBytes bounds the whole body: default DefaultMaxBytes, or
	// DefaultSummaryBytes for Long. GitHub rejects a comment over 65,536
	// characters; bytes are never fewer.
	MaxBytes int
	// AimBytes is the size the short form aims at (default
	// DefaultAimBytes): past it, whole sections are left out by priority,
	// passing rows and latency detail first; the verdict, Needs attention,
	// the Layer 2 matrix and the cost line always stay. Long ignores it.
	AimBytes int
	// Long renders the job summary: everything in the comment, every
	// item listed, plus the failing trajectories and the confusion matrix.
	Long bool
}

// DefaultMaxBytes leaves room under GitHub's 65,536-character comment
// limit for what the caller may append.
const DefaultMaxBytes = 65000

// DefaultAimBytes is what the comment aims at: a reviewer reads it in
// half a minute, and the job summary and report.html have the rest.
const DefaultAimBytes = 15000

// DefaultSummaryBytes keeps the long form under GitHub's 1 MiB job
// summary limit, with room for what the action appends.
const DefaultSummaryBytes = 1000000

// maxShortItems is how many Needs attention items the comment lists; the
// job summary lists all.
const maxShortItems = 15

// Markdown writes a report as GitHub-flavoured Markdown: the verdict and
// a plain summary, links to the run and report.html, what needs attention
// (cause, fix, where to look; worst first, one row per cause), the cost of
// the run, one section per layer with passes folded away, and how the gate
// decided. All text from the server, the models and the report file itself
// is escaped (see report_mdsafe.go); the body stays under opts.MaxBytes
// with a note when something had to be cut.
func Markdown(w io.Writer, rep *report.Report, opts MarkdownOptions) error {
	if opts.Marker != "" && !validMarker(opts.Marker) {
		return fmt.Errorf("render: marker %q must be one HTML comment on one line, like <!-- mcp-eval:ci -->", opts.Marker)
	}
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
		if opts.Long {
			limit = DefaultSummaryBytes
		}
	}
	if limit < 1024 {
		return fmt.Errorf("render: a body limit of %d bytes is too small for a verdict and a note; use at least 1024", limit)
	}
	aim := opts.AimBytes
	if aim <= 0 {
		aim = DefaultAimBytes
	}
	if opts.Long {
		aim = limit
	}
	att := BuildAttention(rep)
	labels := newModelLabels(rep)
	var d mdDoc
	var head []string
	if opts.Marker != "" {
		head = append(head, opts.Marker)
	}
	head = append(head, verdictHeading(rep, att), "", summaryLine(rep, att))
	if l := linksLine(opts); l != "" {
		head = append(head, "", l)
	}
	head = append(head, "", contextLine(rep))
	d.keep(head...)
	if why := rep.Run.Cancelled; why != "" {
		d.keep("> [!NOTE]\n> The run was cancelled (" + mdText(why) + ") before it finished: nothing is judged. No result of this run is a regression, and none becomes a baseline.")
	}
	if why := rep.Run.Untested; why != "" {
		d.keep("> [!CAUTION]\n> The server could not be tested, so nothing is judged: " + mdText(why) + "\n>\n> This run is no regression and never a baseline. Fix what stopped it and run again.")
	}
	if l := ReplayLabel(rep); l != "" {
		d.keep("> [!IMPORTANT]\n> " + mdText(l))
	}
	if g := rep.Gate; g != nil && g.Baseline == nil && g.BaselineNote != "" && rep.Run.Untested == "" {
		d.keep("> [!NOTE]\n> " + mdText(g.BaselineNote))
	}
	if n := surfaceNote(rep); n != "" {
		// Above the items: with the surface changed every case is judged
		// by its floor alone, so a model's old weaknesses come back as
		// failures, and the first items a reviewer reads are not what
		// the change broke.
		d.keep("> [!IMPORTANT]\n> " + mdText(n))
	}
	attentionBlocks(&d, rep, att, opts.Long)
	if line := runCostLine(rep); line != "" {
		d.keep(line)
	}
	if rep.Conformance != nil {
		layer0Blocks(&d, rep)
		surfaceBlocks(&d, rep)
	}
	if rep.Behavior != nil {
		layer1Blocks(&d, rep, labels, opts.Long)
		if rep.Conformance == nil {
			surfaceBlocks(&d, rep) // the case waivers in force, with no Layer 0 to list them under
		}
	}
	if rep.Resilience != nil {
		layer2Blocks(&d, rep, labels)
	}
	if rep.Telemetry != nil {
		layer3Blocks(&d, rep, labels)
	}
	if rep.Gate != nil {
		gateDetails(&d, rep, att, labels)
	}
	_, err := io.WriteString(w, d.render(limit, aim, footer(rep, opts.RunURL)))
	return err
}

// surfaceNote is the gate's note that the tool surface changed since the
// baseline, with what it means for Layer 1, or "".
func surfaceNote(rep *report.Report) string {
	g := rep.Gate
	if g == nil {
		return ""
	}
	for _, n := range g.Notes {
		if strings.HasPrefix(n, gate.SurfaceChangedNote) {
			return n + ". A case below its floor fails even if it failed the same way in the baseline; the tools' own changes are in the items below."
		}
	}
	return ""
}

// linksLine links the run and the artifact with report.html: the first
// thing a reviewer clicks for more.
func linksLine(opts MarkdownOptions) string {
	u := safeURL(opts.RunURL)
	if u == "" {
		return ""
	}
	art := "report.html"
	if opts.Artifact != "" {
		art += " in " + mdCode(opts.Artifact)
	}
	return fmt.Sprintf("[Workflow run](<%s>) · [%s](<%s#artifacts>) · the job summary has the long form", u, art, u)
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

func verdictHeading(rep *report.Report, att Attention) string {
	if g := rep.Gate; g != nil {
		icon := map[string]string{report.GatePass: "✅", report.GateFail: "❌", report.GateInconclusive: "⚠️", report.GateCancelled: "⏹️", report.GateError: "🛑"}[g.Verdict]
		parts := titleCounts(att)
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
		if rep.Run.Untested != "" {
			line += " · the server could not be tested"
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
		icon := map[string]string{report.ConformancePass: "✅", report.ConformanceFail: "❌", report.ConformanceIncomplete: "🛑"}[c.Verdict]
		return fmt.Sprintf("### %s mcp-eval: conformance %s (not gated)", icon, strings.ToUpper(mdText(c.Verdict)))
	}
	return "### mcp-eval report (not gated)"
}

// titleCounts are the causes per status, with the rules they break where
// one cause breaks several: "1 failed (3 rules)".
func titleCounts(att Attention) []string {
	var parts []string
	for _, s := range []struct{ status, one, many string }{
		{report.ItemFail, "failed", "failed"}, {report.ItemError, "not judged", "not judged"}, {report.ItemInconclusive, "inconclusive", "inconclusive"},
		{report.ItemWarn, "warning", "warnings"}, {report.ItemKnown, "known failure", "known failures"},
	} {
		n := att.Causes[s.status]
		if n == 0 {
			continue
		}
		p := plural(n, s.one, s.many)
		if r := att.Rules[s.status]; r > n {
			p += fmt.Sprintf(" (%d rules)", r)
		}
		parts = append(parts, p)
	}
	return parts
}

// summaryLine is one plain line under the title: what to fix, by name,
// and what else there is.
func summaryLine(rep *report.Report, att Attention) string {
	if rep.Gate == nil {
		return "Not gated: no verdict, nothing compared."
	}
	var names []string
	more := 0
	lead := ""
	switch {
	case att.Causes[report.ItemFail] > 0:
		lead = "To fix"
	case att.Causes[report.ItemError] > 0:
		lead = "No failure seen; not judged, as runs errored"
	case att.Causes[report.ItemInconclusive] > 0:
		lead = "No failure; undecided"
	case att.Causes[report.ItemWarn] > 0:
		lead = "Passed; worth a look"
	}
	for _, it := range att.Items {
		if lead == "" || it.Status != att.Items[0].Status {
			break
		}
		if len(names) == 3 {
			more++
			continue
		}
		names = append(names, attnName(it))
	}
	var s string
	switch {
	case rep.Run.Untested != "":
		return "Nothing was tested: the server could not be, for the reason below."
	case lead == "":
		s = "Every item the gate judged passed."
	default:
		s = fmt.Sprintf("**%s:** %s", lead, strings.Join(names, "; "))
		if more > 0 {
			s += fmt.Sprintf("; and %d more", more)
		}
		s += "."
	}
	var rest []string
	for _, st := range []struct{ status, one, many string }{
		{report.ItemError, "not judged", "not judged"}, {report.ItemInconclusive, "inconclusive", "inconclusive"}, {report.ItemWarn, "warning", "warnings"}, {report.ItemKnown, "known failure", "known failures"},
	} {
		if len(att.Items) > 0 && att.Items[0].Status == st.status {
			continue
		}
		if n := att.Causes[st.status]; n > 0 {
			rest = append(rest, plural(n, st.one, st.many))
		}
	}
	if len(rest) > 0 {
		s += " Also " + strings.Join(rest, ", ") + "."
	}
	return s
}

// attnName is an item's short name: "`CACHE-1` (3 rules)", "`weather-0` × `m1`".
func attnName(it AttentionItem) string {
	n := mdCode(it.Subject)
	switch {
	case len(it.Rules) > 1 && it.Kind == report.KindCheck:
		n = mdCode(it.Rules[0]) + fmt.Sprintf(" (%d rules)", len(it.Rules))
	case len(it.Rules) > 1 && it.Kind == report.KindCase:
		n = fmt.Sprintf("%d cases", len(it.Rules))
	}
	if it.Model != "" {
		n += " × " + mdCode(it.Model)
	} else if len(it.Models) > 1 {
		n += fmt.Sprintf(" × %d models", len(it.Models))
	}
	if it.Why != "" {
		n += " (" + mdText(it.Why) + ")"
	}
	return n
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
	case report.ItemError:
		return "E"
	case report.ItemKnown:
		return "●"
	case report.ItemWarn:
		return "!"
	case report.ItemNotComparable:
		return "≠"
	case report.ItemWaived:
		return "◌"
	}
	return "·"
}

const legend = "<sub>✓ pass · ✗ fail · E not judged (runs errored) · ⚠ inconclusive · ● known failure · ◌ waived · ! warning · ≠ not comparable · · shown only</sub>"

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
	case it.Kind == report.KindSuite && it.Drop != nil:
		c := suiteChange(it)
		return "Δ " + c.Delta + ", " + c.Surely
	}
	return "–"
}

func points(v float64) string { return deltaPoints(v) }

func percent(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// details wraps lines in a collapsed section.
func details(summary string, head []string) []string {
	return append([]string{"<details><summary>" + summary + "</summary>", ""}, head...)
}

func detailsEnd() []string { return []string{"", "</details>"} }
