package check

import (
	"context"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// A result that only repeated an earlier one's fault (SameAs) stops being
// a repeat when its monitor adds a finding of its own: the summary must not
// count that exchange as the earlier result's fault.
func TestMonitorFindingEndsARepeat(t *testing.T) {
	resp := []byte(`{"jsonrpc":"2.0","id":9,"result":{"ttlMs":-1}}`)
	fail := func(p *Pass) error {
		p.Failf(At(&Evidence{Transport: "stdio", Request: `{"jsonrpc":"2.0","id":9,"method":"server/discover"}`}, resp, "/result/ttlMs"), "bad")
		return nil
	}
	watched := &Check{ID: "A-2", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: fail, Monitor: &Monitor{
		Doc:   "every stray is a fault",
		Watch: func(x *Exchange) (bool, string) { return x.Stray(), "a stray" },
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
	m.Watcher()(transport.Seen{Exchange: &transport.Exchange{Response: &jsonrpc.Message{ID: []byte("77")}}, Transport: "stdio"})
	m.Apply(results)
	if r := results[1]; r.SameAs != "" || r.Watched == nil || r.Watched.Offending != 1 || r.Runs != 2 {
		t.Fatalf("A-2 after its monitor's finding: sameAs %q, watched %+v, %d runs", r.SameAs, r.Watched, r.Runs)
	}
}
