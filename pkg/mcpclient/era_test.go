package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// These servers answer with the literal shapes the checklist (§2.2) records
// from real SDKs, for the probe outcomes that the real servers in
// interop_test.go do not cover.

type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
	body []map[string]any
}

func (s *seen) record(r *http.Request) map[string]any {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.body = append(s.body, m)
	s.mu.Unlock()
	return m
}

func connectTo(t *testing.T, h http.HandlerFunc, cfg Config) (*Client, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr, err := transport.NewHTTP(transport.HTTPConfig{URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return Connect(ctx, tr, cfg)
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// legacyStateful answers like a 2025-11-25 TypeScript SDK server in stateful
// mode.
func legacyStateful(s *seen) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m := s.record(r)
		switch m["method"] {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-123")
			writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+idOf(m)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"legacy-ts","version":"1.0.0"}}}`)
		case "notifications/initialized":
			w.WriteHeader(202)
		case "tools/list":
			if r.Header.Get("Mcp-Session-Id") != "sess-123" {
				writeJSON(w, 400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Mcp-Session-Id header is required"},"id":null}`)
				return
			}
			writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+idOf(m)+`,"result":{"tools":[{"name":"t1","inputSchema":{"type":"object"}}]}}`)
		default:
			writeJSON(w, 400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`)
		}
	}
}

func idOf(m map[string]any) string {
	b, _ := json.Marshal(m["id"])
	return string(b)
}

func TestProbeLegacyStatefulHTTP(t *testing.T) {
	s := &seen{}
	c, err := connectTo(t, legacyStateful(s), Config{})
	if err != nil {
		t.Fatal(err)
	}
	info := c.Info()
	if info.Era != EraLegacy || info.ProtocolVersion != Legacy1125 || info.SessionID != "sess-123" {
		t.Fatalf("info = era %s version %s session %q", info.Era, info.ProtocolVersion, info.SessionID)
	}
	tools, err := c.ListTools(context.Background())
	if err != nil || len(tools.Tools) != 1 {
		t.Fatalf("legacy tools/list: %v %+v", err, tools)
	}
	last := s.reqs[len(s.reqs)-1]
	if last.Header.Get("MCP-Protocol-Version") != Legacy1125 {
		t.Errorf("legacy request header MCP-Protocol-Version = %q", last.Header.Get("MCP-Protocol-Version"))
	}
	if _, hasMeta := s.body[len(s.body)-1]["params"]; hasMeta {
		t.Errorf("legacy tools/list should carry no modern _meta: %v", s.body[len(s.body)-1])
	}
	// The probe itself was a full modern request.
	first := s.reqs[0]
	if first.Header.Get("Mcp-Method") != "server/discover" || first.Header.Get("MCP-Protocol-Version") != Latest ||
		!strings.Contains(first.Header.Get("Accept"), "text/event-stream") {
		t.Errorf("probe headers = %v", first.Header)
	}
	meta := s.body[0]["params"].(map[string]any)["_meta"].(map[string]any)
	for _, k := range []string{MetaProtocolVersion, MetaClientCapabilities, MetaClientInfo} {
		if _, ok := meta[k]; !ok {
			t.Errorf("probe _meta lacks %s: %v", k, meta)
		}
	}
}

func TestProbeOutcomes(t *testing.T) {
	cases := []struct {
		name    string
		h       http.HandlerFunc
		wantEra Era
		wantErr error
		note    string
	}{
		{
			name: "404 with -32601 is a modern server without discover",
			h: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 404, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`)
			},
			wantEra: EraModern, note: "DISC-1",
		},
		{
			name: "-32022 listing only a legacy version falls back to initialize",
			h: func(w http.ResponseWriter, r *http.Request) {
				var m map[string]any
				_ = json.NewDecoder(r.Body).Decode(&m)
				if m["method"] == "initialize" {
					writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+idOf(m)+`,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`)
					return
				}
				if m["method"] == "notifications/initialized" {
					w.WriteHeader(202)
					return
				}
				writeJSON(w, 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2025-11-25"],"requested":"2026-07-28"}}}`)
			},
			wantEra: EraLegacy, note: "no common modern version",
		},
		{
			name: "406 with an empty body is legacy",
			h: func(w http.ResponseWriter, r *http.Request) {
				var m map[string]any
				_ = json.NewDecoder(r.Body).Decode(&m)
				switch m["method"] {
				case "initialize":
					writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+idOf(m)+`,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}`)
				case "notifications/initialized":
					w.WriteHeader(202)
				default:
					w.WriteHeader(406)
				}
			},
			wantEra: EraLegacy,
		},
		{
			name: "401 with WWW-Authenticate asks for credentials",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://x/.well-known/oauth-protected-resource"`)
				w.WriteHeader(401)
			},
			wantErr: ErrAuthRequired,
		},
		{
			name: "401 with a JSON-RPC error and no WWW-Authenticate is a refused token, not a legacy server",
			h: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 401, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized"}}`)
			},
			wantErr: ErrAuthRequired,
		},
		{
			name: "401 with a plain body",
			h: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "invalid_token", 401)
			},
			wantErr: ErrAuthRequired,
		},
		{
			name: "403 with WWW-Authenticate and a JSON-RPC error",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope"`)
				writeJSON(w, 403, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Forbidden"}}`)
			},
			wantErr: ErrAuthRequired,
		},
		{
			// The TS SDK's DNS-rebinding protection: not about credentials.
			name: "403 with a JSON-RPC error and no WWW-Authenticate is not an auth refusal",
			h: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 403, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Invalid Host header"}}`)
			},
			wantErr: ErrInitializeRejected,
		},
		{
			name: "a redirect is not followed",
			h: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://evil.example/mcp", http.StatusTemporaryRedirect)
			},
			wantErr: transport.ErrRedirect,
		},
		{
			name: "garbage on 200 is not taken for a server at all when initialize fails too",
			h: func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, `<html>hello</html>`)
			},
			wantErr: transport.ErrMalformed,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := connectTo(t, tc.h, Config{})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			info := c.Info()
			if info.Era != tc.wantEra {
				t.Fatalf("era = %s, want %s (probe %+v)", info.Era, tc.wantEra, info.Probe)
			}
			if tc.note != "" && !strings.Contains(strings.Join(info.Notes, "\n"), tc.note) {
				t.Errorf("notes %q lack %q", info.Notes, tc.note)
			}
		})
	}
}

func TestNeverAnsweringServerHitsTheDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	_, err := connectTo(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}, Config{RequestTimeout: 300 * time.Millisecond})
	if !errors.Is(err, transport.ErrTimeout) {
		t.Fatalf("err = %v, want timeout", err)
	}
	if !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("message %q should say what happened", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
}

// A stream that breaks before the final response is re-issued once under a
// new id (streamable-http.mdx; no resumption in 2026-07-28).
func TestBrokenStreamIsReissuedWithNewID(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	h := func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		mu.Lock()
		ids = append(ids, idOf(m))
		n := len(ids)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 2 { // the first re-issue of tools/list after the probe
			io.WriteString(w, ": keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n")
			return // stream ends without a response
		}
		// Multi-line data: a JSON value may span data lines.
		io.WriteString(w, ": ping\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":"+idOf(m)+",\n")
		io.WriteString(w, "data: \"result\":{\"resultType\":\"complete\",\"supportedVersions\":[\"2026-07-28\"],\"capabilities\":{},\"ttlMs\":0,\"cacheScope\":\"public\",\"tools\":[]}}\n\n")
	}
	c, err := connectTo(t, h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(context.Background(), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Reissued || len(ids) != 3 || ids[1] == ids[2] {
		t.Fatalf("reissued=%v ids=%v: want a second request under a new id", resp.Reissued, ids)
	}
	if len(resp.Exchange.Notifications) != 1 || resp.Exchange.HTTP.Comments != 1 {
		t.Fatalf("exchange: %d notifications, %d comments", len(resp.Exchange.Notifications), resp.Exchange.HTTP.Comments)
	}
}
