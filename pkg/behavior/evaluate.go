package behavior

import (
	"context"
	"fmt"
	"sort"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior/match"
	"github.com/mcp-eval/mcp-eval-action/pkg/behavior/score"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// scored is one run's evaluation: package score's Run, or, for a run the
// budget stopped, nothing but the reason (such a run counts in no score).
type scored struct {
	run      score.Run
	budget   bool
	reasons  []string
	argJudge int // arguments a judge decided
}

// outcome is the report's name for the run's status.
func (s *scored) outcome() string {
	if s.budget {
		return report.RunInconclusive
	}
	switch s.run.Status {
	case score.Pass:
		return report.RunPass
	case score.Uncertain:
		return report.RunUncertain
	case score.Inconclusive:
		return report.RunInconclusive
	case score.Error:
		return report.RunError
	}
	return report.RunFail
}

// scorer evaluates runs: package score decides every score from the
// trajectory's calls; the judge (nil: none) grades rubrics and decides the
// arguments the matcher left uncertain.
type scorer struct {
	judge *Judge
}

// callsOf lists a trajectory's calls for package score, in order.
func callsOf(tr *report.Trajectory) []score.Call {
	var out []score.Call
	for _, t := range tr.Turns {
		for _, c := range t.Calls {
			sc := score.Call{Name: c.Name, IsError: c.IsError, ParseError: c.ParseError}
			if c.ParseError == "" && len(c.Arguments) > 0 {
				sc.Arguments = c.Arguments
			}
			out = append(out, sc)
		}
	}
	return out
}

// score evaluates one run of case c.
func (sc *scorer) score(ctx context.Context, c golden.Case, tr *report.Trajectory) *scored {
	if tr.End == EndBudget || tr.End == EndStale {
		return &scored{budget: true, reasons: []string{tr.Reason}}
	}
	o := score.RunOutcome{Case: &c, Calls: callsOf(tr)}
	if tr.End == EndError {
		o.Err = tr.Reason
	}
	s := &scored{run: score.Evaluate(o)}
	if s.run.Status == score.Error {
		return s
	}
	if sc.judge != nil {
		again := false
		uncertain := s.run.UncertainArgs()
		refs := make([]score.ArgRef, 0, len(uncertain))
		for ref := range uncertain {
			refs = append(refs, ref)
		}
		sort.Slice(refs, func(i, j int) bool {
			if refs[i].Step != refs[j].Step {
				return refs[i].Step < refs[j].Step
			}
			return refs[i].Arg < refs[j].Arg
		})
		for _, ref := range refs {
			res := uncertain[ref]
			tool := s.run.Steps[ref.Step].Tool
			v := sc.judge.Argument(ctx, c.Prompt, tool, ref.Arg, res.Expected, res.Actual)
			switch v.Outcome {
			case JudgePass, JudgeFail:
				if o.Judged == nil {
					o.Judged = map[score.ArgRef]match.Verdict{}
				}
				o.Judged[ref] = match.Match
				if v.Outcome == JudgeFail {
					o.Judged[ref] = match.NoMatch
				}
				s.argJudge++
				again = true
			default:
				s.reasons = append(s.reasons, fmt.Sprintf("%s argument %s stays uncertain: %s", tool, ref.Arg, v.Reason))
			}
		}
		// A rubric is judged on every run that reached an answer or the
		// step limit; a run stopped for a missing input failed already.
		if c.Rubric != "" && tr.End != EndInputMissing {
			v := sc.judge.Task(ctx, c.Prompt, c.Rubric, tr)
			o.Task = score.TaskVerdict(v.Outcome)
			again = true
			switch v.Outcome {
			case JudgeFail:
				s.reasons = append(s.reasons, "judge: "+v.Reason)
			case JudgeInconclusive:
				s.reasons = append(s.reasons, "task completion inconclusive: "+v.Reason)
			}
		}
		if again {
			s.run = score.Evaluate(o)
		}
	}
	if s.run.Status == score.Uncertain && sc.judge == nil {
		s.reasons = append(s.reasons, "no judge is configured to decide an uncertain argument (eval.judge): reported uncertain, not passed")
	}
	if tr.End == EndInputMissing {
		// The server asked for input the case does not provide: the run
		// fails whatever its calls, with the reason.
		s.run.Status = score.Fail
		s.reasons = append(s.reasons, tr.Reason)
	}
	return s
}

// allReasons are the run's reasons: package score's, then the harness's.
func (s *scored) allReasons() []string {
	return append(append([]string{}, s.run.Reasons...), s.reasons...)
}
