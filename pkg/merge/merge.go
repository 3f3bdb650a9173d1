// Package merge joins the reports of a sharded run (`mcp-eval run --shard
// i/n`) into the one report the run would have written unsharded. It
// reads reports only: each shard is checked against the others (same
// commit, server, tool surface, golden set, models, policy and baseline;
// disjoint units that together make the whole), and a mismatch is an
// error that names the shard's file. The merged report is not gated: the
// caller gates it once, so that the cost gate sees the run's total.
package merge

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Shard is one shard's report and where it was read from (the name an
// error gives it).
type Shard struct {
	Name   string
	Report *report.Report
}

// Result is the merged report, ungated, with what the gate needs from the
// shards.
type Result struct {
	Report *report.Report
	// Policy is the gate policy every shard recorded (nil: none was
	// gated); Baseline the baseline every shard balanced on (nil: none).
	Policy   *report.GatePolicy
	Baseline *report.ReportRef
	// Notes are the shards' gate notes, once each, and what the merge
	// says about itself.
	Notes []string
}

// Distribution summarises latency samples (milliseconds) into a row's
// percentiles, maximum and histogram: telemetry.Distribution, given by the
// caller so that this package reads reports only and the percentile rule
// stays in one place.
type Distribution func(samples []float64) (p50, p95 *float64, maxMs float64, hist []report.Bin)

// Merge checks the shards against each other and joins them; dist
// recomputes the latency rows from their samples.
func Merge(shards []Shard, dist Distribution) (*Result, error) {
	if len(shards) == 0 {
		return nil, errors.New("no shard reports to merge")
	}
	if dist == nil {
		return nil, errors.New("merge: no Distribution to recompute latency with")
	}
	if err := checkSet(shards); err != nil {
		return nil, err
	}
	sort.SliceStable(shards, func(i, j int) bool { return shards[i].Report.Shard.Index < shards[j].Report.Shard.Index })
	first := shards[0]
	if err := checkSame(shards); err != nil {
		return nil, err
	}
	out := &report.Report{SchemaVersion: report.SchemaVersion, Run: first.Report.Run, Server: first.Report.Server,
		ToolSurfaceHash: first.Report.ToolSurfaceHash, Models: []report.Model{}}
	res := &Result{Report: out, Baseline: first.Report.Shard.Baseline}
	if first.Report.Gate != nil {
		p := first.Report.Gate.Policy
		res.Policy = &p
	}
	for _, s := range shards {
		r := s.Report
		if r.Run.StartedAt.Before(out.Run.StartedAt) {
			out.Run.StartedAt = r.Run.StartedAt
		}
		if r.Run.FinishedAt.After(out.Run.FinishedAt) {
			out.Run.FinishedAt = r.Run.FinishedAt
		}
		if out.Server.Name == "" {
			out.Server = r.Server
		}
		// The tool list and its tokens are of the one surface every shard
		// listed (checkSame): without them the gate of a merged report,
		// and of the next run against it as the baseline, took every tool
		// for gone, then for new.
		if out.Tools == nil && r.Tools != nil {
			out.Tools = slices.Clone(r.Tools)
		}
		if out.ToolTokens == nil && r.ToolTokens != nil {
			tt := *r.ToolTokens
			out.ToolTokens = &tt
		}
		if r.Conformance != nil {
			if out.Conformance != nil {
				return nil, fmt.Errorf("%s: shard %d/%d has Layer 0 results, and so has an earlier shard: Layer 0 runs in shard 1 only", s.Name, r.Shard.Index, r.Shard.Count)
			}
			out.Conformance = r.Conformance
		}
	}
	out.Models = mergeModels(shards, res)
	out.Behavior = mergeBehavior(shards)
	out.Resilience = mergeResilience(shards)
	out.Spend = mergeSpend(shards)
	out.Replay = mergeReplay(shards)
	out.Telemetry = mergeTelemetry(shards, dist)
	// A note every shard wrote is said once; one only some shards wrote
	// is about their part of the run (how much of it the cache held, or
	// that a shard had nothing to gate), so it names them.
	in := map[string][]string{}
	var order []string
	for _, s := range shards {
		if s.Report.Gate == nil {
			continue
		}
		for _, n := range s.Report.Gate.Notes {
			if strings.HasPrefix(n, "shard ") || slices.Contains(in[n], s.Name) {
				continue // the shard's own view
			}
			if len(in[n]) == 0 {
				order = append(order, n)
			}
			in[n] = append(in[n], s.Name)
		}
	}
	for _, n := range order {
		if len(in[n]) == len(shards) {
			res.Notes = append(res.Notes, n)
		} else {
			res.Notes = append(res.Notes, fmt.Sprintf("shard %s: %s", strings.Join(in[n], ", "), n))
		}
	}
	names := make([]string, len(shards))
	for i, s := range shards {
		names[i] = s.Name
	}
	res.Notes = append(res.Notes, fmt.Sprintf("merged from %d shards (%s); budget caps applied per shard, the cost gate to the total", len(shards), strings.Join(names, ", ")))
	return res, nil
}

