package hostile_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// bin holds the binaries the tests run, built once by TestMain into a
// directory every user can read: when the tests run as root, mcp-eval
// starts stdio servers as uid 65534, which must be able to run them.
var bin struct {
	dir, mcpEval, server string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hostile-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if err := os.Chmod(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		bin.dir = dir
		bin.mcpEval, bin.server = filepath.Join(dir, "mcp-eval"), filepath.Join(dir, "hostile-server")
		for out, pkg := range map[string]string{bin.mcpEval: "github.com/mcp-eval/mcp-eval-action/cmd/mcp-eval", bin.server: "github.com/mcp-eval/mcp-eval-action/internal/hostile/cmd/hostile-server"} {
			if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, b)
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// reachableDir is a fresh directory uid 65534 can use (see bin).
func reachableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(bin.dir, "run-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// result is one run of the mcp-eval binary.
type result struct {
	code           int
	stdout, stderr string
	wall           time.Duration
	maxRSS         int64 // bytes, the mcp-eval process alone (not its servers)
}

// runMCPEval runs the built binary in its own process group and kills the
// group if it overruns deadline: a hang fails the test, it does not hang
// it. The peak memory comes from the kernel's accounting of the process
// (getrusage ru_maxrss via wait4), so it is the real high-water mark.
func runMCPEval(t *testing.T, deadline time.Duration, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin.mcpEval, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(deadline):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	_ = cmd.Wait()
	close(done)
	r := result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String(), wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	if r.wall >= deadline {
		t.Fatalf("mcp-eval %s did not finish within %s (killed)\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), deadline, tail(r.stdout), tail(r.stderr))
	}
	regate(t, dir, env, r.code, args)
	return r
}

// regate runs `mcp-eval gate` on the report a check wrote and fails the
// test unless it gives the check's exit code: the verdict is the report's,
// whatever hostile text the server put in it.
func regate(t *testing.T, dir string, env []string, code int, args []string) {
	t.Helper()
	if len(args) == 0 || args[0] != "check" || code == 2 {
		return
	}
	path := ""
	for i, a := range args {
		if a == "--out" && i+1 < len(args) {
			path = args[i+1]
		}
	}
	if path == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.mcpEval, "gate", "--report", path, "--out", path+".regated.json")
	cmd.Dir, cmd.Env = dir, env
	out, _ := cmd.CombinedOutput()
	if got := cmd.ProcessState.ExitCode(); got != code {
		t.Errorf("check exited %d; mcp-eval gate on its report exits %d\n%s", code, got, tail(string(out)))
	}
}

// baseEnv is the harness's environment for a run: enough to work, and a
// tag that every server process inherits so leftovers can be found.
func baseEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "LANG=C.UTF-8"}, extra...)
}

// hostileHTTP starts the hostile server over HTTP and returns its URL. It
// is stopped (its whole process group) when the test ends.
func hostileHTTP(t *testing.T, behaviour string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin.server, "--behaviour", behaviour, "--http", "127.0.0.1:0")
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("the hostile HTTP server did not start")
		return ""
	}
}

// tripwire is an HTTP server nothing may ever reach: a redirect target or
// a remote $ref. It fails the test when hit.
func tripwire(t *testing.T) string {
	t.Helper()
	var hits atomic.Int64
	var first atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			first.Store(fmt.Sprintf("%s %s Authorization=%q", r.Method, r.URL, r.Header.Get("Authorization")))
		}
		http.Error(w, "tripwire", http.StatusTeapot)
	}))
	t.Cleanup(func() {
		srv.Close()
		if n := hits.Load(); n > 0 {
			t.Errorf("the tripwire was hit %d time(s), first: %v (the harness followed a redirect or fetched a remote $ref)", n, first.Load())
		}
	})
	return srv.URL
}

// leftovers lists live processes whose environment carries tag: the
// servers of one run and anything they started. Root can read every
// process's environ; zombies have none, and do not count.
func leftovers(tag string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		env, err := os.ReadFile("/proc/" + pid + "/environ")
		if err != nil || !bytes.Contains(env, []byte(tag)) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		out = append(out, pid+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// noLeftovers waits briefly for the kernel to finish what mcp-eval's group
// kill started, then fails on any process still carrying tag.
func noLeftovers(t *testing.T, tag string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left = leftovers(tag); len(left) == 0 {
			return
		}
	}
	for _, l := range left {
		var pid int
		fmt.Sscan(l, &pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Errorf("processes left behind after mcp-eval exited: %v", left)
}

// noPanic fails when a Go panic or fatal error reached the output.
func noPanic(t *testing.T, r result) {
	t.Helper()
	for _, s := range []string{r.stdout, r.stderr} {
		for _, sign := range []string{"panic:", "goroutine ", "fatal error:", "SIGSEGV"} {
			if strings.Contains(s, sign) {
				t.Fatalf("mcp-eval crashed (%q):\n%s", sign, tail(s))
			}
		}
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

// The leftover check must see a tagged process, or "no process left
// behind" would hold vacuously.
func TestLeftoversSeesTaggedProcesses(t *testing.T) {
	tag := "HOSTILE_RUN=self-test-" + fmt.Sprint(os.Getpid())
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), tag)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// Start returns once the child is forked, maybe before it has exec'd
	// sleep with its own environment: look again for a while.
	var left []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if left = leftovers(tag); len(left) == 1 && strings.Contains(left[0], "sleep") {
			return
		}
	}
	t.Fatalf("leftovers(%q) = %v, want the sleep", tag, left)
}
