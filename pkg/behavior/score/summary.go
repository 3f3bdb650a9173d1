package score

import (
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior/match"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Tally is one score over runs: k of n with its good direction (from
// report.DirectionOf) and its 95% Wilson interval.
type Tally struct {
	report.Score
	Interval Interval `json:"interval"`
}

// Rate is K/N, 0 for N = 0.
func (t Tally) Rate() float64 { return t.Count().Rate() }

// counts are the numerators and denominators every summary shares.
type counts struct {
	runs, errors, uncertain, inconclusive, passed int
	selK, selN                                    int // positive cases: first call right
	argK, argN, argUncertain                      int // checked calls: arguments matched
	seqK, seqN                                    int // chains: exact order
	overK, overN                                  int // negatives: any call (lower is better)
	taskK, taskN                                  int // judged runs: judge said done
}

func count(runs []Run) counts {
	var c counts
	for i := range runs {
		r := &runs[i]
		c.runs++
		switch r.Status {
		case Error:
			c.errors++
			continue // no score sees a run that did not happen
		case Uncertain:
			c.uncertain++
		case Inconclusive:
			c.inconclusive++
		case Pass:
			c.passed++
		}
		if r.Negative {
			c.overN++
			if r.OverTriggered {
				c.overK++
			}
		} else {
			c.selN++
			if r.Selected {
				c.selK++
			}
		}
		if r.Chain {
			c.seqN++
			if r.SequenceOK {
				c.seqK++
			}
		}
		for _, s := range r.Steps {
			if !s.Checked {
				continue
			}
			switch s.Args.Verdict {
			case match.Match:
				c.argK++
				c.argN++
			case match.NoMatch:
				c.argN++
			case match.Uncertain:
				c.argUncertain++
			}
		}
		switch r.Task {
		case TaskPass:
			c.taskK++
			c.taskN++
		case TaskFail:
			c.taskN++
		}
	}
	return c
}

// scores returns the scores with N > 0, in a fixed order.
func (c counts) scores() []Tally {
	out := []Tally{}
	add := func(name string, k, n int) {
		if n == 0 {
			return
		}
		dir, _ := report.DirectionOf(name)
		out = append(out, Tally{Score: report.Score{Name: name, Direction: dir, K: k, N: n}, Interval: Wilson(k, n)})
	}
	add(report.ToolSelection, c.selK, c.selN)
	add(report.ArgumentCorrectness, c.argK, c.argN)
	add(report.SequenceOrder, c.seqK, c.seqN)
	add(report.OverTrigger, c.overK, c.overN)
	add(report.TaskCompletion, c.taskK, c.taskN)
	return out
}

// CaseSummary is one case's N runs against one model.
type CaseSummary struct {
	Case string `json:"case"`
	Kind string `json:"kind"`
	// Runs counts every run; Errors, Uncertain and Inconclusive count the
	// runs of that status.
	Runs         int `json:"runs"`
	Errors       int `json:"errors"`
	Uncertain    int `json:"uncertain"`
	Inconclusive int `json:"inconclusive"`
	// Passed is k/N: K runs passed, N = Runs − Inconclusive (an error or
	// an undecided argument is not a pass; an unanswered judge is left
	// out). Interval is its 95% Wilson interval.
	Passed   report.Count `json:"passed"`
	Interval Interval     `json:"interval"`
	// Floor is the kind's fraction, Need = ⌈Floor·N⌉, FloorMet = K ≥ Need.
	Floor    float64 `json:"floor"`
	Need     int     `json:"need"`
	FloorMet bool    `json:"floorMet"`
	// Scores are those that apply to the case and saw a run (N > 0):
	// toolSelection, argumentCorrectness, sequenceOrder (chains),
	// overTrigger (negatives), taskCompletion (judged), in that order.
	Scores []Tally `json:"scores"`
	// ArgsUncertain counts checked calls whose arguments stayed
	// Uncertain: not in argumentCorrectness' N.
	ArgsUncertain int `json:"argsUncertain"`
	// Notes explain each run that did not pass: "run 2: …" (untrusted
	// model text, clipped).
	Notes []string `json:"notes"`
}

// SummarizeCase aggregates one case's runs (all of the same case and
// model, in run order).
func SummarizeCase(runs []Run) CaseSummary {
	s := CaseSummary{Scores: []Tally{}, Notes: []string{}}
	if len(runs) > 0 {
		s.Case, s.Kind = runs[0].Case, runs[0].Kind
	}
	c := count(runs)
	s.Runs, s.Errors, s.Uncertain, s.Inconclusive = c.runs, c.errors, c.uncertain, c.inconclusive
	s.Passed = report.Count{K: c.passed, N: c.runs - c.inconclusive}
	s.Interval = Wilson(s.Passed.K, s.Passed.N)
	s.Floor = FloorFor(s.Kind)
	s.Need = Floor(s.Floor, s.Passed.N)
	s.FloorMet = s.Passed.N > 0 && s.Passed.K >= s.Need
	s.Scores = c.scores()
	s.ArgsUncertain = c.argUncertain
	for i, r := range runs {
		if r.Status != Pass && len(r.Reasons) > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("run %d: %s", i+1, strings.Join(r.Reasons, "; ")))
		}
	}
	return s
}

// ModelSummary aggregates every run of one model over the whole set.
type ModelSummary struct {
	Runs         int `json:"runs"`
	Errors       int `json:"errors"`
	Uncertain    int `json:"uncertain"`
	Inconclusive int `json:"inconclusive"`
	// Passed is passing runs over Runs − Inconclusive.
	Passed        report.Count `json:"passed"`
	Scores        []Tally      `json:"scores"`
	ArgsUncertain int          `json:"argsUncertain"`
	Matrix        Matrix       `json:"matrix"`
}

// SummarizeModel aggregates all runs of one model (any cases, any order):
// each score is the sum of its numerators over the sum of its
// denominators, so a case with more runs weighs more.
func SummarizeModel(runs []Run) ModelSummary {
	c := count(runs)
	return ModelSummary{
		Runs: c.runs, Errors: c.errors, Uncertain: c.uncertain, Inconclusive: c.inconclusive,
		Passed:        report.Count{K: c.passed, N: c.runs - c.inconclusive},
		Scores:        c.scores(),
		ArgsUncertain: c.argUncertain,
		Matrix:        BuildMatrix(runs),
	}
}

// Score returns the named score of a summary's list, if present.
func Score(scores []Tally, name string) (Tally, bool) {
	for _, t := range scores {
		if t.Name == name {
			return t, true
		}
	}
	return Tally{}, false
}

// ReportScores strips the intervals, for report.CaseResult.Scores.
func ReportScores(scores []Tally) []report.Score {
	out := make([]report.Score, len(scores))
	for i, t := range scores {
		out[i] = t.Score
	}
	return out
}
