package conformance

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// Mutant tests run one check alone; in a real run every check runs, and
// checks that watch server state can be fooled by what the others did in
// between (the official-suite cross-check found TOOL-2 and VER-3 doing so).
// These mutants must be caught in a full run too, on both transports
// (VER-3 judges the run's own process on stdio, after every other check).
func TestStatefulMutantsCaughtInAFullRun(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		for _, id := range []string{"TOOL-2", "VER-3", "STATE-1", "TOOL-3"} {
			t.Run(kind+"/"+id, func(t *testing.T) {
				_, res := runChecks(t, refTarget(t, kind, id), 2)
				if r := res[id]; r.Verdict != check.Failed && !(r.Level == check.Should && r.Verdict == check.Warned) {
					t.Fatalf("%s on its mutant in a full run: %s %v: %s", id, r.Verdict, r.Counts, r.Outcome.Message)
				}
			})
		}
	}
}
