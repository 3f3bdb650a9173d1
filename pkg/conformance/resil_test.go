package conformance

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// RESIL-1 passes on the reference server and warns on the mutant that
// stops answering once a client has dropped a request.
func TestRESIL1(t *testing.T) { assertShould(t, RESIL1) }

// RESIL-1 applies to Streamable HTTP only: a stdio run does not list it.
func TestRESIL1NotOnStdio(t *testing.T) {
	// Selecting only RESIL over stdio selects nothing, which is refused
	// before the server starts: a run that checks nothing is no pass.
	_, _, err := Run(t.Context(), refTarget(t, "stdio"), Options{Options: check.Options{Runs: 1, Only: []string{"RESIL"}}})
	var se *SelectionError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "selects no check that runs over stdio: RESIL-1, for one, runs over Streamable HTTP only") {
		t.Fatalf("--only RESIL over stdio: %v", err)
	}
	// Over HTTP, the example is one of the selection's stdio checks, not
	// RESIL-1, which runs there.
	_, _, err = Run(t.Context(), refTarget(t, "http"), Options{Options: check.Options{Runs: 1, Only: []string{"STDIO"}}})
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "selects no check that runs over Streamable HTTP: STDIO-1, for one, runs over stdio only") {
		t.Fatalf("--only STDIO over HTTP: %v", err)
	}
	_, res := runChecks(t, refTarget(t, "stdio"), 1, "RESIL", "DISC-1")
	if r, ok := res["RESIL-1"]; ok {
		t.Fatalf("RESIL-1 ran over stdio: %s %s", r.Verdict, r.Outcome.Message)
	}
}

// The warning says which drop the server did not survive, with evidence.
func TestRESIL1SaysWhichDrop(t *testing.T) {
	_, res := runChecks(t, refTarget(t, "http", "RESIL-1"), 1, "RESIL-1")
	r := res["RESIL-1"]
	if r.Verdict != check.Warned || r.FamilyTitle != "resilience" || len(r.Outcome.Evidence) == 0 {
		t.Fatalf("%s %q %+v", r.Verdict, r.Outcome.Message, r.Outcome.Evidence)
	}
	// Which drop the mutant first notices depends on timing (a request
	// dropped as soon as it is written may never reach its handler), so
	// the message must name a drop, not a particular one.
	if msg := r.Outcome.Message; !strings.HasPrefix(msg, "after a tools/list request was dropped ") || !regexp.MustCompile(`\(drop [1-4] of 4\)`).MatchString(msg) {
		t.Fatalf("message %q", msg)
	}
}
