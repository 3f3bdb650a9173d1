package report

// Layer 0's section. Package conformance fills it and package check
// aggregates its results, but the types live here so that a reader of
// reports (the gate, the renderers, a tool reading report.json) needs
// nothing of the harness that produced them. The JSON is also what
// `mcp-eval check --json FILE` writes (conformance.schema.json).

// Verdicts of a whole Layer 0 run (Conformance.Verdict).
const (
	ConformancePass = "pass" // every MUST passed N/N
	ConformanceFail = "fail" // a MUST failed at least once
	// ConformanceIncomplete: no MUST failed, but one could not be judged
	// in every run (its runs errored): neither pass nor fail.
	ConformanceIncomplete = "incomplete"
	ConformanceLegacy     = "legacy" // the server does not speak 2026-07-28
)

// Conformance is Layer 0's result: one server against the 2026-07-28
// checklist.
type Conformance struct {
	Target          string            `json:"target"`
	Transport       string            `json:"transport"`
	Era             Era               `json:"era"`
	ProtocolVersion string            `json:"protocolVersion"`
	ServerInfo      *Implementation   `json:"serverInfo,omitempty"`
	Verdict         string            `json:"verdict"`
	Runs            int               `json:"runs"`
	CallTools       []string          `json:"callTools,omitempty"` // --call-tool names: what CALL and MRTR could reach; absent when none
	Checks          []CheckResult     `json:"checks"`
	Unobservable    map[string]string `json:"unobservable"`
	Legacy          *LegacyReport     `json:"legacy,omitempty"`
	LegacySide      *LegacySide       `json:"legacySide,omitempty"`
	LostProcess     *LostProcess      `json:"lostProcess,omitempty"`
	Deprecated      []DeprecatedUse   `json:"deprecated"`
	Probe           []ProbeStep       `json:"probe"`
	Notes           []string          `json:"notes"`
	DurationMs      float64           `json:"durationMs"`
}

// Era is the protocol family a server speaks (basic/versioning.mdx §eras).
type Era string

const (
	EraModern Era = "modern" // 2026-07-28: server/discover, per-request _meta
	EraLegacy Era = "legacy" // 2025-11-25 and earlier: initialize handshake
)

// LegacySide is what a legacy initialize, sent as the first message of a
// connection of its own, showed of a modern server. A server that answers
// it with a legacy InitializeResult and serves a legacy request in that
// session is dual-era (basic/versioning.mdx §Terminology); REM-2, REM-4 and
// META-1 judge such a server by the rules for dual-era servers.
type LegacySide struct {
	DualEra bool `json:"dualEra"`
	// LegacyVersion is the revision initialize agreed on (dual-era only).
	LegacyVersion string `json:"legacyVersion,omitempty"`
	// Observed says what the handshake and the request after it got.
	Observed string `json:"observed"`
}

// LostProcess is the run's own stdio process exiting in the middle of the
// run, with requests in flight: the checks after it on that process are
// not judged, and what the process was serving says why.
type LostProcess struct {
	ExitCode int `json:"exitCode"`
	// Serving names the requests in flight then (method, and the tool,
	// prompt or resource), each once.
	Serving []string `json:"serving"`
	// Culprit is the one of them that, sent again alone to a new process
	// (after server/discover), ended that process too, with
	// CulpritExitCode; "" when none did.
	Culprit         string `json:"culprit,omitempty"`
	CulpritExitCode int    `json:"culpritExitCode,omitempty"`
	// Replay says what sending them again found when no culprit was
	// named (none ended a process, or a new process could not start).
	Replay string `json:"replay,omitempty"`
}

// Implementation is a server's (or client's) name and version as it
// reported them.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Title   string `json:"title,omitempty"`
}

// ProbeStep is one request of era detection.
type ProbeStep struct {
	Method  string `json:"method"`
	Version string `json:"version,omitempty"`
	Status  int    `json:"httpStatus,omitempty"`
	Code    int64  `json:"errorCode,omitempty"`
	Outcome string `json:"outcome"`
}

