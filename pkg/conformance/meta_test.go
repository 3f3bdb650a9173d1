package conformance

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestMETAMutants(t *testing.T) {
	for _, c := range metaFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) {
			switch c {
			case META3, META4:
				// They need a request that asks for input: on the reference
				// server only send_email, which is not read-only.
				stateAssert(t, c, stateMRTRTool, check.Passed, check.Failed)
			default:
				assertMutant(t, c)
			}
		})
	}
}

// Without a request that asks for input, META-3 and META-4 skip with the
// hint to allow a tool.
func TestMETASkipWithoutTarget(t *testing.T) {
	res := stateRun(t, refTarget(t, "http"), 1, nil, "META-3", "META-4")
	for _, id := range []string{"META-3", "META-4"} {
		if r := res[id]; r.Verdict != check.Skipped {
			t.Errorf("%s: %s, want skip: %s", id, r.Verdict, r.Outcome.Message)
		}
	}
}
