package mcpclient_test

import (
	"encoding/json"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The hashes were computed when report.ToolSurfaceHash still took
// []mcpclient.Tool: baselines recorded then must still match.
func TestToolSurfacesKeepTheHash(t *testing.T) {
	ro := true
	tools := []mcpclient.Tool{
		{Name: "search", Title: "Search", Description: "find things", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`), Annotations: &mcpclient.ToolAnnotations{ReadOnlyHint: &ro}},
		{Name: "add", Description: "sum", InputSchema: json.RawMessage(`{ "type" : "object" }`), OutputSchema: json.RawMessage(`{broken`), Raw: json.RawMessage(`{"name":"add","annotations":{"x-custom":1,"readOnlyHint":false}}`)},
		{Name: "echo", Description: "<&>", InputSchema: json.RawMessage(`null`), Annotations: &mcpclient.ToolAnnotations{}},
	}
	for _, c := range []struct {
		tools []mcpclient.Tool
		want  string
	}{
		{tools, "sha256:e099fc62e8ed0f6fe3ec736318287c60685f998eeafe4b0ec78f412af47a70db"},
		{nil, "sha256:4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"},
		{[]mcpclient.Tool{{Name: "get_weather", Description: "Current weather for a city"}}, "sha256:e72e96e899c321634fdeac7f4cc28c97b99adeeda7c44bec63a7b86871a67b78"},
	} {
		if got := report.ToolSurfaceHash(mcpclient.ToolSurfaces(c.tools)); got != c.want {
			t.Errorf("%d tools: hash %s, want %s", len(c.tools), got, c.want)
		}
	}
}

func TestSurfaceAnnotations(t *testing.T) {
	a := mcpclient.Tool{Name: "add", Description: "sum", InputSchema: json.RawMessage(`{"type":"object"}`)}
	h := report.ToolSurfaceHash(mcpclient.ToolSurfaces([]mcpclient.Tool{a}))
	titled := a
	titled.Title = "Add numbers"
	if report.ToolSurfaceHash(mcpclient.ToolSurfaces([]mcpclient.Tool{titled})) != h {
		t.Error("a title (not shown to models) changed the hash")
	}
	ro := true
	annotated := a
	annotated.Annotations = &mcpclient.ToolAnnotations{ReadOnlyHint: &ro}
	if report.ToolSurfaceHash(mcpclient.ToolSurfaces([]mcpclient.Tool{annotated})) == h {
		t.Error("an annotation did not change the hash")
	}
	raw := a
	raw.Raw = json.RawMessage(`{"name":"add","annotations":{"x-custom":1}}`)
	if got := string(raw.Surface().Annotations); got != `{"x-custom":1}` {
		t.Errorf("annotations %s, want the raw ones the client type does not know", got)
	}
}
