package refserver

import (
	"regexp"
	"strings"
	"testing"
)

var (
	toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	tokenPattern    = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// TestToolDefinitions checks every served Tool against the schema and the
// rules clients enforce on it (TOOL-4, TOOL-5, TOOL-6, SCHEMA-1).
func TestToolDefinitions(t *testing.T) {
	s := New(Options{})
	wantOrder := []string{"get_weather", "search_invoices", "send_email", "lookup_region", "slow_count"}
	var names []string
	for _, tl := range s.tools {
		names = append(names, tl.name)
		assertDef(t, tl.def, "Tool")
		if !toolNamePattern.MatchString(tl.name) {
			t.Errorf("tool name %q breaks TOOL-5", tl.name)
		}
		if get(tl.def, "inputSchema", "type") != "object" {
			t.Errorf("%s: inputSchema root type is not object (TOOL-4)", tl.name)
		}
		if _, ok := asMap(tl.def["annotations"])["readOnlyHint"].(bool); !ok {
			t.Errorf("%s: readOnlyHint not set", tl.name)
		}
		checkHeaderAnnotations(t, tl.name, asMap(tl.def["inputSchema"]), "", true, map[string]bool{})
		// Compiled on first use: a definition the validator refuses
		// panics here, not in a user's run.
		tl.input()
		if tl.output != nil {
			tl.output()
		}
	}
	if strings.Join(names, ",") != strings.Join(wantOrder, ",") {
		t.Errorf("tools = %v, want %v", names, wantOrder)
	}
	if len(s.toolByName["lookup_region"].headers) != 1 {
		t.Errorf("lookup_region must carry exactly one x-mcp-header")
	}
}

// checkHeaderAnnotations walks a schema and enforces TOOL-6 wherever an
// x-mcp-header appears, including places it must not.
func checkHeaderAnnotations(t *testing.T, tool string, node map[string]any, path string, reachable bool, seen map[string]bool) {
	t.Helper()
	if h, ok := node["x-mcp-header"]; ok {
		name, _ := h.(string)
		switch {
		case !reachable:
			t.Errorf("%s: x-mcp-header at %s is not reachable through properties only (TOOL-6)", tool, path)
		case !tokenPattern.MatchString(name):
			t.Errorf("%s: x-mcp-header %q is not an RFC 9110 token (TOOL-6)", tool, name)
		case seen[strings.ToLower(name)]:
			t.Errorf("%s: x-mcp-header %q is not unique (TOOL-6)", tool, name)
		}
		seen[strings.ToLower(name)] = true
		if typ := node["type"]; typ != "string" && typ != "integer" && typ != "boolean" {
			t.Errorf("%s: x-mcp-header on a property of type %v (TOOL-6)", tool, typ)
		}
	}
	for key, child := range node {
		switch c := child.(type) {
		case map[string]any:
			if key == "properties" {
				for prop, sub := range c {
					if m, ok := sub.(map[string]any); ok {
						checkHeaderAnnotations(t, tool, m, path+"/properties/"+prop, reachable, seen)
					}
				}
				continue
			}
			checkHeaderAnnotations(t, tool, c, path+"/"+key, false, seen)
		case []any:
			for _, item := range c {
				if m, ok := item.(map[string]any); ok {
					checkHeaderAnnotations(t, tool, m, path+"/"+key, false, seen)
				}
			}
		}
	}
}

// TestWeatherDeterministic: the same input always gives the same output.
func TestWeatherDeterministic(t *testing.T) {
	t1, c1, ok1 := fakeWeather("Seattle, WA", "celsius")
	t2, c2, ok2 := fakeWeather("  seattle,   wa ", "celsius")
	if !ok1 || !ok2 || t1 != t2 || c1 != c2 {
		t.Errorf("fakeWeather not deterministic: %v %v %v / %v %v %v", t1, c1, ok1, t2, c2, ok2)
	}
	f, _, _ := fakeWeather("Seattle, WA", "fahrenheit")
	if want := t1*9/5 + 32; f < want-1 || f > want+1 {
		t.Errorf("fahrenheit = %v, want about %v", f, want)
	}
	for _, bad := range []string{"", "   ", "???", "12345", strings.Repeat("a", 101)} {
		if _, _, ok := fakeWeather(bad, "celsius"); ok {
			t.Errorf("fakeWeather(%q) accepted an unknown location", bad)
		}
	}
}
