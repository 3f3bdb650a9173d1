package render_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// A confusion between two tools whose descriptions LINT-5 found
// near-duplicate is one cause: the comment, the terminal and report.html
// link the confusion to that finding, and a confusion with no such
// finding gets no link.
func TestConfusionLinksToTheLintFinding(t *testing.T) {
	rep := loadFixture(t, "full")
	// The finding as pkg/conformance/lint.go (LINT5) words it.
	msg := fmt.Sprintf("tools %q and %q have near-duplicate descriptions (similarity %.2f): %q / %q",
		"get_forecast", "get_weather", 0.82, "Weather forecast for a city.", "Current weather for a city.")
	rep.Conformance.Checks = append(rep.Conformance.Checks, report.CheckResult{ID: "LINT-5", Level: "SHOULD", Family: "LINT",
		Verdict: report.CheckVerdict("warn"), Runs: 1, Outcome: report.Outcome{Verdict: report.CheckVerdict("warn"), Message: msg}})

	all := render.Confusions(rep)
	var linked, unlinked int
	for _, mc := range all {
		for i, c := range mc.Cells {
			switch {
			case c.Expected == "get_weather" && c.Chosen == "get_forecast":
				if mc.Similar[i] != "LINT-5, similarity 0.82" {
					t.Errorf("get_weather → get_forecast links %q, want LINT-5 with its similarity", mc.Similar[i])
				}
				linked++
			default:
				if mc.Similar[i] != "" {
					t.Errorf("%s → %s links %q, but LINT-5 did not name that pair", c.Expected, c.Chosen, mc.Similar[i])
				}
				unlinked++
			}
		}
	}
	if linked != 1 || unlinked == 0 {
		t.Fatalf("%d linked and %d unlinked cells: the fixture no longer has the confusions this test needs", linked, unlinked)
	}

	var md, txt, html bytes.Buffer
	if err := render.Markdown(&md, rep, render.MarkdownOptions{Long: true}); err != nil {
		t.Fatal(err)
	}
	render.ConfusionText(&txt, rep)
	if err := render.HTML(&html, rep, render.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"comment": md.String(), "terminal": txt.String(), "report.html": html.String()} {
		if !strings.Contains(out, "near-duplicate descriptions") || !strings.Contains(out, "similarity 0.82") {
			t.Errorf("the %s does not link the confusion to LINT-5", name)
		}
	}
}
