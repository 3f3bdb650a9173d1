package cli

import (
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
