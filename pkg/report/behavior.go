package report

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
	// Source is the golden file, relative to the workspace.
	Source string `json:"source"`
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
}
