package cli

import (
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// A server that answers under ids other than the requests' is reachable
// and non-conformant: `check` ends with exit 1, RPC-1 failed and a report,
// long before any request's deadline, over HTTP (which used to stop at the
// probe with exit 2) and over stdio (where every request waited out its
// deadline until the run was killed).
func TestWrongResponseIDsFailRPC1Quickly(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "example-server")
	if b, err := exec.Command("go", "build", "-o", server, "github.com/mcp-eval/mcp-eval-action/golden-examples/cmd/example-server").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	srv := refserver.New(refserver.Options{Break: map[string]bool{refserver.MutantWrongID: true}})
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	const requestTimeout = 20 * time.Second
	for _, tc := range []struct {
		name   string
		target []string
	}{
		{"http", []string{"--url", hs.URL + "/mcp"}},
		{"stdio", []string{"--cmd", server + " --break " + refserver.MutantWrongID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "report.json")
			start := time.Now()
			args := append([]string{"check", "--runs", "2", "--request-timeout", requestTimeout.String(), "--out", out}, tc.target...)
			code, stdout, stderr := run(t, args...)
			took := time.Since(start)
			if code != ExitFindings {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFindings, stdout, stderr)
			}
			// A safety bound, not a timing goal: a run that waited for one
			// request's deadline would take at least requestTimeout.
			if took >= requestTimeout/2 {
				t.Fatalf("the run took %s with a %s request timeout", took, requestTimeout)
			}
			rep, err := report.Load(out)
			if err != nil {
				t.Fatalf("no report: %v", err)
			}
			c := rep.Conformance
			if c == nil || c.Verdict != report.ConformanceFail {
				t.Fatalf("conformance %+v", c)
			}
			var rpc1 *report.CheckResult
			for i := range c.Checks {
				if c.Checks[i].ID == "RPC-1" {
					rpc1 = &c.Checks[i]
				}
			}
			if rpc1 == nil || rpc1.Verdict != report.CheckFailed || len(rpc1.Outcome.Evidence) == 0 || !strings.Contains(rpc1.Outcome.Evidence[0].Response, `"id":1000001`) {
				t.Fatalf("RPC-1: %+v", rpc1)
			}
			if !strings.Contains(stdout, "RPC-1") {
				t.Errorf("the terminal output does not name RPC-1:\n%s", stdout)
			}
		})
	}
}
