package gate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// layer0 gates conformance. Checks are deterministic, so no statistics: a
// MUST check that passed N/N in the baseline and not now is a new failure.
func (e *evaluation) layer0() {
	nc := e.new.Conformance
	if nc == nil {
		return
	}
	var bc *report.Conformance
	if e.base != nil {
		bc = e.base.Conformance
		if bc == nil {
			e.g.Notes = append(e.g.Notes, "the baseline has no Layer 0 results: floors only for conformance")
		}
	}
	if nc.Verdict == report.ConformanceLegacy {
		e.legacy(bc)
		return
	}
	if bc != nil && bc.Verdict == report.ConformanceLegacy {
		e.g.Notes = append(e.g.Notes, "the baseline server spoke legacy MCP only: this is its first 2026-07-28 run, floors only for conformance")
		bc = nil
	}
	base := map[string]report.CheckResult{}
	if bc != nil {
		for _, r := range bc.Checks {
			base[r.ID] = r
		}
	}
	seen := map[string]bool{}
	for _, r := range nc.Checks {
		seen[r.ID] = true
		if r.Level != report.Must || r.Verdict == report.CheckSkipped {
			continue
		}
		need := floor(e.p.FloorMust, r.Runs)
		k := r.Held()
		if r.Verdict == report.CheckErrored {
			// The harness could not run it every time: not a pass, and
			// Passes may still count warned runs.
			k = min(k, r.Runs-r.Counts[report.CheckErrored])
		}
		now := report.Count{K: k, N: r.Runs}
		rule := fmt.Sprintf("MUST: ⌈%s·%d⌉ = %d of %d runs", num(e.p.FloorMust), r.Runs, need, r.Runs)
		b, inBase := base[r.ID]
		if k >= need {
			continue // met its floor: nothing to say
		}
		it := report.GateItem{Layer: 0, Kind: report.KindCheck, Subject: r.ID, Rule: rule, New: cnt(now), Direction: report.Higher, FloorRuns: intPtr(need)}
		switch {
		case r.Unjudged() && (!inBase || b.Verdict == report.CheckSkipped || b.Held() >= floor(e.p.FloorMust, b.Runs)):
			// Short of its floor only by runs the harness could not
			// judge: no run saw the server break the rule, so this is
			// not the server's failure, and not a pass either.
			it.Status = report.ItemError
			held := "passed"
			if r.Counts[report.CheckSkipped] > 0 {
				held = "passed or skipped (nothing to judge there)"
			}
			it.Reason = fmt.Sprintf("not judged: %d/%d %s, and the other %d run(s) errored (%s), which is no verdict on the rule either way; rerun once the cause is fixed", k, r.Runs, held, r.Runs-k, errorCause(r))
		case bc == nil:
			it.Status = report.ItemFail
			it.Reason = fmt.Sprintf("%d/%d is below its floor; no baseline to compare, floors only", k, r.Runs)
		case !inBase || b.Verdict == report.CheckSkipped:
			it.Status = report.ItemFail
			it.Reason = fmt.Sprintf("%d/%d is below its floor; the baseline did not run this check, floors only", k, r.Runs)
			e.unmatched(report.Unmatched{Layer: 0, Kind: report.KindCheck, Subject: r.ID, Side: "new", Reason: "not run in the baseline"})
		case b.Unjudged():
			// Below its floor in the baseline only by runs nobody could
			// judge: that says nothing of whether it passed, so a failure
			// now is not a known one.
			it.Status = report.ItemFail
			it.Baseline = cnt(report.Count{K: b.Held(), N: b.Runs})
			it.Reason = fmt.Sprintf("%d/%d is below its floor; the baseline did not judge this check (its runs errored), floors only", k, r.Runs)
		default:
			bk := b.Held()
			it.Baseline = cnt(report.Count{K: bk, N: b.Runs})
			if bk >= floor(e.p.FloorMust, b.Runs) {
				it.Status = report.ItemFail
				it.Reason = fmt.Sprintf("new failure: %d/%d now, %d/%d in the baseline (conformance is deterministic: one failed run is a regression)", k, r.Runs, bk, b.Runs)
			} else {
				it.Status = report.ItemKnown
				it.Reason = fmt.Sprintf("known failure: %d/%d now, already %d/%d in the baseline", k, r.Runs, bk, b.Runs)
			}
		}
		e.add(it)
	}
	if bc == nil {
		return
	}
	for _, b := range bc.Checks {
		if !seen[b.ID] && b.Level == report.Must && b.Verdict != report.CheckSkipped {
			e.unmatched(report.Unmatched{Layer: 0, Kind: report.KindCheck, Subject: b.ID, Side: "baseline", Reason: "ran in the baseline, not in this report"})
		}
	}
}

// legacy gates a server that does not speak 2026-07-28: staying legacy is
// no regression; falling back to legacy from a modern baseline is.
func (e *evaluation) legacy(bc *report.Conformance) {
	it := report.GateItem{Layer: 0, Kind: report.KindServer, Subject: "era", Rule: "a server that spoke 2026-07-28 keeps speaking it"}
	switch {
	case e.p.FailOnLegacy:
		it.Rule = "the server speaks 2026-07-28 (fail on legacy)"
		it.Status = report.ItemFail
		it.Reason = "the server speaks legacy MCP only: migrate to 2026-07-28; what to change is in the report's migration list (conformance.legacy.blockers)"
	case bc == nil:
		it.Status = report.ItemWarn
		it.Reason = "the server speaks legacy MCP only: no 2026-07-28 check ran (see the migration list); with no Layer 0 baseline this is not a regression"
	case bc.Verdict == report.ConformanceLegacy:
		it.Status = report.ItemPass
		it.Reason = "legacy in the baseline and now: no regression"
	default:
		it.Status = report.ItemFail
		it.Reason = fmt.Sprintf("the baseline server spoke %s; this one speaks legacy MCP only", bc.ProtocolVersion)
	}
	e.add(it)
}

// errorCause is the first line of r's error, clipped for an item's reason.
func errorCause(r report.CheckResult) string {
	msg := r.Outcome.Message
	if r.Outcome.Verdict != report.CheckErrored || msg == "" {
		return "the harness could not run it"
	}
	return clipCause(msg)
}

// clipCause is the first line of an error, quoted and clipped to fit an
// item's reason.
func clipCause(msg string) string {
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if r := []rune(msg); len(r) > 160 {
		msg = string(r[:157]) + "..."
	}
	return strconv.Quote(msg)
}
