package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// The observer sees every request with its method, name, outcome and the
// trace context it carried, and the span id it reports is the one sent.
func TestObserverSeesEveryRequest(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []Call
		sent  = map[string]string{} // method → traceparent on the wire
	)
	h := func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		mu.Lock()
		sent[m.Method], _ = m.Params.Meta["traceparent"].(string)
		mu.Unlock()
		switch m.Method {
		case "tools/call":
			time.Sleep(20 * time.Millisecond)
			writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"resultType":"complete","content":[]}}`)
		default:
			writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"no"}}`)
		}
	}
	tc := NewTrace()
	cfg := Config{ForceEra: EraModern, Trace: tc, Observer: func(c Call) {
		mu.Lock()
		calls = append(calls, c)
		mu.Unlock()
	}}
	c, err := connectTo(t, h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Do(ctx, "tools/call", map[string]any{"name": "get_weather", "arguments": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, "prompts/list", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("observed %d calls, want 2: %+v", len(calls), calls)
	}
	tool, list := calls[0], calls[1]
	if tool.Method != "tools/call" || tool.Name != "get_weather" || tool.ErrKind != "" || tool.Elapsed < 20*time.Millisecond {
		t.Errorf("tools/call observed as %+v", tool)
	}
	if list.Method != "prompts/list" || list.Name != "" || list.ErrKind != CallRPCError {
		t.Errorf("prompts/list observed as %+v", list)
	}
	for _, c := range calls {
		if c.TraceID != tc.TraceID || len(c.SpanID) != 16 {
			t.Errorf("%s: trace %q span %q, want trace %q and a 16-digit span", c.Method, c.TraceID, c.SpanID, tc.TraceID)
		}
		if want := "00-" + c.TraceID + "-" + c.SpanID + "-01"; sent[c.Method] != want {
			t.Errorf("%s: sent traceparent %q, observer saw %q", c.Method, sent[c.Method], want)
		}
	}
}

func TestObserverSeesTransportFailures(t *testing.T) {
	tr, err := transport.NewHTTP(transport.HTTPConfig{URL: "http://127.0.0.1:1/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	var got []Call
	c := New(tr, Config{ForceEra: EraModern, Observer: func(c Call) { got = append(got, c) }})
	if _, err := c.Do(context.Background(), "tools/list", nil); err == nil {
		t.Fatal("a request to a closed port succeeded")
	}
	if len(got) != 1 || got[0].ErrKind == "" || got[0].ErrKind == CallRPCError || got[0].TraceID != "" {
		t.Fatalf("observed %+v, want one call with a transport error kind and no trace", got)
	}
	if !strings.Contains(got[0].ErrKind, "connect") {
		t.Errorf("error kind %q, want the transport's connect failure", got[0].ErrKind)
	}
}
