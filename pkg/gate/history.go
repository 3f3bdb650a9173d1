package gate

import (
	"fmt"
	"sort"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// driftStreak is how many green reports in a row a case must have passed
// N/N before a fall is called likely model drift (issue 4: "three or
// more").
const driftStreak = 3

// greenHistory keeps the reports whose gate verdict was pass (an
// inconclusive run is never a reference), newest first, at most depth.
func greenHistory(all []Historic, depth int, g *report.Gate) []Historic {
	var green []Historic
	skipped := 0
	for _, h := range all {
		if h.Report == nil || h.Report.Gate == nil || h.Report.Gate.Verdict != report.GatePass {
			skipped++
			continue
		}
		green = append(green, h)
	}
	if skipped > 0 {
		g.Notes = append(g.Notes, fmt.Sprintf("history: %d report(s) skipped: not gated green (verdict pass)", skipped))
	}
	sort.SliceStable(green, func(i, j int) bool {
		ti, tj := green[i].Report.Run.FinishedAt, green[j].Report.Run.FinishedAt
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return green[i].Ref.Path < green[j].Ref.Path
	})
	if len(green) > depth {
		green = green[:depth]
	}
	for _, h := range green {
		g.History = append(g.History, h.Ref)
	}
	return green
}

// history adds the warnings a walk back through green reports can give:
// likely model drift and slow slides. They never change the verdict.
func (e *evaluation) history(hist []Historic) {
	nb := e.new.Behavior
	if nb == nil || len(hist) == 0 {
		return
	}
	e.drift(hist)
	e.slides(hist)
}

// drift calls out a case that passed N/N in the last driftStreak or more
// green reports with the same tool surface and now fell below its floor:
// the server's tools did not change, so the model most likely did.
func (e *evaluation) drift(hist []Historic) {
	nb := e.new.Behavior
	hashes := map[string]report.Case{}
	for _, c := range nb.Cases {
		hashes[c.ID] = c
	}
	for _, r := range nb.Results {
		c := hashes[r.Case]
		if r.Passed.K >= floor(e.p.floorFor(c.Kind), r.Passed.N) {
			continue
		}
		streak := 0
		var newestServed string
		for _, h := range hist {
			hr, ok := resultFor(h.Report, r.Model, c.Hash)
			if !ok || h.Report.ToolSurfaceHash != e.new.ToolSurfaceHash || hr.Passed.N == 0 || hr.Passed.K != hr.Passed.N {
				break
			}
			if streak == 0 {
				newestServed = served(h.Report, r.Model)
			}
			streak++
		}
		if streak < driftStreak {
			continue
		}
		reason := fmt.Sprintf("likely model drift: %d/%d now after N/N in the last %d green reports, with the tool surface unchanged", r.Passed.K, r.Passed.N, streak)
		if now := served(e.new, r.Model); newestServed != "" && now != "" && now != newestServed {
			reason += fmt.Sprintf("; the provider now serves %q (was %q)", now, newestServed)
		}
		e.add(report.GateItem{Layer: 1, Kind: report.KindDrift, Subject: r.Case, Model: r.Model, Status: report.ItemWarn, Direction: report.Higher,
			Rule: fmt.Sprintf("a case steady at N/N for %d+ green reports does not fall on unchanged tools", driftStreak), Reason: reason, New: cnt(r.Passed)})
	}
}

// slides warns when a suite score stayed within max-drop of the baseline
// but its drop against the best of the last K green reports has a bound
// beyond max-drop: small steps that add up (thresholds only move up).
func (e *evaluation) slides(hist []Historic) {
	nb := e.new.Behavior
	caseHash := map[string]string{}
	for _, c := range nb.Cases {
		caseHash[c.ID] = c.Hash
	}
	n := len(e.g.Items)
	for i := 0; i < n; i++ {
		it := e.g.Items[i]
		if it.Kind != report.KindSuite || it.Status != report.ItemPass {
			continue
		}
		var best *pairedDrop
		var bestRef report.ReportRef
		for _, h := range hist {
			pairs := e.historyPairs(h.Report, it.Model, it.Score, caseHash)
			if len(pairs) < 2 {
				continue
			}
			pd := pairedBound(pairs, it.Direction == report.Higher, e.p.alpha())
			if best == nil || pd.drop > best.drop {
				best, bestRef = &pd, h.Ref
			}
		}
		if best == nil || !beyond(best.bound, e.p.MaxDrop) {
			continue
		}
		e.add(report.GateItem{Layer: 1, Kind: report.KindSlide, Subject: it.Score, Model: it.Model, Score: it.Score, Status: report.ItemWarn,
			Direction: it.Direction, Drop: ptr(best.drop), Bound: ptr(best.bound), Pairs: best.n, MaxDrop: ptr(e.p.MaxDrop),
			Rule: fmt.Sprintf("no slide beyond max-drop %s against the best of the last %d green reports", num(e.p.MaxDrop), len(hist)),
			Reason: fmt.Sprintf("slow slide: within max-drop of the baseline, but %s against the best recent green report (commit %s, run %d), one-sided %s%% bound: at least %s",
				worse(best.drop), shortCommit(bestRef.Commit), bestRef.WorkflowRunID, num(e.p.Confidence*100), worse(best.bound))})
	}
}

// historyPairs pairs the new report's cases with an earlier report's for
// one model and score, when the two are comparable at all.
func (e *evaluation) historyPairs(h *report.Report, model, score string, caseHash map[string]string) []pair {
	hb := h.Behavior
	if hb == nil || h.ToolSurfaceHash != e.new.ToolSurfaceHash {
		return nil
	}
	if report.Judged(score) && (hb.JudgeModel != e.new.Behavior.JudgeModel || hb.RubricHash != e.new.Behavior.RubricHash) {
		return nil
	}
	if a, b := served(h, model), served(e.new, model); a != "" && b != "" && a != b {
		return nil
	}
	var pairs []pair
	for _, r := range e.new.Behavior.Results {
		if r.Model != model {
			continue
		}
		s, ok := findScore(r.Scores, score)
		if !ok || s.N == 0 {
			continue
		}
		hr, ok := resultFor(h, model, caseHash[r.Case])
		if !ok {
			continue
		}
		if hs, ok := findScore(hr.Scores, score); ok && hs.N > 0 {
			pairs = append(pairs, pair{base: hs.Count().Rate(), new: s.Count().Rate(), nBase: hs.N, nNew: s.N})
		}
	}
	return pairs
}

// resultFor finds a report's result for a model on the case with this
// definition hash.
func resultFor(r *report.Report, model, hash string) (report.CaseResult, bool) {
	if r.Behavior == nil {
		return report.CaseResult{}, false
	}
	id := ""
	for _, c := range r.Behavior.Cases {
		if c.Hash == hash {
			id = c.ID
			break
		}
	}
	if id == "" {
		return report.CaseResult{}, false
	}
	for _, res := range r.Behavior.Results {
		if res.Case == id && res.Model == model {
			return res, true
		}
	}
	return report.CaseResult{}, false
}

func served(r *report.Report, model string) string {
	for _, m := range r.Models {
		if m.ID == model {
			return m.Served
		}
	}
	return ""
}

func shortCommit(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	if c == "" {
		return "unknown"
	}
	return c
}
