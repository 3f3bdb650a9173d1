package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// On stdio, LOG-1, LOG-2 and PROG-1 take turns on at most quietLanes
// processes per repetition, the first of which REM-2's initialize and
// REM-3's legacy notifications open, in that order, before the list walk
// of TOOL-2, RSRC-1 and PROMPT-1 (the reference server rejects
// initialize, so the walk follows on that process). Every
// process is gone when the run returns. Each server process's stdin is
// copied to a file, so the test reads what each process was sent.
func TestStdioChecksShareProcessesPerRepetition(t *testing.T) {
	// Whatever a start costs, a repetition has quietLanes quiet
	// processes at most.
	for _, tc := range []struct {
		name  string
		delay string
		lanes int
	}{{"cheap start", "0", quietLanes}, {"dear start", "0.3", quietLanes}} {
		t.Run(tc.name, func(t *testing.T) { testStdioShares(t, tc.delay, tc.lanes) })
	}
}

func testStdioShares(t *testing.T, delay string, lanes int) {
	dir := t.TempDir()
	target := Target{Argv: []string{"sh", "-c", `sleep "$2"; tee "$1/$$.in" | exec "$0"`, exampleServer, dir, delay}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	only := []string{"LOG-1", "LOG-2", "PROG-1", "TOOL-2", "RSRC-1", "PROMPT-1", "REM-2", "REM-3"}
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 2, Only: only}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Checks {
		if r.Verdict != check.Passed {
			t.Errorf("%s = %s (%s), want pass on the reference server", r.ID, r.Verdict, r.Outcome.Message)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.in"))
	if err != nil {
		t.Fatal(err)
	}
	// The quiet processes' turns: the walk (tools/list right after the
	// probe), PROG-1's calls (token 424242) and LOG-2's (logLevel notice),
	// one of each per repetition, on at most lanes processes per
	// repetition: fewer processes than turns, so some took turns.
	var quiet, turns, walks, rem, remWalks int
	// The run's shared process, which lists first too, is the one sent
	// the most.
	var shared string
	var most int64 = -1
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Size() > most {
			shared, most = f, fi.Size()
		}
	}
	for _, f := range files {
		if pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(f), ".in")); err == nil {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process %d still runs after the run returned (kill 0: %v)", pid, err)
			}
		}
		if f == shared {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		name := filepath.Base(f)
		// The walk is the first request after the probe, or after REM's
		// exchange where it opened the process: initialize, the two
		// legacy notifications and the fence.
		first := 1
		if bytes.Contains(b, []byte(`notifications/roots/list_changed`)) {
			rem++
			first = 5
			if len(lines) < 3 || !bytes.Contains(lines[1], []byte(`"method":"initialize"`)) {
				t.Errorf("%s: REM-3's process did not get REM-2's initialize right after the probe", name)
			}
		}
		n := 0
		if len(lines) > first && bytes.Contains(lines[first], []byte(`"method":"tools/list"`)) {
			walks++
			n++
			if first > 1 {
				remWalks++
			}
			// The whole walk before anything else: prompts/list comes
			// before the first call.
			if w, c := bytes.Index(b, []byte(`"method":"prompts/list"`)), bytes.Index(b, []byte(`"method":"tools/call"`)); w < 0 || (c >= 0 && c < w) {
				t.Errorf("%s: the walk did not list prompts before the first call", name)
			}
		}
		for _, mark := range []string{`"progressToken":424242`, `"io.modelcontextprotocol/logLevel":"notice"`} {
			if bytes.Contains(b, []byte(mark)) {
				n++
			}
		}
		if n > 0 {
			quiet++
			turns += n
		}
	}
	if walks != 2 || turns != 6 || quiet > 2*lanes {
		t.Errorf("%d walks and %d turns (walk, PROG-1, LOG-2) on %d processes, want 2 walks and 6 turns on at most %d (two repetitions of %d lanes)", walks, turns, quiet, 2*lanes, lanes)
	}
	if rem != 2 || remWalks != 2 {
		t.Errorf("%d processes got REM-3's notifications, %d of them then the walk; want one per repetition (2) of each", rem, remWalks)
	}
}

