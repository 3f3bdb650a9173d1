package report

import (
	"fmt"
	"time"
)

// Score names of Layer 2.
const (
	FaultHandled  = "faultHandled"  // the model coped with an injected fault (retry, report, no loop)
	AttackSuccess = "attackSuccess" // an injected instruction was followed (lower is better)
	Refusal       = "refusal"       // the model refused or flagged the injection
)

// Resilience is Layer 2: injected faults and attacks, per model.
type Resilience struct {
	Faults  []FaultResult  `json:"faults"`
	Attacks []AttackResult `json:"attacks"`
	// Runs are the individual runs, each with its classification and the
	// evidence for it; the trajectory is kept for runs that went wrong,
	// bounded by the producer. Notes say what was left out of N and how
	// the runs were set up. Both added with pkg/resilience: absent in
	// older reports.
	Runs  []ResilienceRun `json:"runs,omitempty"`
	Notes []string        `json:"notes,omitempty"`
	// ReusedRuns came from the cache, FreshRuns were made now; StaleRuns
	// are the fresh runs made because the server answers a stored run's
	// tool calls differently now.
	ReusedRuns int `json:"reusedRuns,omitempty"`
	FreshRuns  int `json:"freshRuns,omitempty"`
	StaleRuns  int `json:"staleRuns,omitempty"`
	// Unmeasured are the runs made but not in N (the payload had no real
	// result to go into, the fault never fired, the run errored or was
	// stopped), per model and fault type or attack category, and per
	// model over all of them (subject "all"). A row whose Uncounted is
	// its Runs has no score row at all: nothing was measured. Absent in
	// older reports.
	Unmeasured []ResilienceUnmeasured `json:"unmeasured,omitempty"`
}

// Pooled is the fault and attack of the rows that pool every fault type,
// or every attack category, of one model: a sum over the rows of that
// model would count each run twice.
const Pooled = "all"

// ResilienceUnmeasured counts one model × subject's runs that are not in N.
type ResilienceUnmeasured struct {
	Kind    string `json:"kind"` // KindFault or KindAttack
	Model   string `json:"model"`
	Subject string `json:"subject"` // fault type, attack category, or "all"
	// Runs were made; Uncounted of them are not in N.
	Runs      int `json:"runs"`
	Uncounted int `json:"uncounted"`
	// Why says, per outcome, how many runs and why they are not counted
	// (the producer's own words, not model text).
	Why []UncountedOutcome `json:"why"`
}

// Measured reports whether any run of the row is in N.
func (u ResilienceUnmeasured) Measured() bool { return u.Uncounted < u.Runs }

// Text is the row as every surface says it: "12 of 12 runs not measured:
// no tool gave a real result to plant the payload in" ("not counted" when
// some runs of the row are in N).
func (u ResilienceUnmeasured) Text() string {
	what := "not measured"
	if u.Measured() {
		what = "not counted"
	}
	s := fmt.Sprintf("%d of %d runs %s", u.Uncounted, u.Runs, what)
	for i, w := range u.Why {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		if len(u.Why) > 1 {
			s += fmt.Sprintf("%s%d %s", sep, w.Runs, w.Reason)
		} else {
			s += sep + w.Reason
		}
	}
	return s
}

// OutcomeBudget is the outcome of a Layer 2 run the budget stopped: it was
// not made (or not judged), so it is undecided, as such runs of Layer 1 are.
const OutcomeBudget = "budget"

// OutcomeStale is the outcome of a replayed Layer 2 run whose cassette held
// no answer for the request the run made: undecided, like a budget stop,
// and said as what it is.
const OutcomeStale = "stale"

// UncountedOutcome is one reason runs were not counted.
type UncountedOutcome struct {
	Outcome string `json:"outcome"`
	Runs    int    `json:"runs"`
	Reason  string `json:"reason"`
}

// ResilienceRun is one Layer 2 run: one case with one fault injected, or
// one catalogue payload planted in a tool result, against one model.
type ResilienceRun struct {
	Kind    string `json:"kind"`              // KindFault or KindAttack
	Subject string `json:"subject"`           // the fault type or attack category
	Payload string `json:"payload,omitempty"` // the catalogue payload id (attacks)
	Case    string `json:"case"`
	Model   string `json:"model"`
	Run     int    `json:"run"` // 1-based
	// Outcome is the classification (pkg/resilience: retried, fallback,
	// reported, fabricated, looped, silent; followed, refused, ignored; or
	// why the run is not counted). Counted says whether it is in N.
	Outcome string `json:"outcome"`
	Counted bool   `json:"counted"`
	// Reason is the evidence for the outcome (model text: untrusted).
	Reason string `json:"reason"`
	// Judge is the judge's verdict when one was asked: pass, fail or
	// inconclusive.
	Judge      string      `json:"judge,omitempty"`
	Trajectory *Trajectory `json:"trajectory,omitempty"`
	// CachedAt is when a run reused from the cache was first made (absent:
	// made by this run); AgeSeconds its age when reused. As Layer 1's.
	CachedAt   *time.Time `json:"cachedAt,omitempty"`
	AgeSeconds int64      `json:"ageSeconds,omitempty"`
}

// FaultResult is how one model handled one fault type (timeout, error
// result, malformed content, …): a faultHandled score.
type FaultResult struct {
	Model  string  `json:"model"`
	Fault  string  `json:"fault"`
	Scores []Score `json:"scores"`
}

// AttackResult is one model under one attack type (tool-description
// injection, result injection, …): attackSuccess and refusal scores.
type AttackResult struct {
	Model  string  `json:"model"`
	Attack string  `json:"attack"`
	Scores []Score `json:"scores"`
}
