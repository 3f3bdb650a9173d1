package conformance

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// The quiet processes of a repetition (stdio only): fresh processes that
// the checks needing nothing else in flight take turns on, one turn per
// process at a time, instead of one process each (at most the run's
// quietPlan lanes per repetition). They are the checks that judge
// notifications a stdio stream cannot attribute (LOG-1, LOG-2, PROG-1: a
// log message carries no request id), RPC-3 (a response to a notification
// is a line outside any request of its own), and the list walk that TOOL-2, RSRC-1 and PROMPT-1
// compare across processes (freshList). CANC-2 is not one of them: a
// server that ignores a cancellation may go on streaming for the
// cancelled request at any pace, and no quiet period tells when it has
// stopped.
//
// Why sharing cannot disturb them:
//   - The list walk is the first thing asked of the first process opened
//     (after REM-2's initialize where it was rejected, which leaves the
//     process as the walk would: remStdio), so it is still a walk on a
//     new process.
//   - A turn holds the process alone: no other request is in flight while a
//     turn watches, so every notification it sees came from its own
//     requests or from an earlier turn's.
//   - An earlier turn's notification cannot reach a later turn's watch:
//     each observation sends a fence after the observed request
//     (progObserve: answered only once the server has written what it
//     wrote before it) and watches a window past the final response, and
//     each turn ends by waiting until the fence is answered and the process
//     has written nothing for stdioQuiet since its last line (settle), as a
//     check with a process of its own stops watching after the same window.
//     (The fence's answer does not end progObserve's watch early: it
//     reaches the tap before the fence's id is known, so the window
//     always runs out; the fence is waited for by settle.) What a
//     server sends even later than that for a request it has answered
//     breaks the rules those checks judge anyway (no log or progress after
//     the final response); a process that keeps writing for a second
//     after a turn is not shared any further. Only what such a server
//     writes after 30 ms of silence can reach the next turn, and that
//     check may then report it.
//   - The requests of these checks are plain requests with complete _meta
//     (no malformed input, no version or capability variants, no
//     initialize), an invalid cancellation and an unknown notification
//     (RPC-3): nothing a turn sends changes what a conformant server
//     answers the next (a notification the server cannot act on is
//     ignored). (A server that keeps the logLevel of an earlier request
//     and logs for a later one without it breaks LOG-1's rule; on a shared
//     process LOG-1 may see it, in the repetitions where LOG-2's turn came
//     first, and is then flaky with its counts.)
//   - A process that exited or stopped answering during a turn is not
//     handed to the next turn: it is closed and the next turn gets a new
//     one, so one turn's crash is not reported by another check.
//
// Each repetition has its own quiet processes (the key holds the run):
// MUST checks still observe anew in each repetition. A repetition has at
// most quietLanes of them at once, each holding one turn at a time, then
// the repetition's SUB listens. The
// processes outlive their turns; they are stopped once the last check of
// the repetition that could use them has returned (quietUsers), and
// whatever is left when the run ends by the fresh pool (freshPool.close).
type quietKey struct{ run int }

// quietLanes is how many quiet processes a repetition runs turns on at
// once: one start each instead of one per check. One, whatever a start
// costs: a second line of turns saved less than its five starts cost once
// the listens went to the process after the turns (the bundled server
// over stdio: medians 0.98 s against 1.25 s, mcp-go 0.86 s against 1.17
// s, go-sdk the same, docs/benchmarks.md).
//
// A start is dear when the run's first one (spawn and probe) took
// quietDearStart or more, or used quietDearCPU of CPU (a Node server:
// about 0.4 s of wall and 0.7 s of CPU per start on 2 cores; a go-sdk
// server registering 1,000 tools 0.14 s of wall and 0.19 s of CPU; a Go
// server with a few tools 15-20 ms of both). The CPU is what a start
// costs a machine whose cores the starts keep busy, and unlike the wall
// time it does not grow when the machine is loaded.
const (
	quietLanes     = 1
	quietDearStart = 150 * time.Millisecond
	quietDearCPU   = 100 * time.Millisecond
)

// dearStart says whether a run whose first start (spawn and probe) took
// that long, and used cpu of CPU (0 when unknown), starts its stdio
// processes dearly.
func dearStart(kind string, took, cpu time.Duration) bool {
	return kind == "stdio" && (took >= quietDearStart || cpu >= quietDearCPU)
}

// quietPlanKey holds, in the run's Memo, the run's quietPlan (set by Run
// from dearStart).
type quietPlanKey struct{}

