package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// The pool starts nothing before it is asked, hands every process to one
// taker only, keeps size started ahead (none at size 0, the pool of a run
// whose starts are dear), and stops what nobody took.
func TestFreshPoolHandsEachProcessOnce(t *testing.T) {
	for _, size := range []int{2, 0} {
		t.Run(fmt.Sprintf("ahead=%d", size), func(t *testing.T) { testFreshPool(t, size) })
	}
}

func testFreshPool(t *testing.T, size int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	target := refTarget(t, "stdio")
	var started atomic.Int32
	var mu sync.Mutex
	var all []*mcpclient.Client
	pool := newFreshPool(ctx, size, nil, func(ctx context.Context) (*mcpclient.Client, error) {
		started.Add(1)
		tr, err := target.Open(ctx, true)
		if err != nil {
			return nil, err
		}
		c, err := mcpclient.Connect(ctx, tr, mcpclient.Config{ProbeTimeout: 5 * time.Second})
		if c != nil {
			mu.Lock()
			all = append(all, c)
			mu.Unlock()
		}
		return c, err
	})
	time.Sleep(100 * time.Millisecond)
	if n := started.Load(); n != 0 {
		t.Fatalf("%d processes started before the first take, want 0", n)
	}
	seen := map[int]bool{}
	var taken []*mcpclient.Client
	for range 5 {
		c, err := pool.take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pid := c.Transport().(*transport.StdioTransport).Pid()
		if seen[pid] {
			t.Fatalf("process %d handed out twice", pid)
		}
		seen[pid] = true
		if _, err := c.Do(ctx, "server/discover", nil); err != nil {
			t.Fatalf("a taken process does not answer: %v", err)
		}
		taken = append(taken, c)
	}
	for _, c := range taken {
		c.Close()
	}
	pool.close()
	if n := started.Load(); n != int32(5+size) {
		t.Fatalf("%d processes started for 5 takes, want 5 plus the %d kept ahead", n, size)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range all {
		select {
		case <-c.Transport().(*transport.StdioTransport).Exited():
		case <-time.After(5 * time.Second):
			t.Fatalf("process %d still runs after close", c.Transport().(*transport.StdioTransport).Pid())
		}
	}
}

// The go-sdk server's stream decoder takes every line after RPC-5's
// unparseable one for the rest of that JSON value, so it never answers
// again: RPC-5 fails naming the line, without waiting out the 10 s the
// sentinel may wait for a server that is merely slow.
func TestSilencedServerIsRecognisedWithoutTheTimeout(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a real server, timed; run without -short and -race")
	}
	tg, ok := interop.Lookup("go-sdk-stdio")
	if !ok {
		t.Fatal("no interop target go-sdk-stdio")
	}
	tg.Require(t)
	argv, dir, err := tg.Command()
	if err != nil {
		t.Fatal(err)
	}
	env, _ := transport.ServerEnv(nil, nil, os.LookupEnv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	rep, _, err := Run(ctx, Target{Argv: argv, Dir: dir, Env: env}, Options{Options: check.Options{Runs: 2, Only: []string{"RPC-5"}}, RequestTimeout: 10 * time.Second, ProbeTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	var r *check.Result
	for i := range rep.Checks {
		if rep.Checks[i].ID == "RPC-5" {
			r = &rep.Checks[i]
		}
	}
	if r == nil || r.Verdict != check.Failed {
		t.Fatalf("RPC-5 = %+v, want failed", r)
	}
	if m := r.Outcome.Message; !strings.Contains(m, "the unparseable line") || !strings.Contains(m, "used no CPU") {
		t.Fatalf("RPC-5 says %q, want it to name the line that silenced the server", m)
	}
	if took >= 8*time.Second {
		t.Fatalf("the run took %s: the silent server was waited out (10 s)", took)
	}
}

// Takers that stop waiting leave their starts behind; close still stops
// them and returns (a pool of size 0 starts one for every taker). A taker
// already gone when it asks starts nothing.
func TestFreshPoolClosesWithAbandonedStarts(t *testing.T) {
	for _, size := range []int{0, 1} {
		t.Run(fmt.Sprintf("ahead=%d", size), func(t *testing.T) {
			var started atomic.Int32
			pool := newFreshPool(context.Background(), size, nil, func(ctx context.Context) (*mcpclient.Client, error) {
				started.Add(1)
				time.Sleep(20 * time.Millisecond)
				return nil, context.Canceled
			})
			gone, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := pool.take(gone); err == nil {
				t.Fatal("a taker whose context had ended got a process")
			}
			if n := started.Load(); n > int32(size) {
				t.Fatalf("%d starts for a taker already gone, want at most the %d kept ahead", n, size)
			}
			for range 3 {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
				_, err := pool.take(ctx)
				cancel()
				if err == nil {
					t.Fatal("a taker that gave up got a process")
				}
			}
			time.Sleep(100 * time.Millisecond) // every start has ended and wants to hand over
			closed := make(chan struct{})
			go func() { pool.close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatalf("close hangs with %d starts of takers that gave up", started.Load())
			}
			if size == 0 && started.Load() != 3 {
				t.Fatalf("%d starts for 3 takers that gave up, want 3", started.Load())
			}
		})
	}
}

// Starts that fail in a row stop the pool: the takes after the limit get
// the last failure at once, without a start of their own, takers already
// waiting are woken, and a start that succeeds in between resets the
// count.
func TestFreshPoolStopsStartingAfterFailuresInARow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// ok, fail, fail, ok, fail, fail, fail: the limit is reached on the
	// seventh start only.
	plan := []bool{true, false, false, true, false, false, false}
	var started atomic.Int32
	target := refTarget(t, "stdio")
	pool := newFreshPool(ctx, 0, nil, func(ctx context.Context) (*mcpclient.Client, error) {
		n := int(started.Add(1)) - 1
		if n < len(plan) && plan[n] {
			tr, err := target.Open(ctx, true)
			if err != nil {
				return nil, err
			}
			return mcpclient.Connect(ctx, tr, mcpclient.Config{})
		}
		return nil, fmt.Errorf("start %d: server process exited with code 1 (address in use)", n)
	})
	defer pool.close()
	for i, ok := range plan {
		c, err := pool.take(ctx)
		if ok != (err == nil) {
			t.Fatalf("take %d: %v, want ok=%v", i, err, ok)
		}
		if c != nil {
			c.Close()
		}
	}
	for range 3 {
		_, err := pool.take(ctx)
		if err == nil || !strings.Contains(err.Error(), "3 new processes of the server in a row failed to start or to answer its probe") || !strings.Contains(err.Error(), "start 6: server process exited with code 1") {
			t.Fatalf("a take after the limit: %v, want the pool's stop naming the last failure", err)
		}
	}
	pool.close() // waits for every start under way
	if n := started.Load(); n != int32(len(plan)) {
		t.Fatalf("%d starts, want %d: takes after the limit started processes", n, len(plan))
	}

	// With processes kept ahead, takers wait on starts that are already
	// under way; when the limit is reached nothing more starts, and every
	// waiting taker must still get an answer.
	var failing atomic.Int32
	ahead := newFreshPool(ctx, 2, nil, func(ctx context.Context) (*mcpclient.Client, error) {
		failing.Add(1)
		time.Sleep(20 * time.Millisecond)
		return nil, errors.New("server process exited with code 1")
	})
	defer ahead.close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ahead.take(ctx)
			errs <- err
		}()
	}
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second): // a safety bound: the takes end within 0.1 s
		t.Fatal("takers still wait after the pool stopped starting")
	}
	close(errs)
	for err := range errs {
		if err == nil {
			t.Fatal("a take from a pool whose starts all fail succeeded")
		}
	}
	ahead.close()
	if n := failing.Load(); n > freshFailLimit+2 {
		t.Fatalf("%d starts for a server that never starts, want at most %d (the limit and the two ahead)", n, freshFailLimit+2)
	}
}

