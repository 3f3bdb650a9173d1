package render

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// ReportJUnit writes a report as JUnit XML, the one JUnit view of every
// command: Layer 0 as one suite per family and one case per check, then
// one suite per model for Layer 1 cases, one for Layer 2 rates and one for
// the gate's suite scores. A Layer 1 or 2 case is a failure only when the
// gate failed it: the renderer decides nothing, so a report never gated
// has no Layer 1 failures.
func ReportJUnit(w io.Writer, rep *report.Report) error {
	out := junitSuites{Name: "mcp-eval"}
	if c := rep.Conformance; c != nil {
		out.Time = seconds(c.DurationMs)
		out.Suites = layer0Suites(c, rep.Gate)
	}
	items := map[string]report.GateItem{}
	if rep.Gate != nil {
		for _, it := range rep.Gate.Items {
			items[it.Kind+"\x00"+it.Model+"\x00"+it.Subject+"\x00"+it.Score] = it
		}
	}
	item := func(kind, model, subject, score string) (report.GateItem, bool) {
		it, ok := items[kind+"\x00"+model+"\x00"+subject+"\x00"+score]
		return it, ok
	}
	if b := rep.Behavior; b != nil {
		for _, m := range resultModels(rep) {
			s := junitSuite{Name: "behaviour " + xmlSafe(Line(m)) + replayedTag(rep)}
			for _, r := range b.Results {
				if r.Model != m {
					continue
				}
				c := junitCase{Name: xmlSafe(Line(r.Case)), Classname: "behavior." + xmlSafe(Line(m)), Time: "0.000"}
				it, ok := item(report.KindCase, m, r.Case, "")
				addGateOutcome(&s, &c, it, ok, fmt.Sprintf("%d/%d runs passed", r.Passed.K, r.Passed.N))
				s.Cases = append(s.Cases, c)
			}
			out.Suites = append(out.Suites, s)
		}
		var suite junitSuite
		suite.Name = "behaviour suite scores"
		for _, it := range suiteItems(rep) {
			c := junitCase{Name: xmlSafe(Line(it.Score + " · " + it.Model)), Classname: "behavior.suite", Time: "0.000"}
			addGateOutcome(&suite, &c, it, rep.Gate != nil, Line(it.Reason))
			suite.Cases = append(suite.Cases, c)
		}
		if len(suite.Cases) > 0 {
			out.Suites = append(out.Suites, suite)
		}
	}
	if res := rep.Resilience; res != nil {
		s := junitSuite{Name: "resilience and security" + replayedTag(rep)}
		add := func(kind, model, subject string, scores []report.Score) {
			for _, sc := range scores {
				c := junitCase{Name: xmlSafe(Line(kind + " " + subject + " " + sc.Name + " · " + model)), Classname: "resilience." + kind, Time: "0.000"}
				it, ok := item(kind, model, subject, sc.Name)
				addGateOutcome(&s, &c, it, ok, fmt.Sprintf("%d/%d (%s is better)", sc.K, sc.N, sc.Direction))
				s.Cases = append(s.Cases, c)
			}
		}
		for _, f := range res.Faults {
			add(report.KindFault, f.Model, f.Fault, f.Scores)
		}
		for _, a := range res.Attacks {
			add(report.KindAttack, a.Model, a.Attack, a.Scores)
		}
		out.Suites = append(out.Suites, s)
	}
	if why := rep.Run.Cancelled; why != "" {
		// Skipped, not failed: a test reporter must not show a cancelled
		// job as red checks.
		out.Suites = append(out.Suites, junitSuite{Name: "mcp-eval run", Skipped: 1, Cases: []junitCase{{
			Name: "the run finished", Classname: "mcp-eval.run", Time: "0.000",
			Skipped: &junitMessage{Message: xmlSafe("the run was cancelled (" + Line(why) + ") before it finished: nothing is judged")}}}})
	}
	if why := rep.Run.Untested; why != "" {
		// An error, not a skip: the job did not do what it is for.
		out.Suites = append(out.Suites, junitSuite{Name: "mcp-eval run", Errors: 1, Cases: []junitCase{{
			Name: "the server could be tested", Classname: "mcp-eval.run", Time: "0.000",
			Error: &junitMessage{Message: xmlSafe("the server could not be tested: " + Line(why))}}}})
	}
	out.Tests, out.Failures, out.Errors, out.Skipped = 0, 0, 0, 0
	for i := range out.Suites {
		s := &out.Suites[i]
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Skipped += s.Skipped
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

// addGateOutcome makes a test case a failure when the gate failed the
// item, and says everything else in system-out.
func addGateOutcome(s *junitSuite, c *junitCase, it report.GateItem, gated bool, observed string) {
	if !gated {
		c.SystemOut = xmlSafe(observed)
		return
	}
	msg := xmlSafe(fmt.Sprintf("[%s] %s", it.Status, Line(it.Reason)))
	switch it.Status {
	case report.ItemFail:
		c.Failure = &junitMessage{Message: msg, Type: "gate", Body: xmlSafe(Line(it.Rule) + "\n" + observed)}
		s.Failures++
	case report.ItemError:
		// Not judged: neither a pass nor a failure, as JUnit's error is.
		c.Error = &junitMessage{Message: msg, Type: "not judged", Body: xmlSafe(Line(it.Rule) + "\n" + observed)}
		s.Errors++
	default:
		c.SystemOut = msg + "\n" + xmlSafe(observed)
	}
}
