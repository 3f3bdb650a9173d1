package cli

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// On the bundled server, check counts the tool surface's tokens, runs the
// description lint and applies the file's waivers: the lint finding
// (LINT-2) fails under gate.lint: fail unless waived; a waiver past its
// date counts again; a waiver of a passing check is stale; the token cap
// reads the report. Every report is re-gated by run() to the same exit.
func TestToolSurfaceLintAndWaivers(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	config := func(name, until string) string {
		p := filepath.Join(dir, name)
		body := "gate:\n  lint: fail\n  max-tool-tokens: 100000\nwaivers:\n" +
			"  - check: LINT-2\n    reason: send_email's subject and body are self-explanatory\n    until: " + until + "\n" +
			"  - check: TOOL-5\n    transport: http\n    reason: old SDK names\n    until: 2999-12-31\n"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := filepath.Join(dir, "waived.json")
	code, stdout, stderr := run(t, "check", "--config", config("waived.yaml", "2999-12-31"), "--url", hs.URL, "--runs", "1", "--out", out)
	if code != ExitOK {
		t.Fatalf("check with LINT-2 waived: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"LINT-2", "tool surface: ", " tokens (o200k_base) · largest: ", "waived: LINT-2 until 2999-12-31: send_email's subject and body", "TOOL-5 passes now: remove its waiver"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check's output does not say %q:\n%s", want, stdout)
		}
	}
	rep, err := report.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	tt := rep.ToolTokens.Primary()
	if tt == nil || tt.Encoding != "o200k_base" || tt.Total < 100 || len(tt.Tools) != 5 || tt.Tools[0].Tokens < tt.Tools[4].Tokens {
		t.Fatalf("toolTokens: %+v", rep.ToolTokens)
	}
	states := map[string]string{}
	for _, w := range rep.Gate.Waivers {
		states[w.Check] = w.State
	}
	if states["LINT-2"] != report.WaiverActive || states["TOOL-5"] != report.WaiverStale || rep.Gate.Verdict != report.GatePass {
		t.Errorf("waivers %v, verdict %s", states, rep.Gate.Verdict)
	}

	// Past its date the waiver stops waiving: LINT-2 fails the gate again.
	expired := filepath.Join(dir, "expired.json")
	code, stdout, _ = run(t, "check", "--config", config("expired.yaml", "2020-01-01"), "--url", hs.URL, "--runs", "1", "--out", expired)
	if code != ExitFindings || !strings.Contains(stdout, "waiver expired on 2020-01-01: send_email's subject and body are self-explanatory") {
		t.Errorf("check with the waiver expired: exit %d\n%s", code, stdout)
	}

	// The token cap is read from the report by gate alone.
	code, stdout, _ = run(t, "gate", "--report", out, "--out", filepath.Join(dir, "capped.json"), "--max-tool-tokens", "10")
	if code != ExitFindings || !strings.Contains(stdout, "over max-tool-tokens 10") {
		t.Errorf("gate --max-tool-tokens 10: exit %d\n%s", code, stdout)
	}

	// Against the first report as baseline, the comment shows the change.
	md := filepath.Join(dir, "again.md")
	code, _, stderr = run(t, "check", "--config", config("again.yaml", "2999-12-31"), "--url", hs.URL, "--runs", "1", "--baseline", out,
		"--out", filepath.Join(dir, "again.json"), "--markdown", md, "--html", filepath.Join(dir, "again.html"))
	b, _ := os.ReadFile(md)
	if h, _ := os.ReadFile(filepath.Join(dir, "again.html")); !strings.Contains(string(h), "Tool tokens</dt><dd>") || !strings.Contains(string(h), "0.0%) vs baseline") {
		t.Errorf("the HTML report does not show the tool tokens with the change:\n%.2000s", h)
	}
	plain := strings.ReplaceAll(string(b), `\`, "") // Markdown escapes
	if code != ExitOK || !strings.Contains(plain, " tokens (o200k_base, +0 (+0.0%) vs baseline) · largest: ") || !strings.Contains(plain, "**Waivers in force:**") {
		t.Errorf("check against a baseline: exit %d, %s\n%s", code, stderr, b)
	}

	// A waiver naming no check is refused with the file and line.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("gate:\n  lint: warn\nwaivers:\n  - {check: NOPE-1, reason: typo, until: 2999-01-01}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, "check", "--config", bad, "--url", hs.URL, "--runs", "1")
	if code != ExitError || !strings.Contains(stderr, "bad.yaml:4: waivers: NOPE-1 is not a check of Layer 0") {
		t.Errorf("unknown waiver: exit %d\n%s", code, stderr)
	}
}
