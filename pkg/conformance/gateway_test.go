package conformance

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// A gateway in front of a correct server that now and then answers a POST
// with 503 and a plain-text body judges nothing about the server: a check
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
			http.Error(w, "upstream busy", http.StatusServiceUnavailable)
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
		t.Fatalf("no check met the gateway's 503 (%d POSTs): the test tests nothing", n.Load())
	}
	if rep.Verdict != VerdictIncomplete {
		t.Errorf("verdict %s, want %s: %d checks not judged", rep.Verdict, VerdictIncomplete, errored)
	}
}
