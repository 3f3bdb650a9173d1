package config

import (
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	c, err := Parse("mcp-eval.yaml", []byte(`
server:
  command: go run ./golden-examples/cmd/example-server
  headers:
    Authorization: Bearer ${TOKEN}
  user: current
layers: [auto]
conformance:
  runs: 3
  call-tools: [send_email]
gate:
  max-drop: 0.05
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Command == "" || c.Conformance.Runs != 3 || *c.Gate.MaxDrop != 0.05 || c.Conformance.CallTools[0] != "send_email" || c.Server.User != "current" {
		t.Fatalf("parsed %+v", c)
	}
}

func TestParseErrorsNameFileLineAndFix(t *testing.T) {
	cases := map[string]string{
		"server:\n  url: http://x/mcp\n  comand: srv\n": "mcp-eval.yaml:3: field comand not found",
		"conformance:\n  runs: -1\n":                    "mcp-eval.yaml:2: conformance.runs is -1",
		"gate:\n  max-drop: 2\n":                        "mcp-eval.yaml:2: gate.max-drop is 2",
		"layers: [layer9]\n":                            "mcp-eval.yaml:1: unknown layer \"layer9\"",
		"server:\n  url: http://x\n  command: srv\n":    "mcp-eval.yaml:2: server.url and server.command are exclusive",
		"conformance:\n  runs: many\n":                  "mcp-eval.yaml:2:",
		"server: [\n":                                   "mcp-eval.yaml:",
		"server:\n  command: srv\n  user: root\n":       "mcp-eval.yaml:3: server.user is \"root\", want auto, unprivileged or current",
	}
	for src, want := range cases {
		_, err := Parse("mcp-eval.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want prefix %q", src, err, want)
		}
	}
}

func TestExpandEnv(t *testing.T) {
	look := func(k string) (string, bool) {
		if k == "TOKEN" {
			return "abc", true
		}
		return "", false
	}
	if got, err := ExpandEnv("Bearer ${TOKEN}", look); err != nil || got != "Bearer abc" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := ExpandEnv("${NOPE}", look); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Fatalf("missing variable: %v", err)
	}
}
