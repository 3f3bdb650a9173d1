package poison

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Family is the Layer 0 family of the poisoning checks.
const Family = "POISON"

// specRef is where the spec tells clients that tool metadata is untrusted.
const specRef = "server/tools.mdx §Security Considerations; schema ToolAnnotations (\"untrusted servers\")"

// Results turns findings into one Layer 0 check result per rule (POISON-1
// to POISON-8), in rule order, so that they show in the Layer 0 report,
// the JUnit file and the PR comment like any other check. The level is
// SHOULD: a finding warns and never fails conformance, since the rules
// read intent from text. secondListing says whether Scan had a second
// tools/list call; without one the drift check is skipped. elapsed is
// the scan's duration, shared by the results.
func Results(fs []Finding, secondListing bool, elapsed time.Duration) []check.Result {
	byRule := map[Rule][]Finding{}
	for _, f := range fs {
		byRule[f.Rule] = append(byRule[f.Rule], f)
	}
	ms := float64(elapsed.Microseconds()) / 1000
	var out []check.Result
	for _, ri := range Rules() {
		r := check.Result{ID: ri.ID, Level: check.Should, Family: Family, Spec: specRef, Doc: ri.Doc, Fix: ri.Fix, Runs: 1, DurationMs: ms}
		list := byRule[ri.Rule]
		switch {
		case ri.Rule == RuleDrift && !secondListing:
			r.Outcome = check.Outcome{Verdict: check.Skipped, Message: "only one tools/list call was made: nothing to compare"}
		case len(list) == 0:
			r.Outcome = check.Outcome{Verdict: check.Passed, Message: "nothing found"}
		default:
			r.Outcome = check.Outcome{Verdict: check.Warned, Message: fmt.Sprintf("%d finding(s); first: tool %s %s: %s", len(list), list[0].Tool, list[0].Where, list[0].Detail)}
			for i, f := range list {
				if i > 0 && i <= 10 {
					r.Outcome.Details = append(r.Outcome.Details, fmt.Sprintf("tool %s %s: %s", f.Tool, f.Where, f.Detail))
				}
				if i < 5 && f.Excerpt != "" {
					r.Outcome.Evidence = append(r.Outcome.Evidence, check.Evidence{Request: "tools/list", Response: f.Excerpt})
				}
			}
			if len(list) > 11 {
				r.Outcome.Details = append(r.Outcome.Details, fmt.Sprintf("… and %d more", len(list)-11))
			}
		}
		r.Verdict = r.Outcome.Verdict
		r.Counts = map[check.Verdict]int{r.Verdict: 1}
		out = append(out, r)
	}
	return out
}

// ScanServer lists the server's tools a second time and scans both
// listings. first is the listing already made (Layer 0's
// conformance.Report.Tools()); when it is nil the tools are listed twice
// here. The cost is one or two tools/list calls.
func ScanServer(ctx context.Context, c *mcpclient.Client, first []mcpclient.Tool) ([]Finding, error) {
	if first == nil {
		lt, err := c.ListTools(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the tools: %w", err)
		}
		first = lt.Tools
	}
	lt, err := c.ListTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the tools a second time: %w", err)
	}
	again := lt.Tools
	if again == nil {
		again = []mcpclient.Tool{}
	}
	return Scan(first, again), nil
}
