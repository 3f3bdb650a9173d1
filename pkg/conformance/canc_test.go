package conformance

import "testing"

func TestCANCMutants(t *testing.T) {
	for _, c := range cancFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}
