package conformance

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestCANCMutants(t *testing.T) {
	for _, c := range cancFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// CANC-1 calls no tool of its own: its monitor judges every request of the
// run, the tool calls of the LOG and PROG checks included, and points at
// the cancellation the mutant sends with each tools/list answer.
func TestCANC1MonitorWatchesOtherChecksCalls(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			_, good := runChecks(t, refTarget(t, kind), 1, "CANC-1", "LOG-1", "PROG-1")
			g := good["CANC-1"]
			if g.Verdict != check.Passed || g.Watched == nil || g.Watched.Offending != 0 {
				t.Fatalf("CANC-1 on the correct server: %s %+v: %s", g.Verdict, g.Watched, g.Outcome.Message)
			}
			// The exchanges it watched outnumber its own observations
			// (one discover and the tools/list pages): the other checks'
			// calls are among them.
			alone, _ := runChecks(t, refTarget(t, kind), 1, "CANC-1")
			if a := alone.Checks[0].Watched; a == nil || g.Watched.Exchanges <= a.Exchanges {
				t.Fatalf("CANC-1 watched %d exchanges with LOG-1 and PROG-1 running, %+v alone", g.Watched.Exchanges, a)
			}
			_, bad := runChecks(t, refTarget(t, kind, "CANC-1"), 1, "CANC-1")
			b := bad["CANC-1"]
			if b.Verdict != check.Failed || b.Watched == nil || b.Watched.Offending == 0 {
				t.Fatalf("CANC-1 on its mutant: %s %+v: %s", b.Verdict, b.Watched, b.Outcome.Message)
			}
			if ev := b.Outcome.Evidence[0]; ev.In != "notification notifications/cancelled" || ev.Pointer != "/method" || !strings.Contains(b.Outcome.Message, "while answering tools/list") {
				t.Fatalf("CANC-1's monitor should point at the cancellation: %q %+v", b.Outcome.Message, ev)
			}
		})
	}
}