// checkSet: every shard is one of the same n, each index once, their units
// disjoint and together the run's.
func checkSet(shards []Shard) error {
	for _, s := range shards {
		if why := s.Report.Run.Untested; why != "" {
			// Its units were never run: a merge would be a run with a
			// hole in it, so the shard is named with its reason.
			which := "a shard"
			if sh := s.Report.Shard; sh != nil {
				which = fmt.Sprintf("shard %d/%d", sh.Index, sh.Count)
			}
			return fmt.Errorf("%s: %s could not test the server, so there is nothing of it to merge (%s): fix what stopped it and run that shard again", s.Name, which, why)
		}
		if s.Report.Shard == nil {
			return fmt.Errorf("%s is not a shard's report (it has no shard section): run each shard with --shard i/n", s.Name)
		}
	}
	n, total := shards[0].Report.Shard.Count, shards[0].Report.Shard.Total
	byIndex := map[int]string{}
	owner := map[report.ShardUnit]string{}
	units := 0
	for _, s := range shards {
		sh := s.Report.Shard
		switch {
		case sh.Count != n:
			return fmt.Errorf("%s is shard %d/%d, but %s is one of %d shards: merge the shards of one run", s.Name, sh.Index, sh.Count, shards[0].Name, n)
		case sh.Total != total:
			return fmt.Errorf("%s split %d units, but %s split %d: the shards were not made from the same golden set and models", s.Name, sh.Total, shards[0].Name, total)
		case byIndex[sh.Index] != "":
			return fmt.Errorf("shard %d/%d is given twice: %s and %s", sh.Index, n, byIndex[sh.Index], s.Name)
		}
		byIndex[sh.Index] = s.Name
		for _, u := range sh.Units {
			if o, dup := owner[u]; dup {
				return fmt.Errorf("%s and %s both ran case %s × %s: the shards were split differently (same --shard n, golden set, models and baseline?)", o, s.Name, u.Case, u.Model)
			}
			owner[u] = s.Name
			units++
		}
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if byIndex[i] == "" {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("shard %s is missing (given: %s): merge the report of every shard", strings.Join(missing, ", "), strings.Join(sortedNames(byIndex), ", "))
	}
	if units != total {
		return fmt.Errorf("the shards ran %d of the run's %d case × model units: a shard's report is incomplete", units, total)
	}
	return nil
}

func sortedNames(m map[int]string) []string {
	var idx []int
	for i := range m {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = m[i]
	}
	return out
}

// checkSame: the shards ran the same thing on the same server, and
// would gate it the same way.
func checkSame(shards []Shard) error {
	a := shards[0]
	for _, s := range shards[1:] {
		ra, rb := a.Report, s.Report
		mismatch := func(what string, x, y any) error {
			return fmt.Errorf("%s (shard %d/%d) does not match %s (shard %d/%d): %s %v, not %v; merge the shards of one run",
				s.Name, rb.Shard.Index, rb.Shard.Count, a.Name, ra.Shard.Index, ra.Shard.Count, what, y, x)
		}
		switch {
		case ra.Run.Commit != rb.Run.Commit:
			return mismatch("commit", ra.Run.Commit, rb.Run.Commit)
		case ra.Server.Name != "" && rb.Server.Name != "" && (ra.Server.Name != rb.Server.Name || ra.Server.Version != rb.Server.Version):
			return mismatch("serverInfo", ra.Server.Name+" "+ra.Server.Version, rb.Server.Name+" "+rb.Server.Version)
		case ra.ToolSurfaceHash != rb.ToolSurfaceHash:
			return mismatch("tool-surface hash", ra.ToolSurfaceHash, rb.ToolSurfaceHash)
		case goldenHash(ra) != goldenHash(rb):
			return mismatch("golden-set hash", goldenHash(ra), goldenHash(rb))
		case !reflect.DeepEqual(modelIDs(ra), modelIDs(rb)):
			return mismatch("models", modelIDs(ra), modelIDs(rb))
		case !reflect.DeepEqual(policy(ra), policy(rb)):
			return mismatch("gate policy", policyText(ra), policyText(rb))
		case !reflect.DeepEqual(baseline(ra), baseline(rb)):
			return mismatch("baseline", baselineText(ra), baselineText(rb))
		case replayHash(ra) != replayHash(rb):
			return mismatch("cassette", cmp.Or(replayHash(ra), "live models"), cmp.Or(replayHash(rb), "live models"))
		}
		if ba, bb := ra.Behavior, rb.Behavior; (ba == nil) != (bb == nil) {
			return mismatch("Layer 1", ba != nil, bb != nil)
		} else if ba != nil && (ba.RunsPerCase != bb.RunsPerCase || ba.JudgeModel != bb.JudgeModel || ba.RubricHash != bb.RubricHash) {
			return mismatch("runs per case, judge and rubric", fmt.Sprint(ba.RunsPerCase, " ", ba.JudgeModel, " ", ba.RubricHash), fmt.Sprint(bb.RunsPerCase, " ", bb.JudgeModel, " ", bb.RubricHash))
		}
		if (ra.Resilience == nil) != (rb.Resilience == nil) {
			return mismatch("Layer 2", ra.Resilience != nil, rb.Resilience != nil)
		}
		if ta, tb := ra.Telemetry, rb.Telemetry; (ta == nil) != (tb == nil) {
			return mismatch("Layer 3", ta != nil, tb != nil)
		} else if ta != nil && ta.Prices != "" && tb.Prices != "" && ta.Prices != tb.Prices {
			return mismatch("price table", ta.Prices, tb.Prices)
		}
	}
	return nil
}

func goldenHash(r *report.Report) string {
	if r.Behavior == nil {
		return ""
	}
	return r.Behavior.GoldenSetHash
}

func modelIDs(r *report.Report) []string {
	ids := []string{}
	for _, m := range r.Models {
		ids = append(ids, m.ID)
	}
	return ids
}

// policy is the recorded policy; the text is how a source wrote it and
// may differ in spelling, so the values decide.
func policy(r *report.Report) *report.GatePolicy {
	if r.Gate == nil {
		return nil
	}
	p := r.Gate.Policy
	p.Text = ""
	return &p
}

func policyText(r *report.Report) string {
	if r.Gate == nil {
		return "(not gated)"
	}
	b, _ := json.Marshal(policy(r))
	return string(b)
}

// baseline is the ref without its path: shards download the same
// artifact to wherever they like.
func baseline(r *report.Report) *report.ReportRef {
	if r.Shard.Baseline == nil {
		return nil
	}
	b := *r.Shard.Baseline
	b.Path = ""
	b.FinishedAt = b.FinishedAt.UTC()
	return &b
}

func baselineText(r *report.Report) string {
	b := r.Shard.Baseline
	if b == nil {
		return "(none)"
	}
	return fmt.Sprintf("%s (commit %s, run %d)", b.Path, b.Commit, b.WorkflowRunID)
}

// mergeModels lists each model once, with the version a shard saw served;
// shards served different versions is noted, not hidden.
func mergeModels(shards []Shard, res *Result) []report.Model {
	out := append([]report.Model{}, shards[0].Report.Models...)
	for i := range out {
		for _, s := range shards[1:] {
			for _, m := range s.Report.Models {
				if m.ID != out[i].ID || m.Served == "" {
					continue
				}
				switch {
				case out[i].Served == "":
					out[i].Served = m.Served
				case out[i].Served != m.Served:
					res.Notes = append(res.Notes, fmt.Sprintf("model %s was served as %s in one shard and %s in %s", m.ID, out[i].Served, m.Served, s.Name))
				}
			}
		}
	}
	return out
}

// mergeBehavior joins Layer 1: every case × model was made by one shard,
// so its result is taken whole; the confusion matrices add up.
func mergeBehavior(shards []Shard) *report.Behavior {
	if shards[0].Report.Behavior == nil {
		return nil
	}
	b0 := shards[0].Report.Behavior
	out := &report.Behavior{RunsPerCase: b0.RunsPerCase, JudgeModel: b0.JudgeModel, RubricHash: b0.RubricHash,
		GoldenSetHash: b0.GoldenSetHash, Cases: b0.Cases, Results: []report.CaseResult{}}
	caseOrder, modelOrder := map[string]int{}, map[string]int{}
	for i, c := range b0.Cases {
		caseOrder[c.ID] = i
	}
	for i, m := range shards[0].Report.Models {
		modelOrder[m.ID] = i
	}
	type cm struct{ expected, chosen string }
	cells := map[string]map[cm]int{}
	desc := map[string]string{} // tool → description, from the shards' top confusions
	var confModels []string
	for _, s := range shards {
		b := s.Report.Behavior
		out.Results = append(out.Results, b.Results...)
		out.Inconclusive = append(out.Inconclusive, b.Inconclusive...)
		for _, c := range b.Confusion {
			if cells[c.Model] == nil {
				cells[c.Model] = map[cm]int{}
				confModels = append(confModels, c.Model)
			}
			for _, cell := range c.Cells {
				cells[c.Model][cm{cell.Expected, cell.Chosen}] += cell.Count
			}
			for _, t := range c.Top {
				desc["e:"+t.Expected] = t.ExpectedDescription
				desc["c:"+t.Chosen] = t.ChosenDescription
			}
		}
	}
	less := func(c1, m1, c2, m2 string) bool {
		if caseOrder[c1] != caseOrder[c2] {
			return caseOrder[c1] < caseOrder[c2]
		}
		return modelOrder[m1] < modelOrder[m2]
	}
	sort.SliceStable(out.Results, func(i, j int) bool {
		return less(out.Results[i].Case, out.Results[i].Model, out.Results[j].Case, out.Results[j].Model)
	})
	sort.SliceStable(out.Inconclusive, func(i, j int) bool {
		return less(out.Inconclusive[i].Case, out.Inconclusive[i].Model, out.Inconclusive[j].Case, out.Inconclusive[j].Model)
	})
	sort.SliceStable(confModels, func(i, j int) bool { return modelOrder[confModels[i]] < modelOrder[confModels[j]] })
	const maxTop = 3 // as pkg/behavior
	for _, m := range confModels {
		c := report.Confusion{Model: m, Cells: []report.ConfusionCell{}, Top: []report.ConfusionPair{}}
		for k, n := range cells[m] {
			c.Cells = append(c.Cells, report.ConfusionCell{Expected: k.expected, Chosen: k.chosen, Count: n})
		}
		sort.Slice(c.Cells, func(i, j int) bool {
			if c.Cells[i].Expected != c.Cells[j].Expected {
				return c.Cells[i].Expected < c.Cells[j].Expected
			}
			return c.Cells[i].Chosen < c.Cells[j].Chosen
		})
		var off []report.ConfusionCell
		for _, cell := range c.Cells {
			if cell.Expected != cell.Chosen {
				off = append(off, cell)
			}
		}
		sort.SliceStable(off, func(i, j int) bool { return off[i].Count > off[j].Count })
		for i, cell := range off {
			if i == maxTop {
				break
			}
			c.Top = append(c.Top, report.ConfusionPair{ConfusionCell: cell, ExpectedDescription: desc["e:"+cell.Expected], ChosenDescription: desc["c:"+cell.Chosen]})
		}
		out.Confusion = append(out.Confusion, c)
	}
	return out
}

// mergeResilience joins Layer 2: scores are k/N over runs, so they add up
// per model and subject; so do the unmeasured rows.
func mergeResilience(shards []Shard) *report.Resilience {
	if shards[0].Report.Resilience == nil {
		return nil
	}
	out := &report.Resilience{Faults: []report.FaultResult{}, Attacks: []report.AttackResult{}}
	faults := map[[2]string]*report.FaultResult{}
	attacks := map[[2]string]*report.AttackResult{}
	unm := map[[3]string]*report.ResilienceUnmeasured{}
	var fOrder, aOrder [][2]string
	var uOrder [][3]string
	seenNote := map[string]bool{}
	for _, s := range shards {
		r := s.Report.Resilience
		for _, f := range r.Faults {
			k := [2]string{f.Model, f.Fault}
			if faults[k] == nil {
				faults[k] = &report.FaultResult{Model: f.Model, Fault: f.Fault}
				fOrder = append(fOrder, k)
			}
			faults[k].Scores = addScores(faults[k].Scores, f.Scores)
		}
		for _, a := range r.Attacks {
			k := [2]string{a.Model, a.Attack}
			if attacks[k] == nil {
				attacks[k] = &report.AttackResult{Model: a.Model, Attack: a.Attack}
				aOrder = append(aOrder, k)
			}
			attacks[k].Scores = addScores(attacks[k].Scores, a.Scores)
		}
		for _, u := range r.Unmeasured {
			k := [3]string{u.Kind, u.Model, u.Subject}
			if unm[k] == nil {
				unm[k] = &report.ResilienceUnmeasured{Kind: u.Kind, Model: u.Model, Subject: u.Subject, Why: []report.UncountedOutcome{}}
				uOrder = append(uOrder, k)
			}
			m := unm[k]
			m.Runs += u.Runs
			m.Uncounted += u.Uncounted
			for _, w := range u.Why {
				found := false
				for i := range m.Why {
					if m.Why[i].Outcome == w.Outcome {
						m.Why[i].Runs += w.Runs
						found = true
					}
				}
				if !found {
					m.Why = append(m.Why, w)
				}
			}
		}
		out.Runs = append(out.Runs, r.Runs...)
		for _, n := range r.Notes {
			if !seenNote[n] {
				seenNote[n] = true
				out.Notes = append(out.Notes, n)
			}
		}
		out.ReusedRuns += r.ReusedRuns
		out.FreshRuns += r.FreshRuns
		out.StaleRuns += r.StaleRuns
	}
	models := shards[0].Report.Models
	fOrder = byModelThenSubject(fOrder, models, shards, func(r *report.Resilience) []string {
		var out []string
		for _, f := range r.Faults {
			out = append(out, f.Fault)
		}
		return out
	})
	aOrder = byModelThenSubject(aOrder, models, shards, func(r *report.Resilience) []string {
		var out []string
		for _, a := range r.Attacks {
			out = append(out, a.Attack)
		}
		return out
	})
	for _, k := range fOrder {
		out.Faults = append(out.Faults, *faults[k])
	}
	for _, k := range aOrder {
		out.Attacks = append(out.Attacks, *attacks[k])
	}
	sort.SliceStable(uOrder, func(i, j int) bool {
		return uOrder[i][0]+"\x00"+uOrder[i][1]+"\x00"+uOrder[i][2] < uOrder[j][0]+"\x00"+uOrder[j][1]+"\x00"+uOrder[j][2]
	})
	for _, k := range uOrder {
		out.Unmeasured = append(out.Unmeasured, *unm[k])
	}
	sort.SliceStable(out.Runs, func(i, j int) bool {
		a, b := out.Runs[i], out.Runs[j]
		if a.Kind != b.Kind {
			return a.Kind > b.Kind // faults before attacks, as a run plans them
		}
		if a.Subject != b.Subject {
			return a.Subject < b.Subject
		}
		if a.Case != b.Case {
			return a.Case < b.Case
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Run < b.Run
	})
	return out
}

// byModelThenSubject orders (model, subject) rows as one run would: by
// the report's model order, then by subject in the order the shards list
// them (each shard's order is a part of the run's: the catalogue's, with
// "all" last).
func byModelThenSubject(keys [][2]string, models []report.Model, shards []Shard, subjects func(*report.Resilience) []string) [][2]string {
	mi := map[string]int{}
	for i, m := range models {
		mi[m.ID] = i
	}
	var lists [][]string
	for _, s := range shards {
		lists = append(lists, subjects(s.Report.Resilience))
	}
	si := map[string]int{}
	for i, sub := range mergeOrder(lists) {
		si[sub] = i
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if mi[keys[i][0]] != mi[keys[j][0]] {
			return mi[keys[i][0]] < mi[keys[j][0]]
		}
		return si[keys[i][1]] < si[keys[j][1]]
	})
	return keys
}

// mergeOrder joins lists that are each in one common order into that
// order: an item first seen in a list goes right after the item before it
// in that list.
func mergeOrder(lists [][]string) []string {
	var out []string
	pos := func(v string) int {
		for i, o := range out {
			if o == v {
				return i
			}
		}
		return -1
	}
	for _, l := range lists {
		prev := -1
		for _, v := range l {
			if p := pos(v); p >= 0 {
				prev = p
				continue
			}
			out = append(out[:prev+1], append([]string{v}, out[prev+1:]...)...)
			prev++
		}
	}
	return out
}

func sortPairs(p [][2]string) {
	sort.SliceStable(p, func(i, j int) bool {
		if p[i][0] != p[j][0] {
			return p[i][0] < p[j][0]
		}
		return p[i][1] < p[j][1]
	})
}

// addScores adds b's k/N to a's by score name.
func addScores(a, b []report.Score) []report.Score {
	if a == nil {
		a = []report.Score{}
	}
	for _, s := range b {
		found := false
		for i := range a {
			if a[i].Name == s.Name {
				a[i].K += s.K
				a[i].N += s.N
				found = true
			}
		}
		if !found {
			a = append(a, s)
		}
	}
	return a
}

// replayHash is the cassette a shard replayed, "" when its models were
// live.
func replayHash(r *report.Report) string {
	if r.Replay == nil {
		return ""
	}
	return r.Replay.Hash
}

// mergeReplay joins the shards' replay accounts (one cassette, checked):
// the answers add up, the stale turns are listed up to the report's bound.
func mergeReplay(shards []Shard) *report.Replay {
	var out *report.Replay
	for _, s := range shards {
		rp := s.Report.Replay
		if rp == nil {
			continue
		}
		if out == nil {
			out = &report.Replay{Cassette: rp.Cassette, Hash: rp.Hash, Stale: []report.StaleTurn{}}
		}
		out.Answered += rp.Answered
		out.MoreStale += rp.MoreStale
		for _, st := range rp.Stale {
			if len(out.Stale) < report.MaxStaleTurns {
				out.Stale = append(out.Stale, st)
			} else {
				out.MoreStale++
			}
		}
	}
	return out
}

// mergeSpend adds the shards' spend. The caps are each shard's (every
// shard had the same); Reached says a shard reached its cap, and which.
func mergeSpend(shards []Shard) *report.Spend {
	var out *report.Spend
	for _, s := range shards {
		sp := s.Report.Spend
		if sp == nil {
			continue
		}
		if out == nil {
			out = &report.Spend{MaxTokens: sp.MaxTokens, MaxUSD: sp.MaxUSD, Prices: sp.Prices}
			out.Preview, out.Used = sp.Preview, sp.Used
			out.Layers, out.Models = append([]report.SpendPart(nil), sp.Layers...), append([]report.SpendPart(nil), sp.Models...)
		} else {
			out.Preview, out.Used = addFigures(out.Preview, sp.Preview), addFigures(out.Used, sp.Used)
			out.Layers, out.Models = addParts(out.Layers, sp.Layers), addParts(out.Models, sp.Models)
		}
		out.ReusedRuns += sp.ReusedRuns
		out.FreshRuns += sp.FreshRuns
		out.StaleRuns += sp.StaleRuns
		if sp.Reached {
			out.Reached = true
			why := fmt.Sprintf("shard %d/%d (%s): %s", s.Report.Shard.Index, s.Report.Shard.Count, s.Name, sp.Reason)
			out.Reason = strings.TrimPrefix(out.Reason+"; "+why, "; ")
		}
	}
	return out
}

func addFigures(a, b report.SpendFigures) report.SpendFigures {
	a.Calls += b.Calls
	a.Tokens += b.Tokens
	switch {
	case a.USD != nil && b.USD != nil:
		a.USD = usd(*a.USD + *b.USD)
	default:
		a.USD = nil // one unknown part makes the sum unknown, never partial
	}
	if b.USDUnknown != "" && !strings.Contains(a.USDUnknown, b.USDUnknown) {
		// Each says "no price for …": one list, said once.
		const say = "no price for "
		if strings.HasPrefix(a.USDUnknown, say) && strings.HasPrefix(b.USDUnknown, say) {
			a.USDUnknown += ", " + strings.TrimPrefix(b.USDUnknown, say)
		} else {
			a.USDUnknown = strings.TrimPrefix(a.USDUnknown+", "+b.USDUnknown, ", ")
		}
	}
	return a
}

func addParts(a, b []report.SpendPart) []report.SpendPart {
	for _, p := range b {
		found := false
		for i := range a {
			if a[i].Name == p.Name {
				a[i].Preview, a[i].Used = addFigures(a[i].Preview, p.Preview), addFigures(a[i].Used, p.Used)
				found = true
			}
		}
		if !found {
			a = append(a, p)
		}
	}
	return a
}

// usd rounds as pkg/telemetry does: float noise stays out of reports.
func usd(v float64) *float64 {
	r := math.Round(v*1e9) / 1e9
	return &r
}

func per(total *float64, n int, scale float64) *float64 {
	if total == nil || n == 0 {
		return nil
	}
	return usd(*total / float64(n) * scale)
}

func addUSD(a, b *float64) *float64 {
	if a == nil || b == nil {
		return nil
	}
	return usd(*a + *b)
}
