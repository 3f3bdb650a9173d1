package render_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

// A cancelled run, as pipeline.Run leaves it (run.cancelled, no layer
// results, gated), reads as cancelled in every rendering and as a failure
// in none.
func TestEveryRendererSaysCancelled(t *testing.T) {
	rep := reporttest.New()
	rep.Run.Cancelled = "terminated signal received"
	rep.Gate = gate.Evaluate(gate.Input{New: rep, Now: reporttest.Start()}, gate.DefaultPolicy())
	if _, err := report.Marshal(rep); err != nil {
		t.Fatalf("a cancelled report is not valid: %v", err)
	}
	var md, txt, html, junit bytes.Buffer
	if err := render.Markdown(&md, rep, render.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	render.GateText(&txt, rep)
	if err := render.HTML(&html, rep, render.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := render.ReportJUnit(&junit, rep); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "text": txt.String(), "html": html.String(), "junit": junit.String()} {
		if !strings.Contains(strings.ToLower(out), "cancelled") || !strings.Contains(out, "terminated signal received") {
			t.Errorf("%s does not say the run was cancelled and why:\n%s", name, out)
		}
		if strings.Contains(out, "FAIL") {
			t.Errorf("%s says FAIL for a cancelled run:\n%s", name, out)
		}
	}
	if !strings.HasPrefix(md.String(), "### ⏹️ mcp-eval: CANCELLED") {
		t.Errorf("markdown heading: %q", strings.SplitN(md.String(), "\n", 2)[0])
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
	}
	if err := xml.Unmarshal(junit.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Tests != 1 || suites.Skipped != 1 || suites.Failures != 0 || suites.Errors != 0 {
		t.Errorf("junit: %+v, want one skipped test and no failure", suites)
	}
}
