package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

func TestVERMutants(t *testing.T) {
	for _, c := range verFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// VER-4 (info) passes on the reference server, whose data.supported and
// supportedVersions come from one list.
func TestVER4(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		if r := stateRun(t, refTarget(t, kind), 1, nil, "VER-4")["VER-4"]; r.Verdict != check.Passed {
			t.Errorf("%s: %s: %s", kind, r.Verdict, r.Outcome.Message)
		}
	}
}

func TestErrShape32022(t *testing.T) {
	for raw, n := range map[string]int{
		`{"supported":["2026-07-28"],"requested":"1900-01-01"}`: 0,
		`{"supported":["2026-07-28"],"requested":"2026-07-28"}`: 1,
		`{"supported":"2026-07-28","requested":"1900-01-01"}`:   1,
		`{"supported":["2026-07-28"]}`:                          1,
		`{"requested":"1900-01-01"}`:                            1,
		`null`:                                                  1,
	} {
		if got := errShape32022(json.RawMessage(raw), verUnsupported); len(got) != n {
			t.Errorf("errShape32022(%s) = %q, want %d problems", raw, msgs(got), n)
		}
	}
}

// VER-3 judges the run's own stdio process, after every other check, and
// starts none; when that process has exited, was found silent, or answers
// the supported baseline with an error, it judges a new one (here the
// VER-3 mutant, so only a new process can produce its failure). The
// "erroring" and "alive" cases fail on code that does not fall back or
// always does.
func TestVER3JudgesTheRunsProcessOrANewOne(t *testing.T) {
	for _, state := range []string{"alive", "exited", "silenced", "erroring"} {
		t.Run(state, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			connect := func(target Target, era mcpclient.Era) *mcpclient.Client {
				tr, err := target.Open(ctx, true)
				if err != nil {
					t.Fatal(err)
				}
				c, err := mcpclient.Connect(ctx, tr, mcpclient.Config{ProbeTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second, ForceEra: era})
				if c == nil || (err != nil && era == "") {
					t.Fatalf("connecting: %v", err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
			good := connect(refTarget(t, "stdio"), "")
			facts := check.GatherFacts(ctx, good)
			run := good
			st := run.Transport().(*transport.StdioTransport)
			switch state {
			case "exited":
				run.Close()
				<-st.Exited()
			case "silenced":
				if err := syscall.Kill(st.Pid(), syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { syscall.Kill(st.Pid(), syscall.SIGCONT) })
				// kill returns before the process has stopped: a request
				// written at once was answered now and then (twice in a
				// day of runs). Wait until /proc shows it stopped.
				waitStopped(t, st.Pid())
				// As in a run where an earlier check's request went
				// unanswered: the transport marks the process silent.
				sctx, scancel := context.WithTimeout(ctx, 2500*time.Millisecond)
				_, err := run.Do(sctx, "tools/list", nil)
				scancel()
				if err == nil || st.Silenced() == nil {
					t.Fatalf("a stopped process: %v, silenced %v", err, st.Silenced())
				}
			case "erroring":
				// Answers server/discover, the first method VER-3
				// sends, with -32601.
				run = connect(refTarget(t, "stdio", "DISC-1"), mcpclient.EraModern)
			}
			fresh := 0
			env := check.Env{Client: run, Transport: "stdio", Facts: facts, Fresh: func(context.Context) (*mcpclient.Client, func(), error) {
				fresh++
				c := connect(refTarget(t, "stdio", "VER-3"), "")
				return c, func() { c.Close() }, nil
			}}
			p := check.NewPass(ctx, VER3, env)
			out := p.Outcome(VER3.Run(p))
			if state == "alive" {
				if out.Verdict != check.Passed || fresh != 0 {
					t.Fatalf("VER-3 with the run's process alive: %s after %d new processes: %s, want a pass on the run's own", out.Verdict, fresh, out.Message)
				}
				return
			}
			if out.Verdict != check.Failed || !strings.Contains(out.Message, "the rejection carried over") {
				t.Fatalf("VER-3 with the run's process %s: %s: %s, want the new process's failure", state, out.Verdict, out.Message)
			}
			if fresh != 1 {
				t.Fatalf("%d new processes, want 1", fresh)
			}
		})
	}
}

// waitStopped waits until /proc shows process pid stopped (state T), for
// at most 5 s.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not stopped 5 s after SIGSTOP: %s", pid, b)
		}
		time.Sleep(time.Millisecond)
	}
}
