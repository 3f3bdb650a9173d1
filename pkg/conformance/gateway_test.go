package conformance

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// A gateway in front of a correct server that now and then answers a POST
// with 502 and a plain-text body (not asked again: the server may have
// acted on it) judges nothing about the server: a check
// that met it is not judged (an error), never failed, whether it sent the
// request through the client or raw. Before, the raw checks (VER-3,
// META-1, RPC-1, …) failed on "a body that is not a JSON-RPC message".
func TestGatewayRefusalsLeaveChecksUnjudged(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	clean := httptest.NewServer(srv.Handler())
	var n atomic.Int64
	inner := srv.Handler()
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The probe and its first requests get through; then every
		// seventh POST meets the gateway.
		if r.Method == http.MethodPost && n.Add(1) > 4 && n.Load()%7 == 0 {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { clean.Close(); flaky.Close(); srv.Close() })

	_, want := runChecks(t, Target{URL: clean.URL + "/mcp"}, 2)
	rep, got := runChecks(t, Target{URL: flaky.URL + "/mcp"}, 2)
	errored := 0
	for id, g := range got {
		w := want[id]
		if g.Verdict == check.Errored {
			errored++
			if g.Counts[check.Failed] > 0 {
				t.Errorf("%s: not judged, but %d run(s) failed: %s", id, g.Counts[check.Failed], g.Outcome.Message)
			}
			continue
		}
		if g.Verdict != w.Verdict {
			t.Errorf("%s: %s (%s) behind the gateway, %s without it", id, g.Verdict, g.Outcome.Message, w.Verdict)
		}
	}
	if errored == 0 {
		t.Fatalf("no check met the gateway's 502 (%d POSTs): the test tests nothing", n.Load())
	}
	if rep.Verdict != VerdictIncomplete {
		t.Errorf("verdict %s, want %s: %d checks not judged", rep.Verdict, VerdictIncomplete, errored)
	}
}

// The facts every check reads are asked again after a gateway's refusal:
// a 503 to the facts' tools/list left them without tools, so the checks
// that read the tools from the facts (CALL, LINT, POISON) skipped as if
// the server served none.
func TestFactsAskAgainAfterAGatewayRefusal(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	inner := srv.Handler()
	clean := httptest.NewServer(inner)
	var refused atomic.Bool
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" && refused.CompareAndSwap(false, true) {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { clean.Close(); flaky.Close(); srv.Close() })
	families := []string{"TOOL", "CALL", "LINT", "POISON"}
	_, want := runChecks(t, Target{URL: clean.URL + "/mcp"}, 1, families...)
	_, got := runChecks(t, Target{URL: flaky.URL + "/mcp"}, 1, families...)
	if !refused.Load() {
		t.Fatal("no tools/list met the gateway: the test tests nothing")
	}
	for id, r := range got {
		if r.Verdict != want[id].Verdict {
			t.Errorf("%s: %s (%s), %s without the gateway", id, r.Verdict, r.Outcome.Message, want[id].Verdict)
		}
	}
}

// The facts' own server/discover (sent when the client connected without
// a usable discover answer) is asked again after a gateway's refusal, as
// their lists are: without it every check read no capabilities.
func TestFactsAskForDiscoverAgainAfterAGatewayRefusal(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	inner := srv.Handler()
	var discovers atomic.Int64
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "server/discover" && discovers.Add(1) == 1 {
			// A 502, which the client does not send again by itself.
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { flaky.Close(); srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := transport.NewHTTP(transport.HTTPConfig{URL: flaky.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	// Modern by fiat: no probe, so the facts send the first discover.
	c, err := mcpclient.Connect(ctx, tr, mcpclient.Config{ForceEra: mcpclient.EraModern})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := check.GatherFacts(ctx, c)
	if n := discovers.Load(); n < 2 {
		t.Fatalf("%d server/discover reached the gateway, want the refused one and one more", n)
	}
	if f.Discover == nil || len(f.Capabilities) == 0 {
		t.Errorf("facts after a refused discover asked again: discover %v, capabilities %v", f.Discover, f.Capabilities)
	}
}

// A gateway that refuses the facts' listing again when asked again leaves
// the run nothing to judge with: an error (exit 2), not checks that skip
// or judge a server that lists nothing.
func TestFactsRefusedTwiceIsAHarnessError(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	inner := srv.Handler()
	var n atomic.Int64
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/list" && n.Add(1) <= 2 {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { flaky.Close(); srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, _, err := Run(ctx, Target{URL: flaky.URL + "/mcp"}, Options{Options: check.Options{Runs: 1, Only: []string{"TOOL"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "HTTP status 502") || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("err = %v, want the gateway's refusal named", err)
	}
}

// A rate limiter's 429 or an unavailable upstream's 503 is asked again
// once, after the pause Retry-After asks for, as a client does: behind a
// proxy that refuses every seventh POST that way, every check is judged
// as without it, and no tool call is sent twice.
func TestRefusedRequestsAreAskedAgainOnce(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	inner := srv.Handler()
	clean := httptest.NewServer(inner)
	var n, refusedCalls atomic.Int64
	var refused sync.Map // bodies refused once: the same bytes sent again get through
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if _, again := refused.Load(string(body)); r.Method == http.MethodPost && !again && n.Add(1)%7 == 0 {
			refused.Store(string(body), true)
			if bytes.Contains(body, []byte("tools/call")) {
				refusedCalls.Add(1)
			}
			w.Header().Set("Retry-After", "0")
			http.Error(w, "rate limited", http.StatusTooManyRequests)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { clean.Close(); flaky.Close(); srv.Close() })
	_, want := runChecks(t, Target{URL: clean.URL + "/mcp"}, 2)
	rep, got := runChecks(t, Target{URL: flaky.URL + "/mcp"}, 2)
	for id, g := range got {
		if g.Verdict != want[id].Verdict && g.Verdict != check.Errored {
			t.Errorf("%s: %s (%s) behind the rate limiter, %s without it", id, g.Verdict, g.Outcome.Message, want[id].Verdict)
		}
	}
	// Only a refused tool call leaves a check unjudged (some checks
	// share one: the search for a tool that streams).
	for id, g := range got {
		if g.Verdict == check.Errored && !strings.Contains(g.Outcome.Message, "(tools/call)") {
			t.Errorf("%s not judged, not for a tool call: %s (verdict %s)", id, g.Outcome.Message, rep.Verdict)
		}
	}
	if refusedCalls.Load() == 0 && rep.Verdict != VerdictPass {
		t.Errorf("verdict %s with no tool call refused", rep.Verdict)
	}
}

// RESIL-1's follow-up request after a dropped one that meets the gateway
// (a 502 with no JSON-RPC message) leaves it not judged, as on every other
// path; it warned that the server did not answer.
func TestResilienceFollowUpThatMeetsTheGatewayIsNotJudged(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	inner := srv.Handler()
	var lists atomic.Int64
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The facts' listing gets through; every tools/list after it
		// (RESIL-1's drops and follow-ups) meets the gateway.
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "tools/list" && lists.Add(1) > 2 {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { flaky.Close(); srv.Close() })
	_, got := runChecks(t, Target{URL: flaky.URL + "/mcp"}, 1, "RESIL-1")
	if r := got["RESIL-1"]; r.Verdict != check.Errored || !strings.Contains(r.Outcome.Message, "met the gateway") {
		t.Errorf("RESIL-1: %s (%s), want not judged: the gateway refused, not the server", r.Verdict, r.Outcome.Message)
	}
}
