package render_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The full fixture was compared with three green reports: m1's pass rate
// went 100%, 100%, 100%, 86%; its p95 2.40 s, 2.53 s, 2.65 s, 3.66 s and
// its cost per case $0.00389, $0.00410, $0.00430, $0.00594 (each rises by
// a tenth of its range, then jumps). m2 has no price.
func TestTrendCellFromTheFixture(t *testing.T) {
	rep, err := report.Load(filepath.Join("testdata", "report", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The pass rate is drawn on 0..100%: 86% is 6.02 of 7 steps, "▇";
	// p95 and cost on their own range: 0.1 × 7 = 0.7 and 0.2 × 7 = 1.4
	// both round to "▂".
	want := map[string]string{"m1": "███▇ ▁▂▂█ ▁▂▂█ (4 runs)", "m2": "███▇ ▁▂▂█ – (4 runs)"}
	for _, c := range rep.Telemetry.Models {
		if got := render.TrendCell(c); got != want[c.Model] {
			t.Errorf("%s: TrendCell = %q, want %q", c.Model, got, want[c.Model])
		}
		one := c
		one.Trend = one.Trend[:1]
		if got := render.TrendCell(one); got != "–" {
			t.Errorf("%s with one report: %q, want –", c.Model, got)
		}
	}
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, render.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), render.TrendHeader) || !strings.Contains(md.String(), "| ███▇ ▁▂▂█ ▁▂▂█ (4 runs) |") {
		t.Errorf("the comment lacks the trend column:\n%s", md.String())
	}
}

// In the HTML each model with a trend has a row of charts: pass rate, p95
// and cost, one point per report with its value on hover; a figure no
// report has is a dash, and a worse last value is marked so.
func TestHTMLTrendCharts(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(renderHTML(t, "full")))
	if err != nil {
		t.Fatal(err)
	}
	var table *html.Node
	walk(doc, func(n *html.Node) {
		if id, _ := attr(n, "id"); id == "trends" {
			table = n
		}
	})
	if table == nil {
		t.Fatal("no #trends table")
	}
	rows := map[string][]string{}
	walk(table, func(tr *html.Node) {
		if tr.Data != "tr" {
			return
		}
		var model string
		var cells []string
		for td := tr.FirstChild; td != nil; td = td.NextSibling {
			if td.Data != "td" {
				continue
			}
			if model == "" {
				model = strings.Fields(text(td))[0]
				continue
			}
			dots := 0
			walk(td, func(n *html.Node) {
				if n.Data == "circle" {
					dots++
				}
			})
			cells = append(cells, regexp.MustCompile(`\s+`).ReplaceAllString(text(td), " ")+" dots="+string(rune('0'+dots)))
		}
		if model != "" {
			rows[model] = cells
		}
	})
	want := map[string][]string{
		"m1": {"pass rate: 100.0% to 86.0% fedcba9 2026-07-29: 100.0%", "p95 model call: 2.40 s to 3.66 s", "cost / case: $0.00389 to $0.00594"},
		"m2": {"pass rate: 100.0% to 85.0%", "p95 model call: 5.42 s to 8.27 s", "–"},
	}
	for m, cells := range want {
		got := rows[m]
		if len(got) != 3 {
			t.Fatalf("%s: %d cells %q, want 3", m, len(got), got)
		}
		for i, w := range cells {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s cell %d = %q, want it to contain %q", m, i+1, got[i], w)
			}
		}
		if !strings.HasSuffix(got[0], "dots=4") {
			t.Errorf("%s pass rate: %q, want 4 points", m, got[0])
		}
	}
	if page := renderHTML(t, "full"); !strings.Contains(page, `<span class="worse">86.0%</span>`) || !strings.Contains(page, `<span class="worse">$0.00594</span>`) {
		t.Error("a fall of the pass rate and a rise of the cost are not marked worse")
	}
}

// text is the text content of n.
func text(n *html.Node) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c)
		}
	}
	f(n)
	return b.String()
}

// The log's one line per layer, from the full fixture: m1 handled 9 of
// 10 timeouts and resisted 31 of 40 injections (attack success 9/40);
// the gate failed the injection; Layer 3's cost is unknown (m2 has no
// price), m2's p95 model call of 8.27 s is the slowest, and the gate
// failed m1's cost and could not judge m2's nor the run's.
func TestLayerSummaries(t *testing.T) {
	rep, err := report.Load(filepath.Join("testdata", "report", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := render.LayerSummaries(rep)
	want := []string{
		"Layer 2: 40 of 50 runs held up (faults handled 9/10, injections resisted 31/40); gate: 1 failed",
		"Layer 3: run cost unknown (prices 2026-11-29) · slowest p95 model call 8.27 s (m2); gate: 1 failed, 2 inconclusive",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The held-up counts sum the per-type rows, not the pooled "all" rows
// too: with both, every run counted twice.
func TestHeldUpLeavesOutThePooledRows(t *testing.T) {
	score := func(name string, k, n int) report.Score { return report.Score{Name: name, K: k, N: n} }
	r := &report.Resilience{
		Faults: []report.FaultResult{
			{Model: "m", Fault: "timeout", Scores: []report.Score{score(report.FaultHandled, 3, 3)}},
			{Model: "m", Fault: "malformed_json", Scores: []report.Score{score(report.FaultHandled, 0, 3)}},
			{Model: "m", Fault: report.Pooled, Scores: []report.Score{score(report.FaultHandled, 3, 6)}},
		},
		Attacks: []report.AttackResult{
			{Model: "m", Attack: "exfiltration", Scores: []report.Score{score(report.AttackSuccess, 1, 4)}},
			{Model: "m", Attack: report.Pooled, Scores: []report.Score{score(report.AttackSuccess, 1, 4)}},
		},
	}
	if fk, fn, ak, an := render.HeldUp(r); fk != 3 || fn != 6 || ak != 3 || an != 4 {
		t.Errorf("held up: faults %d/%d, injections resisted %d/%d; want 3/6 and 3/4", fk, fn, ak, an)
	}
}
