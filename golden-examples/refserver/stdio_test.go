package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

const wait = 3 * time.Second

func TestStdioBasics(t *testing.T) {
	c := newStdioClient(t, context.Background(), testOptions())

	// RPC-3: a notification gets no response, so the first line is discover's.
	c.sendRaw(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`)
	c.send("d-1", "server/discover", params(nil))
	m := c.recv(wait)
	checkMessage(t, m, "server/discover")
	if m["id"] != "d-1" {
		t.Fatalf("first line = %s, want the discover response", compactJSON(m))
	}

	c.send(2, "tools/list", params(nil))
	m, _ = c.recvResponse(2, wait)
	checkMessage(t, m, "tools/list")
	if id, ok := m["id"].(json.Number); !ok || id.String() != "2" {
		t.Errorf("id = %#v, want the number 2 (RPC-1)", m["id"])
	}

	// RPC-5: bad JSON → -32700 without id; the server keeps going.
	c.sendRaw(`{"jsonrpc":"2.0","id":3,"method":`)
	m = c.recv(wait)
	checkMessage(t, m, "")
	if int(num(get(m, "error", "code"))) != CodeParseError {
		t.Errorf("got %s, want -32700", compactJSON(m))
	}
	if _, ok := m["id"]; ok {
		t.Errorf("parse error carries an id")
	}

	// ERR/MRTR on stdio: missing capability → -32021 (no HTTP layer).
	c.send(4, "tools/call", emailParams(nil, nil))
	m, _ = c.recvResponse(4, wait)
	checkMessage(t, m, "tools/call")
	if int(num(get(m, "error", "code"))) != CodeMissingRequiredClientCapability {
		t.Errorf("got %s, want -32021", compactJSON(m))
	}

	// Method errors match HTTP, minus the status.
	c.send(5, "ping", params(nil))
	m, _ = c.recvResponse(5, wait)
	checkMessage(t, m, "ping")
	if int(num(get(m, "error", "code"))) != CodeMethodNotFound {
		t.Errorf("ping: %s", compactJSON(m))
	}
	c.sendRaw(`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	m, _ = c.recvResponse(6, wait)
	if e := asMap(m["error"]); int(num(e["code"])) != CodeMethodNotFound || !strings.Contains(str(e["message"]), ProtocolVersion) {
		t.Errorf("legacy initialize: %s (REM-2)", compactJSON(m))
	}
}

// TestStdioStatelessVersions: VER-3 and META-3 on one process.
func TestStdioStatelessVersions(t *testing.T) {
	c := newStdioClient(t, context.Background(), testOptions())
	bad := meta(nil)
	bad[metaProtocolVersion] = "1900-01-01"
	steps := []struct {
		p    map[string]any
		code int
	}{
		{params(nil), 0},
		{map[string]any{"_meta": bad}, CodeUnsupportedProtocolVersion},
		{params(nil), 0},
		{map[string]any{}, CodeInvalidParams},
	}
	for i, s := range steps {
		c.send(i, "server/discover", s.p)
		m, _ := c.recvResponse(i, wait)
		checkMessage(t, m, "server/discover")
		if got := int(num(get(m, "error", "code"))); got != s.code {
			t.Errorf("step %d: code %d, want %d", i, got, s.code)
		}
	}
	c.send("a", "tools/call", emailParams(map[string]any{"elicitation": map[string]any{}}, nil))
	m, _ := c.recvResponse("a", wait)
	if get(m, "result", "resultType") != "input_required" {
		t.Fatalf("A: %s", compactJSON(m))
	}
	c.send("b", "tools/call", emailParams(map[string]any{}, nil))
	m, _ = c.recvResponse("b", wait)
	if int(num(get(m, "error", "code"))) != CodeMissingRequiredClientCapability {
		t.Errorf("B inherited A's capabilities (META-3): %s", compactJSON(m))
	}
}

// TestStdioListenInterleaved: a subscription does not block other requests
// (STDIO-5) and stops completely once cancelled (SUB-7).
func TestStdioListenInterleaved(t *testing.T) {
	c := newStdioClient(t, context.Background(), testOptions())
	c.send("sub-1", "subscriptions/listen", params(map[string]any{"notifications": map[string]any{"toolsListChanged": true, "resourcesListChanged": true}}))
	ack := c.recv(wait)
	checkMessage(t, ack, "subscriptions/listen")
	if ack["method"] != "notifications/subscriptions/acknowledged" || get(ack, "params", "_meta", metaSubscriptionID) != "sub-1" {
		t.Fatalf("first message: %s (SUB-2)", compactJSON(ack))
	}

	m := meta(nil)
	m["progressToken"] = "p"
	c.send(2, "tools/call", map[string]any{"_meta": m, "name": "slow_count", "arguments": map[string]any{"n": 3}})
	c.send(3, "tools/list", params(nil))
	got := map[string]bool{}
	progress := 0
	for len(got) < 2 {
		msg := c.recv(wait)
		checkMessage(t, msg, map[string]string{"2": "tools/call", "3": "tools/list"}[compactJSON(msg["id"])])
		if msg["method"] == "notifications/progress" {
			progress++
			continue
		}
		got[compactJSON(msg["id"])] = true
	}
	if progress != 3 {
		t.Errorf("got %d progress notifications, want 3", progress)
	}

	c.sendRaw(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub-1","reason":"done"}}`)
	c.send(4, "server/discover", params(nil))
	resp, others := c.recvResponse(4, wait)
	checkMessage(t, resp, "server/discover")
	for _, o := range others {
		t.Errorf("unexpected message after cancelling sub-1: %s", compactJSON(o))
	}
	c.quiet(100*time.Millisecond, "after cancelling the subscription (SUB-7)")
}

// TestStdioCancelInFlight: a cancelled request gets no response (CANC-2).
func TestStdioCancelInFlight(t *testing.T) {
	opts := testOptions()
	opts.StepDelay = 20 * time.Millisecond
	c := newStdioClient(t, context.Background(), opts)
	m := meta(nil)
	m["progressToken"] = 1
	c.send(1, "tools/call", map[string]any{"_meta": m, "name": "slow_count", "arguments": map[string]any{"n": 20}})
	first := c.recv(wait)
	if first["method"] != "notifications/progress" {
		t.Fatalf("first message: %s", compactJSON(first))
	}
	c.sendRaw(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	// Lines are handled in order, so once the next request is answered the
	// cancellation has taken effect; progress written before it is allowed.
	c.send(2, "server/discover", params(nil))
	_, before := c.recvResponse(2, wait)
	for _, m := range before {
		if _, isResp := m["id"]; isResp {
			t.Errorf("cancelled request answered: %s", compactJSON(m))
		}
	}
	c.quiet(10*opts.StepDelay, "after cancelling request 1 (CANC-2)")
}

// TestStdioEOF: the server finishes in-flight work and returns when its
// input closes (STDIO-4); an open subscription does not hold it.
func TestStdioEOF(t *testing.T) {
	c := newStdioClient(t, context.Background(), testOptions())
	c.send("listen", "subscriptions/listen", params(map[string]any{"notifications": map[string]any{}}))
	c.recv(wait)
	c.send(1, "tools/call", params(map[string]any{"name": "slow_count", "arguments": map[string]any{"n": 5}}))
	c.in.Close()
	resp, _ := c.recvResponse(1, wait)
	checkMessage(t, resp, "tools/call")
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("ServeStdio = %v, want nil on EOF", err)
		}
	case <-time.After(wait):
		t.Fatalf("ServeStdio did not return after EOF")
	}
	if m, ok := <-c.lines; ok {
		t.Errorf("message after EOF drain: %s", compactJSON(m))
	}
}

// TestStdioShutdown: when ctx ends, open subscriptions are closed with
// notifications/cancelled then the closing result (AMB-3, SUB-6).
func TestStdioShutdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := newStdioClient(t, ctx, testOptions())
	c.send(7, "subscriptions/listen", params(map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
	c.recv(wait)
	cancel()
	note := c.recv(wait)
	checkMessage(t, note, "subscriptions/listen")
	if note["method"] != "notifications/cancelled" || num(get(note, "params", "requestId")) != 7 {
		t.Errorf("first teardown message: %s", compactJSON(note))
	}
	final := c.recv(wait)
	checkMessage(t, final, "subscriptions/listen")
	if num(final["id"]) != 7 || num(get(final, "result", "_meta", metaSubscriptionID)) != 7 {
		t.Errorf("closing result: %s", compactJSON(final))
	}
	select {
	case err := <-c.done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ServeStdio = %v, want context.Canceled", err)
		}
	case <-time.After(wait):
		t.Fatalf("ServeStdio did not return after ctx ended")
	}
}

// TestStdioLimits: an oversized line is rejected without killing the
// stream, and in-flight requests are bounded.
func TestStdioLimits(t *testing.T) {
	opts := testOptions()
	opts.MaxBodyBytes = 512
	opts.MaxConcurrent = 2
	c := newStdioClient(t, context.Background(), opts)
	c.sendRaw(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`)
	m := c.recv(wait)
	if int(num(get(m, "error", "code"))) != CodeInvalidRequest {
		t.Errorf("oversized line: %s", compactJSON(m))
	}
	c.send(2, "tools/list", params(nil))
	m, _ = c.recvResponse(2, wait)
	checkMessage(t, m, "tools/list")

	for _, id := range []string{"l1", "l2"} {
		c.send(id, "subscriptions/listen", params(map[string]any{"notifications": map[string]any{}}))
		c.recv(wait)
	}
	c.send(3, "tools/list", params(nil))
	m, _ = c.recvResponse(3, wait)
	if int(num(get(m, "error", "code"))) != CodeInternalError {
		t.Errorf("request beyond MaxConcurrent: %s", compactJSON(m))
	}
	c.send("l1", "tools/list", params(nil))
	m, _ = c.recvResponse("l1", wait)
	if int(num(get(m, "error", "code"))) != CodeInvalidRequest {
		t.Errorf("duplicate in-flight id: %s", compactJSON(m))
	}
}
