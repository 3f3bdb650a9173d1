package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A 429 or 503 with no JSON-RPC body is sent once more, after the pause
// Retry-After asks for; a tool call, a 502 or 504, and an answer that
// carries a JSON-RPC message are not.
func TestRefusalsAreAskedAgainOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header string // Retry-After
		body   string // the refusal's
		call   string // the request
		sends  int64
		ok     bool // the request got the server's answer
	}{
		{"429, then the answer", 429, "0", "slow down", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 2, true},
		{"503, then the answer", 503, "", "upstream busy", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 2, true},
		{"a tool call is not sent twice", 503, "", "upstream busy", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, 1, false},
		{"a 502 is not asked again", 502, "", "bad gateway", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 1, false},
		{"a JSON-RPC error is the server's answer", 503, "", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"busy"}}`, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sends atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if sends.Add(1) == 1 {
					if tc.header != "" {
						w.Header().Set("Retry-After", tc.header)
					}
					w.WriteHeader(tc.status)
					_, _ = w.Write([]byte(tc.body))
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			}))
			defer srv.Close()
			tr, err := NewHTTP(HTTPConfig{URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rr, err := tr.Do(ctx, &RawRequest{Body: []byte(tc.call), Header: http.Header{"Content-Type": {"application/json"}}})
			if got := sends.Load(); got != tc.sends {
				t.Errorf("%d sends, want %d", got, tc.sends)
			}
			if ok := err == nil && rr != nil && len(rr.Messages) == 1; ok != tc.ok {
				t.Errorf("answered %v (err %v), want %v", ok, err, tc.ok)
			}
		})
	}
	if d := retryAfter(http.Header{"Retry-After": {"3600"}}); d != gatewayRetryPauseMax {
		t.Errorf("Retry-After: 3600 waits %s, want the cap %s", d, gatewayRetryPauseMax)
	}
}
