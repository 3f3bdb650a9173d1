package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/internal/hostile"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// FuzzParse treats report bytes as what they are in CI: an untrusted
// artifact (a baseline downloaded from an earlier run, a file in the PR).
// Parse must never panic; what it accepts must save and load again, and
// every renderer must turn it into output that is still well-formed: XML for
// JUnit, and Markdown with nothing from the file loose (no raw HTML, no live
// mention, no broken table row).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../render/testdata/report/*.json")
	for _, p := range seeds {
		if strings.Contains(p, ".golden.") {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{`{}`, `[]`, `{"schemaVersion":1}`, `{"schemaVersion":2}`, `{"checks":[]}`, `{"schemaVersion":1e400}`, strings.Repeat(`{"a":`, 20000)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := report.Parse(data)
		if err != nil {
			if rep != nil {
				t.Fatal("Parse returned a report and an error")
			}
			for _, e := range []error{report.ErrTooLarge, report.ErrNotJSON, report.ErrVersion, report.ErrSchema, report.ErrInvalid} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("Parse error of no known kind: %v", err)
		}
		saved, err := report.Marshal(rep)
		if err != nil {
			t.Fatalf("an accepted report does not save: %v", err)
		}
		if _, err := report.Parse(saved); err != nil {
			t.Fatalf("a saved report does not load: %v", err)
		}
		var md bytes.Buffer
		if err := render.Markdown(&md, rep, render.MarkdownOptions{Marker: "<!-- mcp-eval:fuzz -->", MaxBytes: 8 << 10}); err != nil {
			t.Fatalf("Markdown: %v", err)
		}
		if md.Len() > 8<<10 {
			t.Fatalf("Markdown is %d bytes, over its %d-byte budget", md.Len(), 8<<10)
		}
		if p := hostile.MarkdownProblems(md.String()); len(p) > 0 {
			t.Fatalf("Markdown not safe: %s\n%s", strings.Join(p, "\n"), md.String())
		}
		var x bytes.Buffer
		if err := render.ReportJUnit(&x, rep); err != nil {
			t.Fatalf("JUnit: %v", err)
		}
		if !utf8.Valid(x.Bytes()) {
			t.Fatal("JUnit is not UTF-8")
		}
		dec := xml.NewDecoder(&x)
		for {
			if _, err := dec.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("JUnit is not well-formed XML: %v", err)
			}
		}
		render.ReportText(io.Discard, rep, render.TextOptions{Verbose: true})
	})
}
