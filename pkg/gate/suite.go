package gate

import (
	"fmt"
	"math"
	"sort"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// suiteComparison is one score × model waiting for the Bonferroni divisor.
type suiteComparison struct {
	item   int
	pairs  []pair
	dir    report.Direction
	waived int
}

// suites compares every score × model with the case as the unit, paired
// with the baseline's same cases, in the score's good direction.
func (e *evaluation) suites(l *l1) {
	var pending []suiteComparison
	for _, model := range resultModels(l.nb) {
		for _, name := range scoreNames(l.nb, model) {
			var rates []float64
			var runs []int
			var pairs []pair
			var baseSum float64
			var dir report.Direction
			waived := 0
			for _, r := range l.nb.Results {
				s, ok := findScore(r.Scores, name)
				if r.Model != model || !ok || s.N == 0 {
					continue
				}
				if e.caseWaived(r.Case, model) {
					// A waived case's failures are accepted: its runs
					// must not fail the suite score in their stead.
					waived++
					continue
				}
				dir = s.Direction
				rates = append(rates, s.Count().Rate())
				runs = append(runs, s.N)
				if !l.pairing {
					continue
				}
				br, ok := l.base[caseKey{model, l.cases[r.Case].Hash}]
				if !ok {
					continue
				}
				if bs, ok := findScore(br.Scores, name); ok && bs.N > 0 {
					pairs = append(pairs, pair{base: bs.Count().Rate(), new: s.Count().Rate(), nBase: bs.N, nNew: s.N})
					baseSum += bs.Count().Rate()
				}
			}
			if len(rates) == 0 {
				continue
			}
			mean, lo, hi := meanInterval(rates, runs, e.p.alpha())
			it := report.GateItem{Layer: 1, Kind: report.KindSuite, Subject: name, Model: model, Score: name, Direction: dir,
				Value: ptr(mean), Low: ptr(lo), High: ptr(hi), Pairs: len(pairs), MaxDrop: ptr(e.p.MaxDrop),
				Rule: fmt.Sprintf("%s is better; a drop whose one-sided bound exceeds max-drop %s fails, one whose bound exceeds 0 but not max-drop is inconclusive", dir, num(e.p.MaxDrop))}
			from, to, served := e.servedChanged(model)
			switch {
			case e.base == nil:
				it.Status, it.Reason = report.ItemInfo, "no baseline: shown, not compared"
			case !l.pairing:
				it.Status, it.Reason = report.ItemInfo, "no case pairs with the baseline: shown, not compared"
			case served:
				it.NotComparable = fmt.Sprintf("served model changed (%s → %s)", from, to)
				it.Status, it.Reason = report.ItemNotComparable, it.NotComparable+": no delta"
			case report.Judged(name) && !l.judgeSame:
				it.NotComparable = "the judge or rubric changed"
				it.Status, it.Reason = report.ItemNotComparable, it.NotComparable+": no delta"
			case len(pairs) == 0:
				it.Status, it.Reason = report.ItemInfo, "no case pairs with the baseline: shown, not compared"
			default:
				it.BaselineValue = ptr(baseSum / float64(len(pairs)))
				pending = append(pending, suiteComparison{item: e.add(it), pairs: pairs, dir: dir, waived: waived})
				continue
			}
			it.Reason += waivedOut(waived)
			e.add(it)
		}
	}
	if len(pending) == 0 {
		return
	}
	// Bonferroni across the scores compared: the bounds hold together at
	// the policy's confidence, so five scores × three models do not give
	// fifteen chances of a false red.
	alpha := e.p.alpha() / float64(len(pending))
	for _, sc := range pending {
		it := &e.g.Items[sc.item]
		pd := pairedBound(sc.pairs, sc.dir == report.Higher, alpha)
		it.Drop, it.FamilySize = ptr(pd.drop), len(pending)
		if pd.n >= 2 {
			it.Bound = ptr(pd.bound)
		}
		conf := fmt.Sprintf("one-sided %s%% bound", num(100*(1-alpha)))
		if len(pending) > 1 {
			conf += fmt.Sprintf(" (Bonferroni over %d scores)", len(pending))
		}
		switch {
		case !beyond(pd.drop, e.p.MaxDrop):
			it.Status = report.ItemPass
			it.Reason = fmt.Sprintf("%s over %d paired cases: within max-drop %s", worse(pd.drop), pd.n, num(e.p.MaxDrop))
		case pd.n >= 2 && beyond(pd.bound, e.p.MaxDrop):
			it.Status = report.ItemFail
			it.Reason = fmt.Sprintf("regression: %s over %d paired cases; %s: at least %s > max-drop %s", worse(pd.drop), pd.n, conf, worse(pd.bound), num(e.p.MaxDrop))
		case pd.n >= 2 && !beyond(pd.bound, 0):
			// A point drop beyond max-drop whose bound does not even
			// exclude zero is what an unchanged suite shows by chance a
			// quarter of the time at 20 × 5: calling it inconclusive made
			// most A/A runs amber (docs/gate.md, "Measured error rates").
			it.Status = report.ItemPass
			it.Reason = fmt.Sprintf("%s over %d paired cases, beyond max-drop %s, but its %s is %s: within run-to-run noise at this confidence, not shown to be worse (the case rows say which cases moved)", worse(pd.drop), pd.n, num(e.p.MaxDrop), conf, worse(pd.bound))
		default:
			it.Status = report.ItemInconclusive
			bound := "unknown with one case"
			if pd.n >= 2 {
				bound = "at least " + worse(pd.bound)
			}
			it.Reason = fmt.Sprintf("%s over %d paired cases, beyond max-drop %s; its %s is %s: worse, but not clearly beyond max-drop (more runs or cases would tell)", worse(pd.drop), pd.n, num(e.p.MaxDrop), conf, bound)
		}
		it.Reason += waivedOut(sc.waived)
	}
}

// waivedOut says how many waived cases a suite score left out.
func waivedOut(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "; 1 waived case left out"
	}
	return fmt.Sprintf("; %d waived cases left out", n)
}

// worse words a paired drop (positive: the score moved the wrong way,
// whichever its direction) so that no reader meets "drop +x" for a rise or
// a sign to decode; a difference of rates is never beyond 100 points, so
// a bound past it (a t bound on few cases) is clipped there.
func worse(drop float64) string {
	pts := math.Min(100, math.Abs(100*drop))
	switch {
	case pts < 0.05:
		return "no change"
	case drop > 0:
		return fmt.Sprintf("%.1f pts worse", pts)
	}
	return fmt.Sprintf("%.1f pts better", pts)
}

// scoreOrder is the order scores are listed in; unknown ones follow,
// sorted.
func scoreOrder() []string {
	return []string{report.ToolSelection, report.ArgumentCorrectness, report.SequenceOrder, report.OverTrigger, report.TaskCompletion}
}

func scoreNames(b *report.Behavior, model string) []string {
	seen := map[string]bool{}
	var extra []string
	for _, r := range b.Results {
		if r.Model != model {
			continue
		}
		for _, s := range r.Scores {
			if !seen[s.Name] {
				seen[s.Name] = true
				if _, known := report.DirectionOf(s.Name); !known {
					extra = append(extra, s.Name)
				}
			}
		}
	}
	var out []string
	for _, n := range scoreOrder() {
		if seen[n] {
			out = append(out, n)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func findScore(scores []report.Score, name string) (report.Score, bool) {
	for _, s := range scores {
		if s.Name == name {
			return s, true
		}
	}
	return report.Score{}, false
}
