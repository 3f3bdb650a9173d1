package conformance

import (
	"context"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// freshPool hands out stdio processes that were started and probed ahead
// of the checks asking for them, so a check waits for a start only when
// the pool is behind. Each process goes to one check only: a check that
// needs a process of its own gets one no other check has used, and it
// closes it. The pool keeps size processes ready or starting; every take
// starts the next one. Nothing starts before the first take, so a run
// whose checks need no fresh process starts none.
type freshPool struct {
	ctx    context.Context
	cancel context.CancelFunc
	start  func(context.Context) (*mcpclient.Client, error)
	size   int
	ready  chan freshStart

	once   sync.Once
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

type freshStart struct {
	c   *mcpclient.Client
	err error
}

// newFreshPool keeps size processes started by start ahead. They live on
// ctx (not the taking check's, which may end before the process is
// closed) until close.
func newFreshPool(ctx context.Context, size int, start func(context.Context) (*mcpclient.Client, error)) *freshPool {
	pctx, cancel := context.WithCancel(ctx)
	return &freshPool{ctx: pctx, cancel: cancel, start: start, size: size, ready: make(chan freshStart, size)}
}

// fill starts one process in the background; ready has room for it, as
// at most size are ready or starting.
func (p *freshPool) fill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		c, err := p.start(p.ctx)
		p.ready <- freshStart{c, err}
	}()
}

// take returns a started, probed process no one has used (or the error
// its start ended with) and starts the next one.
func (p *freshPool) take(ctx context.Context) (*mcpclient.Client, error) {
	p.once.Do(func() {
		for range p.size {
			p.fill()
		}
	})
	select {
	case r := <-p.ready:
		p.fill()
		return r.c, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.ctx.Done():
		return nil, p.ctx.Err()
	}
}

// close stops the processes nobody took, and those still starting.
func (p *freshPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	for {
		select {
		case r := <-p.ready:
			if r.c != nil {
				r.c.Close()
			}
		default:
			return
		}
	}
}
