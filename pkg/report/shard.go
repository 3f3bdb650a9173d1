package report

// Shard says that a report holds one share of a run split over several
// jobs (`mcp-eval run --shard i/n`): which share, which units of Layers 1
// and 2 it ran, and what the split was balanced on. `mcp-eval report
// merge` checks the shards of a run against each other with it.
type Shard struct {
	// Index is 1-based: the shard i of Count.
	Index int `json:"index"`
	Count int `json:"count"`
	// Units are the case × model pairs this shard ran (Layers 1 and 2);
	// Total is how many the whole run has, over every shard.
	Units []ShardUnit `json:"units"`
	Total int         `json:"total"`
	// Balance is how the units were split: BalanceDuration (by each
	// case's duration in Baseline) or BalanceCount.
	Balance string `json:"balance"`
	// Baseline is the report the split was balanced on (and gated
	// against), nil when there was none: every shard of a run must name
	// the same one.
	Baseline *ReportRef `json:"baseline,omitempty"`
}

// ShardUnit is one case × model of a sharded run; Model is as the
// report's results name it.
type ShardUnit struct {
	Case  string `json:"case"`
	Model string `json:"model"`
}

// Balances of a Shard.
const (
	BalanceDuration = "duration"
	BalanceCount    = "count"
)

// MaxLatencySamples bounds the samples a latency row keeps
// (Latency.SamplesMs, ToolUsage.SamplesMs): enough for the rows of a
// large run to be merged exactly, few enough to keep reports small. A row
// with more keeps none, and a merge of it has no percentiles.
const MaxLatencySamples = 4096
