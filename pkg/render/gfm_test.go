package render_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The PR comment as a reviewer meets it: rendered as GFM (npm marked,
// interop/gfm) with github-markdown-css in GitHub's 780 px comment column,
// in headless Chromium, with two models and with four, every <details>
// open. The verdict heading and the first Needs attention item end within
// the first 1000 px, no table scrolls sideways and nothing is wider than
// the column. The job summary (the long form) is held to the same widths.
// Skips when node, interop/gfm's packages or Chromium are missing, unless
// CI=true (node, packages) or MCP_EVAL_REQUIRE_CHROMIUM=1 (Chromium).
func TestCommentFirstScreenAt780(t *testing.T) {
	script := filepath.Join(interop.Root(), "interop", "gfm", "page.mjs")
	needGFM(t, script)
	reports := map[string]*report.Report{
		"full (two models)":      loadFixture(t, "full"),
		"full (four models)":     withFourModels(t),
		"wide (four models)":     loadFixture(t, "wide"),
		"12 tools × four models": withManyTools(t, 12),
		"l0regress":              loadFixture(t, "l0regress"),
	}
	for name, rep := range reports {
		if name != "l0regress" {
			if n := len(rep.Models); n != 2 && n != 4 {
				t.Fatalf("%s has %d models; the test is of two and of four", name, n)
			}
		}
		for _, form := range []struct {
			name string
			opts render.MarkdownOptions
			want string
		}{
			{"comment", mdOpts(0), "verdict=in attention=in tables=fit column=fits"},
			// The summary's first screen is the comment's; what it adds
			// below must still fit the column.
			{"summary", render.MarkdownOptions{Long: true, RunURL: "https://github.com/acme/weather-mcp/actions/runs/4242"}, "tables=fit column=fits"},
		} {
			var md bytes.Buffer
			if err := render.Markdown(&md, rep, form.opts); err != nil {
				t.Fatal(err)
			}
			got := measureGFM(t, gfmPage(t, script, md.String()))
			if form.name == "summary" {
				got = got[strings.Index(got, "tables="):]
			}
			if got != form.want {
				t.Errorf("%s, %s at 780 px: %s", name, form.name, got)
			}
		}
	}
}

// needGFM skips (fails under CI=true) when node or interop/gfm's
// packages are not installed.
func needGFM(t *testing.T, script string) {
	t.Helper()
	_, errNode := exec.LookPath("node")
	dir := filepath.Dir(script)
	_, errMarked := os.Stat(filepath.Join(dir, "node_modules", "marked"))
	_, errCSS := os.Stat(filepath.Join(dir, "node_modules", "github-markdown-css"))
	if errNode == nil && errMarked == nil && errCSS == nil {
		return
	}
	msg := "interop/gfm (marked, github-markdown-css) is not installed: run bash scripts/setup-interop.sh (needs node and npm)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: the comment must be checked as GitHub renders it)")
	}
	t.Skip(msg)
}

// gfmPage turns md into a whole page with interop/gfm's script.
func gfmPage(t *testing.T, script, md string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, "--width", "780")
	cmd.Stdin = strings.NewReader(md)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, tail(stderr.String(), 2000))
	}
	if !bytes.Contains(out, []byte(`class="markdown-body"`)) {
		t.Fatalf("node %s printed no markdown-body: %s", script, tail(string(out), 500))
	}
	return string(out)
}

// measureGFM opens page in Chromium at 780 px with every <details> open
// and reports where the verdict heading and the first Needs attention
// item end, which tables scroll sideways, and whether anything in the
// markdown-body is wider than the column.
func measureGFM(t *testing.T, page string) string {
	t.Helper()
	measure := `<script>
for (const d of document.querySelectorAll("details")) d.open = true;
const within = el => el && el.getBoundingClientRect().bottom + window.scrollY <= 1000 ? "in" : "out:" + (el ? Math.round(el.getBoundingClientRect().bottom + window.scrollY) : "none");
const body = document.querySelector(".markdown-body");
const verdict = [...body.querySelectorAll("h1,h2,h3")].find(h => h.textContent.includes("mcp-eval:"));
const label = [...body.querySelectorAll("p > strong")].find(s => s.textContent.trim() === "Needs attention");
const list = label && label.parentElement.nextElementSibling;
const first = list && list.tagName === "OL" ? list.querySelector("li") : null;
const over = [];
for (const t of body.querySelectorAll("table")) {
  if (t.scrollWidth > t.clientWidth) over.push((t.querySelector("th") || t).textContent.trim().slice(0, 30) + ":" + t.scrollWidth + "/" + t.clientWidth);
}
const wide = [];
for (const el of body.querySelectorAll("*")) {
  const r = el.getBoundingClientRect();
  if (r.right > body.getBoundingClientRect().right + 0.5 && !el.closest("table")) wide.push(el.tagName + ":" + Math.round(r.right));
}
document.body.setAttribute("data-measured", "verdict=" + within(verdict) + " attention=" + within(first) +
  " tables=" + (over.length ? over.join(",") : body.querySelector("table") ? "fit" : "none") +
  " column=" + (body.scrollWidth <= body.clientWidth && !wide.length ? "fits" : "overflows:" + body.scrollWidth + "/" + body.clientWidth + " " + wide.slice(0, 5).join(",")));
</script></body>`
	dom := chromiumDOMAt(t, strings.Replace(page, "</body>", measure, 1), 780)
	got := regexp.MustCompile(`data-measured="([^"]*)"`).FindStringSubmatch(dom)
	if got == nil {
		t.Fatal("the measuring script did not run")
	}
	return html.UnescapeString(got[1])
}

// withManyTools is withFourModels with per tool call rows of tools tools
// with long names (that a browser cannot wrap) × its four models.
func withManyTools(t *testing.T, tools int) *report.Report {
	t.Helper()
	rep := withFourModels(t)
	template := rep.Telemetry.Tools[0]
	rep.Telemetry.Tools = nil
	for i := range tools {
		for j, m := range rep.Models {
			u := template
			u.Tool, u.Model, u.Errors = fmt.Sprintf("search_customer_invoices_%02d", i), m.ID, j%2
			rep.Telemetry.Tools = append(rep.Telemetry.Tools, u)
		}
	}
	return rep
}
