package conformance

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// The quiet processes of a repetition (stdio only): fresh processes that
// the checks needing nothing else in flight take turns on, one turn per
// process at a time, instead of one process each (at most quietLanes per
// repetition). They are the checks that judge
// notifications a stdio stream cannot attribute (LOG-1, LOG-2, PROG-1: a
// log message carries no request id), those that judge lines written
// outside any request of theirs (RPC-3: a response to a notification;
// CANC-2: a message for a request it has cancelled), and the list walk
// that TOOL-2, RSRC-1 and PROMPT-1 compare across processes (freshList).
//
// Why sharing cannot disturb them:
//   - The list walk is the first thing asked of the first process opened,
//     so it is still a walk on a new process.
//   - A turn holds the process alone: no other request is in flight while a
//     turn watches, so every notification it sees came from its own
//     requests or from an earlier turn's.
//   - An earlier turn's notification cannot reach a later turn's watch:
//     each observation ends with a fence (progObserve: a request written
//     after the observed one, answered only once the server has written
//     what it wrote before it), and each turn ends by waiting until the
//     process has written nothing for stdioQuiet, as a check with a process
//     of its own stops watching after the same fence and quiet. What a
//     server sends even later than that for a request it has answered
//     breaks the rules those checks judge anyway (no log or progress after
//     the final response, nothing after a cancellation); a process that
//     keeps writing for a second after a turn is not shared any further.
//     Only one line written alone, after 30 ms of silence, can reach the
//     next turn, and that check may then report it.
//   - The requests of these checks are plain requests with complete _meta
//     (no malformed input, no version or capability variants, no
//     initialize), one cancellation of a request of the turn's own
//     (CANC-2), an invalid cancellation and an unknown notification
//     (RPC-3): nothing a turn sends changes what a conformant server
//     answers the next (a cancellation ends that request only; a
//     notification the server cannot act on is ignored). (A server that
//     keeps the logLevel of an earlier request and logs for a later one
//     without it breaks LOG-1's rule; on a shared process LOG-1 may see
//     it, in the repetitions where LOG-2's turn came first, and is then
//     flaky with its counts.)
//   - A process that exited or stopped answering during a turn is not
//     handed to the next turn: it is closed and the next turn gets a new
//     one, so one turn's crash is not reported by another check.
//
// Each repetition has its own quiet processes (the key holds the run):
// MUST checks still observe anew in each repetition. A repetition has at
// most quietLanesFor of them at once, each holding one turn at a time. The
// processes outlive their turns; the fresh pool stops them when the run
// ends (freshPool.close), after every check has returned.
type quietKey struct{ run int }

// quietLanes is how many quiet processes a repetition runs turns on at
// once when a start is cheap: one start each instead of one per check,
// and the repetition's turns, which wait on the server more than they
// compute, in two lines rather than one. A server whose start (spawn and
// probe) took quietDearStart or more gets one: there a start costs more
// than the turns gain by running beside each other (a Node server: about
// 0.4 s of wall and 0.7 s of CPU per start on 2 cores, against a Go
// server's 15 ms).
const (
	quietLanes     = 2
	quietDearStart = 150 * time.Millisecond
)

// startCostKey holds, in the run's Memo, how long the run's first start
// took (a time.Duration).
type startCostKey struct{}

// quietLanesFor is how many quiet processes a repetition of this run may
// have at once.
func quietLanesFor(m *check.Memo) int {
	if d, ok := m.Do(startCostKey{}, func() any { return time.Duration(0) }).(time.Duration); ok && d >= quietDearStart {
		return 1
	}
	return quietLanes
}

type quietProc struct {
	// lanes holds the lanes no turn holds; a turn takes one.
	lanes chan *quietLane
	// walkMu is held while the walk is made, on the first process opened.
	walkMu sync.Mutex
	// walks is the list walk of the first process opened, set once; read
	// without a lane, so that TOOL-2 does not wait for a LOG turn.
	walks atomic.Pointer[freshWalks]
}

// quietLane is one process a repetition's turns take in turn (nil until
// a turn needs it, and again once it is of no use).
type quietLane struct{ c *mcpclient.Client }

// quietSettleMax bounds the wait for a process that keeps writing.
const quietSettleMax = time.Second

func quietOf(p *check.Pass) *quietProc {
	if p.Env.Memo == nil {
		return nil
	}
	q, _ := p.Env.Memo.Do(quietKey{run: p.Run}, func() any {
		n := quietLanesFor(p.Env.Memo)
		q := &quietProc{lanes: make(chan *quietLane, n)}
		for range n {
			q.lanes <- &quietLane{}
		}
		return q
	}).(*quietProc)
	return q
}

// quietTurn waits for one of the repetition's quiet processes to be free
// and returns it; done ends the turn and must be called once. On the first
// process opened, the list walk is made first (once per repetition).
func quietTurn(p *check.Pass) (c *mcpclient.Client, done func(), err error) {
	return quietTurnOf(p, false)
}

