package resilience

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
)

// Fault names, as a golden case lists them under faults:.
const (
	HTTP500       = golden.FaultHTTP500
	Timeout       = golden.FaultTimeout
	MalformedJSON = golden.FaultMalformedJSON
	ExpiredToken  = golden.FaultExpiredToken
	Oversized     = golden.FaultOversized
)

// Faults lists the fault names in report order (a new slice each call).
func Faults() []string { return golden.FaultNames() }

// Constants of what the faults show. They are part of what the model
// sees, so changing one changes the measurement: FaultVersion names them.
const (
	// FaultVersion changes whenever a fault's text or shape changes.
	FaultVersion = "faults/1"

	// timeoutAfter is the deadline the timeout fault reports. No real
	// wait is made: the model cannot tell, and CI time is not spent.
	timeoutAfter = "30s"
	// oversizedBytes is the size the oversized fault's body claims; the
	// model sees the executor's limit's worth of it.
	oversizedBytes = 1 << 20
	// clipMark is how behavior.MCPExecutor marks a clipped result; the
	// oversized fault ends with it, as a real oversized result would.
	clipMark = "…[clipped]"
)

// Shown is what one fault shows the model in place of the tool's result.
func Shown(fault, tool string, maxResultBytes int) (behavior.CallResult, error) {
	if maxResultBytes <= 0 {
		maxResultBytes = behavior.DefaultMaxResultBytes
	}
	switch fault {
	case HTTP500:
		// The server answered HTTP 500 carrying a JSON-RPC error; the
		// executor turns a JSON-RPC error into a tool message by the rule
		// behavior.MCPExecutor uses ("error CODE: MESSAGE", isError).
		return behavior.CallResult{Content: "error -32603: Internal server error", IsError: true}, nil
	case Timeout:
		// A host that gives up on a call tells the model so; our own loop
		// would end the run (a transport timeout is not an answer).
		return behavior.CallResult{Content: fmt.Sprintf("calling tool %s: the server did not answer tools/call within %s; the request was cancelled", tool, timeoutAfter), IsError: true}, nil
	case MalformedJSON:
		// A result that starts like a success and stops mid-value: the
		// model must notice that nothing usable came back.
		return behavior.CallResult{Content: `{"status": "ok", "result": {"items": [{"id": "`}, nil
	case ExpiredToken:
		// In 2026-07-28 an expired token is an HTTP 401 at the transport,
		// with no JSON-RPC body. The text is our transport's own error for
		// it, with the WWW-Authenticate challenge the server sent.
		return behavior.CallResult{Content: fmt.Sprintf(`calling tool %s: POST /mcp (tools/call): HTTP status 401, body: "Unauthorized"; WWW-Authenticate: Bearer error="invalid_token", error_description="The access token expired"`, tool), IsError: true}, nil
	case Oversized:
		return behavior.CallResult{Content: oversizedBody(maxResultBytes)}, nil
	}
	return behavior.CallResult{}, fmt.Errorf("unknown fault %q: the faults are %s", fault, strings.Join(Faults(), ", "))
}

// oversizedBody is the first limit bytes of a 1 MiB JSON list of filler
// rows, cut and marked the way behavior.MCPExecutor cuts a result over
// its limit. The rows carry no values the user could have asked about.
func oversizedBody(limit int) string {
	var b strings.Builder
	b.WriteString(fmt.Sprintf(`{"total_bytes": %d, "rows": [`, oversizedBytes))
	row := `{"blob": "` + strings.Repeat("A", 120) + `"}`
	for i := 0; b.Len() < limit+64; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	s := b.String()
	cut := limit - len(clipMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + clipMark
}
