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

	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func renderHTML(t *testing.T, fixture string) string {
	t.Helper()
	rep, err := report.Load(filepath.Join("testdata", "report", fixture+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := render.HTML(&buf, rep, render.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// walk calls f for every element of the parsed page.
func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// The page loads nothing: no script, no external stylesheet, font or
// image, and a CSP that would block one anyway. Its only URLs are links
// a reader may follow (<a href>, which loads nothing by itself): to the
// workflow run and commit on GitHub and to the spec, built by the
// renderer, never from report text, and without a referrer.
func TestHTMLIsSelfContained(t *testing.T) {
	for _, name := range []string{"full", "hostile", "layer0", "legacy", "ungated"} {
		page := renderHTML(t, name)
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		csp := false
		walk(doc, func(n *html.Node) {
			switch n.Data {
			case "script", "link", "iframe", "object", "embed", "img", "base", "form", "audio", "video", "source":
				t.Errorf("%s: a <%s> element", name, n.Data)
			case "meta":
				if v, _ := attr(n, "http-equiv"); v == "Content-Security-Policy" {
					c, _ := attr(n, "content")
					csp = strings.HasPrefix(c, "default-src 'none'")
				}
			}
			for _, a := range n.Attr {
				if a.Key == "href" && n.Data == "a" {
					rel, _ := attr(n, "rel")
					if !(strings.HasPrefix(a.Val, "https://github.com/") || strings.HasPrefix(a.Val, "https://modelcontextprotocol.io/specification/")) || !strings.Contains(rel, "noreferrer") {
						t.Errorf("%s: a link %q (rel %q)", name, a.Val, rel)
					}
					continue
				}
				if a.Key == "src" || a.Key == "href" || a.Key == "xlink:href" || a.Key == "srcset" || a.Key == "action" || a.Key == "style" || strings.HasPrefix(a.Key, "on") {
					t.Errorf("%s: <%s %s=%q>", name, n.Data, a.Key, a.Val)
				}
			}
		})
		if !csp {
			t.Errorf("%s: no Content-Security-Policy of default-src 'none'", name)
		}
		// Our stylesheet reaches for nothing either.
		for _, bad := range []string{"@import", "url(", "@font-face"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s: the page contains %q", name, bad)
			}
		}
	}
}

// Every string a server or model wrote is text on the page, never markup.
func TestHTMLEscapesHostileText(t *testing.T) {
	page := renderHTML(t, "hostile")
	for _, bad := range []string{"<img src=x", "<!-- hidden", "<details><summary>x", "\u202e", "\u2066", "\x1b", "<script"} {
		if strings.Contains(page, bad) {
			t.Errorf("hostile text %q reached the page unescaped", bad)
		}
	}
	for _, want := range []string{"&lt;img src=x onerror=alert(1)&gt;", "&amp;#x202E; &amp;lt;script&amp;gt;", "&lt;!-- hidden --&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks the escaped form %q", want)
		}
	}
	// Only the elements the template writes exist: hostile text made none.
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, e := range strings.Fields("html head meta title style body header h1 h2 h3 span dl dt dd section p table tbody tr th td code details summary ul li div pre strong svg polyline rect line text footer a circle") {
		allowed[e] = true
	}
	walk(doc, func(n *html.Node) {
		if !allowed[n.Data] {
			t.Errorf("an element <%s> the template does not write", n.Data)
		}
	})
}

// The full fixture has every section: the heat map with a cell per case ×
// model, the per-model columns with Δ, latency charts, and the failing
// case with its trajectory.
func TestHTMLFromFixture(t *testing.T) {
	page := renderHTML(t, "full")
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]*html.Node{}
	walk(doc, func(n *html.Node) {
		if id, ok := attr(n, "id"); ok {
			ids[id] = n
		}
	})
	for _, id := range []string{"verdict", "attention", "layer0", "layer1", "heatmap", "model-columns", "failing", "layer2", "layer3", "usage", "latency", "gate", "run-cost", "trends", "layer2-matrix", "suites", "baseline"} {
		if ids[id] == nil {
			t.Errorf("no element with id %q", id)
		}
	}
	cells, heat := 0, map[string]int{}
	walk(ids["heatmap"], func(n *html.Node) {
		if c, _ := attr(n, "class"); strings.HasPrefix(c, "cell ") {
			cells++
			heat[strings.TrimPrefix(c, "cell ")]++
		}
	})
	// 10 cases × 2 models, coloured by the gate's status, not the pass
	// rate: weather-3 × m2 (3/5, below its floor) failed; weather-0 × m1
	// (1/5) and weather-3 × m1 (3/5) are warnings; m2's seven other
	// decided cases are not comparable (its served model changed); two
	// cells have no decided run.
	if cells != 20 || heat["st-fail"] != 1 || heat["st-warn"] != 2 || heat["st-other"] != 7 || heat["st-pass"] != 8 || heat["none"] != 2 {
		t.Errorf("%d cells, heat %v", cells, heat)
	}
	for _, want := range []string{
		"86.0% (-14.0 pts)",              // accuracy Δ vs the baseline
		"$0.00594 (&#43;38%)",            // cost per case Δ (html/template writes + as &#43;)
		"Which city? I can look",         // the failing trajectory's final answer
		"&#34;city&#34;: &#34;Oslo&#34;", // its tool call's arguments, indented
		"the model asked back",           // the reason the run failed
		"unknown",                        // m2 has no price
		"<svg class=\"hist\"",            // latency distributions
		"<svg class=\"trend\"",           // the trends
		`<td class="cell st-fail" title="m1: attackSuccess 9/40`,               // Layer 2: the injection the gate failed, in the matrix
		"<summary>1 injected types with no regression for any model</summary>", // and the timeout it passed, folded
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestHTMLInChromium opens the full report in headless Chromium and reads
// back the DOM it built: the page parses in a real browser, offline. It
// skips when no Chromium is installed (apt-get install -y chromium), unless
// MCP_EVAL_REQUIRE_CHROMIUM=1 makes a missing browser a failure;
// scripts/test.sh does not install it.
func TestHTMLInChromium(t *testing.T) {
	dom := chromiumDOM(t, renderHTML(t, "full"))
	for _, want := range []string{`id="heatmap"`, `id="model-columns"`, `id="latency"`, "Which city? I can look", "Run cost"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM chromium built lacks %q", want)
		}
	}
}

// chromiumDOM opens page in headless Chromium, offline, in a window of
// GitHub's comment column (780 px), and returns the DOM it built; it
// skips without a browser as TestHTMLInChromium says.
func chromiumDOM(t *testing.T, page string) string {
	t.Helper()
	return chromiumDOMAt(t, page, 780)
}

// chromiumDOMAt is chromiumDOM in a window width px wide.
func chromiumDOMAt(t *testing.T, page string, width int) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("MCP_EVAL_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("MCP_EVAL_REQUIRE_CHROMIUM=1 but no chromium on PATH")
		}
		t.Skip("no chromium on PATH: install it (apt-get install -y chromium) to open the HTML report in a real browser")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND", // offline: no name resolves
		fmt.Sprintf("--window-size=%d,2000", width), "--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+path)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(stderr.String(), 2000))
	}
	return stdout.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// At 1280 px, with two models and with four, report.html puts the
