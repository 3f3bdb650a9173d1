package report_test

import (
	"encoding/json"
	"regexp"
	"testing"

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

func tool(name, desc, schema string) report.ToolSurface {
	return report.ToolSurface{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
}

func TestToolSurfaceHash(t *testing.T) {
	a := []report.ToolSurface{tool("search", "find things", `{"type":"object","properties":{"q":{"type":"string"}}}`), tool("add", "sum", `{"type":"object"}`)}
	h := report.ToolSurfaceHash(a)
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(h) {
		t.Fatalf("hash %q has the wrong form", h)
	}
	same := []report.ToolSurface{tool("add", "sum", `{ "type" : "object" }`), tool("search", "find things", `{"properties":{"q":{"type":"string"}},"type":"object"}`)}
	if report.ToolSurfaceHash(same) != h {
		t.Error("order, key order or whitespace changed the hash")
	}
	for name, changed := range map[string][]report.ToolSurface{
		"description": {tool("add", "sum two numbers", `{"type":"object"}`), a[0]},
		"schema":      {tool("add", "sum", `{"type":"object","required":["a"]}`), a[0]},
		"name":        {tool("plus", "sum", `{"type":"object"}`), a[0]},
		"removed":     {a[0]},
	} {
		if report.ToolSurfaceHash(changed) == h {
			t.Errorf("changing the %s did not change the hash", name)
		}
	}
	annotated := append([]report.ToolSurface{}, a...)
	annotated[1].Annotations = json.RawMessage(`{"readOnlyHint":true}`)
	if report.ToolSurfaceHash(annotated) == h {
		t.Error("an annotation did not change the hash")
	}
	broken := append([]report.ToolSurface{}, a...)
	broken[1].OutputSchema, broken[1].Annotations = json.RawMessage(`{broken`), json.RawMessage(`null`)
	if report.ToolSurfaceHash(broken) != h {
		t.Error("a broken schema or null annotations changed the hash (they count as absent)")
	}
	if report.ToolSurfaceHash(nil) == "" {
		t.Error("no tools must still hash (to the empty list)")
	}
}

// A schema that is valid JSON without a canonical form (a hostile server's
// 1e400) still hashes, stably, and differently from another such schema.
func TestToolSurfaceHashTakesNumbersBeyondFloat64(t *testing.T) {
	mk := func(n string) string {
		return report.ToolSurfaceHash([]report.ToolSurface{{Name: "big", InputSchema: json.RawMessage(`{"type":"object","maximum":` + n + `}`)}})
	}
	a, b := mk("1e400"), mk("1e401")
	if a == "" || a != mk("1e400") || a == b {
		t.Fatalf("hashes %s %s", a, b)
	}
}
