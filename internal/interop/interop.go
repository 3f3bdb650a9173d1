// Package interop starts real MCP servers written by others (and small fixture
// servers built on other SDKs) so that tests can run the product against them over
// stdio and Streamable HTTP.
//
// The servers are installed into the repository by scripts/setup-interop.sh:
// npm packages under interop/ts and interop/legacy, Go fixtures built into
// interop/bin. A target whose files are missing is skipped by Require, except
// when CI=true, where a missing dependency fails the test.
package interop

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Transport is how a client talks to a target.
type Transport string

const (
	Stdio Transport = "stdio"
	HTTP  Transport = "http"
)

// Era is the protocol generation a target is expected to speak.
type Era string

const (
	// Modern targets speak 2026-07-28 (server/discover, per-request _meta) and
	// also accept a legacy initialize handshake (dual-era).
	Modern Era = "modern"
	// Legacy targets speak only the initialize-based revisions (2025-11-25 and older).
	Legacy Era = "legacy"
)

// Target is one startable MCP server.
type Target struct {
	Name      string    // e.g. "ts-v2-stdio", "everything-http"
	Transport Transport // Stdio or HTTP
	Era       Era       // Modern targets also accept legacy; Legacy = legacy only
	Tools     []string  // tool names in the order tools/list returns them

	dir   string   // working directory, relative to Root
	argv  []string // argv[0] is "node" or a Root-relative path; "{port}"/"{addr}" are filled in by StartHTTP
	env   []string // extra environment ("{port}" is filled in by StartHTTP)
	needs []string // Root-relative files that must exist
}

const (
	everythingJS = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	setupHint    = "run `bash scripts/setup-interop.sh` from the repository root"

	startDeadline  = 20 * time.Second
	stderrMaxBytes = 64 << 10
)

var (
	fixtureTools    = []string{"add", "echo", "fail"} // go-sdk and mcp-go list tools sorted by name
	tsTools         = []string{"echo", "add", "fail"} // the TS SDK lists tools in registration order
	everythingTools = []string{
		"echo", "get-annotated-message", "get-env", "get-resource-links",
		"get-resource-reference", "get-structured-content", "get-sum", "get-tiny-image",
		"gzip-file-as-resource", "toggle-simulated-logging", "toggle-subscriber-updates",
		"trigger-long-running-operation", "simulate-research-query",
	} // as listed to a client that declares no capabilities
)

