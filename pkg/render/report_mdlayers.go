package render

import (
	"bytes"
	"encoding/json"
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
			"| Blocker | Found | Instead |", "|---|---|---|"}, rows: rows, what: "blockers", prio: prioKeep})
		return
	}
	s := Summarize(c)
	summary := fmt.Sprintf("%d checks: %s · MUST checks ran %d times", len(c.Checks), s.Line(), c.Runs)
	sorted := append([]report.CheckResult(nil), c.Checks...)
	sort.SliceStable(sorted, func(i, j int) bool { return checkRank(sorted[i]) < checkRank(sorted[j]) })
	header := []string{"| Check | Level | Result | k/N | Finding |", "|---|---|---|---|---|"}
	covered := map[string]bool{} // checks Needs attention already lists
	for _, it := range BuildAttention(rep).Items {
		if it.Kind == report.KindCheck || it.Kind == report.KindLint {
			for _, id := range it.Rules {
				covered[id] = true
			}
		}
	}
	var attention, all []string
	belowWarned := 0 // warnings in the table, not in Needs attention
	// A check the gate waived is accepted until its date: not a red row
	// of checks to look at in a comment headed PASS.
	waived := waivedChecks(rep)
	for _, r := range sorted {
		finding := mdText(headline(r))
		if r.SameAs != "" {
			finding = "same fault as " + mdCode(r.SameAs) + ": " + finding
		}
		result := mark(r) + " " + mdText(string(r.Verdict))
		if waived[r.ID] {
			result = "◌ waived (" + mdText(string(r.Verdict)) + ")"
		}
		row := fmt.Sprintf("| %s | %s | %s | %s | %s |", mdID(r.ID), r.Level, result, kOfN(r), finding)
		all = append(all, row)
		if checkRank(r) < 4 && !covered[r.ID] && !waived[r.ID] {
			attention = append(attention, row)
			if r.Verdict == report.CheckWarned {
				belowWarned++
			}
		}
	}
	if belowWarned > 0 && rep.Gate != nil {
		// The title counts the gate's warnings; these are not among them,
		// and a reviewer comparing "1 warning" there with "5 warnings"
		// here is told why.
		which := fmt.Sprintf("the %d warnings", belowWarned)
		if belowWarned == 1 {
			which = "the warning"
		}
		summary += " · the gate does not act on " + which + " below"
	}
	head := []string{"#### Layer 0 · conformance", "", summary}
	if len(attention) > 0 {
		d.add(mdBlock{head: append(append(head, ""), header...), rows: attention, what: "checks", prio: prioFocus, label: "Layer 0 checks to look at"})
	} else {
		d.para(prioFocus, "Layer 0 summary", head...)
	}
	d.add(mdBlock{head: details(fmt.Sprintf("All %d checks", len(all)), header), rows: all, tail: detailsEnd(), what: "checks", prio: prioPassing, label: "all Layer 0 checks"})
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
// the whole matrix folded), the suite scores folded, the confusion matrix
// folded, and in the long form the failing trajectories.
func layer1Blocks(d *mdDoc, rep *report.Report, labels modelLabels, long bool) {
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
	if labels.legend != "" {
		head = append(head, "", labels.legend)
	}
	header := []string{"| Case | Kind |", "|---|---|"}
	for _, m := range models {
		header[0] += " " + labels.of(m) + " |"
		header[1] += "---|"
	}
	var attention, all []string
	for _, c := range b.Cases {
		row := fmt.Sprintf("| %s | %s |", mdID(c.ID), caseKind(c))
		needs := false
		for _, m := range models {
			r, ok := results[[2]string{c.ID, m}]
			if !ok {
				row += " – |"
				continue
			}
			it, gated := items[[2]string{c.ID, m}]
			row += " " + matrixCell(r, it, gated) + " |"
			// A waived case is accepted, as a waived check is: not a row
			// to look at.
			needs = needs || (gated && it.Status != report.ItemPass && it.Status != report.ItemNotComparable && it.Status != report.ItemWaived)
		}
		all = append(all, row)
		if needs {
			attention = append(attention, row)
		}
	}
	if len(attention) > 0 {
		d.add(mdBlock{head: append(append(head, ""), header...), rows: attention, tail: []string{"", legend}, what: "cases", prio: prioFocus, label: "Layer 1 cases to look at"})
	} else {
		d.para(prioFocus, "Layer 1 summary", head...)
	}
	d.add(mdBlock{head: details(fmt.Sprintf("All %d cases × %d models", len(b.Cases), len(models)), header), rows: all, tail: append([]string{"", legend}, detailsEnd()...), what: "cases", prio: prioPassing, label: "the whole case matrix"})
	suiteBlock(d, rep, labels)
	confusionBlock(d, rep)
	if long {
		trajectoryBlocks(d, rep)
	}
}

