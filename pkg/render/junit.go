package render

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
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

// layer0Suites are Layer 0 as JUnit: one suite per family, one case per
// check. A failed MUST is a failure; a failed SHOULD is a warning in
// system-out, so CI test views do not go red on it.
func layer0Suites(c *report.Conformance, g *report.Gate) []junitSuite {
	if c.Verdict == report.ConformanceLegacy {
		return []junitSuite{legacySuite(c, g)}
	}
	var suites []junitSuite
	idx := map[string]int{}
	for _, r := range c.Checks {
		i, ok := idx[r.Family]
		if !ok {
			i = len(suites)
			idx[r.Family] = i
			suites = append(suites, junitSuite{Name: r.Family + " " + familyTitle(r)})
		}
		s := &suites[i]
		tc := junitCase{Name: fmt.Sprintf("%s %s", r.ID, xmlSafe(r.Doc)), Classname: "conformance." + r.Family, Time: seconds(r.DurationMs)}
		msg := xmlSafe(fmt.Sprintf("[%s %s %s] %s", r.ID, r.Level, counts(r), r.Outcome.Message))
		body := xmlSafe(caseBody(r))
		switch r.Verdict {
		case report.CheckFailed:
			if r.Level == report.Must {
				tc.Failure = &junitMessage{Message: msg, Type: "MUST", Body: body}
				s.Failures++
			} else {
				tc.SystemOut = "warning: " + msg + "\n" + body
			}
		case report.CheckErrored:
			tc.Error = &junitMessage{Message: msg, Body: body}
			s.Errors++
		case report.CheckSkipped:
			tc.Skipped = &junitMessage{Message: msg}
			s.Skipped++
		case report.CheckWarned:
			tc.SystemOut = "warning: " + msg + "\n" + body
		case report.CheckNoted:
			tc.SystemOut = "info: " + msg + "\n" + body
		}
		s.Cases = append(s.Cases, tc)
	}
	return suites
}

// legacySuite is a legacy server in JUnit: one case, skipped (no
// 2026-07-28 check ran, which is no pass) unless the gate failed it, with
// the migration list as its body.
func legacySuite(c *report.Conformance, g *report.Gate) junitSuite {
	s := junitSuite{Name: "conformance era"}
	tc := junitCase{Name: "the server speaks 2026-07-28", Classname: "conformance.era", Time: seconds(c.DurationMs)}
	msg := xmlSafe(fmt.Sprintf("[%s] the server speaks %s only; %s", legacyWord, Line(legacySpeaks(c)), legacyGate(g)))
	var b strings.Builder
	if c.Legacy != nil {
		for _, bl := range c.Legacy.Blockers {
			fmt.Fprintf(&b, "%s: %s; instead: %s\n", bl.ID, Line(bl.Found), Line(bl.Instead))
		}
	}
	if g != nil && g.Verdict == report.GateFail {
		tc.Failure = &junitMessage{Message: msg, Type: legacyWord, Body: xmlSafe(b.String())}
		s.Failures++
	} else {
		tc.Skipped = &junitMessage{Message: msg}
		tc.SystemOut = xmlSafe(b.String())
		s.Skipped++
	}
	s.Cases = append(s.Cases, tc)
	return s
}

func caseBody(r report.CheckResult) string {
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