// Level is how binding a rule is.
type Level string

const (
	Must   Level = "MUST"   // MUST / MUST NOT / derived MUST: a failure fails the run
	Should Level = "SHOULD" // SHOULD / SHOULD NOT: a failure is reported as a warning
	Info   Level = "info"   // not normative; reported for the reader
)

// CheckVerdict is the outcome of one run of a check.
type CheckVerdict string

const (
	CheckPassed  CheckVerdict = "pass"
	CheckFailed  CheckVerdict = "fail"
	CheckWarned  CheckVerdict = "warn"
	CheckSkipped CheckVerdict = "skip"
	CheckErrored CheckVerdict = "error" // the harness could not run the check
	// CheckNoted is what an info check reports when it found something
	// worth the reader's eye: not normative, so never a warning.
	CheckNoted CheckVerdict = "info"
)

// SkipNeedsCall is the SkipCause of a check that skipped because calling
// a tool the server lists needs the user's permission (--call-tool).
const SkipNeedsCall = "needs-call-permission"

// CheckResult is one check's aggregated outcome over its runs.
type CheckResult struct {
	ID     string `json:"id"`
	Level  Level  `json:"level"`
	Family string `json:"family"`
	// FamilyTitle is the family's title from the check registry, so that
	// a report read later needs no table to head its families.
	FamilyTitle string               `json:"familyTitle,omitempty"`
	Spec        string               `json:"spec"`
	Doc         string               `json:"doc"`
	Fix         string               `json:"fix,omitempty"`
	Seed        int                  `json:"seed,omitempty"`
	Verdict     CheckVerdict         `json:"verdict"`
	Runs        int                  `json:"runs"`
	Counts      map[CheckVerdict]int `json:"counts"`
	Flaky       bool                 `json:"flaky,omitempty"`
	// SameAs names an earlier result (in report order) that reported the
	// same fault: every finding of this one points at a response value
	// (method, pointer and value) that result's evidence already shows.
	// One wire fault broken by two rules is one fault to fix; a renderer
	// may show the two as one row, and a summary counts it once.
	SameAs     string  `json:"sameAs,omitempty"`
	Outcome    Outcome `json:"outcome"`
	DurationMs float64 `json:"durationMs"`
	// Watched is what the check's monitor saw over every exchange of the
	// run (nil for a check without one). A monitor that saw the rule
	// broken counts as one more failed run, so k/N and the gate see it.
	Watched *Watched `json:"watched,omitempty"`
}

// Watched is a monitor's account of one run: how many exchanges it
// judged, how many broke the rule, and what the first one showed (its
// evidence leads the check's outcome).
type Watched struct {
	Exchanges int    `json:"exchanges"`
	Offending int    `json:"offending"`
	First     string `json:"first,omitempty"`
}

// Passes is k in "k/N": runs that passed (a warning counts as a pass of a
// MUST run only when the check warned about a tolerated deviation; a note
// of an info check breaks no rule).
func (r *CheckResult) Passes() int {
	return r.Counts[CheckPassed] + r.Counts[CheckWarned] + r.Counts[CheckNoted]
}

// Held is how many runs of r did not break its rule: the passes, and the
// runs that skipped because the rule had nothing to judge there (a list
// of one page; a discover that failed, which DISC-1 judges). A MUST
// check's floor is met by these, as Layer 0's own verdict fails only a
// check with a failed run.
func (r *CheckResult) Held() int {
	return r.Passes() + r.Counts[CheckSkipped]
}

// FailedARun says whether a run of r failed (a monitor's failure of a run
// counts: Verdict).
func (r *CheckResult) FailedARun() bool {
	return r.Verdict == CheckFailed || r.Counts[CheckFailed] > 0
}

