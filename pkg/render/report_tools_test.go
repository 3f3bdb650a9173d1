package render_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// fourModels is the full fixture with the per tool call rows of tools
// tools × four models with long names, as a run over four providers'
// models reports them (tool, then model order).
func fourModels(t *testing.T, tools int) *report.Report {
	return fourModelsNamed(t, tools, "search_customer_invoices_%02d")
}

// fourModelsNamed is fourModels with tool names from format.
func fourModelsNamed(t *testing.T, tools int, format string) *report.Report {
	t.Helper()
	rep, err := report.Load(filepath.Join("testdata", "report", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	models := []string{"anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-5", "openai:gpt-5", "openai:gpt-5-mini"}
	perCall := []float64{0.00015, 0.00045, 0.000225, 0.000045}
	template := rep.Telemetry.Tools[0] // p50, p95 and max of 45 timed calls
	rep.Telemetry.Tools = nil
	for i := range tools {
		for j, m := range models {
			u := template
			u.Tool, u.Model, u.Errors = fmt.Sprintf(format, i), m, j%2
			c := perCall[j]
			u.CostPerCallUSD = &c
			rep.Telemetry.Tools = append(rep.Telemetry.Tools, u)
		}
	}
	return rep
}

// With four models the per tool call table of the comment stays six
// columns wide, keeps every figure on one line (a cell wraps only between
// figures), folds away below the verdict and what needs attention, and
// says how many rows it left out.
func TestMarkdownPerToolTableIsBounded(t *testing.T) {
	var buf bytes.Buffer
	if err := render.Markdown(&buf, fourModels(t, 12), mdOpts(0)); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	at := strings.Index(md, "**Per tool call**")
	fold := strings.Index(md, "<details><summary>Per tool call: 12 tools × 4 models")
	if at < 0 || fold < 0 || fold > at {
		t.Fatalf("48 rows are not folded in <details>:\n%s", md)
	}
	if attention := strings.Index(md, "**Needs attention**"); attention < 0 || attention > fold {
		t.Errorf("the per tool table comes before what needs attention")
	}
	var rows []string
	for _, l := range strings.Split(md[at:], "\n") {
		if strings.HasPrefix(l, "| `search_customer_invoices_") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 30 || !strings.Contains(md[at:], "… and 18 more tool × model rows in `report.json` and the HTML report") {
		t.Fatalf("%d rows shown, want 30 and a note of 18 more:\n%s", len(rows), md[at:])
	}
	for _, r := range rows {
		cells := strings.Split(strings.Trim(r, "| "), " | ")
		if len(cells) != 6 {
			t.Fatalf("row %q has %d cells, want 6", r, len(cells))
		}
		// A cell may wrap between figures (after ", " or " · "), a
		// figure never: "100 ms" stays whole.
		var figs []string
		for _, c := range append(strings.Split(cells[2], ", "), cells[3:]...) {
			figs = append(figs, strings.Split(c, "\u00a0· ")...)
		}
		for _, c := range figs {
			if strings.Contains(c, " ") {
				t.Errorf("figure %q can wrap at a space", c)
			}
		}
	}
	// A cheap model's cost per call keeps two significant digits, and
	// failed calls are said beside the calls.
	if !strings.Contains(md, "$0.000045 |") || strings.Contains(md, "$0.00005 |") || !strings.Contains(rows[1], "45, 1\u00a0failed") {
		t.Errorf("cost per call or failed calls misstated:\n%s\n%s", rows[0], rows[1])
	}
	// A few rows are shown open.
	buf.Reset()
	if err := render.Markdown(&buf, fourModels(t, 2), mdOpts(0)); err != nil {
		t.Fatal(err)
	}
	if md := buf.String(); !strings.Contains(md, "**Per tool call**") || strings.Contains(md, "<summary>Per tool call") || strings.Contains(md, "more tool × model rows") {
		t.Errorf("8 rows should be shown open and whole:\n%s", md)
	}
}

// The HTML table is bounded too, and at 780 px with four long model names
// it fits its box with no figure broken over two lines; a tool name too
// long for that scrolls the table in its box, never the page.
func TestHTMLPerToolTableFitsTheCommentColumn(t *testing.T) {
	var buf bytes.Buffer
	if err := render.HTML(&buf, fourModels(t, 60), render.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, "<td><code>search_customer_invoices_"); n != 200 || !strings.Contains(page, "40 more tool × model rows are in report.json.") {
		t.Fatalf("%d rows of 240, want 200 and a note of 40 more", n)
	}
	for _, c := range []struct{ format, want string }{
		{"search_invoices_%d", "fits=true wrapped=0 page=fits"}, // the reference server's longest name, and a digit
		{"search_customer_invoices_by_region_and_status_%02d", "fits=false wrapped=0 page=fits"},
	} {
		buf.Reset()
		if err := render.HTML(&buf, fourModelsNamed(t, 3, c.format), render.HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := measureTools(t, buf.String()); !strings.HasPrefix(got, c.want+" ") {
			t.Errorf("tools named %q: at 780 px the per tool table measures %s; want %s", c.format, got, c.want)
		}
	}
}

// measureTools opens page at 780 px and says whether #tools fits its box,
// how many of its figures wrap, and whether the page scrolls sideways.
func measureTools(t *testing.T, page string) string {
	t.Helper()
	// The page's policy forbids scripts; this copy lets one measure it.
	page = strings.Replace(page, "default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';", 1)
	measure := `<script>
const t = document.getElementById("tools"), box = t.parentElement;
let wrapped = 0;
for (const td of t.querySelectorAll("td.num:not(.calls)")) {
  const r = document.createRange(); r.selectNodeContents(td);
  if (new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1) wrapped++;
}
const doc = document.scrollingElement;
document.body.setAttribute("data-measured", "fits=" + (t.scrollWidth <= box.clientWidth) + " wrapped=" + wrapped +
  " page=" + (doc.scrollWidth <= doc.clientWidth ? "fits" : "scrolls") + " table=" + t.scrollWidth + "/" + box.clientWidth);
</script></body>`
	dom := chromiumDOM(t, strings.Replace(page, "</body>", measure, 1))
	got := regexp.MustCompile(`data-measured="([^"]*)"`).FindStringSubmatch(dom)
	if got == nil {
		t.Fatal("the measuring script did not run")
	}
	return got[1]
}

// In the terminal, a model name longer than 24 runes still lines up the
// figures after it: each per-model line's "accuracy" and each usage
// line's role start in one column.
func TestTextLinesUpLongModelNames(t *testing.T) {
	rep, err := report.Load(filepath.Join("testdata", "report", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	long := "anthropic:claude-sonnet-4-5"
	rep.Models[0].ID = long
	for i := range rep.Telemetry.Models {
		if rep.Telemetry.Models[i].Model == "m1" {
			rep.Telemetry.Models[i].Model = long
		}
	}
	for i := range rep.Telemetry.Usage {
		if rep.Telemetry.Usage[i].Model == "m1" {
			rep.Telemetry.Usage[i].Model = long
		}
	}
	var buf bytes.Buffer
	render.ReportText(&buf, rep, render.TextOptions{Only: []render.Section{render.SectionTelemetry}})
	cols := map[string]map[int]bool{"accuracy": {}, "role": {}}
	for _, l := range strings.Split(buf.String(), "\n") {
		if i := strings.Index(l, " accuracy "); i >= 0 {
			cols["accuracy"][len([]rune(l[:i]))] = true
		}
		if m := regexp.MustCompile(` (eval|judge) +\d+ calls: `).FindStringIndex(l); m != nil {
			cols["role"][len([]rune(l[:m[0]]))] = true
		}
	}
	for marker, at := range cols {
		if len(at) != 1 {
			t.Errorf("%q starts in %d columns, want 1:\n%s", marker, len(at), buf.String())
		}
	}
}

// A row whose calls were all replayed from the cache spent nothing now:
// its cost per call is "–", not a missing price ("unknown"), and its
// tokens "–", not 0.
func TestPerToolRowOfReplayedCalls(t *testing.T) {
	rep := loadFixture(t, "full")
	rep.Telemetry.Tools = []report.ToolUsage{{Tool: "get_weather", Model: "m1", Calls: 3, Reused: 3}}
	var b bytes.Buffer
	if err := render.Markdown(&b, rep, render.MarkdownOptions{Long: true}); err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "| `get_weather` |") {
			row = l
		}
	}
	if !strings.Contains(row, "3, 3\u00a0reused") || strings.Contains(row, "unknown") || strings.Contains(row, "| 0 |") {
		t.Errorf("row %q: want 3 calls, 3 reused, no 'unknown' cost and no 0 tokens", row)
	}
}
