package refserver

import (
	"context"
	"net/http"
	"testing"
)

// Dual-era mode over stdio: initialize and requests without _meta are
// legacy, a partial _meta is still a malformed modern request, and modern
// requests are served as before.
func TestDualEraStdio(t *testing.T) {
	opts := testOptions()
	opts.DualEra = true
	c := newStdioClient(t, context.Background(), opts)

	c.sendRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	m, _ := c.recvResponse(1, wait)
	if v := str(get(m, "result", "protocolVersion")); v != "2025-06-18" || str(get(m, "result", "serverInfo", "name")) != ServerName {
		t.Fatalf("initialize: %s, want an InitializeResult for 2025-06-18", compactJSON(m))
	}
	c.sendRaw(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.sendRaw(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m, _ = c.recvResponse(2, wait); len(asSlice(get(m, "result", "tools"))) == 0 {
		t.Fatalf("legacy tools/list: %s", compactJSON(m))
	}
	c.sendRaw(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m, _ = c.recvResponse(3, wait); get(m, "result") == nil {
		t.Fatalf("legacy ping: %s", compactJSON(m))
	}
	c.sendRaw(`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}}`)
	if m, _ = c.recvResponse(4, wait); int(num(get(m, "error", "code"))) != CodeMethodNotFound {
		t.Fatalf("server/discover without _meta: %s, want -32601 (legacy has no server/discover)", compactJSON(m))
	}
	c.sendRaw(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	if m, _ = c.recvResponse(5, wait); int(num(get(m, "error", "code"))) != CodeInvalidParams {
		t.Fatalf("tools/list with _meta but no protocolVersion: %s, want -32602", compactJSON(m))
	}
	c.send(6, "server/discover", params(nil))
	m, _ = c.recvResponse(6, wait)
	checkMessage(t, m, "server/discover")
}

// Dual-era mode over HTTP: the header and the body decide the era; GET is
// the legacy stream without a modern header and 405 with one.
func TestDualEraHTTP(t *testing.T) {
	opts := testOptions()
	opts.DualEra = true
	ht := newHTTPTarget(t, opts)
	legacy := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	r := ht.post(t, http.DefaultClient, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`), legacy)
	if r.status != http.StatusOK || str(get(r.last(t), "result", "protocolVersion")) != "2025-11-25" {
		t.Fatalf("legacy initialize: HTTP %d %s", r.status, r.body)
	}
	legacy.Set(headerProtocolVersion, "2025-11-25")
	r = ht.post(t, http.DefaultClient, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), legacy)
	if r.status != http.StatusOK || len(asSlice(get(r.last(t), "result", "tools"))) == 0 {
		t.Fatalf("legacy tools/list: HTTP %d %s", r.status, r.body)
	}
	// A modern body without the header is a modern request: HDR-1.
	r = ht.call(t, 3, "tools/list", params(nil), func(h http.Header) { h.Del(headerProtocolVersion) })
	if r.status != http.StatusBadRequest || int(num(get(r.last(t), "error", "code"))) != CodeHeaderMismatch {
		t.Fatalf("modern body without MCP-Protocol-Version: HTTP %d %s, want 400 -32020", r.status, r.body)
	}
	for _, tc := range []struct {
		version string
		want    int
	}{{"", http.StatusOK}, {ProtocolVersion, http.StatusMethodNotAllowed}} {
		req, _ := http.NewRequest(http.MethodGet, ht.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		if tc.version != "" {
			req.Header.Set(headerProtocolVersion, tc.version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET with MCP-Protocol-Version %q: HTTP %d, want %d (REM-4)", tc.version, resp.StatusCode, tc.want)
		}
	}
}
