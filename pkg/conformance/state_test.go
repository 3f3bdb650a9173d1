package conformance

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// stateRun is runChecks with tools the harness may call although they are
// not read-only (the reference server's MRTR tool, send_email, is not).
func stateRun(t *testing.T, target Target, runs int, callTools []string, only ...string) map[string]check.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: runs, Only: only}, CallTools: callTools, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("conformance run against %s: %v", target.Describe(), err)
	}
	byID := map[string]check.Result{}
	for _, r := range rep.Checks {
		byID[r.ID] = r
	}
	return byID
}

// stateAssert runs c on the correct reference server and on c's mutant
// over every transport c applies to, and wants the given verdicts.
func stateAssert(t *testing.T, c *check.Check, callTools []string, good, bad check.Verdict) {
	t.Helper()
	if _, ok := refserver.Mutants[c.ID]; !ok {
		t.Fatalf("the reference server has no mutant for %s", c.ID)
	}
	for _, kind := range transportsOf(c) {
		t.Run(kind, func(t *testing.T) {
			r := stateRun(t, refTarget(t, kind), 2, callTools, c.ID)[c.ID]
			if r.Verdict != good {
				t.Fatalf("%s on the correct server: %s, want %s: %s %v", c.ID, r.Verdict, good, r.Outcome.Message, r.Outcome.Details)
			}
			r = stateRun(t, refTarget(t, kind, c.ID), 2, callTools, c.ID)[c.ID]
			if r.Verdict != bad || r.Outcome.Message == "" {
				t.Fatalf("%s on its mutant (%s): %s, want %s: %q", c.ID, refserver.Mutants[c.ID], r.Verdict, bad, r.Outcome.Message)
			}
		})
	}
}

// stateMRTRTool is the reference server's tool that asks for input.
var stateMRTRTool = []string{"send_email"}

func TestSTATEMutants(t *testing.T) {
	for _, c := range stateFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// STATE-2 on the reference server: a retry on a new HTTP connection is
// accepted; in a new stdio process the requestState key (random per
// process) no longer verifies, which is reported as informational only.
func TestSTATE2(t *testing.T) {
	r := stateRun(t, refTarget(t, "http"), 1, stateMRTRTool, "STATE-2")["STATE-2"]
	if r.Verdict != check.Passed {
		t.Fatalf("http: %s: %s %v", r.Verdict, r.Outcome.Message, r.Outcome.Details)
	}
	r = stateRun(t, refTarget(t, "stdio"), 1, stateMRTRTool, "STATE-2")["STATE-2"]
	if r.Verdict != check.Passed {
		t.Fatalf("stdio: %s: %s", r.Verdict, r.Outcome.Message)
	}
	// Without a tool it may call, the harness finds nothing that asks for
	// input on the reference server (its resources and prompts never do).
	r = stateRun(t, refTarget(t, "http"), 1, nil, "STATE-2")["STATE-2"]
	if r.Verdict != check.Skipped {
		t.Fatalf("without --call-tool: %s, want skip: %s", r.Verdict, r.Outcome.Message)
	}
}

func TestStateGuessArgs(t *testing.T) {
	schema := `{
	  "type": "object",
	  "$defs": {"status": {"type": "string", "enum": ["paid", "open"]}},
	  "properties": {
	    "to": {"type": "string", "format": "email"},
	    "subject": {"type": "string", "minLength": 6},
	    "n": {"type": "integer", "minimum": 3},
	    "flag": {"type": "boolean"},
	    "status": {"$ref": "#/$defs/status"},
	    "units": {"type": "string", "default": "celsius"},
	    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
	    "inner": {"type": "object", "properties": {"k": {"const": 7}}, "required": ["k"]},
	    "optional": {"type": "string"}
	  },
	  "required": ["to", "subject", "n", "flag", "status", "units", "tags", "inner"]
	}`
	got, _ := json.Marshal(stateGuessArgs(json.RawMessage(schema)))
	want := `{"flag":false,"inner":{"k":7},"n":3,"status":"paid","subject":"aaaaaa","tags":["test"],"to":"test@example.com","units":"celsius"}`
	if string(got) != want {
		t.Fatalf("stateGuessArgs = %s, want %s", got, want)
	}
	if got := stateGuessArgs(json.RawMessage(`not json`)); len(got) != 0 {
		t.Fatalf("stateGuessArgs(invalid) = %v, want {}", got)
	}
}

func TestStateAnswers(t *testing.T) {
	res := json.RawMessage(`{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}},"b":{"method":"roots/list"}}}`)
	got, ok := stateAnswers(res)
	if !ok || string(got["a"]) != `{"action":"decline"}` || string(got["b"]) != `{"roots":[]}` {
		t.Fatalf("stateAnswers = %s, %v", got, ok)
	}
	if _, ok := stateAnswers(json.RawMessage(`{"inputRequests":{"x":{"method":"tasks/get"}}}`)); ok {
		t.Fatal("stateAnswers answered an unknown input request")
	}
}
