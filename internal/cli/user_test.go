package cli

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/target"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Layers 1 and 2 start the server as the same user as Layer 0: their
// client once skipped the target's RunAs, so as root `check` ran the
// server as uid 65534 and `eval`, where the model keys are, as root.
func TestLayer1ServerRunsAsTheTargetSays(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root can start a server as another user")
	}
	dir := reachableTempDir(t)
	server := filepath.Join(dir, "example-server")
	if b, err := exec.Command("go", "build", "-o", server, "github.com/mcp-eval/mcp-eval-action/golden-examples/cmd/example-server").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pl := &pipeline.Plan{Target: conformance.Target{Argv: []string{server}, Dir: dir, RunAs: transport.Nobody()}}
	cl, err := pl.Connect(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pid := cl.Transport().(*transport.StdioTransport).Pid()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			if f[1] != "65534" {
				t.Fatalf("the Layer 1 server runs as uid %s, want 65534", f[1])
			}
			return
		}
	}
	t.Fatal("no Uid line in /proc/<pid>/status")
}

// A server the unprivileged user cannot reach gets its own two fixes, not
// the generic "is the command right?" hint.
func TestExplainLeavesAnUnreachableServerAlone(t *testing.T) {
	err := &transport.Error{Kind: transport.KindConnect, Op: `start "node"`, Err: &target.UnreachableError{
		RunAs: transport.Nobody(), What: "the working directory", Target: "/tmp/x/repo", Blocked: "/tmp/x", Need: "enter", Mode: fs.ModeDir | 0o700,
	}}
	if msg := explain(err); strings.Contains(msg, "hint:") || !strings.Contains(msg, "chmod o+x /tmp/x") {
		t.Fatalf("explain = %s", msg)
	}
}

// A URL whose path the server does not serve gets 404 to the modern probe
// and to the legacy initialize: the hint asks about the path, not about a
// legacy server.
func TestCheckHintsAtThePathOnA404(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	code, _, stderr := run(t, "check", "--url", srv.URL+"/")
	if code != ExitError || !strings.Contains(stderr, "hint: HTTP 404: is the URL's path right?") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}

// The note on who the server runs as is said once: with the verdict's
// notes, not also before the run.
func TestServerUserNoteIsPrintedOnce(t *testing.T) {
	dir := reachableTempDir(t)
	server := filepath.Join(dir, "example-server")
	if b, err := exec.Command("go", "build", "-o", server, "github.com/mcp-eval/mcp-eval-action/golden-examples/cmd/example-server").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	// As root, server.user current runs the server as root with a note;
	// otherwise auto with a secret in the environment notes that the
	// server can read it.
	env := map[string]string{"OPENAI_API_KEY": "sk-test-not-a-key"}
	args := []string{"check", "--cmd", server, "--runs", "1", "--only", "DISC"}
	want := target.NoteSameUserSecrets
	if os.Geteuid() == 0 {
		args = append(args, "--server-user", "current")
		want = target.NoteCurrentRoot
	}
	var out, errb strings.Builder
	c := &Command{Stdout: &out, Stderr: &errb,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Environ:   func() []string { return []string{"OPENAI_API_KEY=" + env["OPENAI_API_KEY"]} }}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if code := c.Main(ctx, args); code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if n := strings.Count(out.String()+errb.String(), want); n != 1 {
		t.Fatalf("the server-user note is printed %d times, want once\nstdout:\n%s\nstderr:\n%s", n, out.String(), errb.String())
	}
}

// A server that refuses the run's token (as the TS SDK's bearer auth does:
// HTTP 401 with a JSON-RPC error) cannot be tested: exit 2 and what to
// do, not every MUST check failing on the same refusal. The right token
// passes.
func TestCheckOnARefusedTokenIsAHarnessError(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	inner := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer right" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("WWW-Authenticate", `Bearer realm="t"`)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized"}}`))
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	for _, header := range []string{"Authorization: Bearer wrong", ""} {
		args := []string{"check", "--url", hs.URL, "--runs", "1"}
		if header != "" {
			args = append(args, "--header", header)
		}
		code, stdout, stderr := run(t, args...)
		if code != ExitError || !strings.Contains(stderr, "requires authorization") || !strings.Contains(stderr, "--header") || strings.Contains(stdout, "MUST check(s) failed") {
			t.Errorf("%q: exit %d\nstdout:\n%s\nstderr:\n%s", header, code, stdout, stderr)
		}
	}
	if code, stdout, stderr := run(t, "check", "--url", hs.URL, "--runs", "1", "--only", "DISC,TOOL", "--header", "Authorization: Bearer right"); code != ExitOK {
		t.Errorf("the right token: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// check and probe read mcp-eval.yaml in the current directory, as run
// does and as their help says: a user beside the file that names the
// server was told to set server.url there.
func TestCheckAndProbeReadTheConfigFileBesideThem(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mcp-eval.yaml"), []byte("server:\n  url: "+hs.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if code, stdout, stderr := run(t, "check", "--runs", "1", "--only", "DISC"); code != ExitOK || !strings.Contains(stdout, "verdict: PASS") {
		t.Errorf("check: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "probe"); code != ExitOK || !strings.Contains(stdout, "modern") {
		t.Errorf("probe: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
