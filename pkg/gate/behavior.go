package gate

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// caseKey pairs a result with the baseline's: the same model on the same
// case definition (by hash, so an edited case is a new case).
type caseKey struct{ model, hash string }

// l1 is Layer 1 prepared for comparison.
type l1 struct {
	nb, bb *report.Behavior
	// pairing is false when there is nothing to pair with: no baseline,
	// no Layer 1 in it, or another tool surface.
	pairing   bool
	judgeSame bool
	// unpaired says why no case pairs with the baseline ("" when cases
	// pair): the baseline ran no Layer 1, or how the tool surface
	// changed since it.
	unpaired string
	cases    map[string]report.Case // new cases by id
	base     map[caseKey]report.CaseResult
}

// SurfaceChangedNote starts the gate's note when the tool surface changed
// since the baseline: Layer 1 is then floors only.
const SurfaceChangedNote = "the tool surface changed since the baseline"

func (e *evaluation) prepareL1() *l1 {
	nb := e.new.Behavior
	l := &l1{nb: nb, cases: map[string]report.Case{}, base: map[caseKey]report.CaseResult{}}
	for _, c := range nb.Cases {
		l.cases[c.ID] = c
	}
	if e.base == nil {
		return l
	}
	l.bb = e.base.Behavior
	if l.bb == nil {
		l.unpaired = "the baseline ran no Layer 1"
		if e.replayApart {
			// Set aside, not missing: the replay note says why.
			l.unpaired = "the baseline's Layer 1 was not replayed from this run's cassette"
			return l
		}
		e.g.Notes = append(e.g.Notes, "the baseline has no Layer 1 results: floors only for behaviour")
		return l
	}
	if e.new.ToolSurfaceHash != e.base.ToolSurfaceHash {
		l.unpaired = SurfaceChangedNote
		if what := surfaceChanges(e.base, e.new); what != "" {
			l.unpaired += " (" + what + ")"
		}
		e.g.Notes = append(e.g.Notes, fmt.Sprintf("%s (%s → %s): cases pair only on the same tool surface, so behaviour is floors only", l.unpaired, short(e.base.ToolSurfaceHash), short(e.new.ToolSurfaceHash)))
		e.unmatched(report.Unmatched{Layer: 1, Kind: "toolSurface", Subject: "every case", Side: "new", Reason: "tool surface " + short(e.new.ToolSurfaceHash) + " now, " + short(e.base.ToolSurfaceHash) + " in the baseline"})
		return l
	}
	l.pairing = true
	l.judgeSame = l.nb.JudgeModel == l.bb.JudgeModel && l.nb.RubricHash == l.bb.RubricHash
	if !l.judgeSame {
		e.g.Notes = append(e.g.Notes, fmt.Sprintf("the judge changed since the baseline (model %q → %q, rubric %s → %s): judged scores and cases are not comparable", l.bb.JudgeModel, l.nb.JudgeModel, short(l.bb.RubricHash), short(l.nb.RubricHash)))
	}
	bcases := map[string]report.Case{}
	for _, c := range l.bb.Cases {
		bcases[c.ID] = c
	}
	for _, r := range l.bb.Results {
		l.base[caseKey{r.Model, bcases[r.Case].Hash}] = r
	}
	return l
}

func short(h string) string {
	if h == "" {
		return "(none)"
	}
	if len(h) > len(report.HashPrefix)+12 {
		return h[:len(report.HashPrefix)+12] + "…"
	}
	return h
}

func judged(r report.CaseResult) bool {
	for _, s := range r.Scores {
		if report.Judged(s.Name) {
			return true
		}
	}
	return false
}

// behavior gates Layer 1: each case × model against its floor and, when it
// fell, against the baseline; then each score × model over all cases.
func (e *evaluation) behavior() {
	if e.new.Behavior == nil {
		return
	}
	l := e.prepareL1()
	e.modelChanges(l)
	used := map[caseKey]bool{}
	for _, r := range l.nb.Results {
		c := l.cases[r.Case]
		key := caseKey{r.Model, c.Hash}
		br, matched := l.base[key]
		matched = matched && l.pairing
		if matched {
			used[key] = true
		} else if l.pairing && e.baseHasModel(l, r.Model) {
			e.unmatched(report.Unmatched{Layer: 1, Kind: report.KindCase, Subject: r.Case, Model: r.Model, Side: "new", Reason: "no baseline result for this case definition (new or edited case): floors only"})
		}
		e.caseItem(l, c, r, br, matched)
	}
	if l.pairing {
		// A case the run defines and left undecided (the budget ran out,
		// every run errored) was not removed or edited.
		undecided := map[[2]string]bool{}
		for _, inc := range l.nb.Inconclusive {
			undecided[[2]string{inc.Case, inc.Model}] = true
		}
		for _, br := range l.bb.Results {
			k := e.baseCaseKey(l, br)
			if !used[k] && e.newHasModel(br.Model) && e.inThisShard(br.Case, br.Model) {
				reason := "in the baseline, not run now (removed or edited case)"
				if c, ok := l.cases[br.Case]; ok && c.Hash == k.hash && undecided[[2]string{br.Case, br.Model}] {
					reason = "in the baseline; not decided now (see the inconclusive runs: the budget, or runs that errored)"
				}
				e.unmatched(report.Unmatched{Layer: 1, Kind: report.KindCase, Subject: br.Case, Model: br.Model, Side: "baseline", Reason: reason})
			}
		}
	}
	e.suites(l)
}

