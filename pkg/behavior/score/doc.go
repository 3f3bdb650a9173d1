// Package score turns Layer 1 runs into the separate scores of a model:
// pure functions, no I/O, no judge calls, the same input always giving the
// same output.
//
// Quick start, per case × model:
//
//	runs := make([]score.Run, 0, n)
//	for _, o := range outcomes { // one score.RunOutcome per run: case, calls, error, judge verdict
//		r := score.Evaluate(o)
//		if u := r.UncertainArgs(); len(u) > 0 && judge != nil {
//			o.Judged = askJudge(u) // match.Match or match.NoMatch per ArgRef
//			r = score.Evaluate(o)
//		}
//		runs = append(runs, r)
//	}
//	cs := score.SummarizeCase(runs)     // k/N, Wilson, floor, the case's scores, notes
//	ms := score.SummarizeModel(allRuns) // the model's scores and confusion matrix
//	top := score.TopConfusions(ms.Matrix, descriptions, 3)
//
// What each score counts (Error runs count in none of them):
//
//   - toolSelection (higher is better): positive cases (expect_tool or
//     expect_sequence); a run is right when the first tool it called is
//     the case's (first) expected tool. Negative cases are not in it.
//   - argumentCorrectness (higher): the correctly selected calls whose
//     step expects arguments; a call is right when every expected argument
//     matched (package match). Calls whose arguments stay Uncertain are
//     left out of N and counted in ArgsUncertain. Steps without expected
//     arguments are not counted: there is nothing to be right about.
//   - sequenceOrder (higher): chains; right when the calls, with retries
//     after an error result folded in, are exactly the expected steps in
//     order — no step missing, none extra, none swapped.
//   - overTrigger (lower): negative cases; K counts runs that called any
//     tool.
//   - taskCompletion (higher): runs the judge graded pass or fail; an
//     inconclusive judge is left out.
//
// A run passes when every check that applies passed: selection,
// arguments, sequence, no call on a negative case, and the judge when it
// graded the run. A failed check makes it Fail whatever else is undecided;
// otherwise an argument still Uncertain makes it Uncertain (not passed:
// in N, not in K) and an unanswered judge Inconclusive (left out of N).
// Errors are in N and not in K. The pass rate is k/N with a 95% Wilson
// interval, against the floor ⌈f·N⌉ with f = 1.0 for hard cases and 0.8
// for soft ones (Floor is the gate's rule).
//
// The confusion matrix has expected tool × chosen tool with NoTool as a
// class on both sides (a negative case expects NoTool; a model that stops
// short chooses it); see Matrix for what each run adds.
package score
