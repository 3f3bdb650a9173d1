package conformance

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

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
