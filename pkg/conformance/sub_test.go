package conformance

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

func TestSUBMutants(t *testing.T) {
	for _, c := range subFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestSUBInfo(t *testing.T) { assertPasses(t, SUB8) }

// A server may end a subscription by itself; the reference server's
// SUB-1 mutant does, right after the acknowledgment (over HTTP that
// breaks SUB-1's open stream). Its cancellation and result come before
// it reads the client's cancellation, so they are not SUB-7's to judge:
// its rule is about what comes after (cancellation.mdx §Timing
// Considerations).
func TestSUB7DoesNotHoldWhatWasInFlight(t *testing.T) {
	_, got := runChecks(t, refTarget(t, "stdio", "SUB-1"), 2, "SUB-7")
	if r := got["SUB-7"]; r.Verdict != check.Passed {
		t.Errorf("SUB-7 on a server that ended the subscription before the client cancelled it: %s: %s", r.Verdict, r.Outcome.Message)
	}
}

func TestSUBFilters(t *testing.T) {
	f := &check.Facts{Capabilities: map[string]json.RawMessage{
		"tools":     json.RawMessage(`{"listChanged":true}`),
		"prompts":   json.RawMessage(`{}`),
		"resources": json.RawMessage(`{"subscribe":true,"listChanged":false}`),
	}, Resources: []mcpclient.Resource{{URI: "file:///a"}}}
	if got := subDeclared(f); got != (subCaps{tools: true, subscribe: true}) {
		t.Errorf("declared %+v", got)
	}
	want := map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"file:///a"}}
	if got := subFullFilter(f); !reflect.DeepEqual(got, want) {
		t.Errorf("filter %v, want %v", got, want)
	}
	if got := subFullFilter(&check.Facts{}); !reflect.DeepEqual(got, map[string]any{"toolsListChanged": true}) {
		t.Errorf("filter without capabilities %v", got)
	}
}
