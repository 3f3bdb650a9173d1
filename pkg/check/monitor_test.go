package check

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// A result that only repeated an earlier one's fault (SameAs) stops being
// a repeat when its monitor adds a fault the earlier result does not show,
// and stays one when the monitor saw that same fault.
func TestMonitorFindingEndsARepeat(t *testing.T) {
	request := `{"jsonrpc":"2.0","id":9,"method":"server/discover"}`
	resp := []byte(`{"jsonrpc":"2.0","id":9,"result":{"ttlMs":-1}}`)
	fail := func(p *Pass) error {
		p.Failf(At(&Evidence{Transport: "stdio", Request: request}, resp, "/result/ttlMs"), "bad")
		return nil
	}
	var answer jsonrpc.Message
	if err := json.Unmarshal(resp, &answer); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		seen   transport.Seen
		sameAs string
	}{
		{"another fault", transport.Seen{Exchange: &transport.Exchange{Response: &jsonrpc.Message{ID: []byte("77")}}, Transport: "stdio"}, ""},
		{"the same fault", transport.Seen{Out: &transport.Outgoing{Body: []byte(request)}, Exchange: &transport.Exchange{Response: &answer}, Transport: "stdio"}, "A-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			watched := &Check{ID: "A-2", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: fail, Monitor: &Monitor{
				Doc:    "every exchange is a fault",
				Watch:  func(x *Exchange) (bool, string) { return true, "a fault" },
				Locate: func(x *Exchange) (string, bool) { return "/result/ttlMs", false },
			}}
			reg := Registry{Families: []Family{{ID: "A", Title: "a"}}, Checks: []*Check{
				{ID: "A-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: fail},
				watched,
			}}
			results, err := Execute(context.Background(), reg, Env{Transport: "stdio"}, Options{Runs: 1})
			if err != nil {
				t.Fatal(err)
			}
			if results[1].SameAs != "A-1" {
				t.Fatalf("A-2 sameAs %q before the monitor, want A-1", results[1].SameAs)
			}
			m := NewMonitors(reg, "stdio", nil)
			m.Watcher()(tc.seen)
			m.Apply(results)
			if r := results[1]; r.SameAs != tc.sameAs || r.Watched == nil || r.Watched.Offending != 1 || r.Runs != 2 {
				t.Fatalf("A-2 after its monitor's finding: sameAs %q (want %q), watched %+v, %d runs", r.SameAs, tc.sameAs, r.Watched, r.Runs)
			}
		})
	}
}

// A line a connection's server wrote while its initialize was in flight is
// the legacy era's (a legacy server may ping right after its initialize
// answer, before the caller reports the exchange): it is dropped with the
// connection. The same line on a modern connection is judged, with the
// connection's next exchange or when the results are folded.
func TestMonitorLinesWaitForTheirConnectionsEra(t *testing.T) {
	reg := Registry{Families: []Family{{ID: "A", Title: "a"}}, Checks: []*Check{{
		ID: "A-1", Level: Must, Transports: Both, Spec: "s", Doc: "d",
		Run: func(p *Pass) error { return nil },
		Monitor: &Monitor{Doc: "no request line", Watch: func(x *Exchange) (bool, string) {
			if x.Line != nil {
				return true, "a request line"
			}
			return x.Response() != nil, ""
		}},
	}}}
	line := transport.Seen{Line: &transport.Anomaly{Kind: "server-request", Excerpt: `{"id":1,"method":"ping"}`}, Transport: "stdio"}
	answered := func(method string) transport.Seen {
		return transport.Seen{Out: &transport.Outgoing{Method: method, Body: []byte(`{}`)}, Exchange: &transport.Exchange{Response: &jsonrpc.Message{ID: []byte("1"), Result: []byte(`{}`)}}, Transport: "stdio"}
	}
	for _, tc := range []struct {
		name      string
		seen      []transport.Seen
		exchanges int
		offending int
	}{
		{"legacy", []transport.Seen{answered("server/discover"), line, answered("initialize"), answered("tools/list")}, 1, 0},
		{"modern", []transport.Seen{answered("server/discover"), line, answered("tools/list")}, 3, 1},
		{"modern, the line last", []transport.Seen{answered("server/discover"), line}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results, err := Execute(context.Background(), reg, Env{Transport: "stdio"}, Options{Runs: 1})
			if err != nil {
				t.Fatal(err)
			}
			m := NewMonitors(reg, "stdio", nil)
			w := m.Watcher()
			for _, s := range tc.seen {
				w(s)
			}
			m.Apply(results)
			if got := results[0].Watched; got == nil || got.Exchanges != tc.exchanges || got.Offending != tc.offending {
				t.Fatalf("watched %+v, want %d exchanges, %d offending", got, tc.exchanges, tc.offending)
			}
		})
	}
}
