package conformance

import "testing"

func TestREMMutants(t *testing.T) {
	for _, c := range remFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestREM4Mutant(t *testing.T) { assertShould(t, REM4) }
