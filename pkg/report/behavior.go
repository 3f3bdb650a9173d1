package report

import "time"

// Behavior is Layer 1: golden cases run against models, each case several
// times, scored per run.
type Behavior struct {
	// RunsPerCase is how often each case ran per model (N of k/N).
	RunsPerCase int `json:"runsPerCase"`
	// JudgeModel grades task completion ("" when no score needs a judge);
	// RubricHash is Hash of the judge's rubric. A baseline with another
	// judge or rubric makes judged scores not comparable.
	JudgeModel string `json:"judgeModel"`
	RubricHash string `json:"rubricHash"`
	// GoldenSetHash is Hash over every case's hash, sorted: a cache key.
	GoldenSetHash string       `json:"goldenSetHash"`
	Cases         []Case       `json:"cases"`
	Results       []CaseResult `json:"results"`
	// Spend is what the run used against its budget, with the preview made
	// before it; absent in reports that predate it.
	Spend *Spend `json:"spend,omitempty"`
	// Inconclusive are case runs that no score counts, with the reason:
	// the budget was reached before they ran, or the judge did not answer.
	// A case × model with no decided run has no entry in Results.
	Inconclusive []Inconclusive `json:"inconclusive,omitempty"`
	// Confusion is, per model, expected tool × chosen tool over its runs
	// ("(no tool)" is a class), with the most frequent confusions' two
	// tool descriptions side by side: most selection failures are
	// description failures.
	Confusion []Confusion `json:"confusion,omitempty"`
}

// NoTool is the confusion-matrix class of "no tool was called" (and of
// what a negative case expects); pkg/behavior/score produces it.
const NoTool = "(no tool)"

// Confusion is one model's confusion matrix.
type Confusion struct {
	Model string          `json:"model"`
	Cells []ConfusionCell `json:"cells"`
	// Top are the most frequent off-diagonal cells, with the descriptions
	// the model read (untrusted server text, clipped).
	Top []ConfusionPair `json:"top"`
}

// ConfusionCell counts runs steps that expected one tool and chose another
// (or the same: the diagonal).
type ConfusionCell struct {
	Expected string `json:"expected"`
	Chosen   string `json:"chosen"`
	Count    int    `json:"count"`
}

// ConfusionPair is a frequent confusion and both tools' descriptions.
type ConfusionPair struct {
	ConfusionCell
	ExpectedDescription string `json:"expectedDescription"`
	ChosenDescription   string `json:"chosenDescription"`
}

// Spend is a run's model spend over every layer: the preview before it,
// what it used, and the cap. USD is absent when a price was unknown
// (never 0 for unknown); USDUnknown then names the models without a
// price. Reports since the shared meter hold it in Report.Spend; older
// ones hold Layer 1's alone in Behavior.Spend.
type Spend struct {
	Preview    SpendFigures `json:"preview"`
	Used       SpendFigures `json:"used"`
	MaxTokens  int          `json:"maxTokens"` // 0: no cap
	MaxUSD     float64      `json:"maxUSD"`    // 0: no cap
	Reached    bool         `json:"reached"`
	Reason     string       `json:"reason,omitempty"`
	Prices     string       `json:"prices"`     // the price table's version
	ReusedRuns int          `json:"reusedRuns"` // Layer 1 runs
	FreshRuns  int          `json:"freshRuns"`
	// StaleRuns are fresh runs made because a stored one was found but
	// the server answers its tool calls differently now.
	StaleRuns int `json:"staleRuns,omitempty"`
	// Layers splits the figures by part of the run (Layer 1, judge,
	// Layer 2, Layer 2 judge) and Models by model; absent in older
	// reports.
	Layers []SpendPart `json:"layers,omitempty"`
	Models []SpendPart `json:"models,omitempty"`
}

// SpendPart is the preview and the use of one part of a run or one model.
type SpendPart struct {
	Name    string       `json:"name"`
	Preview SpendFigures `json:"preview"`
	Used    SpendFigures `json:"used"`
}

// SpendFigures are provider calls, tokens (input + output) and money.
type SpendFigures struct {
	Calls      int      `json:"calls"`
	Tokens     int      `json:"tokens"`
	USD        *float64 `json:"usd,omitempty"`
	USDUnknown string   `json:"usdUnknown,omitempty"`
}

// Inconclusive is runs of one case × model that were not decided.
type Inconclusive struct {
	Case   string `json:"case"`
	Model  string `json:"model"`
	Runs   int    `json:"runs"`
	Reason string `json:"reason"`
}

// CaseKind is how strict a case's floor is.
type CaseKind string

