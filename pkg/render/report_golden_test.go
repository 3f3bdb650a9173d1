package render_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/report")

// Renderers are tested from stored reports, one golden per format:
// testdata/report/NAME.json → NAME.golden.{md,txt,xml,json,html}.
func TestGolden(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "report", "*.json"))
	var names []string
	for _, in := range inputs {
		if !strings.Contains(filepath.Base(in), ".golden.") {
			names = append(names, strings.TrimSuffix(filepath.Base(in), ".json"))
		}
	}
	if len(names) < 5 {
		t.Fatalf("found %d fixtures in testdata/report, want 5 (run with -fixtures to write them)", len(names))
	}
	for _, name := range names {
		rep, err := report.Load(filepath.Join("testdata", "report", name+".json"))
		if err != nil {
			t.Fatalf("fixture %s: %v (rewrite the fixtures with -fixtures)", name, err)
		}
		for _, f := range []struct {
			ext    string
			render func(*bytes.Buffer) error
		}{
			{"md", func(b *bytes.Buffer) error { return render.Markdown(b, rep, mdOpts(0)) }},
			{"txt", func(b *bytes.Buffer) error { render.ReportText(b, rep, render.TextOptions{}); return nil }},
			{"xml", func(b *bytes.Buffer) error { return render.ReportJUnit(b, rep) }},
			{"json", func(b *bytes.Buffer) error { return render.ReportJSON(b, rep) }},
			{"html", func(b *bytes.Buffer) error { return render.HTML(b, rep, render.HTMLOptions{}) }},
		} {
			t.Run(name+"."+f.ext, func(t *testing.T) {
				compareGolden(t, filepath.Join("testdata", "report", name+".golden."+f.ext), f.render, "TestGolden")
			})
		}
	}
}

func mdOpts(max int) render.MarkdownOptions {
	return render.MarkdownOptions{Marker: "<!-- mcp-eval:test -->", RunURL: "https://github.com/acme/weather-mcp/actions/runs/4242", MaxBytes: max}
}

// Every fixture's Markdown, hostile or not, must be well-formed.
func TestMarkdownWellFormed(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "report", "*.json"))
	for _, in := range inputs {
		if strings.Contains(in, ".golden.") {
			continue
		}
		rep, err := report.Load(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, max := range []int{0, 4000, 1500} {
			var buf bytes.Buffer
			if err := render.Markdown(&buf, rep, mdOpts(max)); err != nil {
				t.Fatal(err)
			}
			checkMarkdown(t, filepath.Base(in), buf.String())
			if max > 0 && buf.Len() > max {
				t.Errorf("%s: %d bytes over the limit of %d", in, buf.Len(), max)
			}
		}
	}
}