// quietPlan is how a run shares its stdio processes.
type quietPlan struct {
	// share: a repetition's SUB listens go to its quiet process after the
	// turns (subHost.process), the run's emitter search to the first
	// quiet process (progFindEmitters), and the checks of handChain pass
	// one process on (handOn); the SUB checks and those of handChain
	// follow (Check.Follows). Run's
	// plans share whatever a start costs: a start saved is worth more than
	// the wait for the turns (the bundled server over stdio: 1.25 s
	// against 1.34 s, mcp-go 1.17 s against 1.42 s).
	share bool
	// chainRPC5: RPC-5 too takes the process handChain hands on, after
	// REM-2 and REM-3, rather than start one. Only where a start is dear:
	// where it is cheap, RPC-5 starts its own at once, as waiting for the
	// chain costs more than a start on a server that goes silent after
	// its first malformed line (go-sdk, found silent after 0.8 s in each
	// repetition: 1.40 s against 1.19 s for the run).
	chainRPC5 bool
}

func planFor(dear bool) quietPlan { return quietPlan{share: true, chainRPC5: dear} }

// follows says whether a run with this plan keeps c's order
// (Check.Follows, check.Options.Follow): RPC-5's where it takes the
// chain's process, the others' where processes are shared.
func (q quietPlan) follows(c *check.Check) bool {
	if c == RPC5 {
		return q.chainRPC5
	}
	return q.share
}

// quietPlanOf is the run's plan. Without one (a driver that keeps no
// order for these checks) nothing is shared.
func quietPlanOf(m *check.Memo) quietPlan {
	q, _ := m.Do(quietPlanKey{}, func() any { return quietPlan{} }).(quietPlan)
	return q
}

type quietProc struct {
	// lanes holds the lanes no turn holds; a turn takes one.
	lanes chan *quietLane
	// walkMu is held while the walk is made, on the first process opened.
	walkMu sync.Mutex
	// walks is the list walk of the first process opened, set once; read
	// without a lane, so that TOOL-2 does not wait for a LOG turn (unless
	// it asks in the moment a turn has taken the only lane and not yet
	// begun the walk).
	walks atomic.Pointer[freshWalks]
	// walked is closed once walks is set.
	walked chan struct{}
}

// setWalks sets the walk, once (called under walkMu).
func (q *quietProc) setWalks(w *freshWalks) {
	q.walks.Store(w)
	close(q.walked)
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
	return quietProcOf(p.Env.Memo, p.Run)
}

func quietProcOf(memo *check.Memo, run int) *quietProc {
	q, _ := memo.Do(quietKey{run: run}, func() any {
		q := &quietProc{lanes: make(chan *quietLane, quietLanes), walked: make(chan struct{})}
		for range quietLanes {
			q.lanes <- &quietLane{}
		}
		return q
	}).(*quietProc)
	return q
}

// quietTurnChecks are the checks that take turns on the quiet
// processes (quietTurn): the SUB listens follow them on stdio.
var quietTurnChecks = []string{"LOG-1", "LOG-2", "PROG-1", "RPC-3"}

