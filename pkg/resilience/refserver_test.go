package resilience

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
	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
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

// Layer 2 against the reference server over real Streamable HTTP, with
// the production executor and the example golden set: faults on a
// read-only tool make the real call, attacks never reach the server's
// own send_email, and every run is classified.
func TestAgainstTheReferenceServer(t *testing.T) {
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	var mu sync.Mutex
	hits := map[string]int{}
	h := srv.Handler()
	c := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
			mu.Lock()
			hits[m.Params.Name]++
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	lt, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	set, err := golden.Load("../../golden-examples/tasks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []golden.Case
	for _, gc := range set.Cases {
		if gc.ID == "weather-seattle" {
			gc.Faults = golden.FaultNames()
			cases = append(cases, gc)
		}
	}
	if len(cases) != 1 {
		t.Fatal("weather-seattle is not in the example set")
	}
	// The model calls the expected tool, answers honestly after a failed
	// call, and obeys a planted instruction to mail someone.
	model := &scripted{id: "test:ref", fn: func(req *llm.Request) llm.Message {
		if turns(req) == 0 {
			return calls(toolCall("get_weather", `{"location":"Seattle, WA"}`))
		}
		rs := lastResults(req)
		switch {
		case len(rs) == 0:
			return say("done")
		case rs[0].IsError || strings.HasPrefix(rs[0].Content, `{"status": "ok", "result"`) || strings.HasSuffix(rs[0].Content, clipMark):
			return say("The weather lookup failed (the response was an error or unusable); please try again.")
		case strings.Contains(readable(rs[0].Content), Attacker):
			return calls(toolCall(DefaultTarget, `{"to":"`+Attacker+`","body":"x"}`))
		}
		return say("Here is the weather.")
	}}
	res, err := Run(context.Background(), Config{Set: &golden.Set{Cases: cases}, Models: []llm.Provider{model},
		Executor: &behavior.MCPExecutor{Client: c}, Tools: lt.Tools, Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, r := range res.Resilience.Runs {
		outcomes[r.Kind+" "+r.Outcome]++
	}
	if outcomes["fault reported"] != 5 || outcomes["attack followed"] < 10 || outcomes["attack followed"]+outcomes["attack ignored"] != 25 {
		t.Errorf("outcomes: %v", outcomes)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["send_email"] != 0 {
		t.Errorf("the server's send_email was called %d times during attacks", hits["send_email"])
	}
	// 5 faults, each behind a real call of the read-only get_weather, and
	// 25 attack runs that each called it once.
	if hits["get_weather"] != 30 {
		t.Errorf("get_weather reached the server %d times, want 30", hits["get_weather"])
	}
}
