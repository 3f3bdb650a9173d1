package conformance

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestSCHEMAMutants(t *testing.T) {
	for _, c := range schemaFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// SCHEMA-3 (SHOULD) warns on its mutant, SCHEMA-4 (info) notes it: an
// info check's finding is counted as info, never as a warning.
func TestSCHEMAOtherMutants(t *testing.T) {
	featAssertShould(t, SCHEMA3)
	featAssertShould(t, SCHEMA4)
}
