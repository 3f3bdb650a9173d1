package cli

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// A ttlMs of -1 on resources/read breaks CACHE-1 and the ReadResourceResult
// schema (RSRC-2): the terminal shows where the fault is before the
// excerpt (a line is cut at 300 characters, which stopped before it),
// report.json says RSRC-2 repeats CACHE-1, and the summary counts the
// fault once while the verdict still names both MUST checks.
func TestCheckShowsTheFaultAndCountsItOnce(t *testing.T) {
	srv := refserver.New(refserver.Options{Break: map[string]bool{"CACHE-1": true}})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	out := filepath.Join(t.TempDir(), "report.json")
	code, stdout, stderr := run(t, "check", "--url", hs.URL+"/mcp", "--conformance-runs", "1", "--only", "CACHE,RSRC", "--out", out)
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitFindings, stdout, stderr)
	}
	for _, want := range []string{
		"evidence: resources/read → HTTP 200 at /result/ttlMs: -1;",
		"same fault as CACHE-1",
		" 2 failed,",
		"(2 failed are 1 fault: RSRC-2 = CACHE-1)",
		"CACHE-1, RSRC-2",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	rep, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Conformance.Checks {
		switch r.ID {
		case "CACHE-1":
			if r.SameAs != "" || len(r.Outcome.Evidence) == 0 || r.Outcome.Evidence[0].Pointer != "/result/ttlMs" || r.Outcome.Evidence[0].Value != "-1" {
				t.Errorf("CACHE-1: sameAs %q, evidence %+v", r.SameAs, r.Outcome.Evidence)
			}
		case "RSRC-2":
			if r.SameAs != "CACHE-1" {
				t.Errorf("RSRC-2 sameAs %q, want CACHE-1", r.SameAs)
			}
		}
	}
}