const (
	Hard CaseKind = "hard" // must pass every run (floor 1.0)
	Soft CaseKind = "soft" // may miss now and then (floor 0.8: 4 of 5)
)

// Case is one golden case as defined, not as run.
type Case struct {
	ID string `json:"id"`
	// Hash is Hash of the case definition; the gate pairs a case with the
	// baseline's only when hash and tool-surface hash both match.
	Hash string   `json:"hash"`
	Kind CaseKind `json:"kind"`
	// Negative cases must not call a tool; they are scored by overTrigger.
	Negative bool     `json:"negative"`
	Tags     []string `json:"tags"`
	// Source is the golden file, relative to the workspace, and Line the
	// line the case starts on (0: unknown), so an annotation or a
	// reviewer can go straight to it.
	Source string `json:"source"`
	Line   int    `json:"line,omitempty"`
}

// Score names of Layer 1, with their directions in ScoreDirections.
const (
	ToolSelection       = "toolSelection"       // the expected tool was chosen
	ArgumentCorrectness = "argumentCorrectness" // its arguments matched
	SequenceOrder       = "sequenceOrder"       // multi-step calls came in order
	OverTrigger         = "overTrigger"         // a negative case called a tool (lower is better)
	TaskCompletion      = "taskCompletion"      // the judge said the task was done
)

// DirectionOf is the good direction of a known Layer 1 or 2 score, which
// producers copy into each Score so a reader needs no table.
func DirectionOf(score string) (Direction, bool) {
	switch score {
	case ToolSelection, ArgumentCorrectness, SequenceOrder, TaskCompletion, FaultHandled, Refusal:
		return Higher, true
	case OverTrigger, AttackSuccess:
		return Lower, true
	}
	return "", false
}

// Judged reports whether a judge model decides the score: such a score is
// not comparable across judges or rubrics.
func Judged(score string) bool { return score == TaskCompletion }

// CaseResult is one case run RunsPerCase times against one model.
type CaseResult struct {
	Case  string `json:"case"`  // Case.ID
	Model string `json:"model"` // Model.ID
	// Passed counts runs in which every score of the case passed; the
	// case's floor applies to it.
	Passed Count   `json:"passed"`
	Scores []Score `json:"scores"`
	// Errors counts runs the harness or provider could not complete; they
	// are in N and not in K.
	Errors int `json:"errors"`
	// Notes are short explanations of failed runs (model text: untrusted).
	Notes []string `json:"notes"`
	// Inconclusive counts runs left out of N (budget reached, judge did
	// not answer). Uncertain counts runs with an argument neither the
	// matcher nor a judge could decide: not passed. Reused counts runs
	// taken from the cache.
	Inconclusive int `json:"inconclusive,omitempty"`
	Uncertain    int `json:"uncertain,omitempty"`
	Reused       int `json:"reused,omitempty"`
	// Runs are the individual runs, each with its trajectory (bounded).
	Runs []CaseRun `json:"runs,omitempty"`
}

// ShortOnlyByErrors says whether every run of r that did not pass errored
// (the harness, the provider or the server could not complete it), and
// one did: no run showed the model fall short.
func (r *CaseResult) ShortOnlyByErrors() bool {
	return r.Errors > 0 && r.Passed.N-r.Passed.K <= r.Errors
}

// Run outcomes of a CaseRun.
const (
	RunPass         = "pass"
	RunFail         = "fail"
	RunUncertain    = "uncertain"    // an argument no one could decide: in N, not in K
	RunError        = "error"        // the harness or provider could not complete it
	RunInconclusive = "inconclusive" // not decided: left out of N
)

// ServerLost begins the error of a run whose tool call could not reach the
// server (no connection, or its process gone), after "error: ": one cause
// for every case and model it stops, which the renderers say once.
const ServerLost = "the server stopped answering"

// CaseRun is one run of a case against a model.
type CaseRun struct {
	Run     int      `json:"run"` // 1-based
	Outcome string   `json:"outcome"`
	Reasons []string `json:"reasons,omitempty"` // why it did not pass (model text: untrusted)
	// CachedAt is when a reused result was first made (absent: made by
	// this run); AgeSeconds is its age when reused.
	CachedAt   *time.Time `json:"cachedAt,omitempty"`
	AgeSeconds int64      `json:"ageSeconds,omitempty"`
	// Judge is the task-completion verdict: pass, fail or inconclusive
	// ("" when not judged).
	Judge      string      `json:"judge,omitempty"`
	Tokens     int         `json:"tokens"`
	CostUSD    *float64    `json:"costUSD,omitempty"` // absent: price unknown
	Trajectory *Trajectory `json:"trajectory,omitempty"`
}
