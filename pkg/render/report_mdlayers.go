package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// layer0Blocks: the checks that need attention, failures first, and the
// whole table folded away.
func layer0Blocks(d *mdDoc, rep *report.Report) {
	c := rep.Conformance
	if c.Verdict == report.ConformanceLegacy && c.Legacy != nil {
		var rows []string
		for _, b := range c.Legacy.Blockers {
			rows = append(rows, fmt.Sprintf("| %s | %s | %s |", mdCode(b.ID), mdText(b.Found), mdText(b.Instead)))
		}
		d.add(mdBlock{head: []string{"#### Layer 0 · conformance", "",
			fmt.Sprintf("The server speaks %s only, not 2026-07-28. What blocks it:", mdCode(c.Legacy.Speaks)), "",
			"| Blocker | Found | Instead |", "|---|---|---|"}, rows: rows, what: "blockers"})
		return
	}
	s := Summarize(c)
	summary := fmt.Sprintf("%d checks: %s · MUST checks ran %d times", len(c.Checks), s.Line(), c.Runs)
	sorted := append([]report.CheckResult(nil), c.Checks...)
	sort.SliceStable(sorted, func(i, j int) bool { return checkRank(sorted[i]) < checkRank(sorted[j]) })
	header := []string{"| Check | Level | Result | k/N | Finding |", "|---|---|---|---|---|"}
	var attention, all []string
	for _, r := range sorted {
		row := fmt.Sprintf("| %s | %s | %s %s | %s | %s |", mdCode(r.ID), r.Level, mark(r), mdText(string(r.Verdict)), kOfN(r), mdText(headline(r)))
		all = append(all, row)
		if checkRank(r) < 4 {
			attention = append(attention, row)
		}
	}
	head := []string{"#### Layer 0 · conformance", "", summary}
	if len(attention) > 0 {
		d.add(mdBlock{head: append(append(head, ""), header...), rows: attention, what: "checks"})
	} else {
		d.para(head...)
	}
	d.add(mdBlock{head: details(fmt.Sprintf("All %d checks", len(all)), header), rows: all, tail: detailsEnd(), what: "checks"})
}

// checkRank orders failures first: failed or errored MUST, failed SHOULD,
// warnings, flaky passes and info notes, then passes and skips.
func checkRank(r report.CheckResult) int {
	switch {
	case r.Level == report.Must && (r.Verdict == report.CheckFailed || r.Verdict == report.CheckErrored):
		return 0
	case r.Verdict == report.CheckFailed || r.Verdict == report.CheckErrored:
		return 1
	case r.Verdict == report.CheckWarned:
		return 2
	case r.Flaky, r.Verdict == report.CheckNoted:
		return 3
	case r.Verdict == report.CheckPassed:
		return 4
	}
	return 5
}

// kOfN is k/N with the passes a MUST needs, "–" for skipped checks.
func kOfN(r report.CheckResult) string {
	if r.Verdict == report.CheckSkipped {
		return "–"
	}
	return fmt.Sprintf("%d/%d", r.Passes(), r.Runs)
}

// layer1Blocks: the case × model matrix (cells that need attention first,
// the whole matrix folded) and the suite scores with their intervals.
func layer1Blocks(d *mdDoc, rep *report.Report) {
	b := rep.Behavior
	models := resultModels(rep)
	items := map[[2]string]report.GateItem{}
	if rep.Gate != nil {
		for _, it := range rep.Gate.Items {
			if it.Kind == report.KindCase {
				items[[2]string{it.Subject, it.Model}] = it
			}
		}
	}
	results := map[[2]string]report.CaseResult{}
	for _, r := range b.Results {
		results[[2]string{r.Case, r.Model}] = r
	}
	judge := ""
	if b.JudgeModel != "" {
		judge = " · judge " + mdCode(b.JudgeModel) + " rubric " + mdCode(shortHash(b.RubricHash))
	}
	head := []string{"#### Layer 1 · behaviour", "", fmt.Sprintf("%d cases × %d models, %d runs each%s", len(b.Cases), len(models), b.RunsPerCase, judge)}
	header := []string{"| Case | Kind |", "|---|---|"}
	for _, m := range models {
		header[0] += " " + mdCode(m) + " |"
		header[1] += "---|"
	}
	var attention, all []string
	for _, c := range b.Cases {
		row := fmt.Sprintf("| %s | %s |", mdCode(c.ID), caseKind(c))
		needs := false
		for _, m := range models {
			r, ok := results[[2]string{c.ID, m}]
			if !ok {
				row += " – |"
				continue
			}
			it, gated := items[[2]string{c.ID, m}]
			row += " " + matrixCell(r, it, gated) + " |"
			needs = needs || (gated && it.Status != report.ItemPass && it.Status != report.ItemNotComparable)
		}
		all = append(all, row)
		if needs {
			attention = append(attention, row)
		}
	}
	if len(attention) > 0 {
		d.add(mdBlock{head: append(append(head, ""), header...), rows: attention, tail: []string{"", legend}, what: "cases"})
	} else {
		d.para(head...)
	}
	d.add(mdBlock{head: details(fmt.Sprintf("All %d cases × %d models", len(b.Cases), len(models)), header), rows: all, tail: append([]string{"", legend}, detailsEnd()...), what: "cases"})
	suiteBlock(d, rep)
}

