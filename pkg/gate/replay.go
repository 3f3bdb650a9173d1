package gate

import (
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// RuleCassette is the rule of a replayed run the cassette could not answer.
const RuleCassette = "replay answers every model request from the cassette"

// replayComparable drops a baseline a replayed report cannot be compared
// with, and the other way round: replayed scores are the recorded models'
// answers to the live server, so only a baseline replayed from the same
// cassette says what the change did. Without one the gate uses floors,
// and says so.
func replayComparable(in Input) Input {
	if in.Baseline == nil || in.New == nil {
		return in
	}
	nr, br := in.New.Replay, in.Baseline.Replay
	why := ""
	switch {
	case nr == nil && br == nil:
		return in
	case nr != nil && br == nil:
		why = fmt.Sprintf("this run was replayed from cassette %s, but the baseline %s was not replayed", nr.Hash, baselineName(in))
	case nr == nil:
		why = fmt.Sprintf("the baseline %s was replayed from a cassette, but this run called the models", baselineName(in))
	case nr.Hash != br.Hash:
		why = fmt.Sprintf("this run was replayed from cassette %s, the baseline %s from another (%s)", nr.Hash, baselineName(in), br.Hash)
	default:
		return in
	}
	in.Baseline, in.BaselineRef = nil, report.ReportRef{}
	in.BaselineNote = why + "; replay the same cassette on the default branch to get a baseline"
	return in
}

func baselineName(in Input) string {
	if in.BaselineRef.Path != "" {
		return in.BaselineRef.Path
	}
	return "report"
}

// cassette makes the stale turns of a replayed run inconclusive items:
// the server's tools or results changed what the model would be asked, so
// the recorded answers say nothing about it; the cassette must be recorded
// again (with the models) to know.
func (e *evaluation) cassette() {
	r := e.new.Replay
	if r == nil {
		return
	}
	seen := map[[4]string]bool{}
	for _, s := range r.Stale {
		// One item per case × model (and scenario): the first run that
		// went stale says what changed; the report lists every one.
		k := [4]string{s.Case, s.Model, s.Scenario, fmt.Sprint(s.Judge)}
		if seen[k] {
			continue
		}
		seen[k] = true
		layer := 1
		if s.Scenario != "" {
			layer = 2
		}
		where := fmt.Sprintf("case %s, run %d, turn %d", s.Case, s.Run, s.Turn)
		if s.Judge {
			where = fmt.Sprintf("case %s, run %d, judge call", s.Case, s.Run)
		}
		if s.Scenario != "" {
			where += " (" + s.Scenario + ")"
		}
		e.g.Items = append(e.g.Items, report.GateItem{Layer: layer, Kind: report.KindCassette, Subject: s.Case, Model: s.Model,
			Status: report.ItemInconclusive, Rule: RuleCassette,
			Reason: fmt.Sprintf("cassette stale at %s: %s; the run ended there. Record the cassette again (--record) to measure this change", where, s.Diff)})
	}
}
