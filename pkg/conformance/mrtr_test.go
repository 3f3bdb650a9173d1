package conformance

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The reference server's MRTR tool, send_email, is not readOnly: the MRTR
// checks only reach it when the user allows it, as --call-tool does.
var mrtrTestTools = []string{"send_email"}

func TestMRTRMutants(t *testing.T) {
	for _, c := range mrtrFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { featAssertMutant(t, c, mrtrTestTools...) })
	}
}

func TestMRTRShouldMutants(t *testing.T) {
	featAssertShould(t, MRTR6, mrtrTestTools...)
}

// Without a callable MRTR tool the checks that need one skip, saying why.
func TestMRTRSkipsWithoutCallableTool(t *testing.T) {
	_, got := featRun(t, refTarget(t, "http"), 1, nil, "MRTR")
	for _, c := range mrtrFamily.checks {
		r := got[c.ID]
		if c == MRTR1 {
			if r.Verdict != check.Passed {
				t.Errorf("MRTR-1: %s: %s", r.Verdict, r.Outcome.Message)
			}
			continue
		}
		if r.Verdict != check.Skipped || r.Outcome.Message == "" {
			t.Errorf("%s: %s %q, want a skip with a reason", c.ID, r.Verdict, r.Outcome.Message)
		}
	}
}

// MRTR-9 notes what it saw and passes on the reference server.
func TestMRTR9(t *testing.T) {
	_, got := featRun(t, refTarget(t, "stdio"), 1, mrtrTestTools, "MRTR-9")
	if r := got["MRTR-9"]; r.Verdict != check.Passed {
		t.Fatalf("MRTR-9: %s: %s", r.Verdict, r.Outcome.Message)
	}
}

func TestMRTRTamper(t *testing.T) {
	for _, s := range []string{"abc.def", "zz", "99", "ZZ", "a", "..", "eyJ2IjoxfQ.mac"} {
		if got := mrtrTamper(s); got == s || len(got) != len(s) {
			t.Errorf("mrtrTamper(%q) = %q", s, got)
		}
	}
}

func TestMRTRDuplicateKeys(t *testing.T) {
	got := mrtrDuplicateKeys(json.RawMessage(`{"a":{"x":1},"b":2,"a":[1,{"a":1}]}`))
	if len(got) != 1 || got[0] != "a" {
		t.Errorf("duplicates %q", got)
	}
}

func TestMRTRUndeclared(t *testing.T) {
	caps := map[string]json.RawMessage{"elicitation": json.RawMessage(`{}`), "sampling": json.RawMessage(`{}`)}
	for raw, want := range map[string]bool{
		`{"method":"elicitation/create","params":{"message":"m"}}`:                  false,
		`{"method":"elicitation/create","params":{"mode":"url","url":"https://x"}}`: true,
		`{"method":"sampling/createMessage","params":{"maxTokens":1}}`:              false,
		`{"method":"sampling/createMessage","params":{"tools":[{"name":"x"}]}}`:     true,
		`{"method":"roots/list"}`: true,
	} {
		why, soft := mrtrUndeclared(json.RawMessage(raw), caps)
		if (why != "" && !soft) != want {
			t.Errorf("%s: %q (soft %v), want a failure %v", raw, why, soft, want)
		}
	}
	if why, soft := mrtrUndeclared(json.RawMessage(`{"method":"sampling/createMessage","params":{"includeContext":"allServers"}}`), caps); why == "" || !soft {
		t.Errorf("includeContext without sampling.context: %q %v", why, soft)
	}
}

// featRun is runChecks with tools the user allows the harness to call.
func featRun(t *testing.T, target Target, runs int, callTools []string, only ...string) (*Report, map[string]check.Result) {
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
	return rep, byID
}

