package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

func TestReportFormats(t *testing.T) {
	dir := t.TempDir()
	in := save(t, dir, "report.json", reporttest.Green(layer0(4)))
	for format, want := range map[string]string{
		"text":     "== Layer 0 · conformance ==",
		"markdown": "<!-- m -->\n### ✅ mcp-eval: PASS",
		"junit":    "<testsuites",
		"json":     `"schemaVersion": 1`,
		"html":     `<meta http-equiv="Content-Security-Policy" content="default-src 'none';`,
	} {
		code, out, stderr := run(t, "report", "--in", in, "--format", format, "--marker", "<!-- m -->")
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("--format %s: exit %d, stderr %q, output lacks %q:\n%s", format, code, stderr, want, out)
		}
	}
	// --out writes a file; json round-trips.
	outPath := filepath.Join(dir, "copy.json")
	if code, _, stderr := run(t, "report", "--in", in, "--format", "json", "--out", outPath); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(outPath)
	if !json.Valid(data) {
		t.Error("--format json --out wrote invalid JSON")
	}
}

func TestReportRunURLFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	in := save(t, dir, "report.json", layer0(5))
	var out strings.Builder
	c := &Command{Stdout: &out, Stderr: &out, LookupEnv: func(k string) (string, bool) {
		if k == "GITHUB_SERVER_URL" {
			return "https://github.com", true
		}
		return "", false
	}}
	if code := c.Main(t.Context(), []string{"report", "--in", in, "--format", "markdown"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if !strings.Contains(out.String(), "https://github.com/acme/weather-mcp/actions/runs/4242") {
		t.Errorf("no run link:\n%s", out.String())
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	in := save(t, dir, "report.json", layer0(5))
	schemaBad := filepath.Join(dir, "bad.json")
	os.WriteFile(schemaBad, []byte(`{"schemaVersion": 1, "run": {}}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "--in is required"},
		{[]string{"report", "--in", in, "--format", "pdf"}, `--format "pdf" is not supported: use one of text, markdown, junit, json, html`},
		{[]string{"report", "--in", in, "--max-bytes", "10"}, "too small"},
		{[]string{"report", "--in", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"report", "--in", schemaBad}, "/run: missing properties"},
		{[]string{"report", "--in", in, "--format", "markdown", "--marker", "hello"}, "must be one HTML comment"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != ExitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}
