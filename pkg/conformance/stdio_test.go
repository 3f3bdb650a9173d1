package conformance

import "testing"

func TestSTDIOMutants(t *testing.T) {
	for _, c := range stdioFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// The STDIO-4 mutant ignores EOF, so this waits for the transport's 2s
// grace before SIGTERM.
func TestSTDIO4Mutant(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the shutdown grace period")
	}
	assertShould(t, STDIO4)
}

func TestSTDIOInfo(t *testing.T) { assertPasses(t, STDIO3) }
