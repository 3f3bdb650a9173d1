package conformance

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

func TestCOMPMutants(t *testing.T) {
	for _, c := range compFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestCOMPShouldMutants(t *testing.T) { featAssertShould(t, COMP2) }

func TestCompRefs(t *testing.T) {
	f := &check.Facts{Templates: []mcpclient.ResourceTemplate{{URITemplate: "file:///{+path}/x{?q}"}, {URITemplate: "static://nothing"}}}
	refs := compRefs(f)
	if len(refs) != 1 || refs[0].arg != "path" || refs[0].ref["type"] != "ref/resource" {
		t.Errorf("compRefs = %+v", refs)
	}
}

// One wire fault is one failure: on COMP-3's mutant (no completion in the
// result) COMP-3 fails and COMP-1, which judges what completion holds,
// does not fail too.
func TestCOMPMissingCompletionCountsOnce(t *testing.T) {
	_, res := runChecks(t, refTarget(t, "http", "COMP-3"), 1, "COMP")
	if r := res["COMP-3"]; r.Verdict != check.Failed || !strings.Contains(r.Outcome.Message, "without completion") {
		t.Fatalf("COMP-3 on its mutant: %s %q", r.Verdict, r.Outcome.Message)
	}
	if r := res["COMP-1"]; r.Verdict == check.Failed {
		t.Fatalf("COMP-1 repeats COMP-3's failure: %q", r.Outcome.Message)
	}
}