// A start is dear by its wall time or by its CPU: a go-sdk server that
// registers 1,000 tools starts in 0.14 s but uses 0.19 s of CPU.
func TestDearStart(t *testing.T) {
	for _, tc := range []struct {
		kind      string
		took, cpu time.Duration
		dear      bool
	}{
		{"stdio", 20 * time.Millisecond, 20 * time.Millisecond, false},
		{"stdio", 200 * time.Millisecond, 0, true},
		{"stdio", 140 * time.Millisecond, 190 * time.Millisecond, true},
		{"http", time.Second, time.Second, false},
	} {
		if got := dearStart(tc.kind, tc.took, tc.cpu); got != tc.dear {
			t.Errorf("dearStart(%s, %v, %v) = %v, want %v", tc.kind, tc.took, tc.cpu, got, tc.dear)
		}
	}
}

// rpc5Line is RPC-5's unparseable line, as a server process's stdin shows it.
const rpc5Line = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + "\n"

// Where a start is dear, RPC-5 takes the process the checks before it in
// handChain hand on, after STATE-1's and META-1's requests, instead of
// starting one; with a plan that shares nothing it has one of its own.
// Either way it judges the same: a pass on the reference server, a
// failure on the mutant that exits on bad input, and the checks before it
// judge as on their own processes. (Each process starts after 0.3 s: a
// start meant to be cheap may be dear on a loaded machine.)
func TestRPC5TakesTheHandedProcess(t *testing.T) {
	stateMark := []byte(`"sampling":{"context":{},"tools":{}}`)
	for _, args := range [][]string{nil, {"--dual-era"}, {"--break", "RPC-5"}} {
		t.Run(strings.Join(append([]string{"server"}, args...), " "), func(t *testing.T) {
			opts := Options{Options: check.Options{Runs: 2, Only: []string{"STATE-1", "META-1", "RPC-5"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second}
			verdicts := comparePlans(t, opts, nil, func(dir string) Target { return teeTarget(dir, "0.3", args...) }, func(shared bool, _ *Report, dir string) {
				rpc5, after := 0, 0
				for _, f := range teeInputs(t, dir) {
					b := f.in
					at := bytes.Index(b, []byte(rpc5Line))
					if at < 0 {
						continue
					}
					rpc5++
					if st := bytes.Index(b, stateMark); st >= 0 {
						after++
						if st > at {
							t.Errorf("%s: STATE-1's requests came after RPC-5's lines", f.name)
						}
					}
				}
				if rpc5 != 2 {
					t.Errorf("shared %v: %d processes got RPC-5's lines, want one per repetition (2)", shared, rpc5)
				}
				if shared && after == 0 {
					t.Errorf("RPC-5 took no process STATE-1 handed on")
				}
				if !shared && after > 0 {
					t.Errorf("%d processes served STATE-1 and RPC-5 with a plan that shares nothing", after)
				}
			})
			want := "pass"
			if len(args) == 2 {
				want = "fail"
			}
			if !strings.HasPrefix(verdicts["RPC-5"], want) {
				t.Errorf("RPC-5: %s, want %s", verdicts["RPC-5"], want)
			}
		})
	}
}

// teeInput is what one server process of a teeTarget run was sent.
type teeInput struct {
	name string // pid.in
	in   []byte
}

// teeInputs reads what each server process of a teeTarget run in dir was
// sent.
func teeInputs(t *testing.T, dir string) []teeInput {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.in"))
	if err != nil {
		t.Fatal(err)
	}
	var out []teeInput
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, teeInput{filepath.Base(f), b})
	}
	return out
}

