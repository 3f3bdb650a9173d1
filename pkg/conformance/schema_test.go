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

// SCHEMA-3 (SHOULD) and SCHEMA-4 (info) warn on their mutants.
func TestSCHEMAOtherMutants(t *testing.T) {
	featAssertShould(t, SCHEMA3)
	featAssertShould(t, SCHEMA4)
}
