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

// The quiet process of a repetition (stdio only): one fresh process that
// the checks needing nothing else in flight take turns on, one at a time,
// instead of one process each. They are the checks that judge
// notifications a stdio stream cannot attribute (LOG-1, LOG-2, PROG-1: a
// log message carries no request id), those that judge lines written
// outside any request of theirs (RPC-3: a response to a notification;
// CANC-2: a message for a request it has cancelled), and the list walk
// that TOOL-2, RSRC-1 and PROMPT-1 compare across processes (freshList).
//
// Why sharing cannot disturb them:
//   - The list walk is the first thing asked of the process, when it is
//     opened, so it is still a walk on a new process.
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
// Each repetition has its own quiet process (the key holds the run): MUST
// checks still observe anew in each repetition. The process outlives its
// turns; the fresh pool stops it when the run ends (freshPool.close), after
// every check has returned.
type quietKey struct{ run int }

type quietProc struct {
	mu sync.Mutex // held for a whole turn
	c  *mcpclient.Client
	// walks is the list walk of the first process opened, set once under
	// mu; read without it, so that TOOL-2 does not wait for a LOG turn.
	walks atomic.Pointer[freshWalks]
}

// quietSettleMax bounds the wait for a process that keeps writing.
const quietSettleMax = time.Second

func quietOf(p *check.Pass) *quietProc {
	if p.Env.Memo == nil {
		return nil
	}
	q, _ := p.Env.Memo.Do(quietKey{run: p.Run}, func() any { return &quietProc{} }).(*quietProc)
	return q
}

// quietTurn waits for the repetition's quiet process to be free and returns
// it; done ends the turn and must be called once. On a process opened for
// this turn, the list walk is made first (once per repetition).
func quietTurn(p *check.Pass) (c *mcpclient.Client, done func(), err error) {
	q := quietOf(p)
	if q == nil {
		return p.Env.Fresh(p.Ctx)
	}
	q.mu.Lock()
	if err := q.open(p); err != nil {
		q.mu.Unlock()
		return nil, nil, err
	}
	return q.c, func() {
		q.end(p.Ctx)
		q.mu.Unlock()
	}, nil
}

// quietWalks is the list walk made first on the repetition's quiet
// process, opening it if no turn has yet (nil without a Memo).
func quietWalks(p *check.Pass) *freshWalks {
	q := quietOf(p)
	if q == nil {
		return nil
	}
	if w := q.walks.Load(); w != nil {
		return w
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.walks.Load() == nil {
		_ = q.open(p) // a failure to open is the walk's open error
	}
	return q.walks.Load()
}

// open makes sure q has a live process; called with q.mu held.
func (q *quietProc) open(p *check.Pass) error {
	if q.c != nil {
		return nil
	}
	c, _, err := p.Env.Fresh(p.Ctx)
	if err != nil {
		if q.walks.Load() == nil {
			q.walks.Store(&freshWalks{open: err})
		}
		return err
	}
	// Not closed here: the pool stops it at the end of the run, or end
	// closes it once it is of no use.
	q.c = c
	if q.walks.Load() == nil {
		w := &freshWalks{lists: map[string]freshWalk{}}
		for _, l := range pageLists(p.Env.Facts) {
			lr, err := c.List(p.Ctx, l.method, l.key)
			w.lists[l.method] = freshWalk{lr, err}
		}
		q.walks.Store(w)
		q.end(p.Ctx)
	}
	return nil
}

// end lets what the turn's requests caused come out before the next turn
// watches, and drops a process that died or went silent; called with q.mu
// held.
func (q *quietProc) end(ctx context.Context) {
	if q.c == nil {
		return
	}
	st, ok := q.c.Transport().(*transport.StdioTransport)
	if !ok {
		return
	}
	if quietDead(st) {
		q.c.Close()
		q.c = nil
		return
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
			return
		case <-limit.C:
			// Still writing a second on: not quiet enough to share.
			q.c.Close()
			q.c = nil
			return
		case <-st.Exited():
			q.c.Close()
			q.c = nil
			return
		case <-ctx.Done():
			return
		}
	}
}

func quietDead(st *transport.StdioTransport) bool {
	select {
	case <-st.Exited():
		return true
	default:
	}
	return st.Silenced() != nil
}
