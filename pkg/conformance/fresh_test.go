package conformance

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// The pool starts nothing before it is asked, hands every process to one
// taker only, keeps size started ahead, and stops what nobody took.
func TestFreshPoolHandsEachProcessOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	target := refTarget(t, "stdio")
	var started atomic.Int32
	var mu sync.Mutex
	var all []*mcpclient.Client
	pool := newFreshPool(ctx, 2, func(ctx context.Context) (*mcpclient.Client, error) {
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
	if n := started.Load(); n != 7 {
		t.Fatalf("%d processes started for 5 takes, want 5 plus the 2 kept ahead", n)
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
