package gate

import (
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// RuleCassette is the rule of a replayed run the cassette could not answer.
const RuleCassette = "replay answers every model request from the cassette"

// replayComparable keeps a baseline's Layers 1 and 2 out of the
// comparison unless both reports were replayed from the same cassette:
// replayed scores are the recorded models' answers to the live server, so
// only a baseline replayed from the same cassette says what the change did,
// and a live baseline's say nothing about a replay (nor the other way
// round). Those layers are then gated on floors, and a note says so; the
// baseline's Layer 0 is still compared. note is "" when nothing was
// dropped.
func replayComparable(in Input) (out Input, note string) {
	if in.Baseline == nil || in.New == nil {
		return in, ""
	}
	nr, br := in.New.Replay, in.Baseline.Replay
	why := ""
	switch {
	case nr == nil && br == nil:
		return in, ""
	case nr != nil && br == nil:
		why = fmt.Sprintf("this run was replayed from cassette %s, but the baseline %s was not replayed", nr.Hash, baselineName(in))
	case nr == nil:
		why = fmt.Sprintf("the baseline %s was replayed from a cassette, but this run called the models", baselineName(in))
	case nr.Hash != br.Hash:
		why = fmt.Sprintf("this run was replayed from cassette %s, the baseline %s from another (%s)", nr.Hash, baselineName(in), br.Hash)
	default:
		return in, ""
	}
	why += "; replay the same cassette on the default branch to get a replay baseline"
	base := *in.Baseline
	base.Behavior, base.Resilience, base.Telemetry, base.Spend, base.Replay = nil, nil, nil, nil, nil
	if base.Conformance == nil {
		in.Baseline, in.BaselineRef, in.BaselineNote = nil, report.ReportRef{}, why
		return in, ""
	}
	in.Baseline = &base
	return in, "Layers 1 to 3 are gated on floors only, not against the baseline: " + why
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
