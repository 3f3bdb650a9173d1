package target

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// server is the example server built into a directory every user can
// enter, so that a test proving the drop to uid 65534 does not depend on
// where the checkout is (a clone under /root or in a `mktemp -d` is not
// reachable by nobody).
var server struct {
	dir, bin string
}

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "target-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		server.dir, server.bin = dir, filepath.Join(dir, "example-server")
		if b, err := exec.Command("go", "build", "-o", server.bin, "github.com/mcp-eval/mcp-eval-action/golden-examples/cmd/example-server").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building the example server: %v\n%s", err, b)
			return 1
		}
		for _, p := range []string{dir, server.bin} {
			if err := os.Chmod(p, 0o755); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// tempDir is a fresh directory of that mode directly under the system
// temp directory: t.TempDir nests in a 0700 parent of its own, which would
// be the directory every error names.
func tempDir(t *testing.T, mode fs.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "target-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root can start a server as another user")
	}
}

// uidOf reads the real uid of a running process from /proc.
func uidOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Uid:"); ok {
			f := strings.Fields(rest)
			uid, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatal(err)
			}
			return uid
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return -1
}

// The policy decides the uid of the real server process, and the server
// answers either way.
func TestOpenRunsTheServerAsThePolicySays(t *testing.T) {
	needRoot(t)
	root := Facts{IsRoot: true}
	cases := []struct {
		policy UserPolicy
		facts  Facts
		uid    int
	}{
		{UserUnprivileged, root, 65534},
		{UserAuto, Facts{IsRoot: true, HoldsSecrets: true}, 65534},
		{UserAuto, Facts{IsRoot: true, InAction: true}, 65534},
		{UserAuto, root, 0},
		{UserCurrent, Facts{IsRoot: true, InAction: true, HoldsSecrets: true}, 0},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%+v", tc.policy, tc.facts), func(t *testing.T) {
			runAs, _, err := ResolveUser(tc.policy, tc.facts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tg := Target{Argv: []string{server.bin}, Dir: server.dir, RunAs: runAs}
			cl, err := tg.Connect(ctx, false, mcpclient.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if cl.Info().Era != mcpclient.EraModern {
				t.Fatalf("era %q, want modern", cl.Info().Era)
			}
			st := cl.Transport().(*transport.StdioTransport)
			if got := uidOf(t, st.Pid()); got != tc.uid {
				t.Fatalf("the server runs as uid %d, want %d", got, tc.uid)
			}
		})
	}
}

// Connect gives every request a trace context and tells the observer,
// whatever config the caller passed.
func TestConnectTracesAndObserves(t *testing.T) {
	var mu sync.Mutex
	var calls []mcpclient.Call
	obs := func(c mcpclient.Call) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tg := Target{Argv: []string{server.bin}, Dir: server.dir}
	cl, err := tg.Connect(ctx, true, mcpclient.Config{Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.ListTools(ctx); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(calls) < 2 {
		t.Fatalf("the observer saw %d calls, want the probe and tools/list", len(calls))
	}
	for _, c := range calls {
		if len(c.TraceID) != 32 || c.TraceID != calls[0].TraceID {
			t.Fatalf("%s carried trace id %q; want one 32-digit trace for the connection", c.Method, c.TraceID)
		}
	}
}

// wantBothFixes checks that an error names the path to open up and the
// policy that avoids the drop, with its risk.
func wantBothFixes(t *testing.T, err error, blocked string) {
	t.Helper()
	if err == nil {
		t.Fatal("the server started; want the preflight to refuse it")
	}
	var ue *UnreachableError
	if !errors.As(err, &ue) || transport.KindOf(err) != transport.KindConnect {
		t.Fatalf("got %T %v, want a connect error holding an UnreachableError", err, err)
	}
	msg := err.Error()
	for _, want := range []string{
		"uid 65534 (nobody)", "chmod o+x " + blocked,
		"server.user: current", "--server-user current", "server-user: current", "model keys",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q:\n%s", want, msg)
		}
	}
}

// A working directory inside a 0700 directory (a clone in `mktemp -d`) is
// refused before anything starts, naming that directory: the first one on
// the way that others cannot enter.
func TestPreflightNamesTheClosedDirectory(t *testing.T) {
	needRoot(t)
	closed := tempDir(t, 0o700) // as `mktemp -d` makes it
	repo := filepath.Join(closed, "repo", "sub")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	tg := Target{Argv: []string{server.bin}, Dir: repo, RunAs: transport.Nobody()}
	_, err := tg.Open(context.Background(), false)
	wantBothFixes(t, err, closed)
	if !strings.Contains(err.Error(), "on the way to the working directory "+repo) {
		t.Errorf("the error does not name the working directory:\n%v", err)
	}
}

// A program in a 0700 directory is refused too, with the directory named,
// although the working directory is open to all.
func TestPreflightNamesTheClosedProgramDirectory(t *testing.T) {
	needRoot(t)
	closed := tempDir(t, 0o700)
	prog := filepath.Join(closed, "server.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nsleep 5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A relative command resolves under Dir, as StartStdio runs it.
	tg := Target{Argv: []string{"./server.sh"}, Dir: closed, RunAs: transport.Nobody()}
	_, err := tg.Open(context.Background(), false)
	wantBothFixes(t, err, closed)
	if !strings.Contains(err.Error(), "cannot enter the working directory "+closed) {
		t.Errorf("the error does not name the working directory:\n%v", err)
	}

	tg = Target{Argv: []string{prog}, Dir: server.dir, RunAs: transport.Nobody()}
	_, err = tg.Open(context.Background(), false)
	wantBothFixes(t, err, closed)
	if !strings.Contains(err.Error(), "on the way to the command "+prog) {
		t.Errorf("the error does not name the command:\n%v", err)
	}
}

// A script others may run but not read cannot be run by its interpreter.
func TestPreflightNeedsAScriptReadable(t *testing.T) {
	needRoot(t)
	dir := tempDir(t, 0o755)
	prog := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nsleep 5\n"), 0o711); err != nil {
		t.Fatal(err)
	}
	_, err := Target{Argv: []string{prog}, Dir: dir, RunAs: transport.Nobody()}.Open(context.Background(), false)
	if err == nil || !strings.Contains(err.Error(), "cannot read the command "+prog) || !strings.Contains(err.Error(), "chmod o+r "+prog) {
		t.Fatalf("got %v", err)
	}
}

// No command is StartStdio's usage error, not a panic.
func TestOpenWithoutACommand(t *testing.T) {
	_, err := Target{RunAs: transport.Nobody()}.Open(context.Background(), false)
	if err == nil || !strings.Contains(err.Error(), "no server command given") {
		t.Fatalf("got %v", err)
	}
}

// An open path passes the preflight and the server starts as nobody.
func TestPreflightPassesAnOpenPath(t *testing.T) {
	needRoot(t)
	tg := Target{Argv: []string{server.bin}, Dir: server.dir, RunAs: transport.Nobody()}
	if err := tg.preflight(); err != nil {
		t.Fatal(err)
	}
}

// allows follows the kernel's one-triple rule: an owner without the bit is
// refused even when others have it.
func TestAllowsUsesOneTriple(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, nil, 0o007); err != nil {
		t.Fatal(err)
	}
	as := transport.Nobody()
	st, _ := os.Stat(f)
	if !allows(st, as, modeRead) {
		t.Error("others may read a 0007 file")
	}
	if err := os.Chown(f, int(as.UID), 0); err != nil {
		t.Fatal(err)
	}
	st, _ = os.Stat(f)
	if allows(st, as, modeRead) {
		t.Error("the owner of a 0007 file may not read it")
	}
}

