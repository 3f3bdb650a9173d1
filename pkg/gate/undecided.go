package gate

import (
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// How a report names the built-in lexical selector that Layer 1 runs when
// no model is configured (pkg/behavior BaselinePrefix and BaselineLabel).
// The gate reads only the report, so it recognises the selector by these;
// internal/cli's TestGateMatchesTheCLIComposition holds them to
// pkg/behavior's.
const (
	lexicalPrefix   = "baseline:"
	lexicalProvider = "baseline, no LLM"
)

// RuleUndecided is the rule of the items that list undecided case runs.
const RuleUndecided = "every run of a case is decided"

// IsLexicalBaseline reports whether model, as named in rep's Layer 1
// results, is the built-in lexical selector rather than a model: its
// results are a yardstick for the tool descriptions, shown and never
// gated.
func IsLexicalBaseline(rep *report.Report, model string) bool {
	if strings.HasPrefix(model, lexicalPrefix) {
		return true
	}
	for _, m := range rep.Models {
		if m.ID == model {
			return m.Provider == lexicalProvider
		}
	}
	return false
}

// gatedView is rep as the gate judges it: without the lexical baseline's
// Layer 1 results and undecided runs, which lex then holds. When nothing
// else ran in Layer 1, the view has no Layer 1 at all, as if it had not
// run. rep itself is not modified.
func gatedView(rep *report.Report) (view *report.Report, lex *report.Behavior) {
	b := rep.Behavior
	if b == nil {
		return rep, nil
	}
	kept, shown := *b, report.Behavior{RunsPerCase: b.RunsPerCase}
	kept.Results, kept.Inconclusive = nil, nil
	for _, r := range b.Results {
		if IsLexicalBaseline(rep, r.Model) {
			shown.Results = append(shown.Results, r)
		} else {
			kept.Results = append(kept.Results, r)
		}
	}
	for _, inc := range b.Inconclusive {
		if IsLexicalBaseline(rep, inc.Model) {
			shown.Inconclusive = append(shown.Inconclusive, inc)
		} else {
			kept.Inconclusive = append(kept.Inconclusive, inc)
		}
	}
	if len(shown.Results) == 0 && len(shown.Inconclusive) == 0 {
		return rep, nil
	}
	v := *rep
	if len(kept.Results) == 0 && len(kept.Inconclusive) == 0 {
		v.Behavior = nil
	} else {
		if kept.Results == nil {
			kept.Results = []report.CaseResult{}
		}
		v.Behavior = &kept
	}
	return &v, &shown
}

// lexical lists the lexical baseline's results as info: they never move
// the verdict.
func (e *evaluation) lexical(lex *report.Behavior) {
	if lex == nil {
		return
	}
	const rule = "the built-in lexical selector (" + lexicalProvider + ") is a yardstick for the tool descriptions, not a model: shown, not gated"
	for _, r := range lex.Results {
		e.add(report.GateItem{Layer: 1, Kind: report.KindCase, Subject: r.Case, Model: r.Model, Direction: report.Higher,
			Status: report.ItemInfo, Rule: rule, New: cnt(r.Passed), Reason: fmt.Sprintf("%d/%d: shown, not gated", r.Passed.K, r.Passed.N)})
	}
	for _, inc := range lex.Inconclusive {
		e.add(report.GateItem{Layer: 1, Kind: report.KindCase, Subject: inc.Case, Model: inc.Model, Direction: report.Higher,
			Status: report.ItemInfo, Rule: RuleUndecided,
			Reason: fmt.Sprintf("%d runs not decided: %s; the lexical baseline is shown, not gated", inc.Runs, inc.Reason)})
	}
}

// undecided makes every case × model with undecided runs (the budget ran
// out, or the judge did not answer) inconclusive: the runs that were
// decided may all have passed, but the verdict cannot vouch for the rest.
// It never turns a fail into anything else.
func (e *evaluation) undecided() {
	b := e.new.Behavior
	if b == nil {
		return
	}
	for _, inc := range b.Inconclusive {
		e.add(report.GateItem{Layer: 1, Kind: report.KindCase, Subject: inc.Case, Model: inc.Model, Direction: report.Higher,
			Status: report.ItemInconclusive, Rule: RuleUndecided,
			Reason: fmt.Sprintf("%d runs not decided: %s", inc.Runs, inc.Reason)})
	}
}