// featAssertMutant is assertMutant with tools the user allows to call.
func featAssertMutant(t *testing.T, c *check.Check, callTools ...string) {
	t.Helper()
	if _, ok := refserver.Mutants[c.ID]; !ok {
		t.Fatalf("the reference server has no mutant for %s (add one to refserver.Mutants)", c.ID)
	}
	for _, kind := range transportsOf(c) {
		t.Run(kind, func(t *testing.T) {
			_, good := featRun(t, refTarget(t, kind), 2, callTools, c.ID)
			if v := good[c.ID].Verdict; v != check.Passed && v != check.Warned {
				t.Fatalf("%s on the correct server: %s: %s %v", c.ID, v, good[c.ID].Outcome.Message, good[c.ID].Outcome.Details)
			}
			_, bad := featRun(t, refTarget(t, kind, c.ID), 2, callTools, c.ID)
			if v := bad[c.ID].Verdict; v != check.Failed {
				t.Fatalf("%s on its mutant (%s): %s, want fail: %s", c.ID, refserver.Mutants[c.ID], v, bad[c.ID].Outcome.Message)
			}
			if bad[c.ID].Outcome.Message == "" {
				t.Fatalf("%s failed without saying why", c.ID)
			}
		})
	}
}

// featAssertShould proves a SHOULD or info check: it passes on the correct
// reference server and warns on its mutant, over every transport.
func featAssertShould(t *testing.T, c *check.Check, callTools ...string) {
	t.Helper()
	featAssertWarns(t, c, false, callTools)
}

// featAssertShouldOnly is featAssertShould for a check that may skip on
// the correct server (nothing there to judge).
func featAssertShouldOnly(t *testing.T, c *check.Check, callTools ...string) {
	t.Helper()
	featAssertWarns(t, c, true, callTools)
}

func featAssertWarns(t *testing.T, c *check.Check, mayskip bool, callTools []string) {
	t.Helper()
	if _, ok := refserver.Mutants[c.ID]; !ok {
		t.Fatalf("the reference server has no mutant for %s", c.ID)
	}
	for _, kind := range transportsOf(c) {
		t.Run(c.ID+"/"+kind, func(t *testing.T) {
			_, good := featRun(t, refTarget(t, kind), 1, callTools, c.ID)
			if v := good[c.ID].Verdict; v != check.Passed && !(mayskip && v == check.Skipped) {
				t.Fatalf("%s on the correct server: %s: %s %v", c.ID, v, good[c.ID].Outcome.Message, good[c.ID].Outcome.Details)
			}
			want := check.Warned
			if c.Level == check.Info {
				want = check.Noted // an info rule's finding is no warning
			}
			_, bad := featRun(t, refTarget(t, kind, c.ID), 1, callTools, c.ID)
			if v := bad[c.ID].Verdict; v != want || bad[c.ID].Outcome.Message == "" {
				t.Fatalf("%s on its mutant (%s): %s %q, want %s", c.ID, refserver.Mutants[c.ID], v, bad[c.ID].Outcome.Message, want)
			}
		})
	}
}

// The "skipped, and might apply with a tool … allowed" summary is for
// skips that --call-tool would lift: without it, MRTR's checks skip with
// that cause (send_email is not read-only); with every listed tool
// allowed, no result records the cause or tells the user to allow one.
func TestSkipNeedsCallOnlyWhenAToolWasNotAllowed(t *testing.T) {
	all := []string{"get_weather", "search_invoices", "send_email", "lookup_region", "slow_count"}
	for _, tc := range []struct {
		callTools []string
		want      bool
	}{{nil, true}, {all, false}} {
		rep, _ := featRun(t, refTarget(t, "http"), 1, tc.callTools, "MRTR", "STATE", "META")
		var caused []string
		for _, r := range rep.Checks {
			if r.Outcome.SkipCause == report.SkipNeedsCall {
				caused = append(caused, r.ID)
			}
			if r.Verdict == check.Skipped && strings.Contains(r.Outcome.Message, "--call-tool") != (r.Outcome.SkipCause == report.SkipNeedsCall) {
				t.Errorf("%s skipped with %q and cause %q: the message and the cause disagree", r.ID, r.Outcome.Message, r.Outcome.SkipCause)
			}
		}
		if (len(caused) > 0) != tc.want {
			t.Errorf("call tools %v: skips caused by call permission %v, want some: %v", tc.callTools, caused, tc.want)
		}
		var out strings.Builder
		render.ReportText(&out, report.FromConformance(rep, ""), render.TextOptions{})
		if shown := strings.Contains(out.String(), "skipped, and might apply with a tool the harness may not call allowed"); shown != tc.want {
			t.Errorf("call tools %v: permission summary shown %v, want %v:\n%s", tc.callTools, shown, tc.want, out.String())
		}
	}
}
