package render

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The HTML's "Needs attention": every item the gate did not pass (failed,
// inconclusive, warned, known below its floor), worst first, each with
// the gate's sentence, its cause and where to look; the statistics behind
// it folded under "how this was decided". Built from the gate's items,
// the source of truth for status.

type htmlAttention struct {
	Mark, Class, Status, Title string
	Sentence                   string
	Decided                    []string // the statistics and the rule, folded
	Cause                      []htmlKV // finding, at, value, fix, first failing run, tool chosen
	Also                       string   // other rules one wire fault breaks (check SameAs)
	Where                      string   // golden file:line
	Spec, SpecURL              string
}

var attentionRank = map[string]int{report.ItemFail: 0, report.ItemInconclusive: 1, report.ItemWarn: 2, report.ItemKnown: 3}

// statsRE finds the parenthesised statistics the gate appends to a
// reason: "(Fisher p=0.0040 ≤ 0.0167 = α/3)", "(one-sided 99.75% bound …)".
var statsRE = regexp.MustCompile(`\s*\((Fisher|one-sided|paired|t bound|bound|p=|α)[^()]*(\([^()]*\)[^()]*)*\)`)

func htmlAttentionItems(rep *report.Report) []htmlAttention {
	g := rep.Gate
	if g == nil {
		return nil
	}
	checks := map[string]report.CheckResult{}
	if c := rep.Conformance; c != nil {
		for _, r := range c.Checks {
			checks[r.ID] = r
		}
	}
	cases := map[string]report.Case{}
	results := map[[2]string]report.CaseResult{}
	if b := rep.Behavior; b != nil {
		for _, c := range b.Cases {
			cases[c.ID] = c
		}
		for _, r := range b.Results {
			results[[2]string{r.Case, r.Model}] = r
		}
	}
	var items []report.GateItem
	for _, it := range g.Items {
		if _, ok := attentionRank[it.Status]; ok {
			items = append(items, it)
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if attentionRank[a.Status] != attentionRank[b.Status] {
			return attentionRank[a.Status] < attentionRank[b.Status]
		}
		if a.Layer != b.Layer {
			return a.Layer < b.Layer
		}
		return attentionRate(a) < attentionRate(b)
	})
	// A check that only repeats an earlier one's wire fault (SameAs) is
	// listed under that one: one cause, one item.
	also := map[string][]string{}
	skip := map[string]bool{}
	for _, it := range items {
		if r, ok := checks[it.Subject]; ok && it.Kind == report.KindCheck && r.SameAs != "" {
			if _, listed := checks[r.SameAs]; listed {
				also[r.SameAs] = append(also[r.SameAs], r.ID)
				skip[r.ID] = true
			}
		}
	}
	var out []htmlAttention
	for _, it := range items {
		if it.Kind == report.KindCheck && skip[it.Subject] {
			continue
		}
		a := htmlAttention{Mark: statusMark(it.Status), Class: statusClass(it.Status), Status: line(it.Status), Title: line(attentionTitle(it))}
		a.Sentence = line(strings.TrimSpace(statsRE.ReplaceAllString(it.Reason, "")))
		if stats := statsRE.FindAllString(it.Reason, -1); len(stats) > 0 {
			for _, s := range stats {
				a.Decided = append(a.Decided, line(strings.Trim(strings.TrimSpace(s), "()")))
			}
		}
		if it.Rule != "" {
			a.Decided = append(a.Decided, "rule: "+line(it.Rule))
		}
		if it.PValue != nil {
			a.Decided = append(a.Decided, fmt.Sprintf("p = %.4f", *it.PValue))
		}
		if r, ok := checks[it.Subject]; ok && it.Kind == report.KindCheck {
			if r.Doc != "" {
				a.Title = line(r.ID + " · " + r.Doc)
			}
			if r.Outcome.Message != "" {
				a.Cause = append(a.Cause, htmlKV{"Finding", line(r.Outcome.Message)})
			}
			for _, e := range r.Outcome.Evidence {
				if e.Pointer != "" {
					v := e.Value
					if e.Missing {
						v = "(absent)"
					}
					a.Cause = append(a.Cause, htmlKV{"At", line(e.Pointer + " = " + v)})
					break
				}
			}
			if r.Fix != "" {
				a.Cause = append(a.Cause, htmlKV{"Fix", line(r.Fix)})
			}
			a.Spec, a.SpecURL = line(r.Spec), specURL(r.Spec)
			if ids := also[r.ID]; len(ids) > 0 {
				a.Also = line("the same value also breaks " + strings.Join(ids, ", "))
			}
		}
		if c, ok := cases[it.Subject]; ok && it.Layer == 1 {
			if c.Source != "" {
				a.Where = line(c.Source)
				if c.Line > 0 {
					a.Where += fmt.Sprintf(":%d", c.Line)
				}
			}
			if res, ok := results[[2]string{it.Subject, it.Model}]; ok {
				for _, run := range res.Runs {
					if run.Outcome == report.RunPass || len(run.Reasons) == 0 {
						continue
					}
					a.Cause = append(a.Cause, htmlKV{fmt.Sprintf("Run %d", run.Run), line(run.Reasons[0])})
					if t := run.Trajectory; t != nil {
						if chosen := firstTool(t); chosen != "" {
							a.Cause = append(a.Cause, htmlKV{"First tool call", line(chosen)})
						} else {
							a.Cause = append(a.Cause, htmlKV{"First tool call", "none (the model answered in text)"})
						}
					}
					break
				}
			}
		}
		out = append(out, a)
	}
	return out
}

func firstTool(t *report.Trajectory) string {
	for _, turn := range t.Turns {
		for _, c := range turn.Calls {
			return c.Name
		}
	}
	return ""
}

// attentionTitle names the item and the model: "case weather-3 × m2".
func attentionTitle(it report.GateItem) string {
	kind := map[string]string{report.KindCheck: "", report.KindSuite: "score", report.KindCost: "", report.KindRunCost: ""}
	k, ok := kind[it.Kind]
	if !ok {
		k = it.Kind
	}
	t := strings.TrimSpace(k + " " + it.Subject)
	if it.Score != "" && it.Kind != report.KindSuite {
		t += " (" + it.Score + ")"
	}
	if it.Model != "" {
		t += " × " + it.Model
	}
	return t
}

// attentionRate orders items of one status and layer: the lowest pass
// rate (the hardest fall) first.
func attentionRate(it report.GateItem) float64 {
	if it.New == nil || it.New.N == 0 {
		return 2
	}
	r := it.New.Rate()
	if it.Direction == report.Lower {
		r = 1 - r
	}
	return r
}
