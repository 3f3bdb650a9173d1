package conformance

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestDISCMutants(t *testing.T) {
	for _, c := range discFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// A server declaring sampling, elicitation or roots (client capabilities)
// gets a DISC-9 warning; the reference server, which declares only its
// own, passes.
func TestDISCShouldMutants(t *testing.T) { featAssertShould(t, DISC9) }

// A server without server/discover fails DISC-1; the checks that would
// only find its absence again (capabilities not declared, requests on
// server/discover not served) skip or use another request, so the
// reviewer sees one fault, not seven.
func TestNoDiscoverIsOneFinding(t *testing.T) {
	_, got := runChecks(t, refTarget(t, "stdio", "DISC-1"), 1, "DISC-1", "DISC-6", "LOG-3", "COMP-2", "OTEL-1", "META-2", "STDIO-5", "SUB-2")
	if r := got["DISC-1"]; r.Verdict != check.Failed {
		t.Errorf("DISC-1 on its mutant: %s: %s", r.Verdict, r.Outcome.Message)
	}
	for _, id := range []string{"DISC-6", "LOG-3", "COMP-2", "OTEL-1", "META-2", "STDIO-5", "SUB-2"} {
		if r := got[id]; r.Verdict == check.Failed || r.Verdict == check.Warned || r.Verdict == check.Errored || r.Verdict == "" {
			t.Errorf("%s on a server without server/discover: %s: %s", id, r.Verdict, r.Outcome.Message)
		}
	}
}
