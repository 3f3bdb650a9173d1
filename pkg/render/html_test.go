package render_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
// image, no reference to any URL, and a CSP that would block one anyway.
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
	for _, e := range strings.Fields("html head meta title style body header h1 h2 h3 span dl dt dd section p table tbody tr th td code details summary ul li div pre strong svg polyline rect line text footer") {
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
	for _, id := range []string{"verdict", "attention", "layer0", "layer1", "heatmap", "model-columns", "failing", "layer2", "layer3", "usage", "latency", "gate", "run-cost", "trends"} {
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
	// 10 cases × 2 models; weather-0 × m1 passed 1 of 5: heat h2.
	if cells != 20 || heat["h10"] == 0 || heat["h2"] != 1 || heat["none"] == 0 {
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
		"--window-size=780,2000", "--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+path)
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
