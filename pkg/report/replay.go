package report

// Replay says that the model answers of Layers 1 and 2 came from a
// cassette (mcp-eval --replay), not from the models: the tool calls went
// to the live server, the model turns were the recorded ones. The gate
// compares a replayed report only with a baseline replayed from the same
// cassette (Hash), and every surface labels its results replayed.
type Replay struct {
	// Cassette is the cassette file, relative to the workspace.
	Cassette string `json:"cassette"`
	Hash     string `json:"hash"`
	// Answered counts the model requests answered from the cassette.
	Answered int `json:"answered"`
	// Stale are the requests the cassette could not answer, the first of
	// each conversation: the server's tools or results changed what the
	// model would have been asked. Those runs ended as errors.
	Stale []StaleTurn `json:"stale"`
	// MoreStale counts the stale turns left out of Stale (it keeps at
	// most MaxStaleTurns).
	MoreStale int `json:"moreStale,omitempty"`
}

// MaxStaleTurns bounds Replay.Stale: a cassette stale everywhere (a
// changed tool list) would otherwise list every run.
const MaxStaleTurns = 200

// StaleTurn is one request the cassette did not hold.
type StaleTurn struct {
	Model string `json:"model"`
	Judge bool   `json:"judge,omitempty"`
	Case  string `json:"case"`
	Run   int    `json:"run"`
	// Scenario is "" for Layer 1, else the Layer 2 fault or attack.
	Scenario string `json:"scenario,omitempty"`
	Turn     int    `json:"turn"`
	// Diff says what differed from the recorded request.
	Diff string `json:"diff"`
}
