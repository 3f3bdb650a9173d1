package conformance

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestREMMutants(t *testing.T) {
	for _, c := range remFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestREM4Mutant(t *testing.T) { assertShould(t, REM4) }

// REM-2's SHOULD, both ways: a modern-only server that rejects initialize
// without naming the supported versions is warned; the same rejection from
// a dual-era server is not (versioning.mdx: the SHOULD is for modern-only
// servers), and the correct modern-only server is not warned either.
func TestREM2UnnamedVersions(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			_, res := runChecks(t, refTarget(t, kind, refserver.MutantUnnamedVersions), 1, "REM-2")
			r := res["REM-2"]
			if r.Verdict != check.Warned || !strings.Contains(r.Outcome.Message, "without naming the supported versions") || !strings.Contains(r.Outcome.Message, "2026-07-28") {
				t.Fatalf("REM-2 on a modern-only server whose initialize error names no version: %s: %s", r.Verdict, detailsOf(r))
			}
			_, res = runChecks(t, dualRefTarget(t, kind, refserver.MutantUnnamedVersions), 1, "REM-2")
			if r := res["REM-2"]; r.Verdict != check.Passed || !strings.Contains(detailsOf(r), "dual-era") {
				t.Fatalf("REM-2 on a dual-era server whose initialize error names no version: %s: %s", r.Verdict, detailsOf(r))
			}
			_, res = runChecks(t, refTarget(t, kind), 1, "REM-2")
			if r := res["REM-2"]; r.Verdict != check.Passed {
				t.Fatalf("REM-2 on the modern-only server that names its versions: %s: %s", r.Verdict, detailsOf(r))
			}
		})
	}
}