func TestMarkdownHostileTextIsInert(t *testing.T) {
	rep, err := report.Load(filepath.Join("testdata", "report", "hostile.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ungated", func(t *testing.T) { hostileInert(t, rep) })
	// Gated, the details show Layer 0's notes, the server's text among them.
	rep.Gate = &report.Gate{Verdict: report.GatePass, Method: "m", Policy: report.GatePolicy{Text: "p"}, History: []report.ReportRef{}, Items: []report.GateItem{}, Unmatched: []report.Unmatched{}, Notes: []string{}}
	md := hostileInert(t, rep)
	if n := strings.Count(md, "\n- Layer 0"); n != len(rep.Conformance.Notes) {
		t.Errorf("%d of Layer 0's %d notes shown", n, len(rep.Conformance.Notes))
	}
}

func hostileInert(t *testing.T, rep *report.Report) string {
	t.Helper()
	var buf bytes.Buffer
	opts := mdOpts(0)
	opts.Long = true // every section, so every hostile value is shown somewhere
	if err := render.Markdown(&buf, rep, opts); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	// Code spans show their content verbatim and GitHub links nothing in
	// them, so hostile text may stay as it is there; everywhere else it
	// must be defused.
	var outside strings.Builder
	escaped := regexp.MustCompile(`\\.`) // a backslash-escaped character is literal
	for _, line := range strings.Split(md, "\n") {
		o, _ := stripCodeSpans(line)
		outside.WriteString(escaped.ReplaceAllString(o, "") + "\n")
	}
	for _, bad := range []string{"<img", "<script", "](https", "![", "@octocat", "#123", "\u202e", "\x1b", "<!-- hidden", "https://evil"} {
		if strings.Contains(outside.String(), bad) {
			t.Errorf("hostile text %q survived outside code spans", bad)
		}
	}
	// The hostile names are still there for a reader, escaped.
	for _, want := range []string{`\<img src\=x onerror\=alert\(1\)\>`, "`@octocat and @org/team please look`", "`` ``back`ticks`` ``", "@\u200d"} {
		if !strings.Contains(md, want) {
			t.Errorf("the escaped form %q is missing", want)
		}
	}
	return md
}

func TestMarkdownTruncates(t *testing.T) {
	rep, err := report.Load(filepath.Join("testdata", "report", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	var full, cut bytes.Buffer
	_ = render.Markdown(&full, rep, mdOpts(0))
	if err := render.Markdown(&cut, rep, mdOpts(3000)); err != nil {
		t.Fatal(err)
	}
	if full.Len() <= 3000 {
		t.Fatalf("fixture too small (%d bytes) to test cutting", full.Len())
	}
	s := cut.String()
	if cut.Len() > 3000 || !strings.Contains(s, "This comment was cut to stay under 3000 bytes") {
		t.Errorf("%d bytes, note missing:\n%s", cut.Len(), s)
	}
	if !strings.HasPrefix(s, "<!-- mcp-eval:test -->\n### ") || !strings.Contains(s, "[Workflow run](<https://github.com/acme/weather-mcp/actions/runs/4242>)") {
		t.Errorf("the marker, the verdict or the run link was cut:\n%s", s)
	}
}

func TestMarkdownOptions(t *testing.T) {
	rep := report.New()
	for _, m := range []string{"mcp-eval", "<!-- a -- b -->", "<!-- x -->\n", "<!-->"} {
		if err := render.Markdown(&bytes.Buffer{}, rep, render.MarkdownOptions{Marker: m}); err == nil {
			t.Errorf("marker %q accepted", m)
		}
	}
	if err := render.Markdown(&bytes.Buffer{}, rep, render.MarkdownOptions{MaxBytes: 100}); err == nil {
		t.Error("a 100-byte limit accepted")
	}
	var buf bytes.Buffer
	_ = render.Markdown(&buf, rep, render.MarkdownOptions{RunURL: "javascript:alert(1)"})
	if strings.Contains(buf.String(), "javascript") {
		t.Error("a non-http run URL was linked")
	}
}

// checkMarkdown fails on anything in GitHub-flavoured Markdown that
// untrusted text could have turned into markup: HTML other than our own
// few tags, links, images, mentions, issue references, autolinks,
// entities, unclosed code spans, tables with a wrong cell count, bidi and
// control characters, unbalanced <details>.
// ownLinks are the links the renderer writes itself: the run, its
// artifacts, and spec sections it builds from a known pattern.
var ownLinks = regexp.MustCompile(`\[[^\]]*\]\(<https://(github\.com/acme/weather-mcp/actions/runs/4242(#artifacts)?|modelcontextprotocol\.io/specification/[a-z0-9/#-]+)>\)`)

func checkMarkdown(t *testing.T, name, md string) {
	t.Helper()
	lines := strings.Split(md, "\n")
	open := 0
	tableCells := -1
	for i, line := range lines {
		where := func(format string, args ...any) {
			t.Helper()
			t.Errorf("%s:%d: "+format+"\n  %s", append([]any{name, i + 1}, append(args, line)...)...)
		}
		for _, r := range line {
			if (unicode.IsControl(r) && r != '\t') || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f {
				where("control or bidi character %U", r)
			}
		}
		if i == 0 && strings.HasPrefix(line, "<!--") {
			continue // the caller's marker
		}
		outside, ok := stripCodeSpans(line)
		if !ok {
			where("unclosed code span")
		}
		outside = ownLinks.ReplaceAllString(outside, "")
		allowed := strings.NewReplacer("<details>", "", "</details>", "", "<summary>", "", "</summary>", "", "<sub>", "", "</sub>", "",
			"[Workflow run](<https://github.com/acme/weather-mcp/actions/runs/4242>)", "", "> [!NOTE]", "", "> [!WARNING]", "").Replace(outside)
		for _, re := range []struct {
			re   *regexp.Regexp
			what string
		}{
			{regexp.MustCompile(`(^|[^\\])<`), "raw HTML"},
			{regexp.MustCompile(`(^|[^\\])\[`), "a link or image"},
			{regexp.MustCompile(`@[A-Za-z0-9]`), "an @mention"},
			{regexp.MustCompile(`#[0-9]`), "an issue reference"},
			{regexp.MustCompile(`://|(?i)www\.`), "an autolink"},
			{regexp.MustCompile(`(^|[^\\])&[#A-Za-z]`), "an HTML entity"},
		} {
			if re.re.MatchString(allowed) {
				where("%s", re.what)
			}
		}
		open += strings.Count(outside, "<details>") - strings.Count(outside, "</details>")
		if strings.HasPrefix(line, "|") {
			n := delimiters(line)
			if tableCells == -1 {
				tableCells = n
			} else if n != tableCells {
				where("%d cell delimiters, the table header has %d", n, tableCells)
			}
		} else {
			tableCells = -1
		}
	}
	if open != 0 {
		t.Errorf("%s: %d <details> left open", name, open)
	}
}

// stripCodeSpans removes code spans (whose content GitHub shows
// verbatim) and backslash escapes, as CommonMark reads them.
func stripCodeSpans(line string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line):
			b.WriteString(line[i : i+2])
			i += 2
		case c == '`':
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			end := closing(line, i+n, n)
			if end < 0 {
				return b.String(), false
			}
			b.WriteString("CODE")
			i = end + n
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}

// closing finds the next run of exactly n backticks from i.
func closing(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// delimiters counts the pipes GFM splits a table row on: every | not
// written as \|, inside code spans too.
func delimiters(row string) int {
	n := 0
	for i := 0; i < len(row); i++ {
		if row[i] == '\\' && i+1 < len(row) && row[i+1] == '|' {
			i++
			continue
		}
		if row[i] == '|' {
			n++
		}
	}
	return n
}

// Text and JUnit carry no control or bidi characters from hostile input
// (the terminal and CI test views would act on them).
func TestHostileTextAndJUnitAreClean(t *testing.T) {
	rep, err := report.Load(filepath.Join("testdata", "report", "hostile.json"))
	if err != nil {
		t.Fatal(err)
	}
	var txt, xml bytes.Buffer
	render.ReportText(&txt, rep, render.TextOptions{Verbose: true})
	if err := render.ReportJUnit(&xml, rep); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"text": txt.String(), "junit": xml.String()} {
		for _, r := range s {
			if (unicode.IsControl(r) && r != '\n' && r != '\t') || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Errorf("%s output has %U", name, r)
				break
			}
		}
	}
}

// compareGolden renders and compares with the golden file, or rewrites it
// under -update; test names the test to rerun with -update.
func compareGolden(t *testing.T, golden string, render func(*bytes.Buffer) error, test string) {
	t.Helper()
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (write the goldens with: go test ./pkg/render -run %s -update)", err, test)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("%s differs from the rendering; if the change is intended, run: go test ./pkg/render -run %s -update\n--- got ---\n%s", golden, test, buf.String())
	}
}

