package check

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Checks of one repetition share a plain request; each repetition asks
// again, so a MUST rule still sees one observation per run.
func TestObservationsAreSharedWithinARepetitionOnly(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	h, counts := refserver.Counted(srv.Handler())
	hs := httptest.NewServer(h)
	defer func() { hs.Close(); srv.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, err := transport.NewHTTP(transport.HTTPConfig{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcpclient.Connect(ctx, tr, mcpclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	base := counts()
	env := Env{Client: c, Transport: "http", Observed: NewObservations(ctx)}
	c1 := &Check{ID: "A-1"}
	c2 := &Check{ID: "B-1"}
	var wg sync.WaitGroup
	resps := make([][]*mcpclient.Response, 2)
	for run := 0; run < 2; run++ {
		resps[run] = make([]*mcpclient.Response, 4)
		for i, ck := range []*Check{c1, c2, c1, c2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := NewPass(ctx, ck, env)
				p.Run = run
				resp, err := p.Do("server/discover", nil)
				if err != nil {
					t.Errorf("run %d: %v", run, err)
				}
				resps[run][i] = resp
				if _, err := p.ListTools(); err != nil {
					t.Errorf("run %d: listing tools: %v", run, err)
				}
			}()
		}
	}
	wg.Wait()
	byMethod := counts()
	if got := byMethod["server/discover"] - base["server/discover"]; got != 2 {
		t.Fatalf("server/discover sent %d times for 2 repetitions of 4 passes, want 2", got)
	}
	if got := byMethod["tools/list"] - base["tools/list"]; got == 0 || got%2 != 0 {
		t.Fatalf("tools/list sent %d times: want one walk per repetition", got)
	}
	for run := range resps {
		for _, r := range resps[run][1:] {
			if r != resps[run][0] {
				t.Fatalf("run %d: passes got different responses", run)
			}
		}
	}
	if resps[0][0] == resps[1][0] {
		t.Fatal("two repetitions shared one response")
	}
	if n := env.Observed.Sent(); n != 4 {
		t.Fatalf("Sent() = %d, want 4 (a discover and a tool walk per repetition)", n)
	}
}
