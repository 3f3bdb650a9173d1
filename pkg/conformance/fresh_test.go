package conformance

import (
	"context"
	"fmt"
	"os"
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
	pool := newFreshPool(ctx, size, func(ctx context.Context) (*mcpclient.Client, error) {
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
			pool := newFreshPool(context.Background(), size, func(ctx context.Context) (*mcpclient.Client, error) {
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
