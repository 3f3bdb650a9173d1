package report

import "encoding/json"

// Trajectory is what happened in one Layer 1 run: each model turn, the
// tool calls it made and what the server (or a stub) answered. The prompt
// is the case's; the system prompt is fixed by the harness version. Every
// text is clipped by the producer (Truncated says so) so that a chatty
// model or server cannot grow the report without bound.
type Trajectory struct {
	Turns []Turn `json:"turns"`
	// Final is the model's last text.
	Final string `json:"final"`
	// End is how the run ended: answered (the model stopped calling
	// tools), step-limit, input-missing (an MRTR request the case's inputs
	// do not answer), budget, stale (a replayed request the cassette did
	// not hold: not measured), or error.
	End    string `json:"end"`
	Reason string `json:"reason,omitempty"`
	// ModelCalls counts provider calls; tokens are summed over them.
	ModelCalls   int    `json:"modelCalls"`
	InputTokens  int    `json:"inputTokens"`
	OutputTokens int    `json:"outputTokens"`
	DurationMs   int64  `json:"durationMs"`
	Served       string `json:"served,omitempty"`
	// Dropped are sampling parameters the provider layer left out.
	Dropped   []string `json:"dropped,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
}

// Turn is one model reply.
type Turn struct {
	Text         string     `json:"text,omitempty"`
	StopReason   string     `json:"stopReason"`
	LatencyMs    int64      `json:"latencyMs"`
	InputTokens  int        `json:"inputTokens"`
	OutputTokens int        `json:"outputTokens"`
	Calls        []ToolCall `json:"calls,omitempty"`
}

// ToolCall is one call the model made and its result.
type ToolCall struct {
	Name string `json:"name"`
	// Arguments are the parsed arguments; ArgumentsRaw and ParseError are
	// set instead when the model's JSON did not parse.
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	ArgumentsRaw string          `json:"argumentsRaw,omitempty"`
	ParseError   string          `json:"parseError,omitempty"`
	Result       string          `json:"result"`
	IsError      bool            `json:"isError,omitempty"`
	// Stubbed is true when eval.stubs answered instead of the server.
	Stubbed bool `json:"stubbed,omitempty"`
	// InputRounds counts MRTR rounds answered from the case's inputs.
	InputRounds int   `json:"inputRounds,omitempty"`
	DurationMs  int64 `json:"durationMs"`
}
