package resilience

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// serve runs h over real HTTP and connects our client to it.
func serve(t *testing.T, h http.Handler) *mcpclient.Client {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	tr, err := transport.NewHTTP(transport.HTTPConfig{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mcpclient.Connect(ctx, tr, mcpclient.Config{RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The reference server keeps answering after streams are dropped, both
// on a streaming tool call and on tools/list.
func TestDisconnectReferenceServer(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	c := serve(t, srv.Handler())
	for _, opts := range []DisconnectOptions{{Tool: "slow_count", Args: json.RawMessage(`{"n": 5}`)}, {}} {
		r := CheckDisconnect(context.Background(), c, opts)
		if r.Verdict != check.Passed || r.ID != DisconnectID || r.Level != check.Should || r.Counts[check.Passed] != 1 {
			t.Errorf("%+v: %s %s", opts, r.Verdict, r.Outcome.Message)
		}
	}
}

// wedging wraps a server so that a client leaving mid-request wedges it:
// every later request hangs, as a server holding a lock for a dead stream
// would.
type wedging struct {
	next   http.Handler
	armed  atomic.Bool // set once the client is connected
	wedged atomic.Bool
}

func (w *wedging) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	// Read the body first, as a server does before it works: only then
	// does net/http watch the connection for the client leaving.
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if w.wedged.Load() {
		select { // hang until the client gives up (bounded, for the test's sake)
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
		return
	}
	select {
	case <-time.After(30 * time.Millisecond):
	case <-r.Context().Done():
		w.wedged.Store(w.armed.Load())
		return
	}
	w.next.ServeHTTP(rw, r)
}

func TestDisconnectWedgedServer(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	w := &wedging{next: srv.Handler()}
	c := serve(t, w)
	w.armed.Store(true)
	r := CheckDisconnect(context.Background(), c, DisconnectOptions{Timeout: 300 * time.Millisecond})
	if r.Verdict != check.Warned || !strings.Contains(r.Outcome.Message, "did not answer tools/list") || len(r.Outcome.Evidence) == 0 {
		t.Fatalf("%s: %s (%+v)", r.Verdict, r.Outcome.Message, r.Outcome.Evidence)
	}
	if !w.wedged.Load() {
		t.Error("the check never dropped a request mid-way")
	}
}

// RESIL-1 sits in a Layer 0 report like any check and validates there.
func TestDisconnectResultValidatesInAReport(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	res := CheckDisconnect(context.Background(), serve(t, srv.Handler()), DisconnectOptions{Cuts: 2})
	r := reporttest.Layer0(reporttest.New(), reporttest.Check("DISC-1", check.Must, 5, 5))
	r.Conformance.Checks = append(r.Conformance.Checks, res)
	if _, err := report.Marshal(r); err != nil {
		t.Fatalf("RESIL-1 does not validate in a report: %v", err)
	}
}
