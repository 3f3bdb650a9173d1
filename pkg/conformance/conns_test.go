package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// Each repetition walks every list on one connection of its own
// (Env.Lists), kept alive from one page and list to the next. Before, it
// asked for a new connection with every request (Connection: close), and
// a Node server paid about 1.5 ms of CPU for each. The checks that compare
// a list across connections still see a walk on a connection other than
// the run's.
func TestEachRepetitionWalksItsListsOnAConnectionKeptAlive(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	lists, closing := 0, []string{}
	h := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		if strings.HasSuffix(m.Method, "/list") {
			mu.Lock()
			lists++
			if r.Close {
				closing = append(closing, m.Method)
			}
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	only := []string{"PAGE", "TOOL-2", "RSRC-1", "PROMPT-1"}
	rep, _, err := Run(ctx, Target{URL: hs.URL + "/mcp"}, Options{Options: check.Options{Runs: 5, Only: only}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != VerdictPass {
		t.Fatalf("verdict %s on the correct server", rep.Verdict)
	}
	mu.Lock()
	defer mu.Unlock()
	if lists < 5*len(pageAllLists) {
		t.Fatalf("%d list requests in five repetitions of %v, want at least a walk of each list per repetition (%d)", lists, only, 5*len(pageAllLists))
	}
	if len(closing) > 0 {
		t.Errorf("%d of %d list requests asked for their connection to be closed (%v): a repetition's walk opens a new connection per request", len(closing), lists, closing)
	}
}
