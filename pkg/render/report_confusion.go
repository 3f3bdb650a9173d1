package render

import (
	"fmt"
	"io"
	"sort"
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
	// More is how many further off-diagonal cells were left out; Runs is
	// the count over every off-diagonal cell, Steps over every cell.
	More, Runs, Steps int
}

// Confusions are the models' confusions, at most maxConfusionCells each
// (ties by expected, then chosen tool, for stable output).
func Confusions(b *report.Behavior) []ModelConfusions {
	if b == nil {
		return nil
	}
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
		out = append(out, mc)
	}
	return out
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
func ConfusionText(w io.Writer, b *report.Behavior) {
	all := Confusions(b)
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
		for _, c := range mc.Cells {
			e := Line(ToolClass(c.Expected))
			fmt.Fprintf(w, "      %s%*s → %-s ×%d\n", e, width-utf8.RuneCountInString(e), "", Line(ToolClass(c.Chosen)), c.Count)
		}
		if mc.More > 0 {
			fmt.Fprintf(w, "      … and %d more\n", mc.More)
		}
	}
}
