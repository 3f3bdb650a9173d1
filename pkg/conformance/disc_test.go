package conformance

import "testing"

func TestDISCMutants(t *testing.T) {
	for _, c := range discFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}
