package conformance

import (
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
