package report

// Telemetry is Layer 3: what the runs cost in time and money.
type Telemetry struct {
	Latency []Latency `json:"latency"`
	Usage   []Usage   `json:"usage"`
}

// Latency is the distribution of tool-call round trips, per model and
// tool ("" for all tools).
type Latency struct {
	Model     string    `json:"model"`
	Tool      string    `json:"tool"`
	Samples   int       `json:"samples"`
	P50Ms     float64   `json:"p50Ms"`
	P95Ms     float64   `json:"p95Ms"`
	MaxMs     float64   `json:"maxMs"`
	Direction Direction `json:"direction"` // always lower
}

// Usage is the tokens and the estimated cost of one model's runs.
type Usage struct {
	Model        string    `json:"model"`
	InputTokens  int64     `json:"inputTokens"`
	OutputTokens int64     `json:"outputTokens"`
	CostUSD      float64   `json:"costUSD"`
	Direction    Direction `json:"direction"` // always lower
}