func caseKind(c report.Case) string {
	k := string(c.Kind)
	if c.Negative {
		k += ", negative"
	}
	return mdText(k)
}

// matrixCell is "✓ 5/5" or "✗ 2/5 −60" with the change in points against
// the baseline when the gate compared them (never for a cell the gate
// marks not comparable).
func matrixCell(r report.CaseResult, it report.GateItem, gated bool) string {
	cell := fmt.Sprintf("%d/%d", r.Passed.K, r.Passed.N)
	if !gated {
		return cell
	}
	cell = statusMark(it.Status) + "\u00a0" + cell
	if it.Baseline != nil && it.Baseline.N > 0 && r.Passed.N > 0 && it.Status != report.ItemNotComparable {
		if d := deltaWhole(r.Passed.Rate() - it.Baseline.Rate()); d != "" {
			cell += "\u00a0" + d
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

// suiteBlock folds every suite score: the mean with its 95% interval, the
// baseline, Δ (new − baseline) and what the gate's bound shows for sure.
func suiteBlock(d *mdDoc, rep *report.Report, labels modelLabels) {
	var rows []string
	counts := map[string]int{}
	for _, it := range suiteItems(rep) {
		now, base := "–", "–"
		if it.Value != nil {
			now = pct1(*it.Value)
			if it.Low != nil && it.High != nil {
				now += fmt.Sprintf(" (%s–%s)", strings.TrimSuffix(pct1(*it.Low), "%"), strings.TrimSuffix(pct1(*it.High), "%"))
			}
		}
		if it.BaselineValue != nil && it.Status != report.ItemNotComparable {
			base = pct1(*it.BaselineValue)
		}
		ch := suiteChange(it)
		arrow := "↑"
		if it.Direction == report.Lower {
			arrow = "↓"
		}
		counts[it.Status]++
		rows = append(rows, fmt.Sprintf("| %s | %s %s | %s | %s | %s | %s | %s |", labels.of(it.Model), mdCode(it.Score), arrow, now, base, ch.Delta, mdText(ch.Surely), statusMark(it.Status)))
	}
	if len(rows) == 0 {
		return
	}
	var tally []string
	for _, s := range []string{report.ItemFail, report.ItemInconclusive, report.ItemPass, report.ItemNotComparable, report.ItemInfo} {
		if counts[s] > 0 {
			tally = append(tally, fmt.Sprintf("%d %s", counts[s], statusWord(s)))
		}
	}
	d.add(mdBlock{head: details(fmt.Sprintf("Suite scores: %s", strings.Join(tally, ", ")), []string{
		"The mean over cases with its 95% interval (↑ higher is better, ↓ lower); Δ is now − baseline over the same cases; \"surely\" is what the gate's one-sided bound shows.", "",
		"| Model | Score | Now | Baseline | Δ | Surely | |", "|---|---|---|---|---|---|---|"}), rows: rows, tail: detailsEnd(), what: "scores", prio: prioPassing, label: "suite scores"})
}

func statusWord(s string) string {
	switch s {
	case report.ItemNotComparable:
		return "not comparable"
	case report.ItemInfo:
		return "shown only"
	case report.ItemFail:
		return "failed"
	case report.ItemPass:
		return "passed"
	}
	return s
}

// confusionBlock folds each model's most frequent confusions.
func confusionBlock(d *mdDoc, rep *report.Report) {
	var rows []string
	for _, mc := range Confusions(rep) {
		for i, c := range mc.Cells {
			lint := "–"
			if mc.Similar[i] != "" {
				// Our own words and digits only (lintPairRE): nothing to escape.
				lint = "near-duplicate descriptions (" + mc.Similar[i] + ")"
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d | %s |", mdCode(mc.Model), mdCode(clip(ToolClass(c.Expected), 32)), mdCode(clip(ToolClass(c.Chosen), 32)), c.Count, lint))
		}
		if mc.More > 0 {
			rows = append(rows, fmt.Sprintf("| %s | … | %d more | | |", mdCode(mc.Model), mc.More))
		}
	}
	if len(rows) == 0 {
		return
	}
	d.add(mdBlock{head: details("Confusions: the tool expected and the one chosen instead", []string{"| Model | Expected | Chosen | Steps | Lint |", "|---|---|---|---|---|"}),
		rows: rows, tail: detailsEnd(), what: "confusions", prio: prioDetail, label: "confusions"})
}

// maxTrajectories bounds the failing runs the long form shows.
const maxTrajectories = 30

// trajectoryBlocks fold the failing runs' trajectories (long form only):
// the turns, the calls with their arguments, the final answer. Runs of one
// case × model that failed the same way (same reasons, same calls, same
// answer) are one block naming every run.
func trajectoryBlocks(d *mdDoc, rep *report.Report) {
	shown := 0
	for _, r := range rep.Behavior.Results {
		var order []string
		runs := map[string][]report.CaseRun{}
		for _, run := range r.Runs {
			if run.Outcome == report.RunPass || run.Trajectory == nil {
				continue
			}
			sig := runSignature(run)
			if _, ok := runs[sig]; !ok {
				order = append(order, sig)
			}
			runs[sig] = append(runs[sig], run)
		}
		for _, sig := range order {
			if shown == maxTrajectories {
				d.para(prioDetail, "trajectories", "_… more failing runs in report.json._")
				return
			}
			shown++
			same := runs[sig]
			run := same[0]
			var nums []string
			for _, x := range same {
				nums = append(nums, fmt.Sprint(x.Run))
			}
			which := "Run " + nums[0]
			if len(nums) > 1 {
				which = "Runs " + strings.Join(nums, ", ")
			}
			t := run.Trajectory
			var lines []string
			for _, reason := range run.Reasons {
				lines = append(lines, "- "+mdText(reason))
			}
			for i, turn := range t.Turns {
				l := fmt.Sprintf("%d. %s", i+1, mdText(turn.StopReason))
				for _, c := range turn.Calls {
					l += " · " + mdCode(c.Name) + " " + mdCode(clip(compactJSON(c.Arguments, c.ArgumentsRaw), 200)) + " → " + mdCode(clip(c.Result, 200))
				}
				if turn.Text != "" {
					l += " · " + mdText(clip(turn.Text, 300))
				}
				lines = append(lines, l)
			}
			d.add(mdBlock{head: details(fmt.Sprintf("%s of %s × %s: %s", which, summaryText(r.Case), summaryText(r.Model), summaryText(run.Outcome)), lines), tail: detailsEnd(), prio: prioDetail, label: "trajectories"})
		}
	}
}

// runSignature is what makes two failed runs the same to a reader.
func runSignature(run report.CaseRun) string {
	var b strings.Builder
	b.WriteString(run.Outcome + "\x00" + strings.Join(run.Reasons, "\x00"))
	for _, turn := range run.Trajectory.Turns {
		b.WriteString("\x00" + turn.Text)
		for _, c := range turn.Calls {
			b.WriteString("\x00" + c.Name + "\x00" + compactJSON(c.Arguments, c.ArgumentsRaw) + "\x00" + c.Result)
		}
	}
	return b.String()
}

// compactJSON is a call's arguments on one line (report.json indents them).
func compactJSON(args json.RawMessage, raw string) string {
	if len(args) == 0 {
		return raw
	}
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return string(args)
	}
	return b.String()
}

// layer2Blocks: a matrix of fault types and attack categories × models,
// one cell each (status, k/N, Δ in points), never left out; refusal rates
// and what was not measured follow.
func layer2Blocks(d *mdDoc, rep *report.Report, labels modelLabels) {
	type key struct{ kind, model, subject, score string }
	items := map[key]report.GateItem{}
	if rep.Gate != nil {
		for _, it := range rep.Gate.Items {
			if it.Layer == 2 {
				items[key{it.Kind, it.Model, it.Subject, it.Score}] = it
			}
		}
	}
	type row struct{ kind, subject, score string }
	var order []row
	cells := map[row]map[string]string{}
	var models []string
	add := func(kind, model, subject string, scores []report.Score) {
		if !containsStr(models, model) {
			models = append(models, model)
		}
		for _, s := range scores {
			r := row{kind, subject, s.Name}
			if cells[r] == nil {
				cells[r] = map[string]string{}
				order = append(order, r)
			}
			cell := fmt.Sprintf("%d/%d", s.K, s.N)
			if it, ok := items[key{kind, model, subject, s.Name}]; ok {
				cell = statusMark(it.Status) + "\u00a0" + cell
				if it.Baseline != nil && it.Status != report.ItemNotComparable && it.Baseline.N > 0 && s.N > 0 {
					if dd := deltaWhole(s.Count().Rate() - it.Baseline.Rate()); dd != "" {
						cell += "\u00a0" + dd
					}
				}
			}
			cells[r][model] = cell
		}
	}
	for _, f := range rep.Resilience.Faults {
		add(report.KindFault, f.Model, f.Fault, f.Scores)
	}
	for _, a := range rep.Resilience.Attacks {
		add(report.KindAttack, a.Model, a.Attack, a.Scores)
	}
	gaps := unmeasuredMarkdown(rep.Resilience)
	title := "#### Layer 2 · resilience and security"
	if len(order) > 0 {
		header := []string{"| Injected | Score |", "|---|---|"}
		for _, m := range models {
			header[0] += " " + labels.of(m) + " |"
			header[1] += "---|"
		}
		var main, all, refusal []string
		quiet := map[string]int{} // rows whose every cell passed unchanged, per kind
		for _, r := range order {
			line := fmt.Sprintf("| %s %s | %s |", r.kind, mdID(r.subject), scoreLabel(r.score))
			calm := true
			for _, m := range models {
				cell := orDefault(cells[r][m], "–")
				line += " " + cell + " |"
				calm = calm && strings.HasPrefix(cell, statusMark(report.ItemPass)+"\u00a0") && !strings.ContainsAny(cell, "+-")
			}
			switch {
			case r.score == report.Refusal:
				refusal = append(refusal, line)
			case calm:
				quiet[r.kind]++
				all = append(all, line)
			default:
				main = append(main, line)
				all = append(all, line)
			}
		}
		for _, kind := range []string{report.KindFault, report.KindAttack} {
			if n := quiet[kind]; n > 0 {
				line := fmt.Sprintf("| %s | | ", plural(n, "other "+kind+" type", "other "+kind+" types"))
				if kind == report.KindAttack {
					line = fmt.Sprintf("| %s | | ", plural(n, "other attack category", "other attack categories"))
				}
				for range models {
					line += statusMark(report.ItemPass) + " |"
				}
				main = append(main, line)
			}
		}
		head := []string{title, "", "Runs that went the bad way count in k for ↓ scores (attack success), the good way for ↑ ones; Δ is now − baseline in points."}
		if labels.legend != "" {
			head = append(head, "", labels.legend)
		}
		d.add(mdBlock{head: append(append(head, ""), header...), rows: main, tail: []string{"", legend}, what: "rows", prio: prioKeep})
		if len(all) > len(main)-len(quiet) {
			d.add(mdBlock{head: details(fmt.Sprintf("Every fault type and attack category: %d", len(all)), header), rows: all, tail: detailsEnd(), what: "rows", prio: prioPassing, label: "the whole Layer 2 matrix"})
		}
		if len(refusal) > 0 {
			d.add(mdBlock{head: details("Refusal rates", header), rows: refusal, tail: detailsEnd(), what: "rows", prio: prioPassing, label: "refusal rates"})
		}
		title = ""
	}
	switch {
	case len(gaps) == 0:
	case title != "":
		d.add(mdBlock{head: []string{title, "", "**Nothing measured:** no run of Layer 2 is in N.", ""}, rows: gaps, what: "rows", prio: prioKeep})
	default:
		d.add(mdBlock{head: []string{"**Not measured or not counted:**", ""}, rows: gaps, what: "rows", prio: prioFocus, label: "Layer 2 runs not measured"})
	}
}

// scoreLabel is a Layer 2 score's short name with its good direction.
func scoreLabel(score string) string {
	switch score {
	case report.AttackSuccess:
		return "success ↓"
	case report.FaultHandled:
		return "handled ↑"
	case report.Refusal:
		return "refusal ↑"
	}
	if dir, ok := report.DirectionOf(score); ok && dir == report.Lower {
		return mdCode(score) + " ↓"
	}
	return mdCode(score) + " ↑"
}

// layer3Blocks are in report_mdtelemetry.go.

// gateDetails folds how the gate decided: each listed item's rule and
// reason with its statistics, the method, the policy, the notes, every
// item that did not simply pass, and what could not be matched.
func gateDetails(d *mdDoc, rep *report.Report, att Attention, labels modelLabels) {
	g := rep.Gate
	var head []string
	for i, it := range att.Items {
		for _, dec := range it.Decided {
			name := mdCode(dec.Subject)
			if dec.Model != "" {
				name += " × " + mdCode(dec.Model)
			}
			head = append(head, fmt.Sprintf("- (%d) %s · %s: %s", i+1, name, mdText(dec.Rule), mdText(dec.Reason)))
		}
	}
	if len(head) > 0 {
		head = append(head, "")
	}
	head = append(head, "**Method:** "+mdText(g.Method), "", "**Policy:** "+mdText(g.Policy.Text))
	if g.Baseline != nil {
		head = append(head, "", fmt.Sprintf("**Baseline:** %s (commit %s)", mdCode(g.Baseline.Path), mdCode(shortSHA(g.Baseline.Commit))))
	}
	if len(g.History) > 0 {
		head = append(head, "", fmt.Sprintf("**History:** %d green reports walked", len(g.History)))
	}
	for _, n := range g.Notes {
		head = append(head, "", "- "+mdText(n))
	}
	for _, n := range conformanceNotes(rep) {
		head = append(head, "", "- "+mdText(n))
	}
	// A heading of its own: under the last layer's it read as part of
	// Layer 3. The blocks after it go before it does (higher prio).
	d.add(mdBlock{head: append([]string{"#### How the gate decided", ""}, details("Each item's rule and statistics, the method, the policy and the baseline", head)...),
		tail: detailsEnd(), prio: prioDecided, label: "how the gate decided"})
	var rows []string
	for _, it := range g.Items {
		if it.Status == report.ItemPass || it.Status == report.ItemInfo {
			continue
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", statusMark(it.Status), mdText(it.Kind), mdID(it.Subject), labels.of(it.Model), mdText(it.Rule), mdText(it.Reason)))
	}
	if len(rows) > 0 {
		head2 := []string{"| | Kind | Item | Model | Rule | Reason |", "|---|---|---|---|---|---|"}
		if labels.legend != "" {
			head2 = append([]string{labels.legend, ""}, head2...)
		}
		d.add(mdBlock{head: details(fmt.Sprintf("Every gate item that did not simply pass: %d", len(rows)), head2),
			rows: rows, tail: detailsEnd(), what: "items", prio: prioPassing, label: "every gate item"})
	}
	if len(g.Unmatched) == 0 {
		return
	}
	var um []string
	for _, u := range g.Unmatched {
		um = append(um, fmt.Sprintf("| %d | %s | %s | %s | %s | %s |", u.Layer, mdText(u.Kind), mdID(u.Subject), labels.of(u.Model), mdText(u.Side), mdText(u.Reason)))
	}
	d.add(mdBlock{head: details(fmt.Sprintf("Not compared: %d unmatched", len(um)), []string{"| Layer | Kind | Item | Model | Only in | Why |", "|---|---|---|---|---|---|"}), rows: um, tail: detailsEnd(), what: "entries", prio: prioDetail, label: "unmatched items"})
}

// conformanceNotes are Layer 0's notes (a dual-era server, a --call-tool
// name the server does not list, a process that stopped answering), each
// marked as Layer 0's, beside the gate's.
func conformanceNotes(rep *report.Report) []string {
	c := rep.Conformance
	if c == nil {
		return nil
	}
	out := make([]string, 0, len(c.Notes))
	for _, n := range c.Notes {
		out = append(out, "Layer 0: "+n)
	}
	return out
}