// The terminal follows the comment's number convention: Δ is new −
// baseline, words follow the score's direction ("rose" for attack success,
// "fell" for tool selection), no "-0.0", no Δ where the gate did not
// compare, and no gate phrase a reader misreads ("drop +15.0", "bound").
func TestTerminalNumbersFollowTheConvention(t *testing.T) {
	texts := map[string]string{}
	for _, name := range []string{"full", "hostile", "wide", "l0regress", "layer0", "legacy", "ungated"} {
		rep, err := report.Load(filepath.Join("testdata", "report", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		render.ReportText(&buf, rep, render.TextOptions{Verbose: true})
		texts[name] = buf.String()
		for _, bad := range []string{"drop +", "drop -", "(bound ", "-0.0"} {
			if strings.Contains(buf.String(), bad) {
				t.Errorf("%s: the terminal says %q", name, bad)
			}
		}
		for _, l := range strings.Split(buf.String(), "\n") {
			if strings.Contains(l, "notComparable") && strings.Contains(l, "Δ") {
				t.Errorf("%s: a Δ on a line the gate did not compare: %q", name, l)
			}
		}
	}
	for name, want := range map[string][]string{
		// m1's tool selection, 100% → 84.4%, at the ceiling: no clear fall.
		"full": {"84.4% [63.0%, 100.0%] was 100.0%, Δ -15.0 pts, no clear fall", "Attack success rose from 0/40 to 9/40 (0.0% → 22.5%)"},
		// 100% → 47.1% over 17 cases, a bound of 38.6 pts.
		"hostile": {"was 100.0%, Δ -52.9 pts, fell ≥ 38.6 pts", "Tool selection fell from 100.0% to 47.1% over 17 paired cases"},
	} {
		for _, w := range want {
			if !strings.Contains(texts[name], w) {
				t.Errorf("%s: the terminal lacks %q", name, w)
			}
		}
	}
}
