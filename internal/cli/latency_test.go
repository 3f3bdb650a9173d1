package cli

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Layer 0 sends many requests to draw an error on purpose (a method the
// server lacks, bad params, a request before initialize). Against the
// reference server, which answers each as the spec says, no latency row
// counts an error: Layer 0 judged those answers, and none passed.
func TestProbeErrorsAreNotLatencyErrors(t *testing.T) {
	e := newEvalEnv(t, "")
	code, out, errOut := e.run("run", "--url", e.url, "--layers", "0,3", "--conformance-runs", "1", "--out", e.path("r.json"))
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	rep, err := report.Load(e.path("r.json"))
	if err != nil {
		t.Fatal(err)
	}
	methods := 0
	for _, l := range rep.Telemetry.Latency {
		if l.Kind != report.LatencyMethod {
			continue
		}
		methods++
		if l.Errors != 0 {
			t.Errorf("%s: %d errors of %d requests; the reference server answered every probe as asked", l.Subject, l.Errors, l.Samples)
		}
	}
	if methods < 5 {
		t.Errorf("only %d method rows: Layer 0's traffic was not timed", methods)
	}
}

// The lexical baseline (no model configured) is one model: one row in
// the per-model columns and one name in every telemetry table, the one
// its Layer 1 results carry.
func TestLexicalBaselineIsOneModel(t *testing.T) {
	e := newEvalEnv(t, "")
	code, out, errOut := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "1,3", "--models", "none", "--out", e.path("r.json"))
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	rep, err := report.Load(e.path("r.json"))
	if err != nil {
		t.Fatal(err)
	}
	id := rep.Behavior.Results[0].Model
	if len(rep.Telemetry.Models) != 1 || rep.Telemetry.Models[0].Model != id {
		t.Errorf("per-model columns %+v, want one row for %q", rep.Telemetry.Models, id)
	}
	for _, u := range rep.Telemetry.Usage {
		if u.Role == report.RoleEval && u.Model != id {
			t.Errorf("usage names %q, results %q", u.Model, id)
		}
	}
	for _, l := range rep.Telemetry.Latency {
		if l.Model != "" && l.Kind != report.LatencyModel && l.Model != id {
			t.Errorf("latency row %s %s names %q, results %q", l.Kind, l.Subject, l.Model, id)
		}
	}
}

// probe tags a tool annotated destructive as it tags a read-only one:
// what a user picking a --call-tool NAME needs to see (a user's trial).
func TestProbeTagsDestructiveTools(t *testing.T) {
	var b strings.Builder
	printProbe(&b, &ProbeOutput{Tools: []ProbeTool{{Name: "get_book", ReadOnly: true}, {Name: "reserve_book", Destructive: true}, {Name: "renew_loan"}}})
	out := b.String()
	tags := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			tags[f[0]] = strings.Join(f[1:], " ")
		}
	}
	if tags["get_book"] != "[read-only]" || tags["reserve_book"] != "[destructive]" || tags["renew_loan"] != "" {
		t.Errorf("tags %q:\n%s", tags, out)
	}
}
