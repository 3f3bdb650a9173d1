package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// matrixText prints Layer 1 as a case × model matrix of passed runs.
func matrixText(w io.Writer, rep *report.Report) {
	b := rep.Behavior
	if b == nil {
		return
	}
	var models []string
	for _, m := range rep.Models {
		for _, r := range b.Results {
			if r.Model == m.ID {
				models = append(models, m.ID)
				break
			}
		}
	}
	cell := map[[2]string]string{}
	for _, r := range b.Results {
		s := fmt.Sprintf("%d/%d", r.Passed.K, r.Passed.N)
		if r.Reused > 0 {
			s += "*"
		}
		if r.Errors > 0 {
			// Runs the harness or the provider could not complete: a
			// refused endpoint read as "0/2", a model failing every case.
			s += "e"
		}
		cell[[2]string{r.Case, r.Model}] = s
	}
	for _, inc := range b.Inconclusive {
		if _, ok := cell[[2]string{inc.Case, inc.Model}]; !ok {
			cell[[2]string{inc.Case, inc.Model}] = "?"
		}
	}
	width := 4
	for _, cs := range b.Cases {
		width = max(width, len(cs.ID))
	}
	width = min(width, 40)
	replayed := ""
	if rep.Replay != nil {
		replayed = ", replayed from the cassette"
	}
	fmt.Fprintf(w, "\n== Layer 1 · behaviour: passed runs per case (%d runs each%s; * reused from the cache, ? not decided, e some runs errored: not a verdict on the model) ==\n", b.RunsPerCase, replayed)
	for i, m := range models {
		fmt.Fprintf(w, "  [%d] %s\n", i+1, sanitize(m))
	}
	fmt.Fprintf(w, "  %-*s", width, "case")
	for i := range models {
		fmt.Fprintf(w, " %8s", "["+strconv.Itoa(i+1)+"]")
	}
	fmt.Fprintln(w)
	for _, cs := range b.Cases {
		id := sanitize(cs.ID)
		if len(id) > width {
			id = id[:width-1] + "…"
		}
		fmt.Fprintf(w, "  %-*s", width, id)
		for _, m := range models {
			v, ok := cell[[2]string{cs.ID, m}]
			if !ok {
				v = "–"
			}
			fmt.Fprintf(w, " %8s", v)
		}
		fmt.Fprintln(w)
	}
	for _, m := range models {
		var line []string
		for _, name := range []string{report.ToolSelection, report.ArgumentCorrectness, report.SequenceOrder, report.OverTrigger, report.TaskCompletion} {
			var k, n int
			for _, r := range b.Results {
				if r.Model != m {
					continue
				}
				for _, s := range r.Scores {
					if s.Name == name {
						k, n = k+s.K, n+s.N
					}
				}
			}
			if n > 0 {
				line = append(line, fmt.Sprintf("%s %d/%d (%.0f%%)", name, k, n, 100*float64(k)/float64(n)))
			}
		}
		errored, runs := 0, 0
		reasons := map[string]int{}
		var order []string
		for _, r := range b.Results {
			if r.Model != m {
				continue
			}
			for _, run := range r.Runs {
				runs++
				if run.Outcome != report.RunError {
					continue
				}
				errored++
				why := "no reason recorded"
				if len(run.Reasons) > 0 {
					why = run.Reasons[0]
				}
				if reasons[why] == 0 {
					order = append(order, why)
				}
				reasons[why]++
			}
		}
		if len(line) == 0 {
			line = append(line, "no run was scored")
		}
		// "over all runs": the gate's suite scores are means over cases,
		// and the two figures of one score in one output read as a
		// contradiction without it.
		fmt.Fprintf(w, "  %s, over all runs: %s\n", sanitize(m), strings.Join(line, ", "))
		// Errored runs count as not passed; without their cause here a
		// provider that could not be reached reads as a model that got
		// every case wrong.
		if errored > 0 {
			fmt.Fprintf(w, "    %d of %d runs errored (not the model's answers: the harness, the provider or the server could not complete them):\n", errored, runs)
			for i, why := range order {
				if i == 3 {
					fmt.Fprintf(w, "      and %d other reasons (report.json has every run's)\n", len(order)-3)
					break
				}
				fmt.Fprintf(w, "      %d× %s\n", reasons[why], sanitize(jsonrpc.Clip(why, 300)))
			}
		}
	}
	render.ConfusionText(w, rep)
}

// spendText prints the run's spend over Layers 1 and 2, split by part:
// the figure the budget counted, the one a reader compares with the bill.
func spendText(w io.Writer, rep *report.Report) {
	s := rep.Spend
	if s == nil {
		return
	}
	cost := "cost unknown (" + s.Used.USDUnknown + ")"
	if s.Used.USD != nil {
		cost = fmt.Sprintf("$%.4f", *s.Used.USD)
	}
	var parts []string
	for _, l := range s.Layers {
		if l.Used.Calls > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", l.Name, l.Used.Calls))
		}
	}
	by := ""
	if len(parts) > 0 {
		by = " (" + strings.Join(parts, ", ") + ")"
	}
	stale := ""
	if s.StaleRuns > 0 {
		stale = fmt.Sprintf(" (%d because the server answers differently now)", s.StaleRuns)
	}
	if rep.Replay != nil {
		fmt.Fprintf(w, "spend: nothing: replayed from the cassette; the recording's %d provider calls%s, %d tokens, %s (prices %s)\n",
			s.Used.Calls, sanitize(by), s.Used.Tokens, sanitize(cost), sanitize(s.Prices))
		return
	}
	fmt.Fprintf(w, "spend: %d provider calls%s, %d tokens, %s (prices %s); Layer 1: %d runs reused, %d made now%s\n",
		s.Used.Calls, sanitize(by), s.Used.Tokens, sanitize(cost), sanitize(s.Prices), s.ReusedRuns, s.FreshRuns, stale)
	if s.Reached {
		fmt.Fprintf(w, "budget reached: %s\n", sanitize(s.Reason))
	}
}

// splitList reads a comma list, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}
