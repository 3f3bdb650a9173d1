package action

import (
	"bytes"
	"strings"
	"testing"
)

func TestEscapeCommandData(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                       "plain",
		"100%":                        "100%25",
		"a\nb\r\nc":                   "a%0Ab%0D%0Ac",
		"%0A stays literal":           "%250A stays literal",
		"::add-mask::x":               "%3A%3Aadd-mask::x",
		"  ::set-output name=a::b":    "  %3A%3Aset-output name=a::b",
		"ok\n::error::fake":           "ok%0A::error::fake", // one line: cannot start a command
		"tool::name keeps its colons": "tool::name keeps its colons",
	} {
		if got := EscapeCommandData(in); got != want {
			t.Errorf("EscapeCommandData(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeCommandProperty(t *testing.T) {
	for in, want := range map[string]string{
		"golden.yaml":   "golden.yaml",
		"a,b:c":         "a%2Cb%3Ac",
		"x\ny%":         "x%0Ay%25",
		"title::inject": "title%3A%3Ainject",
	} {
		if got := EscapeCommandProperty(in); got != want {
			t.Errorf("EscapeCommandProperty(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteCommandIsOneLine(t *testing.T) {
	var b bytes.Buffer
	err := WriteCommand(&b, "error", map[string]string{"file": "evals/a,b.yaml", "title": "TOOL-3: x", "line": "7", "col": ""},
		"server said:\n::add-mask::everything\r\n::set-output name=verdict::pass")
	if err != nil {
		t.Fatal(err)
	}
	want := "::error file=evals/a%2Cb.yaml,line=7,title=TOOL-3%3A x::server said:%0A::add-mask::everything%0D%0A::set-output name=verdict::pass\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
}

func TestEchoUntrusted(t *testing.T) {
	var b bytes.Buffer
	text := "tool result:\n::add-mask::x\n::stop-commands::guess\n::guess::\n::error::fake"
	if err := EchoUntrusted(&b, text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	first, last := lines[0], lines[len(lines)-1]
	token := strings.TrimPrefix(first, "::stop-commands::")
	if token == first || len(token) < 32 || last != "::"+token+"::" {
		t.Fatalf("not wrapped: %q", b.String())
	}
	if strings.Join(lines[1:len(lines)-1], "\n") != text {
		t.Errorf("text changed: %q", lines)
	}
	// Tokens differ per call, so a server cannot learn and replay one.
	var b2 bytes.Buffer
	_ = EchoUntrusted(&b2, "x")
	if strings.Contains(b2.String(), token) {
		t.Error("token reused")
	}
}