// A stdio server that can run only once at a time (its later processes
// find the port or lock of the first taken and exit, or block on it and
// answer nothing) is started a few times more, not once for every check
// run that asks (about ninety; a run took 14-25 s for one that exits after
// 0.3-0.5 s, and two minutes, its deadline, for one that blocks). The
// checks on the run's own process are judged as usual; those that need
// another process say why they could not run.
func TestAServerThatRunsOnlyOnceIsNotStartedAgainAndAgain(t *testing.T) {
	for _, tc := range []struct {
		name, later, says string
	}{
		{"exits", `echo "Error: listen EADDRINUSE: address already in use 127.0.0.1:9000" >&2; sleep 0.3; exit 1`, "EADDRINUSE"},
		{"blocks", `while read -r line; do :; done`, "used no CPU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// mkdir is atomic: only the first process gets the lock.
			script := `echo start >> "$1/starts"; if mkdir "$1/lock" 2>/dev/null; then exec "$0"; fi; ` + tc.later
			target := Target{Argv: []string{"sh", "-c", script, exampleServer, dir}}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			start := time.Now()
			// A short probe wait keeps the blocked processes' idle
			// bound (freshSilence) short too; the legacy side's
			// initialize is waited for in full, the request timeout.
			rep, _, err := Run(ctx, target, Options{ProbeTimeout: time.Second, RequestTimeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			checkFewStarts(t, dir)
			if took > 30*time.Second { // a safety bound: 1-4 s here
				t.Errorf("the run took %s", took)
			}
			stopped := 0
			for _, r := range rep.Checks {
				switch {
				case r.ID == "DISC-1" && r.Verdict != check.Passed:
					t.Errorf("DISC-1 = %s (%s): the run's own process answers", r.Verdict, r.Outcome.Message)
				case r.ID == "LOG-2" && r.Verdict != check.Errored:
					// The emitter search ran on the run's own process,
					// where whether a log is seen depends on the timing:
					// no skip that says no tool sends logs.
					t.Errorf("LOG-2 = %s (%s), want an error", r.Verdict, r.Outcome.Message)
				case r.Verdict == check.Errored && strings.Contains(r.Outcome.Message, "in a row failed to start"):
					stopped++
					if !strings.Contains(r.Outcome.Message, tc.says) {
						t.Errorf("%s says %q, want the last failure (%s)", r.ID, r.Outcome.Message, tc.says)
					}
				}
			}
			if stopped == 0 {
				t.Error("no check says the server could not be started again")
			}
		})
	}
}

// The pool counts a new process silent after its probe only on a request
// the run's own process answered (silentOn), and only three in a row
// without an answer from another process in between break it.
func TestFreshPoolCountsProcessesSilentAfterTheirProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	deaf := Target{Argv: []string{os.Args[0], afterProbeArg, exampleServer}}
	healthy := Target{Argv: []string{exampleServer}}
	var next atomic.Pointer[Target]
	pool := newFreshPool(ctx, 0, nil, func(ctx context.Context) (*mcpclient.Client, error) {
		tr, err := next.Load().Open(ctx, true)
		if err != nil {
			return nil, err
		}
		return mcpclient.Connect(ctx, tr, mcpclient.Config{ProbeTimeout: 5 * time.Second, KnownModern: true})
	})
	defer pool.close()
	pool.setAfterProbe(map[string]time.Duration{"server/discover": 300 * time.Millisecond, "tools/list": 300 * time.Millisecond})
	take := func(tg Target) *mcpclient.Client {
		t.Helper()
		next.Store(&tg)
		c, err := pool.take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// asks each process method; every one of them is silent. The pool's
	// bound ends the wait of those it names (SetFirstIdle); the others
	// wait their deadline, long enough to be a silence.
	silent := func(method string, cs ...*mcpclient.Client) {
		t.Helper()
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(ctx, 2500*time.Millisecond)
				defer cancel()
				start := time.Now()
				if _, err := c.Do(ctx, method, nil); err == nil {
					t.Errorf("%s was answered by a process that answers only its probe", method)
				}
				if d := time.Since(start); method != "resources/read" && d > 2*time.Second {
					t.Errorf("%s waited %s on an idle new process, want the pool's bound (300ms)", method, d)
				}
			})
		}
		wg.Wait()
	}
	silent("tools/list", take(deaf))
	silent("resources/read", take(deaf), take(deaf)) // not counted
	// One process asked three times counts once.
	once := take(deaf)
	silent("tools/list", once)
	silent("tools/list", once)
	silent("server/discover", once)
	if err := pool.broken(); err != nil {
		t.Fatalf("the pool broke on two silent processes, one of them asked three times: %v", err)
	}
	// A request sent while another waits may be queued behind it: it
	// waits its deadline, and its silence does not count.
	var queued sync.WaitGroup
	for _, c := range []*mcpclient.Client{take(deaf), take(deaf), take(deaf)} {
		queued.Go(func() {
			// A request the pool counts, with a wait of its own, ended
			// before its deadline: it says nothing either way.
			actx, acancel := context.WithCancel(transport.WithIdleSilence(ctx, time.Hour))
			ahead := make(chan struct{})
			go func() {
				defer close(ahead)
				_, _ = c.Do(actx, "server/discover", nil)
			}()
			for c.Transport().(*transport.StdioTransport).Waiting() == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			qctx, qcancel := context.WithTimeout(ctx, 2500*time.Millisecond)
			defer qcancel()
			start := time.Now()
			_, err := c.Do(qctx, "tools/list", nil)
			if d := time.Since(start); err == nil || d < 2*time.Second {
				t.Errorf("tools/list queued behind another request: %v after %s, want no answer by its deadline", err, d)
			}
			acancel()
			<-ahead
		})
	}
	queued.Wait()
	if err := pool.broken(); err != nil {
		t.Fatalf("the pool broke on processes whose silent request waited behind another: %v", err)
	}
	if _, err := take(healthy).Do(ctx, "server/discover", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := take(healthy).Do(ctx, "server/discover", nil); err != nil {
		t.Fatal(err)
	}
	// A process that answered a request after its probe works, whatever
	// comes later; its answer resets the count.
	two := take(Target{Argv: []string{os.Args[0], afterTwoArg, exampleServer}})
	if _, err := two.Do(ctx, "server/discover", nil); err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 2500*time.Millisecond)
	if _, err := two.Do(tctx, "tools/list", nil); err == nil {
		t.Error("tools/list was answered by a process that answers two lines")
	}
	tcancel()
	silent("tools/list", take(deaf), take(deaf)) // two since the answer
	if err := pool.broken(); err != nil {
		t.Fatalf("the pool broke after two processes silent in a row: %v", err)
	}
	silent("server/discover", take(deaf))
	err := pool.broken()
	if err == nil {
		t.Fatal("the pool still starts processes after three in a row were silent after their probe")
	}
	if _, terr := pool.take(ctx); terr == nil || terr.Error() != err.Error() {
		t.Fatalf("take after the break = %v, want the pool's error", terr)
	}
	for _, want := range []string{"3 new processes of the server in a row answered their probe and then nothing", "may not run twice at once", "server/discover"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the pool's error %q does not say %q", err, want)
		}
	}
}

