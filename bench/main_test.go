package main

import (
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The counting proxy must forward every request unchanged (body and Host, so
// that a server's own Host/Origin checks see the client's) and count each
// JSON-RPC message by method.
func TestProxyForwardsAndCountsByMethod(t *testing.T) {
	var mu sync.Mutex
	var bodies, hosts []string
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		hosts = append(hosts, r.Host)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer backend.Close()
	p, err := newProxy(backend.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if !strings.HasSuffix(p.url, "/mcp") {
		t.Fatalf("proxy url %q lost the path", p.url)
	}

	send := func(method, host, body string) {
		t.Helper()
		req, err := http.NewRequest(method, p.url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(got), `"result"`) {
			t.Fatalf("%s %s: HTTP %d %s", method, body, resp.StatusCode, got)
		}
	}
	discover := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`
	send("POST", "", discover)
	send("POST", "evil.example", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	send("POST", "", `[{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}]`)
	send("POST", "", `{not json`)
	send("POST", "", `{"jsonrpc":"2.0","id":9,"result":{}}`)
	send("GET", "", "")

	want := map[string]int{
		"server/discover": 1, "tools/list": 2, "notifications/cancelled": 1, "(batch)": 1,
		"(not JSON)": 1, "(a response)": 1, "HTTP GET": 1,
	}
	got := p.take()
	if !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
	if n := total(got); n != 7 {
		t.Errorf("total = %d, want 7 (a batch counts its members, not itself)", n)
	}
	if again := p.take(); len(again) != 0 {
		t.Errorf("take did not reset: %v", again)
	}
	mu.Lock()
	defer mu.Unlock()
	if bodies[0] != discover {
		t.Errorf("body forwarded as %q, want %q", bodies[0], discover)
	}
	if hosts[1] != "evil.example" {
		t.Errorf("Host forwarded as %q, want the client's evil.example", hosts[1])
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