// quietTurn waits for one of the repetition's quiet processes to be free
// and returns it; done ends the turn and must be called once. On the first
// process opened, the list walk is made first (once per repetition).
func quietTurn(p *check.Pass) (c *mcpclient.Client, done func(), err error) {
	q := quietOf(p)
	if q == nil {
		return p.Env.Fresh(p.Ctx)
	}
	l, err := q.take(p.Ctx)
	if err != nil {
		return nil, nil, err
	}
	handed := false
	defer func() {
		// The lane goes back whatever happened (an error, a panic the
		// driver recovers): a lost lane would stall the repetition's
		// later turns until the run's deadline.
		if !handed {
			q.lanes <- l
		}
	}()
	if err := q.open(p, l); err != nil {
		return nil, nil, err
	}
	handed = true
	return l.c, func() {
		defer func() { q.lanes <- l }()
		l.end(p.Ctx)
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
	// A walk under way holds walkMu: wait for it rather than take a lane
	// (and start a process) of our own.
	q.walkMu.Lock()
	w := q.walks.Load()
	q.walkMu.Unlock()
	if w != nil {
		return w
	}
	q.openUnless(p, q.walked) // a failure to open is the walk's open error
	if w := q.walks.Load(); w != nil || p.Ctx.Err() == nil {
		return w
	}
	return &freshWalks{open: p.Ctx.Err()}
}

// openUnless opens the repetition's quiet process as its first turn would
// (REM's exchange, the walk, the emitter search), unless done is closed
// first: then whoever opened it has made what the caller waits for, and
// may hold the lane until the repetition's SUB checks are over, so the
// caller does not wait behind it.
func (q *quietProc) openUnless(p *check.Pass, done <-chan struct{}) {
	select {
	case l := <-q.lanes:
		defer func() { q.lanes <- l }()
		select {
		case <-done:
		default:
			_ = q.open(p, l) // a failure to open is the caller's to find
		}
	case <-done:
	case <-p.Ctx.Done():
	}
}

// open makes sure l has a live process; called by the turn holding l.
// The first process of the repetition is asked the walk first, under
// walkMu; if it does not outlive the walk, l gets another.
func (q *quietProc) open(p *check.Pass, l *quietLane) error {
	if l.c != nil {
		if _, stdio := l.c.Transport().(*transport.StdioTransport); !stdio || stdioLive(l.c) {
			return nil
		}
		// Exited or found silent since its last turn ended.
		l.c.Close()
		l.c = nil
	}
	if q.walks.Load() == nil {
		if err := q.openWalked(p, l); err != nil {
			return err
		}
	}
	if l.c == nil {
		c, _, err := p.Env.Fresh(p.Ctx)
		if err != nil {
			return err
		}
		// Not closed here: quietUsers stops it when the repetition is
		// done with it, the pool at the end of the run, or end once it is
		// of no use.
		l.c = c
	}
	if es := progEmittersOf(p.Env.Memo); es != nil && es.wanted.Load() && quietPlanOf(p.Env.Memo).share {
		select {
		case <-es.done:
		default:
			// The run's emitter search, before any turn of this process
			// (progFindEmitters), unless another repetition's process
			// has it under way: then it is waited for.
			es.run(p.Ctx, p.Env, l.c)
			l.end(p.Ctx)
			if l.c == nil {
				return q.open(p, l)
			}
		}
	}
	return nil
}

// quietSearched returns once the run's emitter search (progFindEmitters)
// is over, or it made it on the repetition's quiet process (opening one,
// as the first turn would) because no process had been opened yet.
func quietSearched(p *check.Pass, es *progEmitters) {
	q := quietOf(p)
	if q == nil || !quietPlanOf(p.Env.Memo).share {
		return
	}
	select {
	case <-es.done:
		return
	default:
	}
	// Whoever holds a lane has opened its process, so has made the search
	// or waits for it if it was wanted then (progWant). A failure to open
	// leaves the search to a new process.
	es.wanted.Store(true)
	q.openUnless(p, es.done)
}

// openWalked opens l's process and makes the walk on it, unless another
// lane did meanwhile, holding walkMu (released even if the walk panics:
// every later open and quietWalks of the repetition waits on it); REM-2
// and REM-3's exchange comes first where the run wants it (remQuiet). A
// failure to open is the walk's result too.
func (q *quietProc) openWalked(p *check.Pass, l *quietLane) error {
	q.walkMu.Lock()
	defer q.walkMu.Unlock()
	if q.walks.Load() != nil {
		return nil
	}
	rq := remQuietOf(p)
	c, _, err := p.Env.Fresh(p.Ctx)
	if err != nil {
		if rq != nil {
			rq.skip() // REM-2 and REM-3 try a process of their own
		}
		q.setWalks(&freshWalks{open: err})
		return err
	}
	if rq != nil && !rq.openWith(p.Ctx, c) {
		// Initialize opened a legacy session here, the process went, or
		// the exchange is still waiting (openWith closes it): the walk
		// goes to a new process, as it would without the exchange
		// (remStdio).
		if c, _, err = p.Env.Fresh(p.Ctx); err != nil {
			q.setWalks(&freshWalks{open: err})
			return err
		}
	}
	l.c = c
	w := &freshWalks{lists: map[string]freshWalk{}}
	for _, li := range pageLists(p.Env.Facts) {
		lr, err := c.List(p.Ctx, li.method, li.key)
		w.lists[li.method] = freshWalk{lr, err}
	}
	q.setWalks(w)
	l.end(p.Ctx)
	return nil
}

// end lets what the turn's requests caused come out before the next turn
// watches, and drops a process that died, went silent or keeps writing;
// called by the turn holding l.
func (l *quietLane) end(ctx context.Context) {
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
	}
}

