package report_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func TestCanonicalJSON(t *testing.T) {
	got, err := report.CanonicalJSON(json.RawMessage(`{ "b": [1.0, 2.50, 1e2], "a": {"y": "<&>", "x": null}, "c": -0 }`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"x":null,"y":"<&>"},"b":[1,2.5,100],"c":0}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func tool(name, desc, schema string) mcpclient.Tool {
	return mcpclient.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
}

func TestToolSurfaceHash(t *testing.T) {
	a := []mcpclient.Tool{tool("search", "find things", `{"type":"object","properties":{"q":{"type":"string"}}}`), tool("add", "sum", `{"type":"object"}`)}
	h := report.ToolSurfaceHash(a)
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(h) {
		t.Fatalf("hash %q has the wrong form", h)
	}
	same := []mcpclient.Tool{tool("add", "sum", `{ "type" : "object" }`), tool("search", "find things", `{"properties":{"q":{"type":"string"}},"type":"object"}`)}
	if report.ToolSurfaceHash(same) != h {
		t.Error("order, key order or whitespace changed the hash")
	}
	titled := []mcpclient.Tool{tool("add", "sum", `{"type":"object"}`), tool("search", "find things", `{"type":"object","properties":{"q":{"type":"string"}}}`)}
	titled[0].Title = "Add numbers"
	if report.ToolSurfaceHash(titled) != h {
		t.Error("a title (not shown to models) changed the hash")
	}
	for name, changed := range map[string][]mcpclient.Tool{
		"description": {tool("add", "sum two numbers", `{"type":"object"}`), a[0]},
		"schema":      {tool("add", "sum", `{"type":"object","required":["a"]}`), a[0]},
		"name":        {tool("plus", "sum", `{"type":"object"}`), a[0]},
		"removed":     {a[0]},
	} {
		if report.ToolSurfaceHash(changed) == h {
			t.Errorf("changing the %s did not change the hash", name)
		}
	}
	ro := true
	annotated := append([]mcpclient.Tool{}, a...)
	annotated[1].Annotations = &mcpclient.ToolAnnotations{ReadOnlyHint: &ro}
	if report.ToolSurfaceHash(annotated) == h {
		t.Error("an annotation did not change the hash")
	}
	raw := append([]mcpclient.Tool{}, a...)
	raw[1].Raw = json.RawMessage(`{"name":"add","annotations":{"x-custom":1}}`)
	if report.ToolSurfaceHash(raw) == h {
		t.Error("an annotation only the raw tool has did not change the hash")
	}
	if report.ToolSurfaceHash(nil) == "" {
		t.Error("no tools must still hash (to the empty list)")
	}
}