// Unjudged says whether r failed no run but errored in one: where it fell
// short, the harness could not judge it.
func (r *CheckResult) Unjudged() bool {
	return !r.FailedARun() && (r.Verdict == CheckErrored || r.Counts[CheckErrored] > 0)
}

// Outcome is the result of one run of one check.
type Outcome struct {
	Verdict CheckVerdict `json:"verdict"`
	// SkipCause is why a skipped check did not apply when a reader can
	// act on it: SkipNeedsCall when a listed tool was not allowed.
	SkipCause string     `json:"skipCause,omitempty"`
	Message   string     `json:"message,omitempty"`
	Details   []string   `json:"details,omitempty"`
	Evidence  []Evidence `json:"evidence,omitempty"`
}

// Evidence is what was sent and what came back, kept short.
type Evidence struct {
	Transport string            `json:"transport,omitempty"`
	Request   string            `json:"request,omitempty"` // method and a body excerpt
	Headers   map[string]string `json:"headers,omitempty"` // request headers that matter
	Status    int               `json:"httpStatus,omitempty"`
	// Response is an excerpt of the response; when Pointer is set it is
	// centred on the value Pointer names, so that it never stops before
	// the fault.
	Response string `json:"response,omitempty"`
	// Pointer is where the fault is, when a value the server sent caused
	// the finding: an RFC 6901 pointer into the JSON-RPC response message
	// ("/result/ttlMs", "/error/data/supported").
	Pointer string `json:"pointer,omitempty"`
	// Value is the JSON value at Pointer as the server sent it, clipped.
	Value string `json:"value,omitempty"`
	// Missing says the member Pointer names is absent from the object
	// that holds it (then Value is empty and Response is centred on that
	// object).
	Missing bool `json:"missing,omitempty"`
	// OnStatus says the fault is the HTTP status (httpStatus) the server
	// answered with, not a value in the message.
	OnStatus bool `json:"onStatus,omitempty"`
	// In names the message Pointer is into when the fault is not in the
	// response but in another message the server sent on the exchange (a
	// notification or a server-to-client request): its kind and method,
	// "notification notifications/message". Pointer and Value are then
	// into that message, and Message is its excerpt.
	In string `json:"in,omitempty"`
	// Message is an excerpt of the message In names, centred on the value
	// at Pointer as Response is.
	Message string `json:"message,omitempty"`
}

// LegacyReport is what a 2025-11-25 (or older) server must change to serve
// 2026-07-28: a migration list instead of a wall of unrelated failures.
type LegacyReport struct {
	Speaks   string          `json:"speaks"`
	Blockers []LegacyBlocker `json:"blockers"`
}

// LegacyBlocker is one thing in the way, with what replaces it.
type LegacyBlocker struct {
	ID       string `json:"id"`
	Found    string `json:"found"`
	Instead  string `json:"instead"`
	Evidence string `json:"evidence,omitempty"`
}

// DeprecatedUse is a feature the server uses that 2026-07-28 deprecates
// (deprecated.mdx): an info finding with the earliest removal.
type DeprecatedUse struct {
	Feature         string `json:"feature"`
	Evidence        string `json:"evidence"`
	Migration       string `json:"migration"`
	EarliestRemoval string `json:"earliestRemoval"`
}

// FromConformance starts a report from a Layer 0 result: the section
// itself and the server identity it found. The target's paths are made
// relative to the workspace.
func FromConformance(c *Conformance, workspace string) *Report {
	r := New()
	r.Conformance = c
	target := c.Target
	if c.Transport == "stdio" {
		target = RelCommand(workspace, target)
		c.Target = target
	}
	r.Server = Server{Target: target, Transport: c.Transport, Era: string(c.Era), ProtocolVersion: c.ProtocolVersion}
	if c.ServerInfo != nil {
		r.Server.Name, r.Server.Version = c.ServerInfo.Name, c.ServerInfo.Version
	}
	return r
}