// quietSpoilingTurn is a turn whose requests could leave a faulty server
// changed (versions it does not support, requests missing _meta fields,
// lines that are not JSON-RPC): when it ends, the process must still
// answer a plain server/discover, or it is closed and the next turn gets a
// new one. A server that keeps what such a request left behind fails the
// turn's own check (VER-3, STATE-1, META-1, RPC-5 judge exactly that); the
// later turns are not judged on it.
func quietSpoilingTurn(p *check.Pass) (c *mcpclient.Client, done func(), err error) {
	return quietTurnOf(p, true)
}

func quietTurnOf(p *check.Pass, spoiling bool) (*mcpclient.Client, func(), error) {
	q := quietOf(p)
	if q == nil {
		return p.Env.Fresh(p.Ctx)
	}
	l, err := q.take(p.Ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := q.open(p, l); err != nil {
		q.lanes <- l
		return nil, nil, err
	}
	return l.c, func() {
		l.end(p.Ctx, spoiling)
		q.lanes <- l
	}, nil
}

func (q *quietProc) take(ctx context.Context) (*quietLane, error) {
	select {
	case l := <-q.lanes:
		return l, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// quietWalks is the list walk made first on the repetition's first quiet
// process, opening it if no turn has yet (nil without a Memo).
func quietWalks(p *check.Pass) *freshWalks {
	q := quietOf(p)
	if q == nil {
		return nil
	}
	if w := q.walks.Load(); w != nil {
		return w
	}
	l, err := q.take(p.Ctx)
	if err != nil {
		return &freshWalks{open: err}
	}
	_ = q.open(p, l) // a failure to open is the walk's open error
	q.lanes <- l
	if w := q.walks.Load(); w != nil {
		return w
	}
	// Another lane's process is making the walk.
	q.walkMu.Lock()
	defer q.walkMu.Unlock()
	return q.walks.Load()
}

// open makes sure l has a live process; called by the turn holding l.
func (q *quietProc) open(p *check.Pass, l *quietLane) error {
	if l.c != nil {
		return nil
	}
	c, _, err := p.Env.Fresh(p.Ctx)
	q.walkMu.Lock()
	defer q.walkMu.Unlock()
	if err != nil {
		if q.walks.Load() == nil {
			q.walks.Store(&freshWalks{open: err})
		}
		return err
	}
	// Not closed here: the pool stops it at the end of the run, or end
	// closes it once it is of no use.
	l.c = c
	if q.walks.Load() == nil {
		w := &freshWalks{lists: map[string]freshWalk{}}
		for _, li := range pageLists(p.Env.Facts) {
			lr, err := c.List(p.Ctx, li.method, li.key)
			w.lists[li.method] = freshWalk{lr, err}
		}
		q.walks.Store(w)
		l.end(p.Ctx, false)
	}
	return nil
}

// end lets what the turn's requests caused come out before the next turn
// watches, and drops a process that died, went silent or (after a
// spoiling turn) no longer answers a plain request; called by the turn
// holding l.
func (l *quietLane) end(ctx context.Context, spoiling bool) {
	if l.c == nil {
		return
	}
	st, ok := l.c.Transport().(*transport.StdioTransport)
	if !ok {
		return
	}
	if !l.settle(ctx, st) {
		l.c.Close()
		l.c = nil
		return
	}
	if spoiling && !quietAnswers(ctx, l.c) {
		l.c.Close()
		l.c = nil
	}
}

// settle waits until the process has written nothing for stdioQuiet; it
// is false for a process that is of no use to the next turn.
func (l *quietLane) settle(ctx context.Context, st *transport.StdioTransport) bool {
	if quietDead(st) {
		return false
	}
	tap, stop := st.Tap(512)
	defer stop()
	limit := time.NewTimer(quietSettleMax)
	defer limit.Stop()
	quiet := time.NewTimer(stdioQuiet)
	defer quiet.Stop()
	for {
		select {
		case <-tap:
			// Written after the turn stopped watching: nobody judges it,
			// as nobody would on a process of the turn's own.
			if !quiet.Stop() {
				<-quiet.C
			}
			quiet.Reset(stdioQuiet)
		case <-quiet.C:
			return true
		case <-limit.C:
			// Still writing a second on: not quiet enough to share.
			return false
		case <-st.Exited():
			return false
		case <-ctx.Done():
			return true
		}
	}
}

// quietAnswers asks the process a plain server/discover, as every turn's
// requests are asked: a result means it still serves as before.
func quietAnswers(ctx context.Context, c *mcpclient.Client) bool {
	// It needs no outside work: a server that read it and sits idle is
	// silent, not slow (transport.WithIdleSilence).
	dctx, cancel := context.WithTimeout(transport.WithIdleSilence(ctx, 500*time.Millisecond), wireTimeout)
	defer cancel()
	resp, err := c.Do(dctx, "server/discover", nil)
	return err == nil && resp != nil && resp.Error == nil && resp.Result != nil
}

func quietDead(st *transport.StdioTransport) bool {
	select {
	case <-st.Exited():
		return true
	default:
	}
	return st.Silenced() != nil
}
