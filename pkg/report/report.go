// Package report is the one versioned result of an mcp-eval run: every
// layer's results, the run's metadata and the gate's verdict, as plain
// JSON-tagged data. It computes nothing and renders nothing; producers fill
// it, package gate judges it, package render prints it. It imports no other
// package of this module (TestNoModuleDependencies), so reading a report
// never drags in the harness that wrote it.
//
// Quick start:
//
//	layer0, tools, err := conformance.Run(ctx, target, opts) // layer0 is a *report.Conformance
//	rep := report.FromConformance(layer0, workspace)
//	rep.Run = report.Run{Commit: sha, HarnessVersion: "0.1.0", StartedAt: start, FinishedAt: time.Now()}
//	rep.ToolSurfaceHash = report.ToolSurfaceHash(mcpclient.ToolSurfaces(tools))
//	data, err := report.Marshal(rep) // validated against report.schema.json; write it with atomicfile
//
// and back: rep, err := report.Load("report.json") treats the file as
// untrusted (size limit, schema, version).
//
// Every slice is encoded as [] (never null), every score carries its good
// direction, and every path is relative to the workspace (RelPath).
package report

import "time"

// SchemaVersion is the version of the report format this package reads and
// writes. A reader rejects any other version rather than guess at it; a
// change that old readers would misread bumps it.
const SchemaVersion = 1

// Report is one run of mcp-eval over one server. A layer that did not run
// has no section (the key is absent, never null).
type Report struct {
	SchemaVersion int    `json:"schemaVersion"`
	Run           Run    `json:"run"`
	Server        Server `json:"server"`
	// ToolSurfaceHash is ToolSurfaceHash over the tools the server listed:
	// "sha256:" and 64 hex digits, or "" when the tools could not be listed.
	ToolSurfaceHash string `json:"toolSurfaceHash"`
	// Tools are the names of the tools the server listed, in its order
	// (absent when the tools could not be listed): the gate names a tool
	// the baseline listed and the server no longer does.
	Tools []string `json:"tools,omitempty"`
	// ToolTokens is what the listed tools cost in every model request,
	// absent when Layer 0 did not run or listed no tools.
	ToolTokens *ToolTokens `json:"toolTokens,omitempty"`
	// Models are the models the run used (Layers 1 and 2), each as
	// requested and as the provider said it served it.
	Models []Model `json:"models"`

	Conformance *Conformance `json:"conformance,omitempty"` // Layer 0
	Behavior    *Behavior    `json:"behavior,omitempty"`    // Layer 1
	Resilience  *Resilience  `json:"resilience,omitempty"`  // Layer 2
	Telemetry   *Telemetry   `json:"telemetry,omitempty"`   // Layer 3
	// Spend is the model spend of Layers 1 and 2 under one budget,
	// absent when no layer called a model.
	Spend *Spend `json:"spend,omitempty"`
	// Replay is set when the model answers came from a cassette.
	Replay *Replay `json:"replay,omitempty"`

	// Shard is set when the report is one share of a sharded run
	// (absent otherwise, and in a merged report).
	Shard *Shard `json:"shard,omitempty"`

	// Gate is the verdict of `mcp-eval gate`, absent until the report is
	// gated.
	Gate *Gate `json:"gate,omitempty"`
}

// New returns an empty report of the current schema version.
func New() *Report {
	return &Report{SchemaVersion: SchemaVersion, Models: []Model{}}
}

// Run is where and when the report was made. The GitHub fields are empty
// outside Actions.
type Run struct {
	Commit string `json:"commit"`
	Ref    string `json:"ref"`
	// Event is the GitHub event name (push, pull_request, schedule, …).
	Event      string `json:"event"`
	Repository string `json:"repository"`
	// WorkflowRunID is GITHUB_RUN_ID (0 outside Actions); RunAttempt is
	// GITHUB_RUN_ATTEMPT.
	WorkflowRunID  int64     `json:"workflowRunId"`
	RunAttempt     int       `json:"runAttempt"`
	HarnessVersion string    `json:"harnessVersion"`
	StartedAt      time.Time `json:"startedAt"`
	FinishedAt     time.Time `json:"finishedAt"`
	// Cancelled, when set, says what stopped the run before it finished
	// ("terminated signal received"); the layers' partial results are
	// left out and the gate's verdict is GateCancelled.
	Cancelled string `json:"cancelled,omitempty"`
	// Untested, when set, says why the run could test nothing: the server
	// could not be built, started or reached. No layer has results, the
	// gate's verdict is GateError, and the report is never a baseline.
	// It is written so that a CI step reading report.json, and the PR
	// comment, say so instead of finding nothing.
	Untested string `json:"untested,omitempty"`
}

// Server identifies the server under test.
type Server struct {
	// Target is the URL, or the stdio command line with workspace paths
	// made relative.
	Target    string `json:"target"`
	Transport string `json:"transport"` // "stdio" | "http"
	Name      string `json:"name"`      // serverInfo.name, "" if the server sent none
	Version   string `json:"version"`
	// Era is "modern" (2026-07-28) or "legacy" (initialize handshake).
	Era             string `json:"era"`
	ProtocolVersion string `json:"protocolVersion"`
}

// Model is one model a run used.
type Model struct {
	// ID is how results refer to the model: the requested name, unique in
	// the report.
	ID       string `json:"id"`
	Provider string `json:"provider"`
	// Requested is the model name sent to the provider; Served is the one
	// the provider answered with (aliases resolve to dated versions). A
	// changed Served makes the model's scores not comparable with a
	// baseline's.
	Requested string `json:"requested"`
	Served    string `json:"served"`
}

// Direction is which way a score is good.
type Direction string

const (
	Higher Direction = "higher" // accuracy, refusal, fault handling
	Lower  Direction = "lower"  // over-trigger, attack success, latency, cost
)

// Count is k of N: how many of N runs passed.
type Count struct {
	K int `json:"k"`
	N int `json:"n"`
}

// Rate is K/N, 0 for N = 0.
func (c Count) Rate() float64 {
	if c.N == 0 {
		return 0
	}
	return float64(c.K) / float64(c.N)
}

// Score is one named measure as k/N with its good direction: for a Higher
// score K counts good runs, for a Lower score K counts bad ones (runs that
// over-triggered, attacks that succeeded).
type Score struct {
	Name      string    `json:"name"`
	Direction Direction `json:"direction"`
	K         int       `json:"k"`
	N         int       `json:"n"`
}

// Count returns the score's k/N.
func (s Score) Count() Count { return Count{K: s.K, N: s.N} }
