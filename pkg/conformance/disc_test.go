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

// A server declaring sampling, elicitation or roots (client capabilities)
// gets a DISC-9 warning; the reference server, which declares only its
// own, passes.
func TestDISCShouldMutants(t *testing.T) { featAssertShould(t, DISC9) }