func caseKind(c report.Case) string {
	k := string(c.Kind)
	if c.Negative {
		k += ", negative"
	}
	return mdText(k)
}

// matrixCell is "✓ 5/5" or "✗ 2/5 (−60)" with the change in points
// against the baseline when the gate compared them.
func matrixCell(r report.CaseResult, it report.GateItem, gated bool) string {
	cell := fmt.Sprintf("%d/%d", r.Passed.K, r.Passed.N)
	if !gated {
		return cell
	}
	cell = statusMark(it.Status) + " " + cell
	if it.Baseline != nil && it.Baseline.N > 0 && r.Passed.N > 0 {
		delta := 100 * (r.Passed.Rate() - it.Baseline.Rate())
		if delta >= 0.5 || delta <= -0.5 {
			cell += fmt.Sprintf(" (%+.0f)", delta)
		}
	}
	return cell
}

func shortHash(h string) string {
	h = strings.TrimPrefix(h, report.HashPrefix)
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// resultModels are the models with Layer 1 results, in the report's model
// order, then any the results name that the list lacks.
func resultModels(rep *report.Report) []string {
	used := map[string]bool{}
	for _, r := range rep.Behavior.Results {
		used[r.Model] = true
	}
	var out []string
	for _, m := range rep.Models {
		if used[m.ID] {
			out = append(out, m.ID)
			delete(used, m.ID)
		}
	}
	var rest []string
	for m := range used {
		rest = append(rest, m)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// suiteItems are the gate's suite items, or, for a report never gated,
// the same scores computed without a baseline.
func suiteItems(rep *report.Report) []report.GateItem {
	if rep.Gate != nil {
		var out []report.GateItem
		for _, it := range rep.Gate.Items {
			if it.Kind == report.KindSuite {
				out = append(out, it)
			}
		}
		return out
	}
	return gate.SuiteScores(rep, gate.DefaultPolicy())
}

func suiteBlock(d *mdDoc, rep *report.Report) {
	var rows []string
	for _, it := range suiteItems(rep) {
		now, base, delta, bound := "–", "–", "–", "–"
		if it.Value != nil {
			now = percent(*it.Value)
			if it.Low != nil && it.High != nil {
				now += fmt.Sprintf(" (%.1f–%.1f)", 100**it.Low, 100**it.High)
			}
		}
		if it.BaselineValue != nil && it.Status != report.ItemNotComparable {
			base = percent(*it.BaselineValue)
		}
		if it.Drop != nil && it.Status != report.ItemNotComparable {
			// Δ in the score's own units: a drop of a higher-is-better
			// score is negative, a rise of a lower-is-better one positive.
			change := -*it.Drop
			if it.Direction == report.Lower {
				change = *it.Drop
			}
			delta = points(change)
		}
		if it.Bound != nil && it.Status != report.ItemNotComparable {
			bound = points(*it.Bound)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s %s |", mdCode(it.Model), mdCode(it.Score), mdText(string(it.Direction)), now, base, delta, bound, statusMark(it.Status), mdText(it.Status)))
	}
	if len(rows) == 0 {
		return
	}
	d.add(mdBlock{head: []string{"**Suite scores**: the mean over cases with its 95% interval; Δ and the one-sided bound of the drop are paired with the baseline's same cases", "",
		"| Model | Score | Better | Now | Baseline | Δ | Drop bound | Status |", "|---|---|---|---|---|---|---|---|"}, rows: rows, what: "scores"})
}

// layer2Blocks: fault handling and attacks per model, with the baseline
// when the gate compared them.
func layer2Blocks(d *mdDoc, rep *report.Report) {
	type key struct{ kind, model, subject, score string }
	items := map[key]report.GateItem{}
	if rep.Gate != nil {
		for _, it := range rep.Gate.Items {
			if it.Layer == 2 {
				items[key{it.Kind, it.Model, it.Subject, it.Score}] = it
			}
		}
	}
	var rows []string
	add := func(kind, model, subject string, scores []report.Score) {
		for _, s := range scores {
			base, delta, status := "–", "–", "–"
			if it, ok := items[key{kind, model, subject, s.Name}]; ok {
				if it.Baseline != nil {
					base = fmt.Sprintf("%d/%d", it.Baseline.K, it.Baseline.N)
					delta = points(s.Count().Rate() - it.Baseline.Rate())
				}
				status = statusMark(it.Status) + " " + mdText(it.Status)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s %s | %s | %s | %d/%d (%s) | %s | %s | %s |", mdCode(model), kind, mdCode(subject), mdCode(s.Name), mdText(string(s.Direction)), s.K, s.N, percent(s.Count().Rate()), base, delta, status))
		}
	}
	for _, f := range rep.Resilience.Faults {
		add(report.KindFault, f.Model, f.Fault, f.Scores)
	}
	for _, a := range rep.Resilience.Attacks {
		add(report.KindAttack, a.Model, a.Attack, a.Scores)
	}
	gaps := unmeasuredMarkdown(rep.Resilience)
	if len(rows) > 0 {
		d.add(mdBlock{head: []string{"#### Layer 2 · resilience and security", "",
			"| Model | Injected | Score | Better | Now | Baseline | Δ | Status |", "|---|---|---|---|---|---|---|---|"}, rows: rows, what: "rates"})
	}
	switch {
	case len(gaps) == 0:
	case len(rows) == 0:
		d.add(mdBlock{head: []string{"#### Layer 2 · resilience and security", "", "**Nothing measured:** no run of Layer 2 is in N.", ""}, rows: gaps, what: "rows"})
	default:
		d.add(mdBlock{head: []string{"", "**Not measured or not counted:**", ""}, rows: gaps, what: "rows"})
	}
}

// layer3Blocks are in report_mdtelemetry.go.

// gateDetails folds the method, the policy, the notes, every item that did
// not simply pass, and what could not be matched.
func gateDetails(d *mdDoc, g *report.Gate) {
	head := []string{"**Method:** " + mdText(g.Method), "", "**Policy:** " + mdText(g.Policy.Text)}
	if g.Baseline != nil {
		head = append(head, "", fmt.Sprintf("**Baseline:** %s (commit %s)", mdCode(g.Baseline.Path), mdCode(shortSHA(g.Baseline.Commit))))
	}
	if len(g.History) > 0 {
		head = append(head, "", fmt.Sprintf("**History:** %d green reports walked", len(g.History)))
	}
	for _, n := range g.Notes {
		head = append(head, "", "- "+mdText(n))
	}
	head = append(head, "", "| | Layer | Kind | Item | Model | Rule | Reason |", "|---|---|---|---|---|---|---|")
	var rows []string
	for _, it := range g.Items {
		if it.Status == report.ItemPass || it.Status == report.ItemInfo {
			continue
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %s |", statusMark(it.Status), it.Layer, mdText(it.Kind), mdCode(it.Subject), mdCode(it.Model), mdText(it.Rule), mdText(it.Reason)))
	}
	if len(rows) == 0 {
		rows = append(rows, "| ✓ | – | – | – | – | – | every item passed |")
	}
	d.add(mdBlock{head: details("Gate details: method, policy, every item", head), rows: rows, tail: detailsEnd(), what: "items"})
	if len(g.Unmatched) == 0 {
		return
	}
	var um []string
	for _, u := range g.Unmatched {
		um = append(um, fmt.Sprintf("| %d | %s | %s | %s | %s | %s |", u.Layer, mdText(u.Kind), mdCode(u.Subject), mdCode(u.Model), mdText(u.Side), mdText(u.Reason)))
	}
	d.add(mdBlock{head: details(fmt.Sprintf("Not compared: %d unmatched", len(um)), []string{"| Layer | Kind | Item | Model | Only in | Why |", "|---|---|---|---|---|---|"}), rows: um, tail: detailsEnd(), what: "entries"})
}
