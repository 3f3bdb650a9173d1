package render

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// attentionBlocks write Needs attention: one numbered item per cause,
// worst first, each a plain sentence with the cause, the fix and where to
// look. The short form lists the first maxShortItems.
func attentionBlocks(d *mdDoc, rep *report.Report, att Attention, long bool) {
	if len(att.Items) == 0 {
		return
	}
	lines := []string{"**Needs attention**", ""}
	for i, it := range att.Items {
		if !long && i == maxShortItems {
			lines = append(lines, "", fmt.Sprintf("_… %d more in the job summary and report.html._", len(att.Items)-i))
			break
		}
		lines = append(lines, attentionLines(i+1, it)...)
	}
	d.keep(lines...)
}

func attentionLines(n int, it AttentionItem) []string {
	title := fmt.Sprintf("%d. %s **", n, statusMark(it.Status))
	if it.Kind == report.KindCheck {
		var ids []string
		for _, r := range it.Rules {
			ids = append(ids, mdCode(r))
		}
		title += strings.Join(ids, " · ") + "**"
	} else if it.Kind == report.KindCase && len(it.Rules) > 1 {
		title += casesText(it.Rules) + "**"
	} else if it.Kind == report.KindTool {
		title += "tool " + mdCode(it.Subject) + "**" // not the case of the same name
	} else {
		title += mdCode(it.Subject) + "**"
	}
	if it.Model != "" {
		title += " × " + mdCode(it.Model)
	}
	title += " · " + layerName(it.Layer)
	out := []string{title + `\`, "   " + mdText(it.Sentence) + "."}
	sub := func(label, text string) { out = append(out, "   - **"+label+":** "+text) }
	for _, n := range it.Notes {
		sub("Also", mdText(n))
	}
	if c := it.Cause; c != nil {
		if c.Finding != "" || c.Pointer != "" {
			sub("Cause", causeText(c))
		}
		if c.Reason != "" || c.CalledKnown {
			sub(fmt.Sprintf("Run %d", c.Run), runText(c))
		}
		if c.Fix != "" {
			sub("Fix", mdText(c.Fix))
		}
		if c.Spec != "" {
			if c.SpecURL != "" {
				sub("Spec", "["+mdText(c.Spec)+"](<"+c.SpecURL+">)")
			} else {
				sub("Spec", mdText(c.Spec))
			}
		}
	}
	if it.Where != "" {
		sub("Where", mdCode(it.Where))
	}
	return out
}

func layerName(l int) string {
	return map[int]string{0: "Layer 0 conformance", 1: "Layer 1 behaviour", 2: "Layer 2 resilience", 3: "Layer 3 cost"}[l]
}

// causeText is "response to `tools/list` at `/result/tools/0/name` is
// `"x y"`: finding", in Markdown.
func causeText(c *Cause) string { return causeWith(c, mdCode, mdText) }

// runText is a failing run's reason and the tools it called instead, in
// Markdown.
func runText(c *Cause) string { return runWith(c, mdCode, mdText) }

// causeWith and runWith word a cause once for every surface: code marks
// a name or value, text escapes prose (identity-like for the HTML, whose
// template escapes).
func causeWith(c *Cause, code, text func(string) string) string {
	var parts []string
	if c.Pointer != "" {
		at := code(c.Pointer)
		switch kind, method, _ := strings.Cut(c.In, " "); {
		case c.In != "" && c.Method != "":
			at = text(kind) + " " + code(method) + " sent during " + code(c.Method) + " at " + at
		case c.In != "":
			at = text(kind) + " " + code(method) + " at " + at
		case c.Method != "":
			at = "response to " + code(c.Method) + " at " + at
		}
		switch {
		case c.Missing:
			at += " is missing"
		case c.Value != "":
			at += " is " + code(clip(c.Value, 80))
		}
		parts = append(parts, at)
	}
	if c.Finding != "" {
		parts = append(parts, text(c.Finding))
	}
	return strings.Join(parts, ": ")
}

func runWith(c *Cause, code, text func(string) string) string {
	s := text(c.Reason)
	// The reason often names the tool already ("expected no tool call,
	// called search_invoices"): say it once.
	said := len(c.Called) > 0 && strings.Contains(c.Reason, "called "+c.Called[0]) ||
		len(c.Called) == 0 && strings.Contains(c.Reason, "called no tool")
	if c.CalledKnown && !said {
		called := "called no tool"
		if len(c.Called) > 0 {
			var names []string
			for _, n := range c.Called {
				names = append(names, code(n))
			}
			called = "called " + strings.Join(names, ", ")
		}
		if s != "" {
			s += " · "
		}
		s += called
	}
	if c.Case != "" {
		s += " (case " + code(c.Case) + ")"
	}
	return s
}

// runCostLine is the one run cost, with what it includes: the budget
// meter's figure (report.Spend) when the report has one, else Layer 3's
// count of model calls.
func runCostLine(rep *report.Report) string {
	sp := rep.Spend
	if sp == nil && rep.Behavior != nil {
		sp = rep.Behavior.Spend
	}
	if sp != nil {
		cost := "unknown"
		if sp.Used.USD != nil {
			cost = usdText(*sp.Used.USD)
		} else if sp.Used.USDUnknown != "" {
			cost = "unknown (" + mdText(sp.Used.USDUnknown) + ")" // it says "no price for …"
		}
		var parts []string
		for _, p := range sp.Layers {
			if p.Used.Calls > 0 {
				parts = append(parts, mdText(p.Name))
			}
		}
		what := ""
		if len(parts) > 0 {
			what = " (" + strings.Join(parts, ", ") + ")"
		}
		s := fmt.Sprintf("**Run cost %s** for the %s model calls this run made%s, %s tokens", cost, grouped(int64(sp.Used.Calls)), what, grouped(int64(sp.Used.Tokens)))
		if rep.Replay != nil {
			s = fmt.Sprintf("**Run cost: nothing**, replayed from the cassette; the recording made %s model calls%s, %s tokens, cost %s", grouped(int64(sp.Used.Calls)), what, grouped(int64(sp.Used.Tokens)), cost)
		}
		if sp.ReusedRuns > 0 {
			s += fmt.Sprintf("; %d reused runs cost nothing now", sp.ReusedRuns)
		}
		if sp.Prices != "" {
			s += " · prices " + mdCode(sp.Prices)
		}
		if sp.MaxUSD > 0 {
			s += " · cap " + usdText(sp.MaxUSD)
		}
		if sp.Reached {
			s += " · **budget reached**: " + mdText(sp.Reason)
		}
		return s
	}
	if t := rep.Telemetry; t != nil && len(t.Usage) > 0 {
		s := "**Run cost " + runCost(t) + "**: every model call Layer 3 recorded (cases and judge)"
		if t.Prices != "" {
			s += " · prices " + mdCode(t.Prices)
		}
		return s
	}
	return ""
}

// modelLabels are the matrix columns' names: the model ids when all are
// short, else A, B, C … with a legend, so four models fit GitHub's comment
// column.
type modelLabels struct {
	label  map[string]string
	legend string
}

// shortModel is the longest id a matrix column shows as it is.
const shortModel = 8

func newModelLabels(rep *report.Report) modelLabels {
	var ids []string
	for _, m := range rep.Models {
		ids = append(ids, m.ID)
	}
	if rep.Behavior != nil {
		for _, m := range resultModels(rep) {
			if !containsStr(ids, m) {
				ids = append(ids, m)
			}
		}
	}
	if rep.Telemetry != nil {
		// Layer 3's per-model table may name one no other section does:
		// under a label too, not a raw id beside letters.
		for _, c := range rep.Telemetry.Models {
			if !containsStr(ids, c.Model) {
				ids = append(ids, c.Model)
			}
		}
	}
	l := modelLabels{label: map[string]string{}}
	short := len(ids) <= 4
	for _, id := range ids {
		short = short && utf8.RuneCountInString(id) <= shortModel
	}
	if short {
		for _, id := range ids {
			l.label[id] = mdCode(id)
		}
		return l
	}
	var legend []string
	for i, id := range ids {
		name := columnName(i)
		l.label[id] = "**" + name + "**"
		legend = append(legend, "**"+name+"** "+mdCode(id))
	}
	l.legend = "<sub>Models: " + strings.Join(legend, " · ") + "</sub>"
	return l
}

func columnName(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("M%d", i+1)
}

func (l modelLabels) of(model string) string {
	if s, ok := l.label[model]; ok {
		return s
	}
	return mdCode(model)
}

// casesText names the cases of a grouped item: the first few, then how
// many more.
func casesText(ids []string) string {
	const shown = 5
	var names []string
	for i, id := range ids {
		if i == shown {
			return strings.Join(names, " · ") + fmt.Sprintf(" and %d more", len(ids)-shown)
		}
		names = append(names, mdCode(id))
	}
	return strings.Join(names, " · ")
}
