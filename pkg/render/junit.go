package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// ConformanceJUnit writes a Layer 0 report as JUnit XML: one suite per
// family, one case per check. A failed MUST is a failure; a failed SHOULD
// is a warning in system-out, so CI test views do not go red on it.
func ConformanceJUnit(w io.Writer, rep *conformance.Report) error {
	out := junitSuites{Name: "mcp-eval conformance " + xmlSafe(rep.Target), Time: seconds(rep.DurationMs)}
	idx := map[string]int{}
	for _, r := range rep.Checks {
		i, ok := idx[r.Family]
		if !ok {
			i = len(out.Suites)
			idx[r.Family] = i
			out.Suites = append(out.Suites, junitSuite{Name: r.Family + " " + familyTitle(r)})
		}
		s := &out.Suites[i]
		c := junitCase{Name: fmt.Sprintf("%s %s", r.ID, xmlSafe(r.Doc)), Classname: "conformance." + r.Family, Time: seconds(r.DurationMs)}
		msg := xmlSafe(fmt.Sprintf("[%s %s %s] %s", r.ID, r.Level, counts(r), r.Outcome.Message))
		body := xmlSafe(caseBody(r))
		switch r.Verdict {
		case check.Failed:
			if r.Level == check.Must {
				c.Failure = &junitMessage{Message: msg, Type: "MUST", Body: body}
				s.Failures++
				out.Failures++
			} else {
				c.SystemOut = "warning: " + msg + "\n" + body
			}
		case check.Errored:
			c.Error = &junitMessage{Message: msg, Body: body}
			s.Errors++
			out.Errors++
		case check.Skipped:
			c.Skipped = &junitMessage{Message: msg}
			s.Skipped++
			out.Skipped++
		case check.Warned:
			c.SystemOut = "warning: " + msg + "\n" + body
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
		out.Tests++
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func caseBody(r check.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "spec: %s\n", r.Spec)
	if r.Fix != "" {
		fmt.Fprintf(&b, "fix: %s\n", r.Fix)
	}
	for _, d := range r.Outcome.Details {
		fmt.Fprintf(&b, "also: %s\n", d)
	}
	for _, ev := range r.Outcome.Evidence {
		fmt.Fprintf(&b, "evidence: %s\n", evidenceLine(ev))
	}
	return b.String()
}

func seconds(ms float64) string { return fmt.Sprintf("%.3f", ms/1000) }

// xmlSafe drops what XML 1.0 cannot carry at all (most control
// characters) and the invisible characters that make a CI view show other
// text than is there (bidi controls, Unicode tags); encoding/xml escapes the
// rest.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || (r >= 0xe0000 && r <= 0xe007f):
			return '\uFFFD'
		case r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || (r >= 0x10000 && r <= 0x10ffff):
			return r
		}
		return '\uFFFD'
	}, s)
}
