package report

import "time"

// Verdicts of the gate.
const (
	GatePass         = "pass"
	GateFail         = "fail"
	GateInconclusive = "inconclusive" // a drop inside the noise: exit 0 with a warning
	// GateCancelled: the run was stopped (SIGINT, SIGTERM: a cancelled CI
	// job) before it finished; nothing is judged, and such a report is
	// never a baseline. Run.Cancelled says why.
	GateCancelled = "cancelled"
	// GateError: nothing failed, but the harness could not judge what a
	// floor needs (a MUST check's runs errored: the run's deadline
	// passed, the server exited, a request got no answer), so the run
	// says neither pass nor regression: exit 2, never a baseline.
	GateError = "error"
)

// Statuses of one gate item. Only fail, error and inconclusive move the
// verdict.
const (
	ItemPass          = "pass"
	ItemFail          = "fail"
	ItemInconclusive  = "inconclusive"
	ItemKnown         = "known"         // below its floor in the baseline already: tracked, not a new red
	ItemWarn          = "warn"          // worth a look, never a failure (drift, slow slide, legacy)
	ItemNotComparable = "notComparable" // judge, rubric or served model differ: no delta
	ItemInfo          = "info"          // shown, not judged (no baseline to compare a suite score with)
	ItemWaived        = "waived"        // a failure a waiver of the policy accepts until its date
	ItemError         = "error"         // below its floor only by runs the harness could not judge
)

// Gate is the verdict of `mcp-eval gate` on this report.
type Gate struct {
	Verdict string `json:"verdict"`
	// Method names the statistics behind the verdict, so a reader can look
	// them up (docs/gate.md).
	Method      string     `json:"method"`
	Policy      GatePolicy `json:"policy"`
	EvaluatedAt time.Time  `json:"evaluatedAt"`
	// Baseline is the report compared against; nil means floors only, and
	// BaselineNote says why (none given, unreadable, …).
	Baseline     *ReportRef `json:"baseline,omitempty"`
	BaselineNote string     `json:"baselineNote"`
	// History are the earlier green reports walked for drift and slow
	// slides, newest first.
	History   []ReportRef `json:"history"`
	Items     []GateItem  `json:"items"`
	Unmatched []Unmatched `json:"unmatched"`
	Notes     []string    `json:"notes"`
	// Waivers are the policy's waivers and what each did on this report,
	// absent when the policy has none.
	Waivers []WaiverState `json:"waivers,omitempty"`
}

// Waiver states (WaiverState.State).
const (
	WaiverActive  = "active"  // waived a failure of this report
	WaiverUnused  = "unused"  // in date, but its check or case did not fail here (not run, or skipped)
	WaiverExpired = "expired" // past its date: the failure counts again
	WaiverStale   = "stale"   // its check or case passes now: remove the waiver
)

// GateWaiver is one waiver as the policy states it (mcp-eval.yaml
// waivers:): a check, optionally on one transport only, accepted until a
// date (inclusive, UTC) for a reason.
type GateWaiver struct {
	// Check waives a Layer 0 check (on Transport, or on both); Case a
	// Layer 1 case below its floor, for Model or for every model: one of
	// the two is set.
	Check     string `json:"check,omitempty"`
	Case      string `json:"case,omitempty"`
	Model     string `json:"model,omitempty"`
	Transport string `json:"transport,omitempty"`
	Reason    string `json:"reason"`
	Until     string `json:"until"` // YYYY-MM-DD
}

// WaiverState is a waiver and what it did.
type WaiverState struct {
	GateWaiver
	State string `json:"state"`
}

// GatePolicy is the policy the gate ran with, as the user wrote it.
type GatePolicy struct {
	// Text is the policy in the user's words, e.g. "max-drop 0.02".
	Text               string  `json:"text"`
	MaxDrop            float64 `json:"maxDrop"`
	Confidence         float64 `json:"confidence"`
	FloorMust          float64 `json:"floorMust"`
	FloorHard          float64 `json:"floorHard"`
	FloorSoft          float64 `json:"floorSoft"`
	HistoryDepth       int     `json:"historyDepth"`
	FailOnInconclusive bool    `json:"failOnInconclusive"`
	// FailOnLegacy fails a server that speaks legacy MCP only (mcp-eval
	// check); absent, staying legacy is no regression.
	FailOnLegacy bool `json:"failOnLegacy,omitempty"`
	// The Layer 3 cost gates, absent when not set: the largest increase
	// of a model's cost per case over the baseline (a fraction), and the
	// most a whole run may cost in USD.
	MaxCostIncrease  *float64 `json:"maxCostIncrease,omitempty"`
	MaxCostPerRunUSD *float64 `json:"maxCostPerRunUSD,omitempty"`
	// The tool-surface gates, absent when not set: the most tokens the
	// tools array may cost, and its largest rise over the baseline (a
	// fraction).
	MaxToolTokens         *int     `json:"maxToolTokens,omitempty"`
	MaxToolTokensIncrease *float64 `json:"maxToolTokensIncrease,omitempty"`
	// Lint is what a description-lint finding does: off, or fail; absent
	// is the default, warn.
	Lint    string       `json:"lint,omitempty"`
	Waivers []GateWaiver `json:"waivers,omitempty"`
}