// Targets returns all known targets.
func Targets() []Target {
	tsNeeds := []string{"interop/ts/server.mjs", "interop/ts/node_modules/@modelcontextprotocol/server/package.json", "interop/ts/node_modules/@modelcontextprotocol/node/package.json"}
	evNeeds := []string{"interop/legacy/" + everythingJS}
	return []Target{
		{Name: "ts-v2-stdio", Transport: Stdio, Era: Modern, Tools: tsTools,
			dir: "interop/ts", argv: []string{"node", "server.mjs", "stdio"}, needs: tsNeeds},
		{Name: "ts-v2-http", Transport: HTTP, Era: Modern, Tools: tsTools,
			dir: "interop/ts", argv: []string{"node", "server.mjs", "http", "{port}"}, needs: tsNeeds},
		{Name: "go-sdk-stdio", Transport: Stdio, Era: Modern, Tools: fixtureTools,
			dir: "interop", argv: []string{"interop/bin/gosdk-srv"}, needs: []string{"interop/bin/gosdk-srv"}},
		{Name: "go-sdk-http-stateless", Transport: HTTP, Era: Modern, Tools: fixtureTools,
			dir: "interop", argv: []string{"interop/bin/gosdk-srv", "-http", "{addr}", "-stateless"}, needs: []string{"interop/bin/gosdk-srv"}},
		// The go-sdk's default (stateful) handler does not serve 2026-07-28.
		{Name: "go-sdk-http", Transport: HTTP, Era: Legacy, Tools: fixtureTools,
			dir: "interop", argv: []string{"interop/bin/gosdk-srv", "-http", "{addr}"}, needs: []string{"interop/bin/gosdk-srv"}},
		{Name: "mcp-go-stdio", Transport: Stdio, Era: Modern, Tools: fixtureTools,
			dir: "interop", argv: []string{"interop/bin/mcpgo-srv"}, needs: []string{"interop/bin/mcpgo-srv"}},
		{Name: "mcp-go-http", Transport: HTTP, Era: Modern, Tools: fixtureTools,
			dir: "interop", argv: []string{"interop/bin/mcpgo-srv", "-http", "{addr}"}, needs: []string{"interop/bin/mcpgo-srv"}},
		{Name: "mcp-go-http-stateless", Transport: HTTP, Era: Modern, Tools: fixtureTools,
			dir: "interop", argv: []string{"interop/bin/mcpgo-srv", "-http", "{addr}", "-stateless"}, needs: []string{"interop/bin/mcpgo-srv"}},
		{Name: "everything-stdio", Transport: Stdio, Era: Legacy, Tools: everythingTools,
			dir: "interop/legacy", argv: []string{"node", everythingJS, "stdio"}, needs: evNeeds},
		{Name: "everything-http", Transport: HTTP, Era: Legacy, Tools: everythingTools,
			dir:   "interop/legacy",
			argv:  []string{"node", "--require", "./bind-loopback.cjs", everythingJS, "streamableHttp"},
			env:   []string{"PORT={port}", "INTEROP_ANNOUNCE_PATH=/mcp"},
			needs: append([]string{"interop/legacy/bind-loopback.cjs"}, evNeeds...)},
	}
}