// quietLeft is how much longer a process whose last line came at last
// must stay silent to have been quiet for stdioQuiet at now. Quiet is
// counted from that line, not from when the turn ended: a turn watches a
// window past its final response (progObserve, logWindow = stdioQuiet) or
// past its fence's answer (stdioFenced), so the quiet has mostly passed
// when it ends, and waiting it again made every turn 30 ms longer (about a
// tenth of the bundled server's stdio run).
func quietLeft(last, now time.Time) time.Duration {
	return stdioQuiet - now.Sub(last)
}

// settle waits until the process has written nothing for stdioQuiet and
// owes no answer; it is false for a process that is of no use to the next
// turn. A line written after the tap began restarts the count.
func (l *quietLane) settle(ctx context.Context, st *transport.StdioTransport) bool {
	if stdioGone(st) {
		return false
	}
	tap, stop := st.Tap(512)
	defer stop()
	wait := quietLeft(st.LastLine(), time.Now())
	if wait <= 0 {
		if st.Waiting() == 0 {
			return true
		}
		// A request still waits for its answer (a turn's fence, which
		// progObserve stops watching for after its window): that answer,
		// and whatever the server writes before it, must come out here,
		// not in the next turn's watch.
		wait = stdioQuiet
	}
	limit := time.NewTimer(quietSettleMax)
	defer limit.Stop()
	quiet := time.NewTimer(wait)
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
			if st.Waiting() > 0 {
				quiet.Reset(stdioQuiet)
				continue
			}
			return true
		case <-limit.C:
			// Still writing, or still owing an answer, a second on: not
			// quiet enough to share.
			return false
		case <-st.Exited():
			return false
		case <-ctx.Done():
			return true
		}
	}
}

// stdioGone: the process exited or stopped answering (was found silent).
func stdioGone(st *transport.StdioTransport) bool {
	select {
	case <-st.Exited():
		return true
	default:
	}
	return st.Silenced() != nil
}

// quietUsers counts, per repetition, the check runs that may still take
// or open its quiet process, so that the process is stopped when the last
// has returned rather than when the run ends: a run of five repetitions
// otherwise kept five idle processes of the server until its last check
// (a TS SDK server's: 10 processes and 814-847 MB at the peak, against 6
// and 453-460 MB stopping them per repetition, for about 2% of that run's
// wall time, the exits now falling while the cores start later processes:
// docs/benchmarks.md, session 39).
type quietUsers struct {
	mu   sync.Mutex
	left map[int]int // runs of the repetition's users still to return
}

// quietUser says whether c's runs may use a repetition's quiet process:
// its turns (quietTurnChecks), the SUB listens it hosts, the readers of
// its walk (freshList), those who ask for the emitter search it makes
// (progSearchChecks) and REM's exchange that opens it. A check not named
// here that opens it anyway after it was stopped gets a new one (open), so
// a missing name costs a start, not a verdict.
func quietUser(c *check.Check) bool {
	switch c {
	case TOOL2, RSRC1, PROMPT1, REM2, REM3:
		return true
	}
	return slices.Contains(quietTurnChecks, c.ID) || slices.Contains(progSearchChecks, c.ID) || subUsesHost(c)
}

// quietCount registers the users among selected for each repetition; nil
// on HTTP, where there are no quiet processes.
func quietCount(kind string, selected []*check.Check, runs int) *quietUsers {
	if kind != "stdio" {
		return nil
	}
	return &quietUsers{left: runsByRepetition(selected, runs, quietUser)}
}

// returned is told that run of c returned; after the repetition's last
// user it stops the repetition's quiet processes (check.Options.Returned).
func (u *quietUsers) returned(memo *check.Memo, c *check.Check, run int) {
	if u == nil || !quietUser(c) {
		return
	}
	u.mu.Lock()
	u.left[run]--
	last := u.left[run] == 0
	u.mu.Unlock()
	if !last {
		return
	}
	q := quietProcOf(memo, run)
	// Every user has returned, so every lane is back; one that is not
	// (a turn a panic left holding it) keeps its process until the pool
	// stops it.
	for range quietLanes {
		select {
		case l := <-q.lanes:
			if c := l.c; c != nil {
				// Closed aside (transport.CloseAside): the runs that
				// follow this one do not wait for it; Run's Stops does,
				// before the monitors are read.
				c.Close()
				l.c = nil
			}
			q.lanes <- l
		default:
		}
	}
}
