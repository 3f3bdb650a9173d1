package conformance

import (
	"encoding/json"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestERRMutants(t *testing.T) {
	for _, c := range errFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// ERR-3 is a SHOULD NOT: its mutant (-32000 for an unknown method) warns.
func TestERR3Mutant(t *testing.T) {
	stateAssert(t, ERR3, nil, check.Passed, check.Warned)
}

func TestErrShape32021(t *testing.T) {
	for raw, n := range map[string]int{
		`{"requiredCapabilities":{"elicitation":{}}}`: 0,
		`{"requiredCapabilities":"elicitation"}`:      1,
		`{}`:                                          1,
		`null`:                                        1,
	} {
		if got := errShape32021(json.RawMessage(raw)); len(got) != n {
			t.Errorf("errShape32021(%s) = %q, want %d problems", raw, msgs(got), n)
		}
	}
}
