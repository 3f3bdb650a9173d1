package render

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Bounds of the confusion view: the most frequent cells per model, and how
// much of a tool name (server text) a cell shows.
const (
	maxConfusionCells = 8
	maxToolNameRunes  = 60
)

// ModelConfusions is one model's confusions as shown: the off-diagonal
// cells (a tool expected, another or none chosen), most frequent first.
type ModelConfusions struct {
	Model string
	Cells []report.ConfusionCell
	// Similar is, per cell, the description lint's finding for that pair
	// of tools ("LINT-5, similarity 0.82"), "" when it found none: a
	// confusion and a near-duplicate description are one cause.
	Similar []string
	// More is how many further off-diagonal cells were left out; Runs is
	// the count over every off-diagonal cell, Steps over every cell.
	More, Runs, Steps int
}

// Confusions are the models' confusions, at most maxConfusionCells each
// (ties by expected, then chosen tool, for stable output), each cell
// linked to LINT-5's finding for its pair when the report has one.
func Confusions(rep *report.Report) []ModelConfusions {
	b := rep.Behavior
	if b == nil {
		return nil
	}
	similar := lintPairs(rep.Conformance)
	var out []ModelConfusions
	for _, c := range b.Confusion {
		mc := ModelConfusions{Model: c.Model}
		var off []report.ConfusionCell
		for _, cell := range c.Cells {
			mc.Steps += cell.Count
			if cell.Expected != cell.Chosen && cell.Count > 0 {
				off = append(off, cell)
				mc.Runs += cell.Count
			}
		}
		sort.SliceStable(off, func(i, j int) bool {
			a, b := off[i], off[j]
			if a.Count != b.Count {
				return a.Count > b.Count
			}
			if a.Expected != b.Expected {
				return a.Expected < b.Expected
			}
			return a.Chosen < b.Chosen
		})
		if len(off) > maxConfusionCells {
			mc.More = len(off) - maxConfusionCells
			off = off[:maxConfusionCells]
		}
		mc.Cells = off
		for _, c := range off {
			mc.Similar = append(mc.Similar, similar[pairKey(c.Expected, c.Chosen)])
		}
		out = append(out, mc)
	}
	return out
}

// lintPairRE reads a LINT-5 finding as pkg/conformance/lint.go words it:
// the two tools (Go-quoted) and their similarity.
var lintPairRE = regexp.MustCompile(`^tools ("(?:[^"\\]|\\.)*") and ("(?:[^"\\]|\\.)*") have near-duplicate descriptions \(similarity ([0-9.]+)\)`)

// lintPairs are the pairs of tools LINT-5 found near-duplicate, keyed by
// pairKey, each with its link text.
func lintPairs(c *report.Conformance) map[string]string {
	out := map[string]string{}
	if c == nil {
		return out
	}
	for _, r := range c.Checks {
		if r.ID != "LINT-5" {
			continue
		}
		for _, msg := range append([]string{r.Outcome.Message}, r.Outcome.Details...) {
			m := lintPairRE.FindStringSubmatch(msg)
			if m == nil {
				continue
			}
			a, errA := strconv.Unquote(m[1])
			b, errB := strconv.Unquote(m[2])
			if errA == nil && errB == nil {
				out[pairKey(a, b)] = "LINT-5, similarity " + m[3]
			}
		}
	}
	return out
}

// pairKey names an unordered pair of tools.
func pairKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + "\x00" + b
}

// ToolClass is a confusion-matrix class as shown: "(none)" for no call, a
// tool name cut to a readable length (escape it for the medium).
func ToolClass(class string) string {
	if class == report.NoTool {
		return "(none)"
	}
	return clip(class, maxToolNameRunes)
}

// ConfusionText writes which tool each model took for which, after the
// Layer 1 matrix; nothing when no model confused any tool.
func ConfusionText(w io.Writer, rep *report.Report) {
	all := Confusions(rep)
	some := false
	for _, mc := range all {
		some = some || mc.Runs > 0
	}
	if !some {
		return
	}
	fmt.Fprintln(w, "  confusions (expected tool → tool chosen, in steps; (none): no call):")
	for _, mc := range all {
		if mc.Runs == 0 {
			fmt.Fprintf(w, "    %s: no tool taken for another in %d steps\n", Line(mc.Model), mc.Steps)
			continue
		}
		fmt.Fprintf(w, "    %s: %d of %d steps\n", Line(mc.Model), mc.Runs, mc.Steps)
		width := 0
		for _, c := range mc.Cells {
			width = max(width, utf8.RuneCountInString(Line(ToolClass(c.Expected))))
		}
		for i, c := range mc.Cells {
			e := Line(ToolClass(c.Expected))
			link := ""
			if mc.Similar[i] != "" {
				link = "  (near-duplicate descriptions: " + mc.Similar[i] + ")"
			}
			fmt.Fprintf(w, "      %s%*s → %-s ×%d%s\n", e, width-utf8.RuneCountInString(e), "", Line(ToolClass(c.Chosen)), c.Count, link)
		}
		if mc.More > 0 {
			fmt.Fprintf(w, "      … and %d more\n", mc.More)
		}
	}
}
