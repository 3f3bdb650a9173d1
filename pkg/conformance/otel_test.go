package conformance

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

func TestOTELMutants(t *testing.T) {
	for _, c := range otelFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestOTELInfo(t *testing.T) { assertPasses(t, OTEL3) }

func TestOTELValues(t *testing.T) {
	for v, ok := range map[string]bool{
		"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01": true,
		"00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01": false, // upper case
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01": false,
		"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01": false,
		"ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01": false,
		"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7":    false,
	} {
		if got := mcpclient.TraceparentProblem(v) == ""; got != ok {
			t.Errorf("traceparent %q: valid %v, want %v (%s)", v, got, ok, mcpclient.TraceparentProblem(v))
		}
	}
	for v, ok := range map[string]bool{
		"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE": true,
		"vendor@tenant=x, ,a=b":                   true,
		"Rojo=1":                                  false, // keys are lower case
		"a=b,a=c":                                 false,
		"a":                                       false,
		"a=x,y":                                   false,
		"a=b=c":                                   false, // '=' is not allowed in values
		"a=trailing ":                             true,  // OWS after the member is trimmed
	} {
		if got := mcpclient.TracestateProblem(v) == ""; got != ok {
			t.Errorf("tracestate %q: valid %v, want %v (%s)", v, got, ok, mcpclient.TracestateProblem(v))
		}
	}
	for v, ok := range map[string]bool{
		"userId=alice,serverNode=DF%2028,isProduction=false": true,
		"key1=value1;property1;property2=x, key2 = value2":   true,
		"k=a b":          false,
		"k=%zz":          false,
		"=v":             false,
		"a=1,,b=2":       false,
		"":               false,
		"k=v;bad prop=1": false,
	} {
		if got := mcpclient.BaggageProblem(v) == ""; got != ok {
			t.Errorf("baggage %q: valid %v, want %v (%s)", v, got, ok, mcpclient.BaggageProblem(v))
		}
	}
}

func TestOTELWalk(t *testing.T) {
	var found []otelFound
	v := map[string]any{
		"_meta":      map[string]any{"traceparent": "x", "io.modelcontextprotocol/baggage": "y", "other": "z"},
		"content":    []any{map[string]any{"_meta": map[string]any{"tracestate": "a=b"}}},
		"tracestate": "not in _meta",
	}
	otelWalk("r", v, false, nil, &found)
	keys := map[string]bool{}
	for _, f := range found {
		keys[f.key] = true
	}
	if len(found) != 3 || !keys["traceparent"] || !keys["io.modelcontextprotocol/baggage"] || !keys["tracestate"] {
		t.Fatalf("found %+v", found)
	}
}

// The monitors decode only answers that may hold a trace-context key; a
// key spelled with \u escapes is still found.
func TestOTELInSkipsOnlyWhatCannotHoldAKey(t *testing.T) {
	for raw, want := range map[string]int{
		`{"_meta":{"traceparent":"x"}}`:                                     1,
		`{"_meta":{"trace\u0070arent":"x"}}`:                                1,
		`{"_meta":{"other":"x"},"tools":[{"name":"t"}]}`:                    0,
		`{"_meta":{"io.modelcontextprotocol/baggage":"x"},"note":"\u00e9"}`: 1,
	} {
		if got := otelIn("tools/list", json.RawMessage(raw), nil); len(got) != want {
			t.Errorf("%s: found %+v, want %d", raw, got, want)
		}
	}
}

// OTEL-2 sends nothing of its own: its runs judge the repetition's shared
// observations, and its monitor every result and notification of the run.
// The mutant breaks the rule only in progress notifications, which come
// with other checks' calls (the emitter search's that PROG-1 starts, and
// PROG-1's own in every repetition: on HTTP it follows its stream itself
// and hands the exchange to the monitors): the monitor finds them there
// and points into the notification.
func TestOTEL2MonitorJudgesOtherChecksNotifications(t *testing.T) {
	const runs = 3
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			_, res := runChecks(t, refTarget(t, kind, refserver.MutantProgressTrace), runs, "OTEL-2", "PROG-1")
			r := res["OTEL-2"]
			if r.Verdict != check.Failed || r.Watched == nil || r.Watched.Offending <= runs || len(r.Outcome.Evidence) == 0 {
				t.Fatalf("OTEL-2 on %s: %s %+v: %s (want the search's call and PROG-1's of each of %d repetitions offending)", refserver.MutantProgressTrace, r.Verdict, r.Watched, r.Outcome.Message, runs)
			}
			if ev := r.Outcome.Evidence[0]; ev.In != "notification notifications/progress" || ev.Pointer != "/params/_meta/traceparent" || !strings.Contains(r.Outcome.Message, "notifications/progress") {
				t.Fatalf("OTEL-2's monitor should point into the progress notification: %q %+v", r.Outcome.Message, ev)
			}
			// Its own runs passed: the shared observations carry no
			// progress notification.
			if r.Counts[check.Passed] != runs {
				t.Fatalf("OTEL-2 counts %v, want its own runs passed", r.Counts)
			}
		})
	}
}
