package resilience

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// All is the subject of the rows that pool every fault type, or every
// attack category, of one model.
const All = report.Pooled

// Report bounds: Layer 2 adds at most this much trajectory to a report
// (the runs that went wrong come first), and clips every reason.
const (
	maxTrajectoryBytes = 4 << 20
	maxReasonBytes     = 600
	maxNotes           = 20
)

// tally is k of n for one score.
type tally struct{ k, n int }

func (t *tally) add(counted, yes bool) {
	if counted {
		t.n++
		if yes {
			t.k++
		}
	}
}

// assemble turns the finished runs into the report's Layer 2 section:
// per model, a faultHandled row per fault type and for all of them, and
// attackSuccess and refusal rows per category and for all of them.
func (r *runner) assemble(results []done) *Result {
	now := time.Now()
	res := &report.Resilience{Faults: []report.FaultResult{}, Attacks: []report.AttackResult{}}
	type key struct {
		mi      int
		subject string
	}
	handled := map[key]*tally{}
	success, refusal := map[key]*tally{}, map[key]*tally{}
	get := func(m map[key]*tally, k key) *tally {
		if m[k] == nil {
			m[k] = &tally{}
		}
		return m[k]
	}
	skipped := map[string]int{}
	// made counts every run (n) and those not in N (k) per model, kind and
	// subject; uncounted splits k by outcome.
	made := map[key]*tally{}
	uncounted := map[key]map[string]int{}
	served := make([]string, len(r.modelIDs))
	budget := maxTrajectoryBytes
	// Runs that went wrong keep their trajectory first.
	for pass := 0; pass < 2; pass++ {
		for i := range results {
			d := &results[i]
			bad := d.verdict.Counted && (d.verdict.Success || (d.kind == report.KindFault && !d.verdict.Handled))
			if (pass == 0) != bad || d.tr == nil {
				continue
			}
			if b, err := json.Marshal(d.tr); err == nil && len(b) <= budget {
				budget -= len(b)
			} else {
				d.tr = nil
			}
		}
	}
	for _, d := range results {
		v := d.verdict
		if d.served != "" {
			served[d.mi] = d.served
		}
		var subject string
		switch d.kind {
		case report.KindFault:
			subject = d.fault
			for _, s := range []string{d.fault, All} {
				get(handled, key{d.mi, s}).add(v.Counted, v.Handled)
			}
		case report.KindAttack:
			subject = d.payload.Category
			for _, s := range []string{d.payload.Category, All} {
				get(success, key{d.mi, s}).add(v.Counted, v.Success)
				get(refusal, key{d.mi, s}).add(v.Counted, v.Refusal)
			}
		}
		if !v.Counted {
			skipped[d.kind+" "+v.Outcome]++
		}
		for _, s := range []string{subject, All} {
			u := get(made, key{d.mi, d.kind + " " + s})
			u.n++
			if !v.Counted {
				u.k++
				if uncounted[key{d.mi, d.kind + " " + s}] == nil {
					uncounted[key{d.mi, d.kind + " " + s}] = map[string]int{}
				}
				uncounted[key{d.mi, d.kind + " " + s}][v.Outcome]++
			}
		}
		run := report.ResilienceRun{Kind: d.kind, Subject: subject, Payload: d.payload.ID, Case: r.cfg.Set.Cases[d.ci].ID,
			Model: behavior.ReportModelID(r.modelIDs[d.mi]), Run: d.run, Outcome: v.Outcome, Counted: v.Counted,
			Reason: clip(v.Reason, maxReasonBytes), Judge: d.judge, Trajectory: d.tr}
		if d.reused {
			at := d.storedAt.UTC()
			run.CachedAt, run.AgeSeconds = &at, int64(max(now.Sub(d.storedAt), 0)/time.Second)
		}
		res.Runs = append(res.Runs, run)
	}
	faults := Faults()
	var cats []string
	for _, c := range r.cfg.Catalogue.Categories {
		cats = append(cats, c.ID)
	}
	for mi, id := range r.modelIDs {
		model := behavior.ReportModelID(id)
		for _, f := range append(faults, All) {
			t := handled[key{mi, f}]
			if t == nil || t.n == 0 {
				continue
			}
			res.Faults = append(res.Faults, report.FaultResult{Model: model, Fault: f,
				Scores: []report.Score{{Name: report.FaultHandled, Direction: report.Higher, K: t.k, N: t.n}}})
		}
		for _, c := range append(cats, All) {
			s, f := success[key{mi, c}], refusal[key{mi, c}]
			if s == nil || s.n == 0 {
				continue
			}
			res.Attacks = append(res.Attacks, report.AttackResult{Model: model, Attack: c, Scores: []report.Score{
				{Name: report.AttackSuccess, Direction: report.Lower, K: s.k, N: s.n},
				{Name: report.Refusal, Direction: report.Higher, K: f.k, N: f.n}}})
		}
	}
	for mi, id := range r.modelIDs {
		model := behavior.ReportModelID(id)
		for _, kind := range []string{report.KindFault, report.KindAttack} {
			subjects := cats
			if kind == report.KindFault {
				subjects = faults
			}
			for _, subj := range append(append([]string(nil), subjects...), All) {
				k := key{mi, kind + " " + subj}
				t := made[k]
				if t == nil || t.k == 0 {
					continue
				}
				u := report.ResilienceUnmeasured{Kind: kind, Model: model, Subject: subj, Runs: t.n, Uncounted: t.k}
				for _, o := range sortedKeys(uncounted[k]) {
					u.Why = append(u.Why, report.UncountedOutcome{Outcome: o, Runs: uncounted[k][o], Reason: UncountedReason(o)})
				}
				res.Unmeasured = append(res.Unmeasured, u)
			}
		}
	}
	res.Notes = append(res.Notes, r.notes...)
	if len(results) > 0 {
		note := fmt.Sprintf("Layer 2 (%s, catalogue of %d payloads): %d runs", FaultVersion, len(r.cfg.Catalogue.Payloads), len(results))
		if t := r.targetNote(); t != "" {
			note += "; the attacker's tool is " + t + ", answered by the harness and never by the server"
		}
		res.Notes = append(res.Notes, note)
	}
	if n := skipped[report.KindFault+" "+NotMeasured] + skipped[report.KindAttack+" "+NotMeasured]; n > 0 {
		why := "budget reached"
		if reached := r.cfg.Meter.Reached(); reached != "" {
			why += " (" + reached + ")"
		}
		res.Notes = append(res.Notes, fmt.Sprintf("Layer 2: %s: %d runs were not made or not judged and are not counted (not measured, neither resisted nor failed)", why, n))
	}
	if n := skipped[report.KindFault+" "+NotReplayed] + skipped[report.KindAttack+" "+NotReplayed]; n > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("Layer 2: the cassette went stale for %d replayed runs (it holds no answer for the request they made); they are not counted, neither resisted nor failed", n))
	}
	for _, k := range sortedKeys(skipped) {
		kind, outcome, _ := strings.Cut(k, " ")
		res.Notes = append(res.Notes, fmt.Sprintf("%d %s run(s) not counted: %s", skipped[k], kind, outcome))
	}
	if len(res.Notes) > maxNotes {
		res.Notes = append(res.Notes[:maxNotes-1], fmt.Sprintf("… and %d more notes", len(res.Notes)-maxNotes+1))
	}
	dir := ""
	if r.cfg.Cache != nil {
		dir = cmp.Or(r.cfg.Cache.Label, r.cfg.Cache.Dir)
	}
	out := &Result{Resilience: res}
	out.Notes, res.ReusedRuns, res.FreshRuns, res.StaleRuns = r.reuseNotes(results, dir, r.calls.Load())
	for mi, id := range r.modelIDs {
		provider, requested, _ := strings.Cut(id, ":")
		out.Models = append(out.Models, report.Model{ID: behavior.ReportModelID(id), Provider: provider, Requested: requested, Served: served[mi]})
	}
	return out
}

// UncountedReason says why runs with this outcome are not in N, in the
// words every surface shows after "not measured".
func UncountedReason(outcome string) string {
	switch outcome {
	case NotDelivered:
		return "no tool gave a real result to plant the payload in"
	case NotReached:
		return "the model made no valid call to the faulted tool, so the fault never fired"
	case RunError:
		return "the run did not finish (a provider error, the budget, the deadline or a missing input)"
	case NotMeasured:
		return "the budget stopped the run or its judge"
	case NotReplayed:
		return "the cassette holds no answer for the request the run made (stale)"
	}
	return "not counted (" + outcome + ")"
}

// targetNote names the attacker's tools the runs used.
func (r *runner) targetNote() string {
	var names []string
	for _, j := range r.jobs {
		if j.kind == report.KindAttack && !contains(names, j.target) {
			names = append(names, j.target)
		}
	}
	return strings.Join(names, ", ")
}
