package render

import (
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// maxUnmeasuredRows bounds the not-measured lines of every surface; the
// rest are in report.json.
const maxUnmeasuredRows = 20

// unmeasuredRows picks, per model and kind, what Layer 2 ran but could not
// measure: the whole kind (subject "all") when none of its runs is in N,
// else each fault type or category with no run in N and the kind's total
// of runs left out. A layer that measured nothing is never silent.
func unmeasuredRows(res *report.Resilience) (rows []report.ResilienceUnmeasured, more int) {
	if res == nil {
		return nil, 0
	}
	type mk struct{ model, kind string }
	whole := map[mk]bool{}
	for _, u := range res.Unmeasured {
		if u.Subject == "all" && !u.Measured() {
			whole[mk{u.Model, u.Kind}] = true
		}
	}
	for _, u := range res.Unmeasured {
		k := mk{u.Model, u.Kind}
		switch {
		case whole[k] && u.Subject != "all":
			continue // said by the kind's row
		case !whole[k] && u.Subject != "all" && u.Measured():
			continue // partly counted: in the kind's total
		}
		if len(rows) == maxUnmeasuredRows {
			more++
			continue
		}
		rows = append(rows, u)
	}
	return rows, more
}

// unmeasuredText writes the rows for a terminal.
func unmeasuredText(p func(string, ...any), mw int, res *report.Resilience) {
	rows, more := unmeasuredRows(res)
	if len(rows) > 0 && len(res.Faults) == 0 && len(res.Attacks) == 0 {
		p("  nothing measured: no run of Layer 2 is in N\n")
	}
	for _, u := range rows {
		p("  %-6s %-*s %-24s %s\n", u.Kind, mw, Line(u.Model), Line(u.Subject), Line(u.Text()))
	}
	if more > 0 {
		p("  … and %d more not-measured rows in report.json\n", more)
	}
}

// unmeasuredMarkdown is the rows as a Markdown list, every value escaped.
func unmeasuredMarkdown(res *report.Resilience) []string {
	rows, more := unmeasuredRows(res)
	var out []string
	for _, u := range rows {
		out = append(out, fmt.Sprintf("- %s · %s %s: %s", mdCode(u.Model), u.Kind, mdCode(u.Subject), mdText(u.Text())))
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("- … and %d more in `report.json`", more))
	}
	return out
}
