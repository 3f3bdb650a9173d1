package conformance

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestRSRCMutants(t *testing.T) {
	for _, c := range rsrcFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestRSRCShouldMutants(t *testing.T) {
	// RSRC-4 skips on the correct server: no read fails there.
	featAssertShouldOnly(t, RSRC4)
}

func TestRSRCMissingURI(t *testing.T) {
	f := &check.Facts{}
	if got := rsrcMissingURI(f); got != "mcp-eval://mcp-eval.invalid/no-such-resource-5e1d2b" {
		t.Errorf("no resources: %q", got)
	}
}
