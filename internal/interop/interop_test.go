package interop

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// legacyInit is a 2025-11-25 initialize request, the opening every target must accept.
const legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`

const (
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	toolsList   = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	// discover is a 2026-07-28 server/discover request with the per-request _meta envelope.
	discover = `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"0"}}}}`
	modernVersion = "2026-07-28"
)

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (m rpcMessage) hasID(id int) bool { return strings.TrimSpace(string(m.ID)) == fmt.Sprint(id) }

func TestRootAndTargets(t *testing.T) {
	root := Root()
	if root == "" {
		t.Fatal("Root() found no repository root")
	}
	for _, f := range []string{"go.mod", "scripts/setup-interop.sh", "interop/go/go.mod"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("Root()=%s has no %s: %v", root, f, err)
		}
	}
	seen := map[string]bool{}
	for _, tgt := range Targets() {
		if seen[tgt.Name] {
			t.Errorf("duplicate target %q", tgt.Name)
		}
		seen[tgt.Name] = true
		if len(tgt.Tools) == 0 || (tgt.Era != Modern && tgt.Era != Legacy) {
			t.Errorf("%s: incomplete target %+v", tgt.Name, tgt)
		}
		_, _, err := tgt.Command()
		switch tgt.Transport {
		case HTTP:
			if err == nil {
				t.Errorf("%s: Command() on an HTTP target returned no error", tgt.Name)
			}
		case Stdio:
			if err != nil && tgt.Available() == nil {
				t.Errorf("%s: Command(): %v", tgt.Name, err)
			}
		default:
			t.Errorf("%s: bad transport %q", tgt.Name, tgt.Transport)
		}
	}
}

// TestTargets starts every available target and checks that it answers a legacy
// initialize, lists the tools recorded in Target.Tools in that order, and speaks
// (Modern) or does not speak (Legacy) the 2026-07-28 revision.
func TestTargets(t *testing.T) {
	for _, tgt := range Targets() {
		t.Run(tgt.Name, func(t *testing.T) {
			t.Parallel()
			tgt.Require(t)
			switch tgt.Transport {
			case HTTP:
				testHTTPTarget(t, tgt)
			case Stdio:
				testStdioTarget(t, tgt)
			}
		})
	}
}

func testHTTPTarget(t *testing.T, tgt Target) {
	endpoint := tgt.StartHTTP(t)

	// Legacy handshake: initialize, initialized, tools/list (with the session, if any).
	status, hdr, msgs := post(t, endpoint, legacyInit, nil)
	init := find(msgs, 1)
	if status != http.StatusOK || init == nil || len(init.Result) == 0 {
		t.Fatalf("initialize: status %d, messages %s; want a result", status, show(msgs))
	}
	legacyHdr := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	if sid := hdr.Get("Mcp-Session-Id"); sid != "" {
		legacyHdr["Mcp-Session-Id"] = sid
	}
	if status, _, _ := post(t, endpoint, initialized, legacyHdr); status/100 != 2 {
		t.Fatalf("notifications/initialized: status %d", status)
	}
	_, _, msgs = post(t, endpoint, toolsList, legacyHdr)
	checkTools(t, tgt, find(msgs, 2), msgs)

	// Modern: a stateless server/discover request without a session.
	_, _, msgs = post(t, endpoint, discover, map[string]string{
		"MCP-Protocol-Version": modernVersion, "Mcp-Method": "server/discover",
	})
	checkEra(t, tgt, find(msgs, 3), msgs)
}

func testStdioTarget(t *testing.T, tgt Target) {
	p := startStdio(t, tgt, "legacy handshake")
	p.send(t, legacyInit)
	if m := p.await(t, 1, 10*time.Second); m == nil || len(m.Result) == 0 {
		t.Fatalf("initialize: got %v; want a result within 10s", m)
	}
	p.send(t, initialized)
	p.send(t, toolsList)
	checkTools(t, tgt, p.await(t, 2, 10*time.Second), nil)

	// The era of a stdio connection is fixed by its first message: use a fresh process.
	p = startStdio(t, tgt, "server/discover")
	p.send(t, discover)
	wait := 10 * time.Second
	if tgt.Era == Legacy {
		wait = 3 * time.Second // a legacy server may ignore the unknown request
	}
	checkEra(t, tgt, p.await(t, 3, wait), nil)
}

func checkTools(t *testing.T, tgt Target, m *rpcMessage, all []rpcMessage) {
	t.Helper()
	if m == nil || len(m.Result) == 0 {
		t.Fatalf("tools/list: no result (messages %s)", show(all))
	}
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatalf("tools/list: %v in %s", err, m.Result)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, tgt.Tools) {
		t.Errorf("tools/list order = %q; Target.Tools = %q", names, tgt.Tools)
	}
}

func checkEra(t *testing.T, tgt Target, m *rpcMessage, all []rpcMessage) {
	t.Helper()
	var res struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	modern := false
	if m != nil && len(m.Result) > 0 {
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatalf("server/discover: %v in %s", err, m.Result)
		}
		modern = slices.Contains(res.SupportedVersions, modernVersion)
	}
	if got := map[bool]Era{true: Modern, false: Legacy}[modern]; got != tgt.Era {
		t.Errorf("server/discover says era %s (response %v, messages %s); Target.Era = %s", got, m, show(all), tgt.Era)
	}
}

// TestStartHTTPCleanup checks that once a test that used StartHTTP ends, nothing is
// left listening on the target's port.
func TestStartHTTPCleanup(t *testing.T) {
	for _, tgt := range Targets() {
		if tgt.Transport != HTTP {
			continue
		}
		var endpoint string
		t.Run(tgt.Name, func(t *testing.T) { endpoint = tgt.StartHTTP(t) })
		if endpoint == "" {
			continue // skipped or failed
		}
		u, _ := url.Parse(endpoint)
		if c, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
			c.Close()
			t.Errorf("%s: %s still accepts connections after the test's cleanup", tgt.Name, u.Host)
		}
	}
}

// ---- HTTP helpers

var httpClient = &http.Client{Timeout: 10 * time.Second}

// post sends one JSON-RPC message and returns the status, the headers and every
// JSON-RPC message in the answer (a JSON body, or the data: lines of an SSE stream).
func post(t *testing.T, endpoint, body string, hdr map[string]string) (int, http.Header, []rpcMessage) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		t.Fatalf("POST %s: reading body: %v", endpoint, err)
	}
	var payloads []string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(string(raw)) {
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data:"); ok && strings.TrimSpace(data) != "" {
				payloads = append(payloads, strings.TrimSpace(data))
			}
		}
	} else if len(strings.TrimSpace(string(raw))) > 0 {
		payloads = append(payloads, string(raw))
	}
	var msgs []rpcMessage
	for _, p := range payloads {
		var m rpcMessage
		if err := json.Unmarshal([]byte(p), &m); err != nil {
			t.Fatalf("POST %s: status %d, non-JSON message %q", endpoint, resp.StatusCode, p)
		}
		msgs = append(msgs, m)
	}
	return resp.StatusCode, resp.Header, msgs
}

func find(msgs []rpcMessage, id int) *rpcMessage {
	for i := range msgs {
		if msgs[i].hasID(id) {
			return &msgs[i]
		}
	}
	return nil
}

func show(msgs []rpcMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "{id:%s result:%.300s error:%s} ", m.ID, m.Result, m.Error)
	}
	return b.String()
}

func (m *rpcMessage) String() string {
	if m == nil {
		return "<none>"
	}
	return show([]rpcMessage{*m})
}

// ---- stdio helpers

type stdioProc struct {
	name  string
	stdin io.WriteCloser
	lines chan string
}

// startStdio spawns a stdio target in its own process group; the test's cleanup kills
// the group and waits for it.
func startStdio(t *testing.T, tgt Target, label string) *stdioProc {
	t.Helper()
	argv, dir, err := tgt.Command()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := newTailBuffer(stderrMaxBytes)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %q: %v", argv, err)
	}
	p := &stdioProc{name: tgt.Name + " (" + label + ")", stdin: stdin, lines: make(chan string, 64)}
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		_ = cmd.Wait() // after all reads from stdout, as os/exec requires
		close(exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for range p.lines { // drain so the reader reaches EOF
		}
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("%s: process group %d did not exit", p.name, cmd.Process.Pid)
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", p.name, cmp.Or(stderr.String(), "(empty)"))
		}
	})
	return p
}

func (p *stdioProc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("%s: write: %v", p.name, err)
	}
}

// await returns the first message with the given id, or nil if none arrives in time
// or the process closes stdout.
func (p *stdioProc) await(t *testing.T, id int, timeout time.Duration) *rpcMessage {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return nil
			}
			var m rpcMessage
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%s: non-JSON line on stdout: %q", p.name, line)
			}
			if m.hasID(id) {
				return &m
			}
		case <-timer.C:
			return nil
		}
	}
}
