package conformance

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestCACHEMutants(t *testing.T) {
	for _, c := range cacheFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// CACHE-2 is a SHOULD NOT that needs a request asking for input: on the
// reference server send_email, allowed explicitly.
func TestCACHE2Mutant(t *testing.T) {
	stateAssert(t, CACHE2, stateMRTRTool, check.Passed, check.Warned)
}
