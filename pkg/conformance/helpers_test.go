package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// exampleServer is the reference server binary, built once by TestMain, for
// stdio runs.
var exampleServer string

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && (os.Args[1] == deafProxyArg || os.Args[1] == dropInitializeArg || os.Args[1] == afterProbeArg || os.Args[1] == afterTwoArg || os.Args[1] == slowListArg || os.Args[1] == slowDiscoverArg || os.Args[1] == gatewayArg || os.Args[1] == slowCallArg || os.Args[1] == lateErrorsArg || os.Args[1] == exitOnGetArg || os.Args[1] == exitOnSecondGetArg) {
		proxy(os.Args[1], os.Args[2])
		return
	}
	if len(os.Args) >= 3 && (os.Args[1] == lateQuickArg || os.Args[1] == exitOnSecondPromptsListArg) {
		proxy(os.Args[1], os.Args[2], os.Args[3:]...)
		return
	}
	if len(os.Args) == 2 && os.Args[1] == busyLegacyArg {
		busyLegacy()
		return
	}
	dir, err := os.MkdirTemp("", "conformance-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exampleServer = filepath.Join(dir, "example-server")
	if out, err := exec.Command("go", "build", "-o", exampleServer, "github.com/mcp-eval/mcp-eval-action/golden-examples/cmd/example-server").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the example server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The test binary runs a server behind one of these proxies when its
// arguments are the proxy's name and the server (TestMain):
const (
	// deafProxyArg: stdin stops being read after the first line that is
	// not JSON, which is passed on first: a process whose reader died
	// after a malformed line, still alive, that never sees EOF.
	deafProxyArg = "mcpeval-deaf-proxy"
	// dropInitializeArg: initialize requests are dropped, so the server
	// never answers them.
	dropInitializeArg = "mcpeval-drop-initialize"
	// busyLegacyArg: a legacy server that answers initialize and nothing
	// else, using CPU all the while.
	busyLegacyArg = "mcpeval-busy-legacy"
	// afterProbeArg: only the first line is passed on, so the server
	// answers its probe and then nothing, reading all the while.
	afterProbeArg = "mcpeval-after-probe"
	// afterTwoArg: only the first two lines are passed on: the probe and
	// one request are answered, then nothing.
	afterTwoArg = "mcpeval-after-two"
	// slowListArg: every tools/list is passed on after 0.8 s of doing
	// nothing, as a gateway waits for its upstream.
	slowListArg = "mcpeval-slow-list"
	// slowDiscoverArg: every server/discover after the first line is
	// passed on after 0.8 s of doing nothing, as a gateway asks its
	// upstreams.
	slowDiscoverArg = "mcpeval-slow-discover"
	// gatewayArg: every server/discover, the probe's too, is passed on
	// after 0.8 s of doing nothing, as a gateway asks its upstreams.
	gatewayArg = "mcpeval-gateway"
	// slowCallArg: every tools/call is passed on after 5.5 s of doing
	// nothing, and every line after it waits its turn: a server that
	// answers one request at a time, with a slow tool.
	slowCallArg = "mcpeval-slow-call"
	// lateErrorsArg: every response reaches the client 0.2 s after the
	// server wrote it, an error response 0.3 s after, each in its own
	// time (notifications at once): a server that answers its requests
	// concurrently, its errors slower than its results.
	lateErrorsArg = "mcpeval-late-errors"
	// lateQuickArg: the four lines that follow STDIO-5's first streaming
	// call (its progressToken "mcp-eval-stdio5") are passed on 0.5 s
	// after it, when the reference server's count of 20 steps has ended,
	// and 0.1 s apart: its quick requests come too late, and one at a
	// time, once, as on a machine too loaded to send them. The server's
	// argv follows the mode.
	lateQuickArg = "mcpeval-late-quick"
	// exitOnGetArg: the proxy exits with code 3 when a prompts/get
	// reaches it (the server then sees EOF): a server that crashes on
	// one request. exitOnSecondGetArg: on the process's second one.
	exitOnGetArg       = "mcpeval-exit-on-get"
	exitOnSecondGetArg = "mcpeval-exit-on-second-get"
	// exitOnSecondPromptsListArg: the proxy exits with code 3 on the
	// process's second prompts/list (the first is the facts' walk). The
	// server's argv follows the mode.
	exitOnSecondPromptsListArg = "mcpeval-exit-on-second-prompts-list"
)

func busyLegacy() {
	go func() {
		for n := 0; ; n++ {
			if n%1_000_000 == 0 {
				runtime.Gosched()
			}
		}
	}()
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &req) != nil || req.Method != "initialize" || req.ID == nil {
			continue
		}
		fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"busy-legacy","version":"0"}}}`+"\n", req.ID)
	}
	os.Exit(0)
}

func proxy(mode, server string, args ...string) {
	cmd := exec.Command(server, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	var out io.ReadCloser
	var err error
	if mode == lateErrorsArg {
		cmd.Stdout = nil
		out, err = cmd.StdoutPipe()
	}
	var in io.WriteCloser
	if err == nil {
		in, err = cmd.StdinPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var passed sync.WaitGroup
	if out != nil {
		passed.Go(func() { passLate(out) })
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	gets, lists := 0, 0 // prompts/get and prompts/list seen (the exit modes)
	var held time.Time  // lateQuickArg: the next line waits until then
	late := 0           // lateQuickArg: lines held so far
	for n := 1; sc.Scan(); n++ {
		line := append(sc.Bytes(), '\n')
		if mode == lateQuickArg {
			if !held.IsZero() && late < stdioInterleaved {
				time.Sleep(time.Until(held))
				held, late = time.Now().Add(100*time.Millisecond), late+1
			}
			if held.IsZero() && strings.Contains(string(line), `"progressToken":"mcp-eval-stdio5"`) {
				held = time.Now().Add(500 * time.Millisecond)
			}
		}
		if strings.Contains(string(line), `"method":"prompts/get"`) {
			if gets++; mode == exitOnGetArg || mode == exitOnSecondGetArg && gets == 2 {
				os.Exit(3)
			}
		}
		if strings.Contains(string(line), `"method":"prompts/list"`) {
			if lists++; mode == exitOnSecondPromptsListArg && lists == 2 {
				os.Exit(3)
			}
		}
		if mode == afterProbeArg && n > 1 || mode == afterTwoArg && n > 2 {
			continue
		}
		if mode == slowListArg && strings.Contains(string(line), `"method":"tools/list"`) || (mode == slowDiscoverArg && n > 1 || mode == gatewayArg) && strings.Contains(string(line), `"method":"server/discover"`) {
			time.Sleep(800 * time.Millisecond)
		}
		if mode == slowCallArg && strings.Contains(string(line), `"method":"tools/call"`) {
			time.Sleep(5500 * time.Millisecond)
		}
		if mode == dropInitializeArg && strings.Contains(string(line), `"method":"initialize"`) {
			continue
		}
		if _, err := in.Write(line); err != nil {
			break
		}
		if mode == deafProxyArg && !json.Valid(line) {
			time.Sleep(time.Hour) // alive, reading nothing more
		}
	}
	in.Close()
	passed.Wait()
	_ = cmd.Wait()
	os.Exit(0)
}

// passLate passes the server's stdout on as lateErrorsArg says.
func passLate(out io.Reader) {
	var mu sync.Mutex
	var late sync.WaitGroup
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := append([]byte(nil), append(sc.Bytes(), '\n')...)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Error  json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(line, &m)
		delay := time.Duration(0)
		switch {
		case m.Method != "":
		case m.Error != nil:
			delay = 300 * time.Millisecond
		case m.ID != nil:
			delay = 200 * time.Millisecond
		}
		late.Go(func() {
			time.Sleep(delay)
			mu.Lock()
			defer mu.Unlock()
			os.Stdout.Write(line)
		})
	}
	late.Wait()
}

// refTarget starts the reference server with the given rules broken, over
// "http" (in-process handler on real HTTP) or "stdio" (the built binary),
// and returns its target.
func refTarget(t testing.TB, kind string, breaks ...string) Target {
	t.Helper()
	if kind == "http" {
		br := map[string]bool{}
		for _, b := range breaks {
			br[b] = true
		}
		srv := refserver.New(refserver.Options{Break: br})
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { hs.Close(); srv.Close() })
		return Target{URL: hs.URL + "/mcp"}
	}
	argv := []string{exampleServer}
	if len(breaks) > 0 {
		argv = append(argv, "--break", strings.Join(breaks, ","))
	}
	return Target{Argv: argv}
}

// runChecks runs the named checks (ids or families) against target, MUSTs
// runs times, and returns the results by id.
func runChecks(t *testing.T, target Target, runs int, only ...string) (*Report, map[string]check.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: runs, Only: only}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("conformance run against %s: %v", target.Describe(), err)
	}
	validateReport(t, rep)
	byID := map[string]check.Result{}
	for _, r := range rep.Checks {
		byID[r.ID] = r
	}
	return rep, byID
}

// transportsOf lists the transports a check applies to.
func transportsOf(c *check.Check) []string {
	var out []string
	for _, k := range []string{"http", "stdio"} {
		if c.Transports.Has(k) {
			out = append(out, k)
		}
	}
	return out
}

// assertMutant proves a check: it passes (or warns) on the correct
// reference server and fails on the mutant that breaks its rule, over every
// transport it applies to.
func assertMutant(t *testing.T, c *check.Check) {
	t.Helper()
	if _, ok := refserver.Mutants[c.ID]; !ok {
		t.Fatalf("the reference server has no mutant for %s (add one to refserver.Mutants)", c.ID)
	}
	for _, kind := range transportsOf(c) {
		t.Run(kind, func(t *testing.T) {
			_, good := runChecks(t, refTarget(t, kind), 2, c.ID)
			if v := good[c.ID].Verdict; v != check.Passed && v != check.Warned {
				t.Fatalf("%s on the correct server: %s: %s %v", c.ID, v, good[c.ID].Outcome.Message, good[c.ID].Outcome.Details)
			}
			_, bad := runChecks(t, refTarget(t, kind, c.ID), 2, c.ID)
			if v := bad[c.ID].Verdict; v != check.Failed {
				t.Fatalf("%s on its mutant (%s): %s, want fail: %s", c.ID, refserver.Mutants[c.ID], v, bad[c.ID].Outcome.Message)
			}
			if bad[c.ID].Outcome.Message == "" {
				t.Fatalf("%s failed without saying why", c.ID)
			}
			// The mutant breaks the rule every time: every run must see it
			// (a repetition that re-sends only some variants, Pass.Cases,
			// must re-send the one that went wrong).
			if r := bad[c.ID]; r.Flaky {
				t.Fatalf("%s on its mutant: flaky %v, want failed in every run", c.ID, r.Counts)
			}
		})
	}
}

// declaredCaps is a capabilities object that declares names.
func declaredCaps(names ...string) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for _, n := range names {
		m[n] = json.RawMessage(`{}`)
	}
	return m
}
