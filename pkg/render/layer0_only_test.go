package render_test

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// `mcp-eval check` renders a report that has only Layer 0, through the
// same renderers as a whole report. Its goldens (NAME.l0.golden.*) were
// first written by the former Layer 0 renderers (ConformanceText, and
// ConformanceJUnit with the root name now "mcp-eval"), so CI consumers of
// check --junit keep seeing the same tests.
func TestLayer0Only(t *testing.T) {
	for _, name := range []string{"layer0", "legacy", "hostile"} {
		full, err := report.Load(filepath.Join("testdata", "report", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		rep := &report.Report{Conformance: full.Conformance}
		for _, f := range []struct {
			ext    string
			render func(*bytes.Buffer) error
		}{
			{"txt", func(b *bytes.Buffer) error {
				render.ReportText(b, rep, render.TextOptions{Only: []render.Section{render.SectionConformance}})
				return nil
			}},
			{"verbose.txt", func(b *bytes.Buffer) error {
				render.ReportText(b, rep, render.TextOptions{Verbose: true, Only: []render.Section{render.SectionConformance}})
				return nil
			}},
			{"xml", func(b *bytes.Buffer) error { return render.ReportJUnit(b, rep) }},
		} {
			t.Run(name+"."+f.ext, func(t *testing.T) {
				compareGolden(t, filepath.Join("testdata", "report", name+".l0.golden."+f.ext), f.render, "TestLayer0Only")
			})
		}
	}
}

// A whole report's JUnit starts with exactly the suites of its Layer 0
// alone: adding layers adds suites, never changes a check's test case.
func TestLayer0JUnitPrefix(t *testing.T) {
	type suites struct {
		Suites []struct {
			Raw []byte `xml:",innerxml"`
		} `xml:"testsuite"`
	}
	decode := func(r *report.Report) suites {
		var b bytes.Buffer
		if err := render.ReportJUnit(&b, r); err != nil {
			t.Fatal(err)
		}
		var s suites
		if err := xml.Unmarshal(b.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	full, err := report.Load(filepath.Join("testdata", "report", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	all, l0 := decode(full), decode(&report.Report{Conformance: full.Conformance})
	if len(l0.Suites) == 0 || len(all.Suites) <= len(l0.Suites) {
		t.Fatalf("%d Layer 0 suites, %d in the whole report", len(l0.Suites), len(all.Suites))
	}
	for i := range l0.Suites {
		if !bytes.Equal(l0.Suites[i].Raw, all.Suites[i].Raw) {
			t.Errorf("suite %d differs:\nLayer 0 alone: %s\nwhole report:  %s", i, l0.Suites[i].Raw, all.Suites[i].Raw)
		}
	}
}

// Layer 0's own verdict line names the failures the gate waived, so that
// it does not read as a second verdict against the gate's PASS.
func TestLayer0VerdictNamesWaivedFailures(t *testing.T) {
	full, err := report.Load(filepath.Join("testdata", "report", "layer0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, r := range full.Conformance.Checks {
		if r.Level == report.Must && r.Verdict == report.CheckFailed {
			failed = append(failed, r.ID)
		}
	}
	if full.Conformance.Verdict != report.ConformanceFail || len(failed) < 2 {
		t.Fatalf("the fixture has %d failed MUST checks (%s), want 2 or more and a failing verdict", len(failed), full.Conformance.Verdict)
	}
	text := func(waived ...string) string {
		rep := &report.Report{Conformance: full.Conformance, Gate: &report.Gate{}}
		for _, id := range waived {
			rep.Gate.Items = append(rep.Gate.Items, report.GateItem{Layer: 0, Kind: report.KindCheck, Subject: id, Status: report.ItemWaived})
		}
		var b bytes.Buffer
		render.ReportText(&b, rep, render.TextOptions{Only: []render.Section{render.SectionConformance}})
		return b.String()
	}
	if got := text(failed[0]); !strings.Contains(got, failed[0]+" (waived)") || strings.Contains(got, "every failure waived") {
		t.Errorf("one of %d failures waived:\n%s", len(failed), got)
	}
	if got := text(failed...); !strings.Contains(got, "conformance: FAIL, every failure waived") {
		t.Errorf("every failure waived:\n%s", got)
	}
}

// A check the gate waived is no red row: the comment leaves it out of the
// checks to look at and marks it waived in the whole table, and the HTML
// marks it waived, not failed.
func TestWaivedChecksAreNotRedRows(t *testing.T) {
	full, err := report.Load(filepath.Join("testdata", "report", "layer0.json"))
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, r := range full.Conformance.Checks {
		if r.Level == report.Must && r.Verdict == report.CheckFailed {
			id = r.ID
			break
		}
	}
	rep := &report.Report{SchemaVersion: full.SchemaVersion, Server: full.Server, Conformance: full.Conformance,
		Gate: &report.Gate{Verdict: report.GatePass, Items: []report.GateItem{{Layer: 0, Kind: report.KindCheck, Subject: id, Status: report.ItemWaived, Reason: "waived until 2027-01-01: upstream bug"}}}}
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, render.MarkdownOptions{Long: true}); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range strings.Split(md.String(), "\n") {
		if strings.Contains(l, "`"+strings.ReplaceAll(id, "-", "‑")+"`") && strings.Contains(l, "| MUST |") {
			rows++
			if !strings.Contains(l, "◌ waived (fail)") {
				t.Errorf("a waived check's row: %s", l)
			}
		}
	}
	if rows != 1 {
		t.Errorf("%s has %d rows in the comment, want 1 (in the whole table only)", id, rows)
	}
	var page bytes.Buffer
	if err := render.HTML(&page, rep, render.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "waived (fail)") {
		t.Errorf("the HTML does not mark %s waived", id)
	}
}

// A check that errored in some runs and passed in the others says in how
// many it was not judged, not "flaky".
func TestTerminalSaysRunsNotJudged(t *testing.T) {
	c := report.CheckResult{ID: "DISC-1", Level: report.Must, Family: "DISC", Verdict: report.CheckErrored, Runs: 5,
		Counts:  map[report.CheckVerdict]int{report.CheckPassed: 1, report.CheckErrored: 4},
		Outcome: report.Outcome{Verdict: report.CheckErrored, Message: "stdio server/discover: server process exited with code 3"}}
	rep := &report.Report{Conformance: &report.Conformance{Verdict: report.ConformanceIncomplete, Runs: 5, Checks: []report.CheckResult{c}}}
	var b bytes.Buffer
	render.ReportText(&b, rep, render.TextOptions{Only: []render.Section{render.SectionConformance}})
	if got := b.String(); !strings.Contains(got, "not judged in 4 of 5 runs: stdio server/discover") || strings.Contains(got, "flaky") {
		t.Errorf("a check passed once and errored four times:\n%s", got)
	}
	// A failed run under the error heading the line is said too.
	c.Counts = map[report.CheckVerdict]int{report.CheckFailed: 1, report.CheckErrored: 4}
	rep.Conformance.Checks = []report.CheckResult{c}
	b.Reset()
	render.ReportText(&b, rep, render.TextOptions{Only: []render.Section{render.SectionConformance}})
	if got := b.String(); !strings.Contains(got, "failed in 1, not judged in 4 of 5 runs") {
		t.Errorf("a check failed once and errored four times:\n%s", got)
	}
}
