package behavior

import (
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
)

// Budget caps a run's spend (eval.budget); the meter is spend.Meter,
// shared with Layer 2 when the pipeline runs both.
type Budget = spend.Budget

// ErrBudget is wrapped by the error the meter's Gate returns once the cap
// is reached.
var ErrBudget = spend.ErrBudget

// estimate adds one run's expected calls to the preview: one turn per
// expected step plus the answer, each re-reading the tools and the
// conversation so far, and the judge calls the scorer may make (the task
// rubric, and every argument a matcher may leave uncertain). judge is the
// judge's model, "" when there is none.
func estimate(p *spend.Preview, model, judge string, toolsChars int, c golden.Case) {
	turns := len(c.Steps()) + 1
	if strings.HasPrefix(model, BaselinePrefix) {
		turns = 0 // the built-in baseline calls no provider
	}
	p.Run(spend.Layer1, model, turns, len(SystemPrompt)+toolsChars, len(c.Prompt), spend.Judge, judge, JudgeCalls(c))
}

// JudgeCalls is the most judge calls the scorer makes for one run of c:
// one per argument a semantic matcher compares (the only matcher that may
// leave one uncertain and ask the judge) and one for the rubric. Every
// matcher was counted before: a drafted set names one for every
// argument, and a preview said 170 judge calls for a run that made 3.
func JudgeCalls(c golden.Case) int {
	n := 0
	for _, s := range c.Steps() {
		for _, m := range s.ArgMatch {
			if m.Kind == golden.MatchSemantic {
				n++
			}
		}
	}
	if c.Rubric != "" {
		n++
	}
	return n
}
