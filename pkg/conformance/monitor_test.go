package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// LOG-1's own probe is one tools/call; a server that logs on list requests
// without a logLevel is caught by its monitor, which watches the list
// requests every run makes, and the correct server is not.
func TestLOG1MonitorCatchesLogsOnLists(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			_, good := runChecks(t, refTarget(t, kind), 1, "LOG-1")
			g := good["LOG-1"]
			if g.Verdict != check.Passed || g.Watched == nil || g.Watched.Exchanges == 0 || g.Watched.Offending != 0 {
				t.Fatalf("LOG-1 on the correct server: %s %+v: %s", g.Verdict, g.Watched, g.Outcome.Message)
			}
			_, bad := runChecks(t, refTarget(t, kind, refserver.MutantListLogs), 1, "LOG-1")
			b := bad["LOG-1"]
			if b.Verdict != check.Failed || b.Watched == nil || b.Watched.Offending == 0 {
				t.Fatalf("LOG-1 on %s: %s %+v: %s", refserver.MutantListLogs, b.Verdict, b.Watched, b.Outcome.Message)
			}
			if !strings.Contains(b.Outcome.Message, "/list without a logLevel got") || len(b.Outcome.Evidence) == 0 || !strings.Contains(b.Outcome.Evidence[0].Request, "/list") {
				t.Fatalf("LOG-1 should name the list request and show it: %q %+v", b.Outcome.Message, b.Outcome.Evidence)
			}
			// The monitor's evidence points into the log message itself.
			if ev := b.Outcome.Evidence[0]; ev.In != "notification notifications/message" || ev.Pointer != "/method" || ev.Value != `"notifications/message"` || !strings.Contains(ev.Message, `"logger":"lists"`) {
				t.Fatalf("LOG-1's monitor evidence does not point into the log message: %+v", ev)
			}
			if b.Passes() >= b.Runs {
				t.Fatalf("the monitor's failure must count against k/N: %d/%d", b.Passes(), b.Runs)
			}
		})
	}
}

// A server that answers every request under another id is reachable and
// non-conformant: the run ends quickly with a report where RPC-1 failed,
// over HTTP (which used to stop at the probe) and over stdio (where every
// request used to wait out its deadline).
func TestWrongIDsAreRPC1NotAnUntestableServer(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			start := time.Now()
			rep, res := runChecks(t, refTarget(t, kind, refserver.MutantWrongID), 2)
			took := time.Since(start)
			r := res["RPC-1"]
			if rep.Verdict != VerdictFail || r.Verdict != check.Failed || len(r.Outcome.Evidence) == 0 {
				t.Fatalf("verdict %s, RPC-1 %s: %s", rep.Verdict, r.Verdict, r.Outcome.Message)
			}
			if ev := r.Outcome.Evidence[0]; !strings.Contains(ev.Response, `"id":1000001`) {
				t.Fatalf("RPC-1's evidence should show the wrong id: %+v", ev)
			}
			// runChecks gives each request 10s; a wait for any deadline
			// would take at least that.
			if took > 8*time.Second {
				t.Fatalf("the run took %s: it waited for a deadline", took)
			}
			for _, c := range rep.Checks {
				if c.ID != "RPC-1" && c.Verdict != check.Skipped {
					t.Fatalf("%s is %s on a server whose answers match no request", c.ID, c.Verdict)
				}
			}
		})
	}
}

// On the correct server every monitor watched exchanges and found none
// offending, over both transports. REM-1 runs for its errors (-32601 on the
// removed methods), which the error monitors judge; every check with a
// monitor is judged.
func TestMonitorsQuietOnTheCorrectServer(t *testing.T) {
	var only []string
	for _, c := range Registry() {
		if c.Monitor != nil {
			only = append(only, c.ID)
		}
	}
	if len(only) < 18 {
		t.Fatalf("only %d checks have a monitor: %v", len(only), only)
	}
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			_, res := runChecks(t, refTarget(t, kind), 1, append(only, "REM-1")...)
			for _, id := range only {
				r, ok := res[id]
				if !ok {
					continue // not a check of this transport
				}
				if r.Watched == nil || r.Watched.Exchanges == 0 || r.Watched.Offending != 0 {
					t.Fatalf("%s: %s, watched %+v: %s", id, r.Verdict, r.Watched, r.Outcome.Message)
				}
			}
		})
	}
}
