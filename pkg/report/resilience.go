package report

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