func (e *evaluation) baseCaseKey(l *l1, br report.CaseResult) caseKey {
	for _, c := range l.bb.Cases {
		if c.ID == br.Case {
			return caseKey{br.Model, c.Hash}
		}
	}
	return caseKey{br.Model, ""}
}

func (e *evaluation) baseHasModel(l *l1, model string) bool {
	for _, r := range l.bb.Results {
		if r.Model == model {
			return true
		}
	}
	return false
}

// inThisShard: the run is no shard, or the case × model is one of its
// units. A shard's gate is of its part: the baseline's other cases were
// run by the other shards, not removed or edited (the merge gates them).
func (e *evaluation) inThisShard(caseID, model string) bool {
	sh := e.new.Shard
	if sh == nil {
		return true
	}
	for _, u := range sh.Units {
		if u.Case == caseID && u.Model == model {
			return true
		}
	}
	return false
}

func (e *evaluation) newHasModel(model string) bool {
	for _, r := range e.new.Behavior.Results {
		if r.Model == model {
			return true
		}
	}
	return false
}

// modelChanges lists models only one side ran and models whose served
// version changed.
func (e *evaluation) modelChanges(l *l1) {
	if !l.pairing {
		return
	}
	newModels, baseModels := resultModels(l.nb), resultModels(l.bb)
	for _, m := range newModels {
		if !contains(baseModels, m) {
			e.unmatched(report.Unmatched{Layer: 1, Kind: report.KindModel, Subject: m, Model: m, Side: "new", Reason: "the baseline did not run this model: floors only"})
		} else if from, to, ok := e.servedChanged(m); ok {
			e.add(report.GateItem{Layer: 1, Kind: report.KindModel, Subject: m, Model: m, Status: report.ItemNotComparable,
				Rule: "compare a model only with itself", Reason: fmt.Sprintf("served as %q in the baseline, %q now: its scores are shown without a delta, floors only", from, to)})
		}
	}
	for _, m := range baseModels {
		// A shard runs part of the models: the others are the other
		// shards', not dropped (the merge gates the whole).
		if !contains(newModels, m) && e.new.Shard == nil {
			e.unmatched(report.Unmatched{Layer: 1, Kind: report.KindModel, Subject: m, Model: m, Side: "baseline", Reason: "in the baseline, not run now"})
		}
	}
}

