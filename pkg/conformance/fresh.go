package conformance

import (
	"context"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// freshPool hands out stdio processes that were started and probed ahead
// of the checks asking for them, so a check waits for a start only when
// the pool is behind. Each process goes to one check only: a check that
// needs a process of its own gets one no other check has used, and it
// closes it (a process several checks take turns on, quiet.go, is closed
// by the pool when the run ends, as is any a check left open). The pool
// keeps size processes ready or starting; every take starts the next one.
// Nothing starts before the first take, so a run whose checks need no
// fresh process starts none. A pool of size 0 starts a process when it is
// taken, and none ahead.
type freshPool struct {
	ctx    context.Context
	cancel context.CancelFunc
	start  func(context.Context) (*mcpclient.Client, error)
	size   int
	ready  chan freshStart

	once   sync.Once
	mu     sync.Mutex
	closed bool
	taken  []*mcpclient.Client // closed again at close: Close is idempotent
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
	return &freshPool{ctx: pctx, cancel: cancel, start: start, size: size, ready: make(chan freshStart, max(size, 1))}
}

// fill starts one process in the background. ready has room for it
// unless takers gave up waiting (a pool of size 0 starts one for each
// taker, even one that then stops waiting), so a start that finds no
// room waits for a taker or for close, which stops it.
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
		select {
		case p.ready <- freshStart{c, err}:
		case <-p.ctx.Done():
			if c != nil {
				c.Close()
			}
		}
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
	if p.size == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err // no start for a taker that is gone
		}
		p.fill()
	}
	select {
	case r := <-p.ready:
		if p.size > 0 {
			p.fill()
		}
		if r.c != nil {
			p.mu.Lock()
			p.taken = append(p.taken, r.c)
			p.mu.Unlock()
		}
		return r.c, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.ctx.Done():
		return nil, p.ctx.Err()
	}
}

// close stops the processes nobody took, those still starting, and the
// taken ones still running (called when no check runs any more). They are
// stopped together: each may wait out its shutdown grace.
func (p *freshPool) close() {
	p.mu.Lock()
	p.closed = true
	taken := p.taken
	p.taken = nil
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	var stops sync.WaitGroup
	for _, c := range taken {
		stops.Go(func() { c.Close() })
	}
	for {
		select {
		case r := <-p.ready:
			if r.c != nil {
				stops.Go(func() { r.c.Close() })
			}
		default:
			stops.Wait()
			return
		}
	}
}

// handOnKey is the Memo key of the process a check of repetition run
// handed on to check to (handOn).
type handOnKey struct {
	to  string
	run int
}

// handedOn is a process waiting in the Memo for the check it was handed
// to.
type handedOn struct {
	mu    sync.Mutex
	c     *mcpclient.Client
	close func()
}

// handOn gives the check to, which follows p's check (Check.Follows), the
// process c of p's repetition when it is done with it, instead of closing
// it: to then asks its requests on the process p's requests went to, as
// its sequence would go on from p's. Only where the run keeps the order
// (quietPlan.share), and only a process that has neither
// exited nor gone silent; otherwise c is closed. A process nobody takes
// is stopped with the pool when the run ends.
func handOn(p *check.Pass, to string, c *mcpclient.Client, closeFn func()) {
	h := handedOnTo(p, to)
	if h == nil || !quietPlanOf(p.Env.Memo).share || !stdioLive(c) {
		closeFn()
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.c != nil {
		h.close()
	}
	h.c, h.close = c, closeFn
}

// takeHandedOn is the process handed on to p's check in its repetition
// (handOn) if it still runs and answers (handed is true), else a new one
// (Env.Fresh).
func takeHandedOn(p *check.Pass) (c *mcpclient.Client, closeFn func(), handed bool, err error) {
	if h := handedOnTo(p, p.Check.ID); h != nil {
		h.mu.Lock()
		c, closeFn := h.c, h.close
		h.c, h.close = nil, nil
		h.mu.Unlock()
		if c != nil {
			if stdioLive(c) {
				return c, closeFn, true, nil
			}
			closeFn()
		}
	}
	c, closeFn, err = p.Env.Fresh(p.Ctx)
	return c, closeFn, false, err
}

// handedOnTo is the slot of check to in p's repetition (nil without a
// Memo).
func handedOnTo(p *check.Pass, to string) *handedOn {
	if p.Env.Memo == nil {
		return nil
	}
	h, _ := p.Env.Memo.Do(handOnKey{to, p.Run}, func() any { return &handedOn{} }).(*handedOn)
	return h
}

// stdioLive: c is a stdio process that has neither exited nor been found
// silent.
func stdioLive(c *mcpclient.Client) bool {
	st, ok := c.Transport().(*transport.StdioTransport)
	return ok && !stdioGone(st)
}
