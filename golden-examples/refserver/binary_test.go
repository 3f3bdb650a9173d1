package refserver

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildExampleServer compiles cmd/example-server into a temp dir.
func buildExampleServer(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH")
	}
	bin := filepath.Join(t.TempDir(), "example-server")
	out, err := exec.Command(goTool, "build", "-o", bin, "../cmd/example-server").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestExampleServerBinary runs the real binary over both transports.
func TestExampleServerBinary(t *testing.T) {
	bin := buildExampleServer(t)
	t.Run("stdio", func(t *testing.T) { testBinaryStdio(t, bin) })
	t.Run("http", func(t *testing.T) { testBinaryHTTP(t, bin) })
	t.Run("bad flag", func(t *testing.T) {
		err := exec.Command(bin, "--nope").Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Errorf("exit = %v, want status 2", err)
		}
	})
}

func testBinaryStdio(t *testing.T, bin string) {
	cmd := exec.Command(bin)
	stdin, _ := cmd.StdinPipe()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	requests := [][]byte{
		encodeRequest(t, "d", "server/discover", params(nil)),
		encodeRequest(t, 2, "tools/call", params(map[string]any{"name": "get_weather", "arguments": map[string]any{"location": "Paris"}})),
		[]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`),
	}
	for _, r := range requests {
		stdin.Write(append(r, '\n'))
	}
	start := time.Now()
	stdin.Close() // STDIO-4: EOF is the shutdown signal
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\nstderr: %s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("server did not exit after stdin EOF")
	}
	t.Logf("exited %v after EOF", time.Since(start).Round(time.Millisecond))

	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout has %d lines, want 2 (STDIO-1, RPC-3):\n%s", len(lines), stdout.String())
	}
	methods := map[string]string{`"d"`: "server/discover", "2": "tools/call"}
	for _, line := range lines {
		m := decodeObject(t, []byte(line))
		checkMessage(t, m, methods[compactJSON(m["id"])])
	}
}

var listeningLine = regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+/mcp)$`)

func testBinaryHTTP(t *testing.T, bin string) {
	cmd := exec.Command(bin, "--http", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() {
		t.Fatalf("no startup line on stderr")
	}
	match := listeningLine.FindStringSubmatch(sc.Text())
	if match == nil {
		t.Fatalf("startup line = %q", sc.Text())
	}
	go io.Copy(io.Discard, stderr)
	ht := &httpTarget{url: match[1]}

	wantResult(t, ht.call(t, 1, "server/discover", params(nil), nil), "server/discover")
	wantResult(t, ht.call(t, 2, "tools/call", params(map[string]any{"name": "search_invoices", "arguments": map[string]any{"customer_id": "C0042"}}), nil), "tools/call")
	wantError(t, ht.call(t, 3, "tools/list", params(nil), func(h http.Header) { h.Del(headerMethod) }), http.StatusBadRequest, CodeHeaderMismatch, "tools/list")

	// SIGTERM ends open subscriptions gracefully, then the process exits.
	st := ht.openStream(t, context.Background(), "L", "subscriptions/listen", params(map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
	st.next(t, 5*time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	final := st.next(t, 5*time.Second)
	checkMessage(t, final, "subscriptions/listen")
	if get(final, "result", "_meta", metaSubscriptionID) != "L" {
		t.Errorf("closing result: %s", compactJSON(final))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("server did not exit after SIGTERM")
	}
	if stdout.Len() != 0 {
		t.Errorf("HTTP mode wrote to stdout: %q", stdout.String())
	}
}
