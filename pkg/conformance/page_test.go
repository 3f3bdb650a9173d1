package conformance

import (
	"encoding/json"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestPAGEMutants(t *testing.T) {
	for _, c := range pageFamily.checks {
		switch c.Level {
		case check.Must:
			t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
		case check.Should:
			t.Run(c.ID, func(t *testing.T) { stateAssert(t, c, nil, check.Passed, check.Warned) })
		}
	}
}

// PAGE-1 (info) passes on the reference server, whose tools span two pages.
func TestPAGE1(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		if r := stateRun(t, refTarget(t, kind), 1, nil, "PAGE-1")["PAGE-1"]; r.Verdict != check.Passed {
			t.Errorf("%s: %s: %s", kind, r.Verdict, r.Outcome.Message)
		}
	}
}

func TestPageSame(t *testing.T) {
	a := json.RawMessage(`{"tools":[{"name":"a","x":1}],"nextCursor":"c","ttlMs":5}`)
	b := json.RawMessage(`{"ttlMs":9,"nextCursor":"d","tools":[{"x":1,"name":"a"}]}`)
	c := json.RawMessage(`{"tools":[{"name":"b"}],"nextCursor":"c"}`)
	if !pageSame(a, b, "tools") || pageSame(a, c, "tools") {
		t.Fatal("pageSame compares the items as JSON values, not the cursor")
	}
}