// verdict and the first Needs attention item within the first 1000 px,
// no table is wider than its box, and the page does not scroll sideways.
func TestHTMLFirstScreenAt1280(t *testing.T) {
	two, err := report.Load(filepath.Join("testdata", "report", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]*report.Report{"two models": two, "four models": withFourModels(t)} {
		var buf bytes.Buffer
		if err := render.HTML(&buf, rep, render.HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		got := measurePage(t, buf.String(), 1280)
		if got != "verdict=in attention=in tables=fit page=fits" {
			t.Errorf("%s at 1280 px: %s", name, got)
		}
	}
}

// measurePage opens page at width px and reports where the verdict and
// the first Needs attention item end, which tables overflow, and
// whether the page scrolls sideways.
func measurePage(t *testing.T, page string, width int) string {
	t.Helper()
	page = strings.Replace(page, "default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';", 1)
	measure := `<script>
const within = el => el && el.getBoundingClientRect().bottom + window.scrollY <= 1000 ? "in" : "out:" + (el ? Math.round(el.getBoundingClientRect().bottom) : "none");
const over = [];
for (const t of document.querySelectorAll("table")) {
  const box = t.parentElement;
  if (t.scrollWidth > t.clientWidth || t.offsetWidth > box.clientWidth) over.push((t.id || t.parentElement.id || "table") + ":" + t.scrollWidth + "/" + t.clientWidth + "/" + box.clientWidth);
}
const doc = document.scrollingElement;
document.body.setAttribute("data-measured", "verdict=" + within(document.getElementById("verdict")) +
  " attention=" + within(document.querySelector("#attention .att")) + " tables=" + (over.length ? over.join(",") : "fit") +
  " page=" + (doc.scrollWidth <= doc.clientWidth ? "fits" : "scrolls:" + doc.scrollWidth));
</script></body>`
	dom := chromiumDOMAt(t, strings.Replace(page, "</body>", measure, 1), width)
	got := regexp.MustCompile(`data-measured="([^"]*)"`).FindStringSubmatch(dom)
	if got == nil {
		t.Fatal("the measuring script did not run")
	}
	return got[1]
}

// withFourModels is the full fixture with four models of long names: m1
// and m2 renamed, and a copy of each under two more names, in every
// section that names a model.
func withFourModels(t *testing.T) *report.Report {
	t.Helper()
	rep, err := report.Load(filepath.Join("testdata", "report", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string][2]string{"m1": {"anthropic:claude-sonnet-4-5", "anthropic:claude-haiku-4-5"}, "m2": {"openai:gpt-5-mini", "openai:gpt-5"}}
	models := rep.Models
	rep.Models = nil
	for _, k := range []int{0, 1} {
		for _, m := range models {
			m.ID = names[m.ID][k]
			rep.Models = append(rep.Models, m)
		}
	}
	rep.Behavior.Results = fourOf(rep.Behavior.Results, names, func(r *report.CaseResult) *string { return &r.Model })
	rep.Behavior.Confusion = fourOf(rep.Behavior.Confusion, names, func(r *report.Confusion) *string { return &r.Model })
	rep.Gate.Items = fourOf(rep.Gate.Items, names, func(r *report.GateItem) *string { return &r.Model })
	rep.Resilience.Faults = fourOf(rep.Resilience.Faults, names, func(r *report.FaultResult) *string { return &r.Model })
	rep.Resilience.Attacks = fourOf(rep.Resilience.Attacks, names, func(r *report.AttackResult) *string { return &r.Model })
	tel := rep.Telemetry
	tel.Usage = fourOf(tel.Usage, names, func(r *report.Usage) *string { return &r.Model })
	tel.Latency = fourOf(tel.Latency, names, func(r *report.Latency) *string { return &r.Model })
	tel.Tools = fourOf(tel.Tools, names, func(r *report.ToolUsage) *string { return &r.Model })
	tel.Models = fourOf(tel.Models, names, func(r *report.ModelColumns) *string { return &r.Model })
	return rep
}

// fourOf renames each element's model by names, and appends a copy under
// the second name; elements of no model stay as they are.
func fourOf[T any](xs []T, names map[string][2]string, model func(*T) *string) []T {
	var out, copies []T
	for _, x := range xs {
		n, ok := names[*model(&x)]
		if !ok {
			out = append(out, x)
			continue
		}
		*model(&x) = n[0]
		out = append(out, x)
		*model(&x) = n[1]
		copies = append(copies, x)
	}
	return append(out, copies...)
}

// report.html's Needs attention is the comment's: BuildAttention's items,
// in its order, with its sentences, for every fixture.
func TestHTMLAttentionIsTheComments(t *testing.T) {
	for _, name := range []string{"full", "hostile", "l0regress", "layer0", "legacy", "wide"} {
		rep, err := report.Load(filepath.Join("testdata", "report", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := render.HTML(&buf, rep, render.HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		walk(doc, func(n *html.Node) {
			if c, _ := attr(n, "class"); strings.HasPrefix(c, "att ") {
				for p := n.FirstChild; p != nil; p = p.NextSibling {
					if p.Type == html.ElementNode && p.Data == "p" {
						got = append(got, textOf(p))
						break
					}
				}
			}
		})
		var want []string
		for _, it := range render.BuildAttention(rep).Items {
			want = append(want, it.Sentence+".")
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d attention items in the HTML, %d in the comment's list", name, len(got), len(want))
			continue
		}
		for i := range want {
			if visible(got[i]) != visible(want[i]) {
				t.Errorf("%s item %d:\n html %q\n want %q", name, i+1, got[i], want[i])
			}
		}
	}
}

// visible drops what the page replaces (control characters, shown as
// U+FFFD or ⏎), so a sentence compares by what a reader sees.
func visible(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\uFFFD' || r == '⏎' {
			return -1
		}
		return r
	}, s)
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}
