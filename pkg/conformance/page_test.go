package conformance

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
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

// The envelope checks' list is the first one served, unless it is long:
// then the shortest, among the lists of declared capabilities when there
// are any.
func TestPageVehicle(t *testing.T) {
	tools := func(n int) []mcpclient.Tool { return make([]mcpclient.Tool, n) }
	prompts := func(n int) []mcpclient.Prompt { return make([]mcpclient.Prompt, n) }
	failed := errors.New("-32601")
	long := pageVehicleMax + 1
	for _, tc := range []struct {
		name string
		f    check.Facts
		want string
	}{
		{"a short first list is kept", check.Facts{Capabilities: declaredCaps("tools", "prompts", "resources"), Tools: tools(pageVehicleMax), Prompts: prompts(1)}, "tools/list"},
		{"a long first list: the shortest", check.Facts{Capabilities: declaredCaps("tools", "prompts", "resources"), Tools: tools(1000), Prompts: prompts(1), Resources: make([]mcpclient.Resource, 3), Templates: make([]mcpclient.ResourceTemplate, 2)}, "prompts/list"},
		{"a tie keeps the earlier", check.Facts{Capabilities: declaredCaps("tools", "prompts", "resources"), Tools: tools(long), Prompts: prompts(2), Resources: make([]mcpclient.Resource, 2), Templates: make([]mcpclient.ResourceTemplate, 2)}, "resources/list"},
		{"an empty list is the shortest", check.Facts{Capabilities: declaredCaps("tools", "resources"), Tools: tools(long), Resources: make([]mcpclient.Resource, 1), PromptsErr: failed}, "resources/templates/list"},
		{"a list that failed is not served", check.Facts{Capabilities: declaredCaps("tools", "prompts"), Tools: tools(3), ToolsErr: failed, Prompts: prompts(long), ResourcesErr: failed, TemplatesErr: failed}, "prompts/list"},
		{"an undeclared list loses to a declared one", check.Facts{Capabilities: declaredCaps("tools"), Tools: tools(1000)}, "tools/list"},
		{"undeclared lists only: the shortest", check.Facts{Capabilities: declaredCaps(), Tools: tools(long), Prompts: prompts(1), ResourcesErr: failed, TemplatesErr: failed}, "prompts/list"},
		{"nothing served", check.Facts{Capabilities: declaredCaps("tools"), ToolsErr: failed, PromptsErr: failed, ResourcesErr: failed, TemplatesErr: failed}, ""},
	} {
		if got := pageVehicle(&tc.f); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
