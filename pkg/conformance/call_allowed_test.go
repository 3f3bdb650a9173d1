package conformance

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// A --call-tool name the server does not list allowed nothing and said
// nothing: the skips still asked for --call-tool. Through the bundled
// server, a typo of send_email is noted with the name to use, the skip
// names the tool it could not call, and the report records the names
// given, each once.
func TestUnknownCallToolIsNoted(t *testing.T) {
	rep, byID := featRun(t, refTarget(t, "http"), 1, []string{"send_emial", "send_emial"}, "MRTR-2")
	validateReport(t, rep)
	if !slices.Equal(rep.CallTools, []string{"send_emial"}) {
		t.Errorf("callTools %q, want the name given, once", rep.CallTools)
	}
	var notes []string
	for _, n := range rep.Notes {
		if strings.Contains(n, "send_emial") {
			notes = append(notes, n)
		}
	}
	if len(notes) != 1 {
		t.Fatalf("notes on send_emial: %q, want one (all notes: %q)", notes, rep.Notes)
	}
	for _, want := range []string{`"send_emial"`, "does not list", `did you mean "send_email"?`, "--call-tool", "conformance.call-tools"} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("note %q lacks %q", notes[0], want)
		}
	}
	skip := byID["MRTR-2"]
	if skip.Verdict != check.Skipped || !strings.Contains(skip.Outcome.Message, `so not called: "send_email" (allow an MRTR tool with --call-tool NAME)`) {
		t.Errorf("MRTR-2: %s %q, want a skip that names send_email", skip.Verdict, skip.Outcome.Message)
	}

	rep, _ = featRun(t, refTarget(t, "http"), 1, []string{"send_email"}, "MRTR-2")
	validateReport(t, rep)
	if !slices.Equal(rep.CallTools, []string{"send_email"}) || strings.Contains(strings.Join(rep.Notes, "\n"), "does not list") {
		t.Errorf("with a listed name: callTools %q, notes %q", rep.CallTools, rep.Notes)
	}
	rep, _ = featRun(t, refTarget(t, "http"), 1, nil, "MRTR-2")
	validateReport(t, rep)
	if rep.CallTools != nil {
		t.Errorf("with no name given: callTools %q, want none (absent)", rep.CallTools)
	}
}

func callTestTools(names ...string) []mcpclient.Tool {
	yes := true
	var out []mcpclient.Tool
	for _, n := range names {
		t := mcpclient.Tool{Name: n}
		if strings.HasPrefix(n, "get_") {
			t.Annotations = &mcpclient.ToolAnnotations{ReadOnlyHint: &yes}
		}
		out = append(out, t)
	}
	return out
}

func TestUnknownCallToolNotes(t *testing.T) {
	facts := &check.Facts{Tools: callTestTools("get_weather", "send_email"), Dropped: []mcpclient.DroppedTool{{Name: "bad_schema", Reason: "(TOOL-6)"}}}
	if n := unknownCallToolNotes([]string{"send_email", "get_weather", "bad_schema"}, facts); n != nil {
		t.Errorf("listed names (a dropped one too) noted: %q", n)
	}
	hostile := "\x1b[31mred\u202e" + strings.Repeat("x", 500)
	notes := unknownCallToolNotes([]string{"send_emial", "zzz", hostile, "four", "five"}, facts)
	if len(notes) != 4 {
		t.Fatalf("notes %q, want three named and one count", notes)
	}
	if !strings.Contains(notes[0], `did you mean "send_email"?`) || strings.Contains(notes[1], "did you mean") {
		t.Errorf("suggestions: %q", notes[:2])
	}
	if strings.ContainsAny(notes[2], "\x1b\u202e") || len(notes[2]) > 300 {
		t.Errorf("a hostile name is printed raw or unclipped: %q", notes[2])
	}
	if !strings.Contains(notes[3], "2 more tools the server does not list") {
		t.Errorf("the rest: %q", notes[3])
	}
	// A list read in part cannot say what the server does not list.
	tools := declaredCaps("tools")
	for _, f := range []*check.Facts{{Capabilities: tools, Tools: facts.Tools, ToolsErr: errors.New("page 2 failed")}, {Capabilities: tools, Tools: facts.Tools, ToolsCut: true}, nil} {
		if n := unknownCallToolNotes([]string{"zzz"}, f); n != nil {
			t.Errorf("facts %+v: noted %q", f, n)
		}
	}
	// Without the tools capability the server lists none, whatever its
	// tools/list answers.
	if n := unknownCallToolNotes([]string{"send_email"}, &check.Facts{ToolsErr: errors.New("-32601 method not found")}); len(n) != 1 || !strings.Contains(n[0], `names "send_email", which the server does not list`) {
		t.Errorf("no tools capability: %q", n)
	}
}

func TestUncalledHintNamesTheFirstFew(t *testing.T) {
	env := check.Env{CallTools: map[string]bool{"send_email": true}, Facts: &check.Facts{Tools: callTestTools("get_weather", "send_email", "delete_file", "\x1b[2Jwipe", "a", "b")}}
	hint := uncalledHint(env, "allow one")
	want := `4 listed tools are not annotated readOnlyHint: true, so not called: "delete_file", "\x1b[2Jwipe", "a" and 1 more (allow one with --call-tool NAME)`
	if hint != want {
		t.Errorf("hint\n %q\nwant\n %q", hint, want)
	}
	env.Facts.Tools = callTestTools("get_weather", "send_email")
	if hint := uncalledHint(env, "allow one"); hint != "" {
		t.Errorf("every tool may be called, yet: %q", hint)
	}
}
