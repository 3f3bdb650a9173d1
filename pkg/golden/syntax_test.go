package golden

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A YAML syntax error names the line to fix: yaml.v3's own line is the one
// above the construct that holds the error (go-yaml/yaml#205), which in a
// list of cases is often the blank line between two of them.
func TestLoadSyntaxErrorLine(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unclosed flow sequence", `version: 1
cases:
  - id: weather-seattle
    prompt: What's the weather in Seattle?
    expect_tool: get_weather
    tags: [weather, smoke
    kind: soft
`, 6, "did not find expected ',' or ']'"},
		{"unclosed flow mapping", `version: 1
cases:
  - id: weather-paris
    prompt: How warm is it in Paris?
    expect_tool: get_weather
    expect_args: {location: Paris, units: fahrenheit
    tags: [weather]
`, 6, "did not find expected ',' or '}'"},
		{"bad indentation in a block mapping", `version: 1
cases:
  - id: weather-paris
    prompt: How warm is it in Paris?
      expect_tool: get_weather
`, 5, "mapping values are not allowed in this context"},
		{"bad indentation in the list of cases", `version: 1
cases:
  - id: weather-seattle
    prompt: What's the weather in Seattle?
    expect_tool: get_weather

   - id: weather-paris
    prompt: How warm is it in Paris?
    expect_tool: get_weather
`, 7, "did not find expected '-' indicator"},
		{"unclosed bracket after a blank line", `version: 1
cases:
  - id: a
    prompt: p
    expect_tool: t

  - tags: [weather, smoke
    id: b
    prompt: q
`, 7, "did not find expected ',' or ']'"},
		{"bad indentation inside a case", `version: 1
cases:
  - id: weather-seattle
    prompt: What's the weather in Seattle?
   expect_tool: get_weather
`, 5, "did not find expected '-' indicator"},
		{"tab indentation", "version: 1\ncases:\n  - id: a\n    prompt: p\n\texpect_tool: t\n", 5, "found a tab character that violates indentation"},
		{"unterminated quoted string", `version: 1
cases:
  - id: a
    prompt: "What's the weather in Seattle?
    expect_tool: get_weather
  - id: b
    prompt: p
    expect_tool: t
`, 4, "found unexpected end of stream"},
		{"last line, no newline", "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: t\n    tags: [a", 6, "did not find expected ',' or ']'"},
		{"last line, then blank and comment lines", "version: 1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: t\n    tags: [a\n\n# more cases to come\n\n", 6, "did not find expected ',' or ']'"},
		{"first line", "version: [1\ncases:\n  - id: a\n    prompt: p\n    expect_tool: t\n", 1, "did not find expected ',' or ']'"},
		{"first line, no line from yaml.v3", "]\ncases:\n  - id: a\n", 1, "did not find expected node content"},
		{"multi-line flow sequence before the error", `version: 1
cases:
  - id: a
    prompt: p
    expect_tool: t
    tags: [
      weather,
      smoke,
    ]

   - id: b
    prompt: q
    expect_tool: t
`, 11, "did not find expected '-' indicator"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "tasks.yaml")
			if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load = %v (%T), want an *Error", err, err)
			}
			if e.Pos.Line != c.line {
				t.Errorf("line %d, want %d: %v", e.Pos.Line, c.line, e)
			}
			if want := "YAML syntax: " + c.msg; e.Msg != want {
				t.Errorf("message %q, want %q", e.Msg, want)
			}
			if e.Hint != "check the indentation and quoting on this line" {
				t.Errorf("hint %q", e.Hint)
			}
		})
	}
}