func resultModels(b *report.Behavior) []string {
	var out []string
	for _, r := range b.Results {
		if !contains(out, r.Model) {
			out = append(out, r.Model)
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// caseItem judges one case × model: its floor first, then whether a fall
// below it is new and clear.
func (e *evaluation) caseItem(l *l1, c report.Case, r, br report.CaseResult, matched bool) {
	f := e.p.floorFor(c.Kind)
	need := floor(f, r.Passed.N)
	it := report.GateItem{Layer: 1, Kind: report.KindCase, Subject: r.Case, Model: r.Model, Direction: report.Higher,
		Rule: fmt.Sprintf("%s case: ⌈%s·%d⌉ = %d of %d runs", c.Kind, num(f), r.Passed.N, need, r.Passed.N), New: cnt(r.Passed), FloorRuns: intPtr(need)}
	why := ""
	comparable := matched
	if matched {
		if from, to, changed := e.servedChanged(r.Model); changed {
			comparable, why = false, fmt.Sprintf("served model changed (%s → %s)", from, to)
		} else if !l.judgeSame && judged(r) {
			comparable, why = false, "the judge or rubric changed"
		}
	}
	if !matched && l.unpaired != "" {
		// Not a new or edited case: every case is unpaired because a
		// tool's description, schema or name changed, or the baseline
		// ran no Layer 1.
		why = l.unpaired
	}
	if comparable {
		it.Baseline = cnt(br.Passed)
	} else {
		it.NotComparable = why
	}
	baseMet := matched && br.Passed.K >= floor(f, br.Passed.N)
	if matched && !baseMet && br.ShortOnlyByErrors() {
		// The baseline fell short only by runs nobody could judge: it
		// says nothing of the case, so a fall now is no known failure,
		// and its count is nothing to compare with.
		baseMet, comparable, why = true, false, "the baseline did not judge it (its runs errored)"
		it.Baseline, it.NotComparable = nil, why
	}
	now := fmt.Sprintf("%d/%d", r.Passed.K, r.Passed.N)
	switch {
	case r.Passed.K >= need:
		it.Status = report.ItemPass
		it.Reason = now + " meets its floor"
		if !comparable && matched {
			it.Status = report.ItemNotComparable
			it.Reason += "; not comparable with the baseline: " + why
		}
		e.countExact(comparable, br, r)
	case matched && !baseMet:
		e.countExact(comparable, br, r)
		it.Status = report.ItemKnown
		it.Baseline = cnt(br.Passed)
		it.Reason = fmt.Sprintf("known failure: %s now, already %d/%d (below its floor) in the baseline", now, br.Passed.K, br.Passed.N)
	case r.ShortOnlyByErrors():
		// Short of its floor only by runs the harness or the provider
		// could not complete: no run showed the model or the server
		// fall short, so this is no failure, and no pass either.
		it.Status = report.ItemError
		it.Reason = fmt.Sprintf("not judged: %s passed, and the other %d run(s) errored (%s), which is no verdict on the model either way; rerun once the cause is fixed", now, r.Passed.N-r.Passed.K, runErrorCause(r))
	case !matched:
		it.Status = report.ItemFail
		if e.base == nil {
			it.Reason = now + " is below its floor; no baseline, floors only"
		} else if l.unpaired != "" {
			it.Reason = now + " is below its floor; not compared, as " + l.unpaired + ": floors only"
		} else {
			it.Reason = now + " is below its floor; not in the baseline, floors only"
		}
	case !comparable:
		it.Status = report.ItemFail
		it.Reason = fmt.Sprintf("%s is below its floor; not comparable with the baseline (%s), floors only", now, why)
	default:
		idx := e.add(it)
		e.exact = append(e.exact, exactTest{
			item: idx, p: fisherLess(br.Passed.K, br.Passed.N, r.Passed.K, r.Passed.N), minP: fisherMin(br.Passed.K, br.Passed.N, r.Passed.K, r.Passed.N),
			failReason:  fmt.Sprintf("new failure: %s now, %d/%d in the baseline, a clear fall", now, br.Passed.K, br.Passed.N),
			noiseStatus: report.ItemWarn,
			noiseReason: fmt.Sprintf("%s is below its floor, but the fall from %d/%d is within run-to-run noise: not a new red", now, br.Passed.K, br.Passed.N),
		})
		return
	}
	e.add(it)
}

// countExact adds a compared case that needs no decision to the size of
// the exact-test family. Every compared case belongs to it, whatever its
// baseline did: counting only cases that met their floor in the baseline
// would pick the family by the data and let false fails through (the
// simulation in sim_test.go showed 9% at 50 cases × 5 runs at 0.8).
func (e *evaluation) countExact(comparable bool, br, r report.CaseResult) {
	if comparable {
		e.exact = append(e.exact, exactTest{item: -1, minP: fisherMin(br.Passed.K, br.Passed.N, r.Passed.K, r.Passed.N)})
	}
}

// runErrorCause is the first errored run's reason, clipped for an item's
// reason.
func runErrorCause(r report.CaseResult) string {
	for _, run := range r.Runs {
		if run.Outcome == report.RunError && len(run.Reasons) > 0 {
			return clipCause(run.Reasons[0])
		}
	}
	return "the runs' reasons are in the report"
}

// surfaceChanges names the tools that differ between two reports' tool
// surfaces, as far as the reports tell: the names listed, and each tool's
// tokens as sent to a model (a description or schema that changed changes
// them, nearly always). "" when they do not tell.
func surfaceChanges(base, now *report.Report) string {
	tokens := func(r *report.Report) map[string]int {
		out := map[string]int{}
		if c := r.ToolTokens.Primary(); c != nil {
			for _, t := range c.Tools {
				out[t.Name] = t.Tokens
			}
		}
		return out
	}
	bt, nt := tokens(base), tokens(now)
	var parts []string
	names := func(r *report.Report, t map[string]int) []string {
		if len(r.Tools) > 0 {
			return r.Tools
		}
		out := make([]string, 0, len(t))
		for n := range t {
			out = append(out, n)
		}
		sort.Strings(out)
		return out
	}
	bn, nn := names(base, bt), names(now, nt)
	var changed, gone, added []string
	for _, n := range nn {
		switch {
		case !slices.Contains(bn, n):
			added = append(added, n)
		case bt[n] != 0 && nt[n] != 0 && bt[n] != nt[n]:
			changed = append(changed, n)
		}
	}
	for _, n := range bn {
		if !slices.Contains(nn, n) {
			gone = append(gone, n)
		}
	}
	for _, p := range []struct {
		what  string
		names []string
	}{{"changed", changed}, {"new", added}, {"gone", gone}} {
		if len(p.names) > 0 {
			shown := p.names[:min(len(p.names), 5)]
			more := ""
			if len(p.names) > 5 {
				more = fmt.Sprintf(" and %d more", len(p.names)-5)
			}
			parts = append(parts, p.what+": "+strings.Join(shown, ", ")+more)
		}
	}
	return strings.Join(parts, "; ")
}