// Lookup returns the target with the given name.
func Lookup(name string) (Target, bool) {
	for _, t := range Targets() {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

const mainModule = "github.com/mcp-eval/mcp-eval-action"

var (
	rootOnce sync.Once
	rootDir  string
)

// Root returns the repository root: the nearest directory above this source file
// (or, failing that, above the working directory) whose go.mod declares the main module.
func Root() string {
	rootOnce.Do(func() {
		var starts []string
		if _, file, _, ok := runtime.Caller(0); ok {
			starts = append(starts, filepath.Dir(file))
		}
		if wd, err := os.Getwd(); err == nil {
			starts = append(starts, wd)
		}
		for _, start := range starts {
			if dir := findModuleRoot(start); dir != "" {
				rootDir = dir
				return
			}
		}
	})
	return rootDir
}

var moduleLine = regexp.MustCompile(`(?m)^module\s+"?` + regexp.QuoteMeta(mainModule) + `"?\s*$`)

func findModuleRoot(dir string) string {
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && moduleLine.Match(b) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Available reports whether the target's files are installed; if not, the error
// says to run scripts/setup-interop.sh.
func (t Target) Available() error {
	root := Root()
	if root == "" {
		return fmt.Errorf("interop %s: cannot find the repository root (go.mod of %s)", t.Name, mainModule)
	}
	if len(t.argv) == 0 {
		return fmt.Errorf("interop %s: unknown target", t.Name)
	}
	if t.argv[0] == "node" {
		if _, err := exec.LookPath("node"); err != nil {
			return fmt.Errorf("interop %s: node is not on PATH (install Node.js >= 20, then %s)", t.Name, setupHint)
		}
	}
	var missing []string
	for _, f := range t.needs {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("interop %s: not installed (missing %s); %s", t.Name, strings.Join(missing, ", "), setupHint)
	}
	return nil
}

// Require skips the test with a clear message when the target is unavailable,
// unless CI=true, in which case it fails the test: a missing dependency must fail CI.
func (t Target) Require(tb testing.TB) {
	tb.Helper()
	if err := t.Available(); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%v (CI=true: interop targets must be installed)", err)
		}
		tb.Skipf("skipping: %v", err)
	}
}

// Command returns argv and working directory for a stdio target. The caller spawns it
// (in tests, through the product's own stdio transport).
func (t Target) Command() (argv []string, dir string, err error) {
	if t.Transport != Stdio {
		return nil, "", fmt.Errorf("interop %s: Command is for stdio targets; this one is %s (use StartHTTP)", t.Name, t.Transport)
	}
	if err := t.Available(); err != nil {
		return nil, "", err
	}
	argv, _ = t.resolve(nil)
	return argv, filepath.Join(Root(), t.dir), nil
}

// resolve returns the absolute argv and the extra environment, with placeholders filled in.
func (t Target) resolve(repl *strings.Replacer) (argv, env []string) {
	argv = append([]string(nil), t.argv...)
	env = append([]string(nil), t.env...)
	if strings.Contains(argv[0], "/") {
		argv[0] = filepath.Join(Root(), filepath.FromSlash(argv[0]))
	}
	if repl != nil {
		for i := range argv {
			argv[i] = repl.Replace(argv[i])
		}
		for i := range env {
			env[i] = repl.Replace(env[i])
		}
	}
	return argv, env
}

var listeningLine = regexp.MustCompile(`(?m)^listening on (http://\S+)\s*$`)

// StartHTTP starts an HTTP target on a free loopback port, waits until it accepts TCP
// connections (deadline 20s), registers a Cleanup that kills the whole process group
// and waits for it, and returns the endpoint URL (http://127.0.0.1:PORT/mcp).
// The server's output is logged if the test fails.
func (t Target) StartHTTP(tb testing.TB) string {
	tb.Helper()
	if t.Transport != HTTP {
		tb.Fatalf("interop %s: StartHTTP is for HTTP targets; this one is %s (use Command)", t.Name, t.Transport)
	}
	t.Require(tb)

	// Every target picks its own free port when asked for port 0 and announces it
	// on stderr, which avoids the race of choosing a port for it.
	argv, env := t.resolve(strings.NewReplacer("{port}", "0", "{addr}", "127.0.0.1:0"))
	out := newTailBuffer(stderrMaxBytes)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(Root(), t.dir)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = nil
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		tb.Fatalf("interop %s: start %q: %v", t.Name, argv, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			tb.Errorf("interop %s: process group %d did not exit after SIGKILL", t.Name, cmd.Process.Pid)
		}
		if tb.Failed() {
			tb.Logf("interop %s output (last %d bytes at most):\n%s", t.Name, stderrMaxBytes, out.String())
		}
	})

	deadline := time.Now().Add(startDeadline)
	fail := func(format string, args ...any) {
		tb.Helper()
		tb.Fatalf("interop %s: %s\n--- output ---\n%s", t.Name, fmt.Sprintf(format, args...), out.String())
	}
	var endpoint string
	for {
		if m := listeningLine.FindStringSubmatch(out.String()); m != nil {
			endpoint = m[1]
			break
		}
		select {
		case <-exited:
			fail("exited before listening: %v", waitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			fail("no %q line within %v", "listening on http://...", startDeadline)
		}
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Port() == "0" {
		fail("announced endpoint %q is not a loopback URL with a port", endpoint)
	}
	for {
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err == nil {
			conn.Close()
			return endpoint
		}
		select {
		case <-exited:
			fail("exited before accepting connections: %v", waitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			fail("%s did not accept TCP connections within %v: %v", u.Host, startDeadline, err)
		}
	}
}

// tailBuffer is a concurrency-safe writer that keeps the last max bytes written.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		// Drop whole lines where possible so the kept text starts cleanly.
		cut := over
		if i := bytes.IndexByte(b.buf[over:], '\n'); i >= 0 && i < 1024 {
			cut = over + i + 1
		}
		b.dropped += cut
		b.buf = append(b.buf[:0], b.buf[cut:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return fmt.Sprintf("[... %d bytes dropped ...]\n%s", b.dropped, b.buf)
	}
	return string(b.buf)
}
