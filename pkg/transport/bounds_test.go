package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// A server flooding stdout with noise and notifications makes the harness
// keep the first maxKept of each and one line saying the rest was dropped.
func TestStdioFloodIsBounded(t *testing.T) {
	script := `read l; i=0; while [ $i -lt 3000 ]; do echo "noise $i"; echo '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'; i=$((i+1)); done; echo '{"jsonrpc":"2.0","id":1,"result":{}}'; sleep 30`
	tr := shServer(t, script, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ex, err := tr.RoundTrip(ctx, req(1, "tools/list"))
	if err != nil {
		t.Fatal(err)
	}
	an := tr.Anomalies()
	if len(ex.Notifications) != maxKept || len(an) != maxKept+1 || an[maxKept].Kind != "flood" {
		t.Fatalf("kept %d notifications and %d anomalies (last %+v); want %d and %d with a flood note", len(ex.Notifications), len(an), an[len(an)-1], maxKept, maxKept+1)
	}
	if k := ex.Anomalies[len(ex.Anomalies)-1].Kind; k != "flood" {
		t.Fatalf("the exchange does not say it was flooded: %+v", ex.Anomalies)
	}
}

// An event stream of thousands of notifications before the response keeps
// maxKept of them, still finds the response, and a raw read without a
// final id keeps the responses past the budget.
func TestSSEFloodIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 5000 {
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		}
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", m.ID)
	}))
	defer srv.Close()
	tr, err := NewHTTP(HTTPConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ex, err := tr.RoundTrip(ctx, req(9, "tools/list"))
	if err != nil || string(ex.Response.ID) != "9" {
		t.Fatalf("%v", err)
	}
	if len(ex.HTTP.Events) > maxKept || len(ex.Notifications) > maxKept {
		t.Fatalf("kept %d events and %d notifications, bound %d", len(ex.HTTP.Events), len(ex.Notifications), maxKept)
	}
	m, _ := jsonrpc.NewRequest(jsonrpc.IntID(10), "tools/list", map[string]any{})
	body, _ := m.Encode()
	rr, err := tr.Do(ctx, &RawRequest{Body: body, Header: baseHeader()})
	if err != nil {
		t.Fatal(err)
	}
	last := rr.Messages[len(rr.Messages)-1]
	if last.Kind() != jsonrpc.KindResponse || string(last.ID) != "10" {
		t.Fatalf("a raw read lost the response behind the flood: last message %+v", last)
	}
}

// A body cut short after the status line is the server's doing, not a
// failure to connect.
func TestCutBodyIsNotAConnectError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"res`)
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	}))
	defer srv.Close()
	tr, _ := NewHTTP(HTTPConfig{URL: srv.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := tr.RoundTrip(ctx, req(1, "tools/list"))
	if KindOf(err) != KindStreamBroken || !strings.Contains(err.Error(), "cut its answer short") {
		t.Fatalf("got %v", err)
	}
}