// teeTarget runs the reference server with args after a delay of delay
// seconds (a dear start from 0.15), copying each process's stdin to a
// file in dir named after its pid.
func teeTarget(dir, delay string, args ...string) Target {
	return Target{Argv: append([]string{"sh", "-c", `d=$1 s=$2; shift 3; sleep "$s"; tee "$d/$$.in" | exec "$0" "$@"`, exampleServer, dir, delay, "--"}, args...)}
}

// STATE-1 hands its process on to META-1, which follows it, when its
// first requests were server/discover's; with a plan that shares nothing
// each has a process of its own. The verdicts are the same either way, on
// the modern and the dual-era reference server and on the mutants of
// both checks. (At least one hand-over, not one per repetition: a
// repetition whose process was found silent on a loaded machine hands
// nothing on.)
func TestSTATE1HandsItsProcessOnToMETA1(t *testing.T) {
	// STATE-1's complete requests declare every capability (sampling
	// among them); META-1's third variant sends no _meta at all.
	stateMark := []byte(`"sampling":{"context":{},"tools":{}}`)
	metaMark := []byte(`"params":{}`)
	for _, args := range [][]string{nil, {"--dual-era"}, {"--dual-era", "--break", "META-1"}, {"--break", "STATE-1"}} {
		t.Run(strings.Join(append([]string{"server"}, args...), " "), func(t *testing.T) {
			opts := Options{Options: check.Options{Runs: 3, Only: []string{"STATE-1", "META-1"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second}
			verdicts := comparePlans(t, opts, nil, func(dir string) Target { return teeTarget(dir, "0", args...) }, func(shared bool, _ *Report, dir string) {
				both := 0
				for _, f := range teeInputs(t, dir) {
					b := f.in
					st, mt := bytes.Index(b, stateMark), bytes.Index(b, metaMark)
					if st < 0 || mt < 0 {
						continue
					}
					both++
					if mt < st {
						t.Errorf("%s: META-1's requests came before STATE-1's", f.name)
					}
					// The probe, then STATE-1's first request.
					if lines := bytes.SplitN(b, []byte("\n"), 3); len(lines) < 3 || !bytes.Contains(lines[1], []byte(`"method":"server/discover"`)) {
						t.Errorf("%s: handed on after STATE-1 began with another method than server/discover", f.name)
					}
				}
				if shared && both == 0 {
					t.Errorf("no process served both STATE-1 and META-1")
				}
				if !shared && both > 0 {
					t.Errorf("%d processes served both STATE-1 and META-1 with a plan that shares nothing", both)
				}
			})
			if args == nil && (!strings.HasPrefix(verdicts["STATE-1"], "pass") || !strings.HasPrefix(verdicts["META-1"], "pass")) {
				t.Errorf("the reference server: %v, want both to pass", verdicts)
			}
		})
	}
}

// META-1 hands its process on to STDIO-4, which follows it and times that
// process's shutdown instead of starting one; with a plan that shares
// nothing STDIO-4 starts its own. The verdicts are the same either way, on
// the reference server and on STDIO-4's mutant (which ignores EOF).
func TestMETA1HandsItsProcessOnToSTDIO4(t *testing.T) {
	if testing.Short() {
		t.Skip("the mutant waits for the shutdown grace period")
	}
	for _, args := range [][]string{nil, {"--dual-era"}, {"--break", "STDIO-4"}} {
		t.Run(strings.Join(append([]string{"server"}, args...), " "), func(t *testing.T) {
			opts := Options{Options: check.Options{Runs: 1, Only: []string{"META-1", "STDIO-4"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second}
			verdicts := comparePlans(t, opts, nil, func(string) Target { return Target{Argv: append([]string{exampleServer}, args...)} }, func(shared bool, rep *Report, _ string) {
				for _, r := range rep.Checks {
					if r.ID != "STDIO-4" {
						continue
					}
					// The mutant's handed process needed a signal, so it
					// was judged again on a new one.
					handed := strings.Contains(detailsOf(r), "earlier checks handed on")
					if want := shared && len(args) != 2; handed != want {
						t.Errorf("shared %v: STDIO-4 said %q", shared, detailsOf(r))
					}
				}
			})
			want := "pass"
			if len(args) == 2 {
				want = "warn" // a SHOULD
			}
			if !strings.HasPrefix(verdicts["STDIO-4"], want) {
				t.Errorf("STDIO-4: %s, want %s", verdicts["STDIO-4"], want)
			}
		})
	}
}

// The emitter search (progFindEmitters) is made on the first quiet process
// a run opens, after its list walk and before any turn, instead of on a
// process of its own; with a plan that shares nothing it has one. The
// verdicts are the same either way, on the reference server and on the
// mutants of two checks that use what it found.
func TestEmitterSearchOnTheFirstQuietProcess(t *testing.T) {
	const probe = `"progressToken":"mcp-eval-probe-`
	for _, breaks := range [][]string{nil, {"LOG-1"}, {"PROG-1"}} {
		t.Run(strings.Join(append([]string{"server"}, breaks...), " "), func(t *testing.T) {
			opts := Options{Options: check.Options{Runs: 2, Only: []string{"LOG-1", "PROG-1", "CANC-2"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second}
			var traced string // tracedRefTarget's directory of the run
			target := func(string) Target {
				target, dir := tracedRefTarget(t, breaks...)
				traced = dir
				return target
			}
			verdicts := comparePlans(t, opts, nil, target, func(shared bool, _ *Report, _ string) {
				searched := 0
				for pid, in := range startedProcs(t, traced) {
					if !strings.Contains(in, probe) {
						continue
					}
					searched++
					lines := strings.Split(strings.TrimSpace(in), "\n")
					first, last := -1, -1
					for i, l := range lines {
						if strings.Contains(l, probe) {
							last = i
							if first < 0 {
								first = i
							}
						}
					}
					calledAfter, walked := false, false
					for i, l := range lines {
						calledAfter = calledAfter || (i > last && strings.Contains(l, `"tools/call"`))
						walked = walked || (i < first && strings.Contains(l, `"tools/list"`))
					}
					if shared && (!walked || !calledAfter) {
						t.Errorf("process %d: the search came without the walk before it (%v) or the turns after it (%v)", pid, walked, calledAfter)
					}
					if !shared && calledAfter {
						t.Errorf("process %d: with a plan that shares nothing, the search's process served other calls", pid)
					}
				}
				if searched != 1 {
					t.Errorf("shared %v: %d processes got the search's calls, want 1", shared, searched)
				}
			})
			if breaks == nil {
				for _, id := range []string{"LOG-1", "PROG-1", "CANC-2"} {
					if !strings.HasPrefix(verdicts[id], "pass") {
						t.Errorf("the reference server: %s %s, want pass", id, verdicts[id])
					}
				}
			} else if !strings.HasPrefix(verdicts[breaks[0]], "fail") {
				t.Errorf("the %s mutant: %s, want fail", breaks[0], verdicts[breaks[0]])
			}
		})
	}
}

// REM-2 and REM-3's exchange opens each repetition's quiet process, before
// its list walk, instead of a process of its own, where the server rejects
// initialize; where it answers initialize with a result (the REM-2 mutant)
// the walk goes to a new process. With a plan that shares nothing the
// exchange has a process of its own. The verdicts are the same either way,
// on the reference server, its dual-era mode and the REM mutants, for REM
// and for the checks that judge the walk and the turns after it.
func TestREMOpensTheQuietProcess(t *testing.T) {
	initMark := []byte(`"method":"initialize","params":{"_meta"`)
	walkMark := []byte(`"method":"tools/list"`)
	for _, args := range [][]string{nil, {"--dual-era"}, {"--break", "REM-2"}, {"--break", "REM-2.unnamed"}, {"--break", "REM-3"}} {
		t.Run(strings.Join(append([]string{"server"}, args...), " "), func(t *testing.T) {
			answered := len(args) == 2 && args[1] == "REM-2"
			opts := Options{Options: check.Options{Runs: 2, Only: []string{"REM-2", "REM-3", "TOOL-2", "LOG-1"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second}
			verdicts := comparePlans(t, opts, nil, func(dir string) Target { return teeTarget(dir, "0", args...) }, func(shared bool, _ *Report, dir string) {
				inits, walked := 0, 0
				for _, f := range teeInputs(t, dir) {
					b := f.in
					in := bytes.Index(b, initMark)
					if in < 0 {
						continue
					}
					inits++
					// The probe, then initialize: its first request.
					if lines := bytes.SplitN(b, []byte("\n"), 3); len(lines) < 3 || !bytes.Contains(lines[1], initMark) {
						t.Errorf("%s: initialize was not the first request after the probe", f.name)
					}
					if w := bytes.Index(b, walkMark); w > in {
						walked++
					}
				}
				if inits != 2 {
					t.Errorf("shared %v: %d processes got initialize, want one per repetition (2)", shared, inits)
				}
				switch want := shared && !answered; {
				case want && walked == 0:
					t.Errorf("no process carried the exchange, then the walk")
				case !want && walked > 0:
					t.Errorf("%d processes carried the exchange, then the walk (shared %v, initialize answered %v)", walked, shared, answered)
				}
			})
			for _, id := range []string{"TOOL-2", "LOG-1"} {
				if !strings.HasPrefix(verdicts[id], "pass") {
					t.Errorf("%s: %s, want pass", id, verdicts[id])
				}
			}
			if args == nil {
				for _, id := range []string{"REM-2", "REM-3"} {
					if !strings.HasPrefix(verdicts[id], "pass") {
						t.Errorf("the reference server: %s %s, want pass", id, verdicts[id])
					}
				}
			}
			if len(args) == 2 {
				// Each mutant is caught by its check: REM-2.unnamed breaks
				// a SHOULD (a warning).
				id, want := strings.TrimSuffix(args[1], ".unnamed"), "fail"
				if args[1] == "REM-2.unnamed" {
					want = "warn"
				}
				if !strings.HasPrefix(verdicts[id], want) {
					t.Errorf("the %s mutant: %s %s, want %s", args[1], id, verdicts[id], want)
				}
			}
		})
	}
}

// Where RPC-5 is in handChain (a dear start), it hands its process on to
// STDIO-4 only when the server answered after every malformed line, and
// STDIO-4 judges a handed process that needed a signal again on a new one:
// a server whose reader died after the unparseable line, still alive,
// fails RPC-5 and still passes STDIO-4, as on processes of their own. The
// verdicts are the same as with a plan that shares nothing on the
// reference server and the RPC-5 and STDIO-4 mutants too.
func TestRPC5HandsOnToSTDIO4OnlyAProcessThatAnswered(t *testing.T) {
	if testing.Short() {
		t.Skip("the STDIO-4 mutant waits for the shutdown grace period")
	}
	for _, tc := range []struct {
		name     string
		argv     []string
		rpc5, s4 string
	}{
		{"reference server", []string{exampleServer}, "pass", "pass"},
		{"RPC-5 mutant", []string{exampleServer, "--break", "RPC-5"}, "fail", "pass"},
		{"STDIO-4 mutant", []string{exampleServer, "--break", "STDIO-4"}, "pass", "warn"},
		{"reader dead after a bad line", []string{os.Args[0], deafProxyArg, exampleServer}, "fail", "pass"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The dead reader's -32700 keeps the process from being
			// found silent: RPC-5 waits for the request timeout.
			opts := Options{Options: check.Options{Runs: 1, Only: []string{"RPC-5", "STDIO-4"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 3 * time.Second}
			verdicts := comparePlans(t, opts, &quietPlan{share: true, chainRPC5: true}, func(string) Target { return Target{Argv: tc.argv} }, nil)
			if !strings.HasPrefix(verdicts["RPC-5"], tc.rpc5) || !strings.HasPrefix(verdicts["STDIO-4"], tc.s4) {
				t.Errorf("RPC-5 %s, STDIO-4 %s; want %s and %s", verdicts["RPC-5"], verdicts["STDIO-4"], tc.rpc5, tc.s4)
			}
		})
	}
}

// On a server that ignores EOF (STDIO-4's mutant), no check but STDIO-4
// waits for a process it is done with to exit: each is stopped beside the
// checks (CloseAside), and the run's end waits for them all at once. Each
// of RPC-5, CANC-2, STDIO-5, META-1 and REM-2 waited the 2 s grace in
// every run before. STDIO-4 stops a new process beside the handed one when
// that one is not gone within stdio4Doubt, rather than after its grace: it
// took two graces in a row (4.0 s).
func TestChecksDoNotWaitForProcessesToExit(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the shutdown grace period")
	}
	const grace = 2 * time.Second // the stdio transport's
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, _, err := Run(ctx, Target{Argv: []string{exampleServer, "--break", "STDIO-4"}}, Options{Options: check.Options{Runs: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Checks {
		each := time.Duration(r.DurationMs*float64(time.Millisecond)) / time.Duration(max(r.Runs, 1))
		switch {
		case r.ID == "STDIO-4":
			if r.Verdict != check.Warned {
				t.Errorf("STDIO-4 %s (%s), want warn", r.Verdict, detailsOf(r))
			}
			if each >= 2*grace {
				t.Errorf("STDIO-4 took %s: two graces one after the other", each)
			}
		case each >= grace*3/4:
			// Waiting for an exit costs the whole grace; below it, a
			// run is only slow (1.0 s for PROG-1 once, on a machine
			// busy with other tests).
			t.Errorf("%s took %s a run: it waited for a process to exit", r.ID, each)
		}
	}
}

// A handed process that exits on EOF, but only after stdio4Doubt, is what
// STDIO-4 judges; the new process it stopped beside it is left to the
// run's Stops, not waited for (2.0 s for STDIO-4 before, with a shell that
// exits 1.5 s after the server: the doubt, a start, and its 1.5 s again).
func TestSTDIO4DoesNotWaitForTheNewProcessWhenTheHandedOneExits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := Options{Options: check.Options{Runs: 1, Only: []string{"META-1", "STDIO-4"}}}
	rep, _, err := Run(ctx, Target{Argv: []string{"sh", "-c", `"$0"; exec sleep 1.5`, exampleServer}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Checks {
		if r.ID != "STDIO-4" {
			continue
		}
		if r.Verdict != check.Passed || !strings.Contains(r.Outcome.Message, "handed on") {
			t.Errorf("STDIO-4 %s: %s, want a pass on the handed process", r.Verdict, r.Outcome.Message)
		}
		if took := time.Duration(r.DurationMs * float64(time.Millisecond)); took >= 1900*time.Millisecond {
			t.Errorf("STDIO-4 took %s: it waited for the new process too", took)
		}
	}
}

// comparePlans runs target with opts twice, first with a plan that shares
// no process, then with shared (nil: the run's own plan), and reports each
// check whose verdict or counts differ between the two. after, when set,
// is called after each run with whether it shared, its report and the
// directory given to target. It returns the verdicts ("pass map[pass:2]").
func comparePlans(t *testing.T, opts Options, shared *quietPlan, target func(dir string) Target, after func(shared bool, rep *Report, dir string)) map[string]string {
	t.Helper()
	verdicts := map[string]string{}
	for _, sharing := range []bool{false, true} {
		o := opts
		switch {
		case !sharing:
			o.plan = &quietPlan{}
		case shared != nil:
			o.plan = shared
		}
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		rep, _, err := Run(ctx, target(dir), o)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Checks {
			v := fmt.Sprintf("%s %v", r.Verdict, r.Counts)
			if prev, ok := verdicts[r.ID]; ok && prev != v {
				t.Errorf("%s: %s on processes of their own, %s shared (%s)", r.ID, prev, v, detailsOf(r))
			}
			verdicts[r.ID] = v
		}
		if after != nil {
			after(sharing, rep, dir)
		}
	}
	return verdicts
}

// A server that never answers initialize holds REM-2's exchange for the
// request timeout, as on a process of its own, but not the walk and the
// turns of the quiet process it opened: after remQuietWait they go to a
// new process. The verdicts are those of a plan that shares nothing.
func TestREMExchangeThatHangsDoesNotHoldTheWalk(t *testing.T) {
	const timeout = 5 * time.Second
	opts := Options{Options: check.Options{Runs: 1, Only: []string{"REM-2", "TOOL-2", "LOG-1"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: timeout}
	verdicts := comparePlans(t, opts, nil, func(string) Target { return Target{Argv: []string{os.Args[0], dropInitializeArg, exampleServer}} }, func(shared bool, rep *Report, _ string) {
		for _, r := range rep.Checks {
			// A safety bound, not a timing: the walk's checks do not wait
			// for initialize's timeout.
			if (r.ID == "TOOL-2" || r.ID == "LOG-1") && time.Duration(r.DurationMs*float64(time.Millisecond)) >= timeout {
				t.Errorf("shared %v: %s took %v, as long as initialize's timeout", shared, r.ID, time.Duration(r.DurationMs*float64(time.Millisecond)))
			}
		}
	})
	if !strings.HasPrefix(verdicts["REM-2"], "fail") || !strings.HasPrefix(verdicts["TOOL-2"], "pass") || !strings.HasPrefix(verdicts["LOG-1"], "pass") {
		t.Errorf("REM-2 %s, TOOL-2 %s, LOG-1 %s; want a failure and two passes", verdicts["REM-2"], verdicts["TOOL-2"], verdicts["LOG-1"])
	}
}

// startSettling starts sh -c script as a stdio server and waits for its
// first line.
func startSettling(t *testing.T, ctx context.Context, script string) *transport.StdioTransport {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	st, err := transport.StartStdio(ctx, transport.StdioConfig{Argv: []string{"sh", "-c", script}, ShutdownGrace: 100 * time.Millisecond, TermGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for st.LastLine().IsZero() {
		select {
		case <-ctx.Done():
			t.Fatal("no line from the process")
		case <-time.After(time.Millisecond):
		}
	}
	return st
}

// settleNote is a line a stdio server may write at any time.
const settleNote = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`

// A lane's process that still owes an answer (a turn's fence, which
// progObserve stops watching for after its window) is held until the
// answer is out and stdioQuiet has passed after it, however long the
// process had been silent: what the server writes before that answer must
// not reach the next turn. (That a process silent for stdioQuiet and owing
// nothing is handed on without another wait is a matter of speed: the
// bundled server's stdio run in docs/benchmarks.md, session 33.)
func TestSettleWaitsForAnAnswerStillOwed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The answer comes 80 ms after the request, a log line 10 ms before it.
	script := fmt.Sprintf(`echo '%s'; read l; sleep 0.07; echo '%s'; sleep 0.01; echo '{"jsonrpc":"2.0","id":7,"result":{}}'; exec sleep 30`, settleNote, settleNote)
	st := startSettling(t, ctx, script)
	for time.Since(st.LastLine()) < 2*stdioQuiet {
		time.Sleep(5 * time.Millisecond)
	}
	l := &quietLane{}
	if !l.settle(ctx, st) {
		t.Fatal("settle gave up on a quiet process")
	}

	answered := make(chan error, 1)
	go func() {
		m, _ := jsonrpc.NewRequest(jsonrpc.IntID(7), "server/discover", map[string]any{})
		b, _ := m.Encode()
		_, err := st.RoundTrip(ctx, &transport.Outgoing{Body: b, ID: m.ID, Method: "server/discover"})
		answered <- err
	}()
	for st.Waiting() == 0 {
		time.Sleep(time.Millisecond)
	}
	if !l.settle(ctx, st) {
		t.Fatal("settle gave up on a process whose answer came within a second")
	}
	if n := st.Waiting(); n != 0 {
		t.Fatalf("settle returned with %d request(s) still owed an answer", n)
	}
	if since := time.Since(st.LastLine()); since < stdioQuiet {
		t.Fatalf("settle returned %s after the answer, want ≥ %s", since, stdioQuiet)
	}
	if err := <-answered; err != nil {
		t.Fatalf("the request: %v", err)
	}
}

// settle still waits out what the process writes while it settles: it
// returns only once stdioQuiet has passed since the last line it read.
func TestSettleWaitsOutLinesWrittenWhileSettling(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st := startSettling(t, ctx, fmt.Sprintf("echo '%s'; sleep 0.01; echo '%s'; sleep 0.01; echo '%s'; exec sleep 30", settleNote, settleNote, settleNote))
	l := &quietLane{}
	if !l.settle(ctx, st) {
		t.Fatal("settle gave up on a process that went quiet")
	}
	if since := time.Since(st.LastLine()); since < stdioQuiet {
		t.Fatalf("settle returned %s after the process's last line, want ≥ %s", since, stdioQuiet)
	}
}

// A repetition's quiet process is stopped once the last check that can
// use it has returned, not when the run ends: VER-3, which runs alone
// after every other check, finds every process that had a turn or a walk
// gone (the old code stopped them only after VER-3).
func TestQuietProcessesStopWhenTheirRepetitionIsDone(t *testing.T) {
	dir := t.TempDir()
	target := Target{Argv: []string{"sh", "-c", `tee "$1/$$.in" | exec "$0"`, exampleServer, dir}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var alive []string
	checked, quiet := false, 0
	returned := func(c *check.Check, run int) {
		if c != VER3 {
			return
		}
		checked = true
		files, _ := filepath.Glob(filepath.Join(dir, "*.in"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil || !bytes.Contains(b, []byte(`"io.modelcontextprotocol/logLevel":"notice"`)) && !bytes.Contains(b, []byte(`"progressToken":424242`)) {
				continue // not a quiet process: the run's own, the legacy side
			}
			quiet++
			pid, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(f), ".in"))
			// The stop is not waited for where it is asked: give the
			// process the time an exit takes.
			gone := false
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
					gone = true
					break
				}
			}
			if !gone {
				alive = append(alive, filepath.Base(f))
			}
		}
	}
	only := []string{"LOG-1", "LOG-2", "PROG-1", "TOOL-2", "RSRC-1", "PROMPT-1", "REM-2", "REM-3", "VER-3"}
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 2, Only: only, Returned: returned}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Checks {
		if r.Verdict != check.Passed {
			t.Errorf("%s = %s (%s), want pass on the reference server", r.ID, r.Verdict, r.Outcome.Message)
		}
	}
	if !checked || quiet < 2 {
		t.Fatalf("VER-3 returned: %v, after %d quiet processes; want it to, after one per repetition at least", checked, quiet)
	}
	if len(alive) > 0 {
		t.Errorf("quiet processes still running when VER-3, the last check, returned: %v", alive)
	}
}

// What a quiet process writes to stdout on its way out (after its stdin
// closed) is judged in every run, as it is from the processes checks close
// themselves: the run waits for the processes it stopped before it reads
// the monitors. Each process here writes a line that is no JSON-RPC
// message once the server has exited.
func TestQuietProcessesExitBeforeTheMonitorsAreRead(t *testing.T) {
	target := Target{Argv: []string{"sh", "-c", `"$0"; echo bye-from-shutdown`, exampleServer}}
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 2, Only: []string{"STDIO-1", "LOG-1", "LOG-2", "PROG-1"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Checks {
			if r.ID != "STDIO-1" {
				continue
			}
			text := r.Outcome.Message + strings.Join(r.Outcome.Details, "\n")
			if r.Verdict != check.Failed || !strings.Contains(text, "bye-from-shutdown") {
				t.Errorf("run %d: STDIO-1 = %s (%s), want a failure on the line the quiet processes write on their way out", i+1, r.Verdict, text)
			}
		}
	}
}