// A new process's request waits idle at most the longer of the probe's
// bound and three times what the run's own process took, for the
// requests the run's own process answered.
func TestAfterProbeBounds(t *testing.T) {
	f := &check.Facts{
		Capabilities: map[string]json.RawMessage{"tools": nil, "resources": nil},
		TemplatesErr: errors.New("method not found"),
	}
	took := map[string]time.Duration{"tools/list": 4 * time.Second, "resources/list": 10 * time.Millisecond}
	got := afterProbeBounds(f, 5*time.Second, func(m string) time.Duration { return took[m] })
	want := map[string]time.Duration{"server/discover": 5 * time.Second, "tools/list": 12 * time.Second, "resources/list": 5 * time.Second}
	if !maps.Equal(got, want) {
		t.Errorf("afterProbeBounds = %v, want %v (no prompts declared, the templates list failed)", got, want)
	}
}

// Facts.Took, which Run gives afterProbeBounds, is how long the run's own
// process took to answer each list while the facts were read.
func TestFactsTookIsTheSlowestAnswer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := Target{Argv: []string{os.Args[0], slowListArg, exampleServer}}.Open(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mcpclient.Connect(ctx, tr, mcpclient.Config{ProbeTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := check.GatherFacts(ctx, c)
	if d := f.Took("tools/list"); d < 800*time.Millisecond {
		t.Errorf("Took(tools/list) = %s, want at least the 0.8 s the server waits", d)
	}
	if d := f.Took("prompts/list"); d <= 0 || d >= 800*time.Millisecond {
		t.Errorf("Took(prompts/list) = %s, want the quick answer it got", d)
	}
	if d := f.Took("tools/call"); d != 0 {
		t.Errorf("Took(tools/call) = %s, want 0: the facts call no tool", d)
	}
}

// A server whose lists wait on an upstream (a gateway) is not cut short
// on a new process: the bound grows with what the run's own process took.
func TestNewProcessesOfASlowListerAreWaitedFor(t *testing.T) {
	target := Target{Argv: []string{os.Args[0], slowListArg, exampleServer}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 2, Only: []string{"TOOL-2"}}, ProbeTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Checks {
		if r.ID == "TOOL-2" && r.Verdict != check.Passed {
			t.Errorf("TOOL-2 = %s (%s), want a pass: each new process answers tools/list after 0.8 s idle, as the run's own did", r.Verdict, r.Outcome.Message)
		}
	}
}

// A server whose later processes answer their probe and then nothing (a
// lock the first one holds, taken after the probe) is started no more
// once three of them were found silent on a request the run's own process
// answered: before, each check run that asked for a process got one and
// waited out its request timeout on it, and the run its deadline.
func TestNewProcessesSilentAfterTheirProbeAreStartedNoMore(t *testing.T) {
	dir := t.TempDir()
	script := `echo start >> "$1/starts"; if mkdir "$1/lock" 2>/dev/null; then exec "$0"; fi; exec "$2" ` + afterProbeArg + ` "$0"`
	target := Target{Argv: []string{"sh", "-c", script, exampleServer, dir, os.Args[0]}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, _, err := Run(ctx, target, Options{ProbeTimeout: time.Second, RequestTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// A silence is found only when a request's idle bound ends, and until
	// then each check run in flight may have taken a process: the run's
	// own, the legacy side, and at most one for each run in flight (twice
	// the concurrency, for the runs that mostly wait). Before, about fifty.
	checkStarts(t, dir, 2+2*check.DefaultConcurrency)
	said := 0
	for _, r := range rep.Checks {
		switch {
		case r.ID == "DISC-1" && r.Verdict != check.Passed:
			t.Errorf("DISC-1 = %s (%s): the run's own process answers", r.Verdict, r.Outcome.Message)
		case strings.HasPrefix(r.ID, "POISON-") && r.Verdict == check.Errored:
			t.Errorf("%s = %s (%s): it needs no new process", r.ID, r.Verdict, r.Outcome.Message)
		case strings.Contains(r.Outcome.Message, "answered their probe and then nothing"):
			said++
			if r.Verdict != check.Errored || !strings.Contains(r.Outcome.Message, "may not run twice at once") {
				t.Errorf("%s = %s (%s), want an error with the hint", r.ID, r.Verdict, r.Outcome.Message)
			}
		}
	}
	if said == 0 {
		t.Error("no check says that new processes answer their probe and then nothing")
	}
}

// RPC-5, STATE-1 and META-1 judge what a new process does after requests
// of their own only once it has answered one more request: a process that
// answers its probe and then nothing is the run's error, not a server that
// malformed lines silenced (RPC-5's false fail) or that left no baseline
// (STATE-1's false skip), as on a server that cannot run twice at once.
func TestChecksJudgeNoProcessSilentBeforeTheirRequests(t *testing.T) {
	dir := t.TempDir()
	script := `echo start >> "$1/starts"; if mkdir "$1/lock" 2>/dev/null; then exec "$0"; fi; exec "$2" ` + afterProbeArg + ` "$0"`
	target := Target{Argv: []string{"sh", "-c", script, exampleServer, dir, os.Args[0]}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 2, Only: []string{"RPC-5", "STATE-1", "META-1"}}, ProbeTimeout: time.Second, RequestTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Checks {
		if r.Verdict != check.Errored {
			t.Errorf("%s = %s (%s), want an error: no new process answered after its probe", r.ID, r.Verdict, r.Outcome.Message)
		}
	}
}

// The server/discover sent after a malformed line or a notification, to
// see whether the server still answers (RPC-3, RPC-5), and the one that
// makes sure a process handed on still answers, are not cut short at the
// 0.5 s a server that needs no outside work would take at most: a gateway
// whose every server/discover waits 0.8 s on its upstreams, idle, each
// process's probe too, still answers them all. (RPC-3 failed here, "the
// server did not answer server/discover", before the transport's idle
// bound took what the process had taken to answer its probe into account.)
func TestSilenceAfterAProbeWaitsAsLongAsTheServersDiscover(t *testing.T) {
	target := Target{Argv: []string{os.Args[0], gatewayArg, exampleServer}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 1, Only: []string{"STATE-1", "META-1", "REM-2", "RPC-3", "RPC-5"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != 5 {
		t.Fatalf("%d checks in the report, want 5", len(rep.Checks))
	}
	for _, r := range rep.Checks {
		if r.Verdict != check.Passed {
			t.Errorf("%s = %s (%s), want pass", r.ID, r.Verdict, r.Outcome.Message)
		}
	}
}

// The request that makes sure a new process answers waits as long as the
// pool lets a new process's first server/discover wait, not the 0.5 s of
// a process that was already answering: a gateway's server/discover may
// wait on its upstreams, idle all the while.
func TestChecksWaitForAGatewaysSlowDiscover(t *testing.T) {
	target := Target{Argv: []string{os.Args[0], slowDiscoverArg, exampleServer}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 1, Only: []string{"STATE-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Checks {
		if r.Verdict != check.Passed {
			t.Errorf("%s = %s (%s), want pass", r.ID, r.Verdict, r.Outcome.Message)
		}
	}
}

// A new process that never answers the probe but would answer initialize,
// busy all the while (so no idle silence ends its wait), fails its start
// on the probe: the run knows the server is modern, and a legacy session
// there would only give the checks a process that speaks another era.
func TestNewProcessesAreNotTakenForLegacyServers(t *testing.T) {
	dir := t.TempDir()
	script := `echo start >> "$1/starts"; if mkdir "$1/lock" 2>/dev/null; then exec "$0"; fi; exec "$2" ` + busyLegacyArg
	target := Target{Argv: []string{"sh", "-c", script, exampleServer, dir, os.Args[0]}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 2, Only: []string{"DISC-1", "TOOL-2", "STATE-1", "META-1"}}, ProbeTimeout: 300 * time.Millisecond, RequestTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	checkFewStarts(t, dir)
	for _, r := range rep.Checks {
		switch r.ID {
		case "DISC-1":
			if r.Verdict != check.Passed {
				t.Errorf("DISC-1 = %s (%s)", r.Verdict, r.Outcome.Message)
			}
		case "TOOL-2", "STATE-1":
			if r.Verdict != check.Errored || !strings.Contains(r.Outcome.Message, "server/discover") || strings.Contains(r.Outcome.Message, "legacy") {
				t.Errorf("%s = %s (%s), want an error on the probe of a new process, with no legacy session", r.ID, r.Verdict, r.Outcome.Message)
			}
		}
	}
}

// checkFewStarts reads the starts a wrapper counted in dir/starts: the
// run's own process, the legacy side, and the pool's failures in a row
// with those under way beside them (as many as start at once: one per
// core, at least two), no more.
func checkFewStarts(t *testing.T, dir string) {
	t.Helper()
	checkStarts(t, dir, 2+freshFailLimit+max(2, runtime.NumCPU()))
}

// checkStarts checks that the wrapper counted at most most starts in
// dir/starts.
func checkStarts(t *testing.T, dir string, most int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "starts"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "start"); n > most {
		t.Errorf("%d processes started, want at most %d", n, most)
	}
}

// Starts queued for a core when the pool breaks are not made: with a dear
// start every taker asks for one, and they went on, one after another,
// while the run's other checks ran. Their takers get the pool's error.
func TestFreshPoolDropsStartsQueuedWhenItBreaks(t *testing.T) {
	spawn := make(chan struct{}, 2)
	var started atomic.Int32
	pool := newFreshPool(context.Background(), 0, spawn, func(ctx context.Context) (*mcpclient.Client, error) {
		started.Add(1)
		time.Sleep(30 * time.Millisecond)
		return nil, errors.New("server process exited with code 1")
	})
	errs := make(chan error, 20)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := pool.take(context.Background())
			errs <- err
		}()
	}
	wg.Wait()
	time.Sleep(300 * time.Millisecond) // the run goes on; queued starts would be made now
	pool.close()
	close(errs)
	if n := int(started.Load()); n > freshFailLimit+cap(spawn) {
		t.Errorf("%d starts for 20 takers, want at most %d (the limit and those under way beside)", n, freshFailLimit+cap(spawn))
	}
	for err := range errs {
		if err == nil || errors.Is(err, errNoMoreStarts) {
			t.Fatalf("a take got %v, want a failed start or the pool's error", err)
		}
	}
}

// A command that cannot be started is the run's error, with every check
// selected as with one.
func TestRunCannotStartTheCommand(t *testing.T) {
	for _, only := range [][]string{nil, {"DISC-1"}} {
		_, _, err := Run(t.Context(), Target{Argv: []string{filepath.Join(t.TempDir(), "no-such-server")}}, Options{Options: check.Options{Only: only}})
		if err == nil || !strings.Contains(err.Error(), "no-such-server") {
			t.Errorf("--only %v: err = %v, want one that names the command", only, err)
		}
	}
}

func TestStartsAtOnce(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name          string
		cores         int
		took, machine time.Duration
		want          int
	}{
		{"a quick start", 2, 20 * ms, 0, 2},
		{"one core still gets two", 1, 20 * ms, 0, 2},
		{"unknown machine CPU", 2, 1500 * ms, -1, 2},
		{"a Node start, computing", 2, 500 * ms, 600 * ms, 2},
		{"a start that waits, idle", 2, 1500 * ms, 30 * ms, startsMost},
		{"nothing measured at all", 2, 1500 * ms, 0, startsMost},
		{"docker: the daemon computes a little", 2, 800 * ms, 300 * ms, 5},
		{"a busy machine", 2, 800 * ms, 1600 * ms, 2},
		{"many cores", 16, 800 * ms, 100 * ms, 16},
	} {
		if got := startsAtOnce(c.cores, c.took, c.machine); got != c.want {
			t.Errorf("%s: startsAtOnce(%d, %s, %s) = %d, want %d", c.name, c.cores, c.took, c.machine, got, c.want)
		}
	}
}

// A server whose start mostly waits (here a wrapper that sleeps 0.4 s
// before the server runs; docker run -i waits so on its daemon) gets more
// processes starting at once than there are cores when the machine stayed
// idle while the run's own process started and while the next one did, and
// no more than the cores when it was busy during either: each start
// counts, as it ends its wait, how many are waiting beside it.
func TestStartsThatWaitRunBesideEachOther(t *testing.T) {
	cores := max(2, runtime.NumCPU())
	if cores >= startsMost {
		t.Skipf("%d cores: as many starts at once as startsMost already", cores)
	}
	busy := time.Duration(cores) * 10 * time.Second
	for _, c := range []struct {
		name string
		// machine is the machine's busy time at its nth reading: the
		// first two bracket the run's own start.
		machine func(n int64) time.Duration
		most    func(int) bool
		want    string
	}{
		{"idle machine", func(int64) time.Duration { return 0 },
			func(n int) bool { return n > cores }, fmt.Sprintf("more than %d", cores)},
		{"busy machine", func(n int64) time.Duration { return time.Duration(n) * busy },
			func(n int) bool { return n <= cores }, fmt.Sprintf("at most %d", cores)},
		// The first start waited (a download), the next ones compute.
		{"busy once the run's own process is up", func(n int64) time.Duration { return time.Duration(max(0, n-2)) * busy },
			func(n int) bool { return n <= cores }, fmt.Sprintf("at most %d", cores)},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			script := `touch "$1/in.$$"; sleep 0.4; ls "$1" | grep -c '^in\.' >> "$1/counts"; rm -f "$1/in.$$"; exec "$0"`
			target := Target{Argv: []string{"sh", "-c", script, exampleServer, dir}}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var calls atomic.Int64
			machine := func() (time.Duration, bool) { return c.machine(calls.Add(1)), true }
			rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 5, Only: []string{"STDIO-5", "CANC-2"}}, machineCPU: machine})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Checks {
				if r.Verdict != check.Passed {
					t.Errorf("%s = %s (%s), want pass", r.ID, r.Verdict, r.Outcome.Message)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "counts"))
			if err != nil {
				t.Fatal(err)
			}
			most := 0
			for _, f := range strings.Fields(string(b)) {
				n, _ := strconv.Atoi(f)
				most = max(most, n)
			}
			if !c.most(most) {
				t.Errorf("at most %d starts waited at once, want %s (counts %q)", most, c.want, strings.Fields(string(b)))
			}
		})
	}
}

// TestNewProcessesOfAServerWithoutResultTypeAreJudged: a server whose
// results lack resultType answers the probe, but not as a modern server
// does; the run checks it as a modern one, and so must the checks that
// take a new process, instead of counting each start as failed and
// leaving them unjudged.
func TestNewProcessesOfAServerWithoutResultTypeAreJudged(t *testing.T) {
	rep, got := runChecks(t, refTarget(t, "stdio", "RES-1"), 1, "STATE-1", "STDIO-5", "CANC-2", "RES-1")
	if len(rep.Notes) == 0 || !strings.Contains(strings.Join(rep.Notes, "\n"), "checked as a modern server") {
		t.Fatalf("the run's own process was not checked as modern after its probe: notes %q", rep.Notes)
	}
	for _, id := range []string{"STATE-1", "STDIO-5", "CANC-2"} {
		if r := got[id]; r.Verdict == check.Errored || r.Verdict == "" {
			t.Errorf("%s on a server without resultType: %s: %s", id, r.Verdict, r.Outcome.Message)
		}
	}
	if r := got["RES-1"]; r.Verdict != check.Failed {
		t.Errorf("RES-1 on its mutant: %s: %s", r.Verdict, r.Outcome.Message)
	}
}
