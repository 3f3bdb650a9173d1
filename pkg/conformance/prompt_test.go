package conformance

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestPROMPTMutants(t *testing.T) {
	for _, c := range promptFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestPROMPTShouldMutants(t *testing.T) { featAssertShould(t, PROMPT2) }