// A refusal the bits do not explain (an ACL, a noexec mount) still reads
// as what to do.
func TestExplainStartMapsAPermissionError(t *testing.T) {
	tg := Target{Argv: []string{"/srv/x/server"}, RunAs: transport.Nobody()}
	start := &transport.Error{Kind: transport.KindConnect, Op: `start "/srv/x/server"`,
		Err: &fs.PathError{Op: "fork/exec", Path: "/srv/x/server", Err: syscall.EACCES}}
	err := tg.explainStart(start)
	msg := err.Error()
	for _, want := range []string{"refused the command /srv/x/server", "permission denied", "chmod -R o+rX", "server.user: current", "--server-user current", "server-user: current", "model keys"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q:\n%s", want, msg)
		}
	}
	if !errors.Is(err, os.ErrPermission) || transport.KindOf(err) != transport.KindConnect {
		t.Errorf("the mapped error lost its cause or kind: %v", err)
	}
	chdir := &fs.PathError{Op: "chdir", Path: "/srv/x", Err: syscall.EACCES}
	if msg := tg.explainStart(chdir).Error(); !strings.Contains(msg, "the working directory /srv/x") {
		t.Errorf("a refused chdir: %s", msg)
	}
	if other := errors.New("boom"); tg.explainStart(other) != other {
		t.Error("an error that is not a refusal was rewritten")
	}
}

func TestResolveUser(t *testing.T) {
	cases := []struct {
		policy UserPolicy
		facts  Facts
		drop   bool
		note   string
		err    error
	}{
		{UserAuto, Facts{IsRoot: true, InAction: true}, true, "", nil},
		{UserAuto, Facts{IsRoot: true, HoldsSecrets: true}, true, "", nil},
		{"", Facts{IsRoot: true, HoldsSecrets: true}, true, "", nil},
		{UserAuto, Facts{IsRoot: true}, false, NoteRootNothingToProtect, nil},
		{UserAuto, Facts{HoldsSecrets: true, InAction: true}, false, NoteSameUserSecrets, nil},
		{UserAuto, Facts{InAction: true}, false, "", nil},
		{UserUnprivileged, Facts{IsRoot: true}, true, "", nil},
		{UserUnprivileged, Facts{HoldsSecrets: true}, false, "", ErrCannotDrop},
		{UserCurrent, Facts{IsRoot: true, InAction: true, HoldsSecrets: true}, false, NoteCurrentRoot, nil},
		{UserCurrent, Facts{HoldsSecrets: true}, false, "", nil},
	}
	for _, tc := range cases {
		runAs, note, err := ResolveUser(tc.policy, tc.facts)
		if (runAs != nil) != tc.drop || note != tc.note || !errors.Is(err, tc.err) {
			t.Errorf("ResolveUser(%q, %+v) = %v, %q, %v; want drop %v, %q, %v", tc.policy, tc.facts, runAs, note, err, tc.drop, tc.note, tc.err)
		}
		if runAs != nil && runAs.UID != 65534 {
			t.Errorf("dropped to %s, want uid 65534", runAs)
		}
	}
	if _, _, err := ResolveUser("nobody", Facts{IsRoot: true}); err == nil || !strings.Contains(err.Error(), "want auto, unprivileged or current") {
		t.Errorf("an unknown policy: %v", err)
	}
	for _, s := range []string{"", "auto", "unprivileged", "current"} {
		if _, err := ParseUserPolicy(s); err != nil {
			t.Errorf("ParseUserPolicy(%q): %v", s, err)
		}
	}
}
