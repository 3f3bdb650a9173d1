package conformance

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

func TestHTTPMutants(t *testing.T) {
	for _, c := range httpFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// assertShould proves a SHOULD check with a reference-server mutant: it
// passes on the correct server and warns on the mutant.
func assertShould(t *testing.T, c *check.Check) {
	t.Helper()
	if _, ok := refserver.Mutants[c.ID]; !ok {
		t.Fatalf("the reference server has no mutant for %s", c.ID)
	}
	for _, kind := range transportsOf(c) {
		t.Run(kind, func(t *testing.T) {
			_, good := runChecks(t, refTarget(t, kind), 1, c.ID)
			if v := good[c.ID].Verdict; v != check.Passed {
				t.Fatalf("%s on the correct server: %s: %s", c.ID, v, good[c.ID].Outcome.Message)
			}
			_, bad := runChecks(t, refTarget(t, kind, c.ID), 1, c.ID)
			if v := bad[c.ID].Verdict; v != check.Warned || bad[c.ID].Outcome.Message == "" {
				t.Fatalf("%s on its mutant (%s): %s (%s), want warn", c.ID, refserver.Mutants[c.ID], v, bad[c.ID].Outcome.Message)
			}
		})
	}
}

// assertPasses runs info and SHOULD checks that have no mutant on the
// correct reference server.
func assertPasses(t *testing.T, checks ...*check.Check) {
	t.Helper()
	for _, c := range checks {
		for _, kind := range transportsOf(c) {
			_, res := runChecks(t, refTarget(t, kind), 1, c.ID)
			if v := res[c.ID].Verdict; v != check.Passed {
				t.Errorf("%s over %s on the correct server: %s: %s %v", c.ID, kind, v, res[c.ID].Outcome.Message, res[c.ID].Outcome.Details)
			}
		}
	}
}

func TestHTTPLoopback(t *testing.T) {
	for url, want := range map[string]bool{
		"http://127.0.0.1:8080/mcp": true, "http://localhost/mcp": true, "http://[::1]:9/mcp": true,
		"https://api.example/mcp": false, "http://10.0.0.1/mcp": false, "::bad": false,
	} {
		if got := httpIsLoopback(url); got != want {
			t.Errorf("httpIsLoopback(%q) = %v, want %v", url, got, want)
		}
	}
}

// The hand-written request reaches the server with the header byte that
// net/http refuses to send.
func TestHTTPRawTCPPost(t *testing.T) {
	got := make(chan string, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r.Header.Get("X-Test") + "|" + string(b)
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short and stout")
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	status, body, err := httpRawTCPPost(ctx, hs.URL+"/mcp?x=1", [][2]string{{"X-Test", "fine"}}, []byte(`{"a":1}`))
	if err != nil || status != http.StatusTeapot || string(body) != "short and stout" || <-got != `fine|{"a":1}` {
		t.Fatalf("status %d body %q err %v", status, body, err)
	}
	// A control character: Go's own server refuses the request itself.
	status, _, err = httpRawTCPPost(ctx, hs.URL+"/mcp", [][2]string{{"X-Test", "a\x01b"}}, nil)
	if err != nil || status != http.StatusBadRequest {
		t.Fatalf("control character: status %d err %v, want 400", status, err)
	}
}

// The live reader follows an event stream message by message and sees it
// end.
func TestHTTPLive(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\n")
		io.WriteString(w, "data: \"method\":\"a\"}\n\n")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "data: not json\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	defer hs.Close()
	defer close(release)
	tr := httpTestTransport(t, hs.URL)
	ctx := context.Background()
	l, err := httpOpenLive(ctx, tr, []byte(`{}`), http.Header{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	it, ok, ended := l.Next(ctx, 2*time.Second)
	if !ok || ended || it.Msg == nil || it.Msg.Method != "a" || !l.SSE {
		t.Fatalf("first item %+v ok %v ended %v", it, ok, ended)
	}
	if _, ok, _ := l.Next(ctx, 20*time.Millisecond); ok {
		t.Fatal("an item before the server wrote one")
	}
	release <- struct{}{}
	it, _, _ = l.Next(ctx, 2*time.Second)
	if it.Msg != nil || !strings.Contains(it.Anomaly, "invalid JSON") {
		t.Fatalf("want an anomaly, got %+v", it)
	}
	if it, _, _ = l.Next(ctx, 2*time.Second); it.Msg == nil || string(it.Msg.ID) != "1" {
		t.Fatalf("want the response, got %+v", it)
	}
	if _, _, ended := l.Next(ctx, 2*time.Second); !ended || !l.Ended() || l.Comments() != 1 {
		t.Fatalf("ended %v comments %d", ended, l.Comments())
	}
}

func httpTestTransport(t *testing.T, url string) *transport.HTTPTransport {
	t.Helper()
	tr, err := transport.NewHTTP(transport.HTTPConfig{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// HTTP-7's own probes send no removed method; its monitor judges the
// statuses of every error of the run, REM-1's -32601 answers included, and
// finds the mutant's 200 there.
func TestHTTP7MonitorJudgesOtherChecksErrors(t *testing.T) {
	_, alone := runChecks(t, refTarget(t, "http", refserver.MutantRemovedStatus), 1, "HTTP-7")
	if r := alone["HTTP-7"]; r.Verdict != check.Passed {
		t.Fatalf("HTTP-7 alone on %s: %s: %s (its own probes send no removed method)", refserver.MutantRemovedStatus, r.Verdict, r.Outcome.Message)
	}
	_, res := runChecks(t, refTarget(t, "http", refserver.MutantRemovedStatus), 1, "HTTP-7", "REM-1")
	r := res["HTTP-7"]
	if r.Verdict != check.Failed || r.Watched == nil || r.Watched.Offending == 0 || len(r.Outcome.Evidence) == 0 {
		t.Fatalf("HTTP-7 with REM-1 on %s: %s %+v: %s", refserver.MutantRemovedStatus, r.Verdict, r.Watched, r.Outcome.Message)
	}
	if ev := r.Outcome.Evidence[0]; ev.Status != 200 || !strings.Contains(r.Outcome.Message, "error -32601 came with HTTP 200, want 404") {
		t.Fatalf("HTTP-7's monitor should show the 200: %q %+v", r.Outcome.Message, ev)
	}
	_, good := runChecks(t, refTarget(t, "http"), 1, "HTTP-7", "REM-1", "VER-1", "HDR-1")
	if g := good["HTTP-7"]; g.Verdict != check.Passed || g.Watched == nil || g.Watched.Exchanges == 0 || g.Watched.Offending != 0 {
		t.Fatalf("HTTP-7 on the correct server: %s %+v: %s", g.Verdict, g.Watched, g.Outcome.Message)
	}
}