// ReportRef points at another report: where it was read from (relative to
// the workspace) and what run made it.
type ReportRef struct {
	Path            string    `json:"path"`
	Commit          string    `json:"commit"`
	WorkflowRunID   int64     `json:"workflowRunId"`
	FinishedAt      time.Time `json:"finishedAt"`
	ToolSurfaceHash string    `json:"toolSurfaceHash"`
}

// Item kinds: what a gate item judges.
const (
	KindCheck  = "check"  // a Layer 0 check
	KindServer = "server" // the server as a whole (era)
	KindCase   = "case"   // a Layer 1 case × model
	KindSuite  = "suite"  // a Layer 1 score × model over all paired cases
	KindFault  = "fault"  // a Layer 2 fault type × model
	KindAttack = "attack" // a Layer 2 attack type × model
	KindDrift  = "drift"  // history: a steady case fell with the tools unchanged
	KindSlide  = "slide"  // history: a slow slide below the best of the last K
	KindModel  = "model"  // a model as a whole (served version changed, missing)

	KindCost    = "cost"    // Layer 3: a model's cost per case against the baseline
	KindRunCost = "runCost" // Layer 3: the whole run's cost against its cap

	KindCassette   = "cassette"   // a replayed run the cassette could not answer
	KindToolTokens = "toolTokens" // Layer 0: the tools array's tokens in one encoding, against its caps
	KindLint       = "lint"       // Layer 0: a description-lint check that found something
	KindWaiver     = "waiver"     // a waiver of the policy that no longer waives anything
	KindTool       = "tool"       // a tool of the baseline's listing gone, or its calls erroring now
)

// GateItem is one judgement with its reason: the rule as written and the
// value observed, like a k6 threshold line.
type GateItem struct {
	Layer   int    `json:"layer"`
	Kind    string `json:"kind"`
	Subject string `json:"subject"` // check id, case id, score name, fault or attack type
	Model   string `json:"model"`   // "" for Layer 0
	Score   string `json:"score"`   // the score judged, "" for a case's pass count
	Status  string `json:"status"`
	// Rule is what was required, Reason why the status follows.
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	// New and Baseline are the k/N compared (Baseline nil when there is
	// none or it is not comparable).
	New       *Count    `json:"new,omitempty"`
	Baseline  *Count    `json:"baseline,omitempty"`
	Direction Direction `json:"direction,omitempty"`
	// Suite scores: the mean over cases now and in the baseline, the
	// interval of the new mean, the paired point drop in the good
	// direction and its one-sided bound.
	Value         *float64 `json:"value,omitempty"`
	Low           *float64 `json:"low,omitempty"`
	High          *float64 `json:"high,omitempty"`
	BaselineValue *float64 `json:"baselineValue,omitempty"`
	Drop          *float64 `json:"drop,omitempty"`
	Bound         *float64 `json:"bound,omitempty"`
	// PValue of the exact test, when one was run.
	PValue *float64 `json:"pValue,omitempty"`
	// Pairs is how many cases were paired for a suite score.
	Pairs int `json:"pairs,omitempty"`
	// The numbers the rule and reason name, for a reader that words them
	// itself (a renderer never parses Reason): FamilySize is how many
	// comparisons the test was corrected for (the exact tests' Tarone K,
	// so the level is α/K; the suite scores compared, Bonferroni) and
	// Level the significance level each exact test was held to. Stats is
	// the statistics Reason ends with, in parentheses ("Fisher p=… ≤ … =
	// α/K"), so Reason without " (Stats)" is the plain reason.
	FamilySize int      `json:"familySize,omitempty"`
	Level      *float64 `json:"level,omitempty"`
	Stats      string   `json:"stats,omitempty"`
	// MaxDrop is the largest fall the rule allows (suite scores, Layer 2
	// rates, slides), a fraction; Limit is a cost rule's limit: the
	// largest rise of cost per case as a fraction (cost), or US dollars
	// for the run (runCost).
	MaxDrop *float64 `json:"maxDrop,omitempty"`
	Limit   *float64 `json:"limit,omitempty"`
	// FloorRuns is how many of the New.N runs the floor needs, ⌈f·N⌉
	// (checks and cases).
	FloorRuns *int `json:"floorRuns,omitempty"`
	// NotComparable says why the item was not compared with the baseline
	// when it could have been ("served model changed (a → b)", "the judge
	// or rubric changed").
	NotComparable string `json:"notComparable,omitempty"`
}

// Unmatched is something one side has and the other does not, so it was
// not compared.
type Unmatched struct {
	Layer   int    `json:"layer"`
	Kind    string `json:"kind"`
	Subject string `json:"subject"`
	Model   string `json:"model"`
	// Side is "new" (only in this report: floors only) or "baseline"
	// (missing from this report).
	Side   string `json:"side"`
	Reason string `json:"reason"`
}
