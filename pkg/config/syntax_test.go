package config

import (
	"os"
	"path/filepath"
	"testing"
)

// A YAML syntax error names the line to fix: yaml.v3's own line is the one
// above the construct that holds the error (go-yaml/yaml#205).
func TestLoadSyntaxErrorLine(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unclosed flow sequence", `server:
  command: "x"
conformance:
  runs: 5
  only: [RPC-1, RPC-2
  call-tools: [a]
`, 5, "did not find expected ',' or ']'"},
		{"unclosed flow sequence, short", "a: 1\nb: [1, 2\nc: 3\n", 2, "did not find expected ',' or ']'"},
		{"unclosed flow mapping", `server:
  command: srv
  headers: {Authorization: "Bearer ${TOKEN}"
  user: current
`, 3, "did not find expected ',' or '}'"},
		{"bad indentation in a block mapping", `server:
  command: srv
   user: current
layers: [0]
`, 3, "mapping values are not allowed in this context"},
		{"bad indentation in a sequence of mappings", `waivers:
  - check: RPC-1
    reason: flaky upstream
   until: 2030-01-01
  - check: RPC-2
    until: 2030-01-01
`, 4, "did not find expected '-' indicator"},
		{"tab indentation", "conformance:\n  runs: 3\n\tcall-tools: [a]\n", 3, "found a tab character that violates indentation"},
		{"unterminated quoted string", `server:
  command: "go run ./srv
  user: current
layers: [0]
`, 2, "found unexpected end of stream"},
		{"last line, no newline", "conformance:\n  runs: 3\n  call-tools: [a", 3, "did not find expected ',' or ']'"},
		{"last line, then blank and comment lines", "gate:\n  max-drop: 0.1\nlayers: [0, 1\n\n# the end\n\n", 3, "did not find expected ',' or ']'"},
		{"first line", "layers: [0, 1\nserver:\n  command: srv\n", 1, "did not find expected ',' or ']'"},
		{"first line, no line from yaml.v3", "]\nserver:\n  command: srv\n", 1, "did not find expected node content"},
		{"multi-line flow sequence before the error", `conformance:
  call-tools: [
    send_email,
    get_weather,
  ]
  runs: 3
   only: [RPC-1]
`, 7, "mapping values are not allowed in this context"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "mcp-eval.yaml")
			if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			e, ok := err.(*Error)
			if !ok {
				t.Fatalf("Load = %v (%T), want *Error", err, err)
			}
			if e.Line != c.line {
				t.Errorf("line %d, want %d: %v", e.Line, c.line, e)
			}
			if e.Msg != "YAML syntax: "+c.msg || e.Hint == "" {
				t.Errorf("message %q (hint %q), want %q with a hint", e.Msg, e.Hint, "YAML syntax: "+c.msg)
			}
		})
	}
}
