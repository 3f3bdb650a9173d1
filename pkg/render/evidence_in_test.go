package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// A fault in a notification (LOG-2: a log message below the requested
// level) is shown in that message: the cause names the notification and
// the request it came during, and the terminal and JUnit evidence show the message's
// excerpt, not only the response's.
func TestEvidenceInANotification(t *testing.T) {
	rep := loadFixture(t, "l0regress")
	ev := report.Evidence{Transport: "stdio", Request: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow_count"}}`,
		Response: `{"jsonrpc":"2.0","id":4,"result":{"content":[]}}`,
		In:       "notification notifications/message", Pointer: "/params/level", Value: `"debug"`,
		Message: `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"tick","level":"debug"}}`}
	found := false
	for i := range rep.Conformance.Checks {
		if c := &rep.Conformance.Checks[i]; c.ID == "TOOL-3" {
			c.Outcome.Message, c.Outcome.Evidence, found = `with logLevel "notice" the server sent a "debug" message`, []report.Evidence{ev}, true
		}
	}
	if !found {
		t.Fatal("the fixture has no TOOL-3 result to carry the evidence")
	}
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, mdOpts(0)); err != nil {
		t.Fatal(err)
	}
	if want := "notification `notifications/message` sent during `tools/call` at `/params/level` is `\"debug\"`"; !strings.Contains(md.String(), want) {
		t.Errorf("the comment does not say where the fault is (%s):\n%s", want, md.String())
	}
	var text bytes.Buffer
	render.ReportText(&text, rep, render.TextOptions{})
	if want := `tools/call → in the notification notifications/message, at /params/level: "debug"; {"jsonrpc":"2.0","method":"notifications/message"`; !strings.Contains(text.String(), want) {
		t.Errorf("the terminal evidence does not show the notification (%s):\n%s", want, text.String())
	}
	var junit bytes.Buffer
	if err := render.ReportJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), "in the notification notifications/message, at /params/level") {
		t.Errorf("the JUnit evidence does not show the notification:\n%s", junit.String())
	}
}
