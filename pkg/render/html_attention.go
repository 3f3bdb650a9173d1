package render

import (
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The HTML's "Needs attention" is BuildAttention's list, the one the PR
// comment and job summary show: the same items in the same order, with
// the same sentences, cause and where to look. The page adds what the
// comment has no room for: what each rule of a shared cause says, and the
// gate's rules and reasons, statistics included, folded under "how this
// was decided".

type htmlAttention struct {
	Mark, Class, Status, Title, Layer string
	Sentence                          string
	Notes                             []string
	Cause                             []htmlKV // the finding at its value, the first failing run, the fix
	Rules                             []htmlKV // every rule one cause breaks, with what it says (two or more)
	Where                             string   // golden file:line
	Spec, SpecURL                     string
	Decided                           []htmlDecision
}

// htmlDecision is one gate item behind an attention item.
type htmlDecision struct {
	Head, Rule, Reason string
}

func htmlAttentionItems(rep *report.Report) []htmlAttention {
	docs := map[string]string{}
	if c := rep.Conformance; c != nil {
		for _, r := range c.Checks {
			docs[r.ID] = r.Doc
		}
	}
	// The HTML template escapes: names and prose are placed as they are.
	plain := func(s string) string { return s }
	var out []htmlAttention
	for _, it := range BuildAttention(rep).Items {
		a := htmlAttention{Mark: statusMark(it.Status), Class: statusClass(it.Status), Status: line(it.Status),
			Layer: layerName(it.Layer), Sentence: line(it.Sentence + "."), Where: line(it.Where)}
		title := it.Subject
		if it.Kind == report.KindTool {
			title = "tool " + it.Subject // not the case of the same name
		}
		if it.Kind == report.KindCase && len(it.Rules) > 1 {
			title = fmt.Sprintf("%d cases", len(it.Rules))
			for _, id := range it.Rules {
				a.Rules = append(a.Rules, htmlKV{line(id), "not judged"})
			}
		}
		if it.Kind == report.KindCheck {
			title = strings.Join(it.Rules, " · ")
			if len(it.Rules) == 1 && docs[it.Rules[0]] != "" {
				title += " · " + docs[it.Rules[0]]
			}
			if len(it.Rules) > 1 {
				for _, id := range it.Rules {
					a.Rules = append(a.Rules, htmlKV{line(id), orDash(line(docs[id]))})
				}
			}
		}
		if it.Model != "" {
			title += " × " + it.Model
		}
		a.Title = line(title)
		for _, n := range it.Notes {
			a.Notes = append(a.Notes, line(n))
		}
		if c := it.Cause; c != nil {
			if c.Finding != "" || c.Pointer != "" {
				a.Cause = append(a.Cause, htmlKV{"Cause", line(causeWith(c, plain, plain))})
			}
			if c.Reason != "" || c.CalledKnown {
				a.Cause = append(a.Cause, htmlKV{fmt.Sprintf("Run %d", c.Run), line(runWith(c, plain, plain))})
			}
			if c.Fix != "" {
				a.Cause = append(a.Cause, htmlKV{"Fix", line(c.Fix)})
			}
			a.Spec, a.SpecURL = line(c.Spec), c.SpecURL
		}
		for _, d := range it.Decided {
			head := d.Subject
			if d.Model != "" {
				head += " × " + d.Model
			}
			a.Decided = append(a.Decided, htmlDecision{Head: line(head), Rule: line(d.Rule), Reason: line(d.Reason)})
		}
		out = append(out, a)
	}
	return out
}
