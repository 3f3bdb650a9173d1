package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// freshSilence is how long a new stdio process may sit idle after reading
// its probe (server/discover) without answering before its start counts
// as failed (transport.WithIdleSilence), for a server whose first start
// took firstStart: as long as the probe waits before it takes a server
// for legacy (probe), and three times that first start. The run's own
// process has answered the same request, so one that reads it, answers
// nothing and uses no CPU for that long is stuck (on a lock or a port the
// first one holds, say). A process still starting has not read the
// request, or uses CPU, and is waited for up to the request timeout. A
// wrapper whose work is done by other processes (docker run -i, ssh) looks
// idle while it waits: the bound leaves such a start the time the first
// one took, three times over, and never less than the probe's.
func freshSilence(probe, firstStart time.Duration) time.Duration {
	return max(probe, 3*firstStart)
}

// startsAtOnce is how many stdio processes a run starts at once: one per
// core, at least two, as a start that computes (a Node server's: about
// 0.6 s of CPU) slows every other one down; more, as many as would keep
// the cores as busy (cores × took / machine; at most startsMost, or one
// per core where there are more), when
// the run's own start took quietDearStart or longer and the machine's
// cores spent machine of CPU meanwhile (negative: unknown). A start that
// mostly waits (docker run -i, a wrapper that sleeps or fetches a token)
// costs the cores little: at two at a time, a server taking 1.5 s to
// start, idle, made a run of 18.4 s, where 8 at a time made it 6.4 s.
// machine counts every process, not only the server's group: docker's
// server runs in the daemon's processes, and a machine busy with other
// work gets fewer starts at once, not more.
func startsAtOnce(cores int, took, machine time.Duration) int {
	n := max(2, cores)
	if took < quietDearStart || machine < 0 {
		return n
	}
	most := max(n, startsMost)
	if machine == 0 {
		return most
	}
	return min(max(n, int(time.Duration(cores)*took/machine)), most)
}

// startsMost bounds startsAtOnce: every process started is memory, and a
// server's dependencies (a daemon, an upstream) may take fewer at once
// than the cores could.
const startsMost = 8

// startPlaces are a run's places to start stdio processes in (spawn,
// startSlot): one per core (at least two), and the rest of what
// startsAtOnce allowed held back until the first start after the run's
// own that succeeds confirms that starts wait: the machine's cores less
// than half busy while it ran. The run's own start may have waited on a
// download (npx -y, docker pull) that later starts, from the cache, do
// not wait on, and then compute.
type startPlaces struct {
	// spawn holds a token for each place in use, and one for each place
	// held back, until they are let go.
	spawn   chan struct{}
	held    int
	cores   int
	machine func() (time.Duration, bool)
	once    sync.Once
}

func newStartPlaces(cores, want int, machine func() (time.Duration, bool)) *startPlaces {
	n := max(2, cores)
	s := &startPlaces{spawn: make(chan struct{}, max(n, want)), held: max(0, want-n), cores: max(1, cores), machine: machine}
	for range s.held {
		s.spawn <- struct{}{}
	}
	return s
}

// measure is called as a start begins, and what it returns as the start
// ends (ok: it succeeded).
func (s *startPlaces) measure() (done func(ok bool)) {
	if s.held == 0 {
		return func(bool) {}
	}
	at := time.Now()
	before, known := s.machine()
	return func(ok bool) {
		after, measured := s.machine()
		if !ok || !known || !measured {
			return
		}
		took := time.Since(at)
		s.once.Do(func() {
			if after-before < time.Duration(s.cores)*took/2 {
				// The buffer holds at least the held tokens: no wait.
				for range s.held {
					<-s.spawn
				}
			}
		})
	}
}

// freshPool hands out stdio processes that were started and probed ahead
// of the checks asking for them, so a check waits for a start only when
// the pool is behind. Each process goes to one check only: a check that
// needs a process of its own gets one no other check has used, and it
// closes it (a process several checks take turns on, quiet.go, is closed
// when its repetition is done with it, quietUsers, or by the pool when
// the run ends, as is any a check left open). The pool
// keeps size processes ready or starting; every take starts the next one.
// Nothing starts before the first take, so a run whose checks need no
// fresh process starts none. A pool of size 0 starts a process when it is
// taken, and none ahead.
type freshPool struct {
	ctx    context.Context
	cancel context.CancelFunc
	start  func(context.Context) (*mcpclient.Client, error)
	spawn  chan struct{}
	size   int
	ready  chan freshStart

	once   sync.Once
	mu     sync.Mutex
	closed bool
	taken  []*mcpclient.Client // closed again at close: Close is idempotent
	wg     sync.WaitGroup

	// failed counts the starts that failed since the last that did not;
	// at freshFailLimit the pool is broken: it starts nothing more, and
	// every take returns brokenErr (brokenCh closed).
	failed    int
	brokenErr error
	brokenCh  chan struct{}
	// silentRow counts the processes found silent after their probe
	// (watchAfterProbe) since the last one that answered a request after
	// its probe; at freshFailLimit the pool breaks too. afterProbe are
	// the requests such a silence counts on (silentOn), each with how long
	// a new process may sit idle on it before it has answered anything
	// (StdioTransport.SetFirstIdle).
	silentRow  int
	afterProbe map[string]time.Duration
}

// freshFailLimit is how many starts in a row may fail before the pool
// starts no more. A server that cannot run twice at once (it holds a port
// or a lock, or exits when another instance runs) fails every new process
// the same way: without a limit a run started one for each check run that
// asks, about ninety of them, each waiting out its own failure (25 s for a
// server that exits after 0.5 s; minutes for a Node server). A failure
// among successes resets nothing but the count.
const freshFailLimit = 3

type freshStart struct {
	c   *mcpclient.Client
	err error
}

// newFreshPool keeps size processes started by start ahead, each in one
// of the places of spawn (startSlot; nil: no bound). They live on ctx
// (not the taking check's, which may end before the process is closed)
// until close.
func newFreshPool(ctx context.Context, size int, spawn chan struct{}, start func(context.Context) (*mcpclient.Client, error)) *freshPool {
	pctx, cancel := context.WithCancel(ctx)
	return &freshPool{ctx: pctx, cancel: cancel, start: start, spawn: spawn, size: size, ready: make(chan freshStart, max(size, 1)), brokenCh: make(chan struct{})}
}

// noted counts a start's outcome toward freshFailLimit. A start the pool's
// closing cut short says nothing about the server.
func (p *freshPool) noted(err error) {
	if p.ctx.Err() != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.failed = 0
		return
	}
	p.failed++
	if p.failed >= freshFailLimit && p.brokenErr == nil {
		p.brokenErr = fmt.Errorf("%d new processes of the server in a row failed to start or to answer its probe, so no more are started%s; the last: %w", p.failed, freshFailHint(err), err)
		close(p.brokenCh)
	}
}

// afterProbeBounds are the requests on which a new process that answers
// none after its probe is taken for silent: server/discover and each list
// the run's own process served (a request that may wait on the network by
// design, tools/call or resources/read, or one a faulty server may leave
// unanswered everywhere, initialize on a modern server: REM-2's rule,
// says nothing about whether a new process works). Each gets an idle
// bound until the process answers (StdioTransport.SetFirstIdle): the
// longer of silence, the bound of a new process's probe (freshSilence),
// and three times what the run's own process took at most (took,
// Facts.Took): a server whose lists wait on an upstream (a gateway) took
// that long the first time too. server/discover's comes to silence: the
// run's first start, which silence is at least three times, includes its
// probe.
func afterProbeBounds(f *check.Facts, silence time.Duration, took func(method string) time.Duration) map[string]time.Duration {
	bounds := map[string]time.Duration{}
	for _, l := range []struct {
		capability, method string
		err                error
	}{
		{"", "server/discover", nil},
		{"tools", "tools/list", f.ToolsErr}, {"prompts", "prompts/list", f.PromptsErr},
		{"resources", "resources/list", f.ResourcesErr}, {"resources", "resources/templates/list", f.TemplatesErr},
	} {
		if (l.capability == "" || f.Has(l.capability)) && l.err == nil {
			bounds[l.method] = max(silence, 3*took(l.method))
		}
	}
	return bounds
}

// watchAfterProbe watches a process the pool started for the other way
// a server that cannot run twice at once fails: its new process answers
// the probe, then nothing (it waits on a lock the first one holds, say).
// The process's requests of afterProbeBounds get their idle bound until
// it answers one; the first of them that silenced it while alone in
// flight, before it answered anything, counts once (silentAfterProbe),
// and an answer from any process, even one counted, resets the count.
// Without it every check given such a process waited out its request
// timeout (30 s), and the run its deadline, with the checks still queued
// cancelled (120 s in all).
func (p *freshPool) watchAfterProbe(c *mcpclient.Client) {
	st, ok := c.Transport().(*transport.StdioTransport)
	if !ok {
		return
	}
	p.mu.Lock()
	st.SetFirstIdle(p.afterProbe)
	p.mu.Unlock()
	var mu sync.Mutex
	answered, told := false, false
	st.Watch(func(s transport.Seen) {
		if s.Out == nil {
			return // a stray or a line out of frame
		}
		mu.Lock()
		defer mu.Unlock()
		if answered {
			return
		}
		if s.Err == nil && s.Exchange != nil && s.Exchange.Response != nil {
			// Even after it was counted: a process that answers late
			// (a request queued behind a long one) works.
			answered = true
			p.heardAfterProbe()
			return
		}
		var te *transport.Error
		// Only a request that was alone in flight: one that waited behind
		// another may have been waiting for it.
		if !told && errors.As(s.Err, &te) && te.Kind == transport.KindTimeout && te.Silent != nil && p.silentOn(te.Silent.SinceRequest) && st.Waiting() == 0 {
			told = true
			p.silentAfterProbe(s.Err)
		}
	})
}

// silentOn says whether a new process silent since a request of method
// counts (set by setAfterProbe; nothing counts before).
func (p *freshPool) silentOn(method string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.afterProbe[method]
	return ok
}

// setAfterProbe sets the requests silentOn counts and their idle bounds
// (afterProbeBounds).
func (p *freshPool) setAfterProbe(bounds map[string]time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.afterProbe = bounds
}

// heardAfterProbe: a process answered a request after its probe.
func (p *freshPool) heardAfterProbe() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silentRow = 0
}

// silentAfterProbe counts a process found silent after its probe (err
// says on what) toward freshFailLimit.
func (p *freshPool) silentAfterProbe(err error) {
	if p.ctx.Err() != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.silentRow++
	if p.silentRow >= freshFailLimit && p.brokenErr == nil {
		p.brokenErr = fmt.Errorf("%d new processes of the server in a row answered their probe and then nothing, so no more are started%s; the last: %w", p.silentRow, freshFailHint(err), err)
		close(p.brokenCh)
	}
}

// freshFailHint says what to do about a server whose new processes end
// or go silent while its first one answers: the likely cause is that first
// process, not the server's code.
func freshFailHint(err error) string {
	var te *transport.Error
	if !errors.As(err, &te) {
		return ""
	}
	switch {
	case te.Kind == transport.KindProcessExited, te.Kind == transport.KindClosed, te.Kind == transport.KindTimeout && te.Silent != nil:
		return " (the server may not run twice at once, for a port, a lock or a file its first process holds: Layer 0 starts a new process for each check that judges one, so give each process its own)"
	}
	return ""
}

// errNoMoreStarts ends a start that was still waiting for a core when the
// pool broke (brokenCh): takers get brokenErr instead (handOut).
var errNoMoreStarts = errors.New("no more new processes are started")

// startSlot waits for one of the places of spawn, the starts under way at
// once, and returns what gives it back. It gives up when ctx ends, or with
// errNoMoreStarts when stop closes first: without that, the starts queued
// for a core when the pool broke went on, one after another, for the rest
// of the run (twenty queued takers: twenty starts instead of five).
func startSlot(ctx context.Context, spawn chan struct{}, stop <-chan struct{}) (release func(), err error) {
	select {
	case spawn <- struct{}{}:
		// A place and stop may both be ready: select picks either.
		select {
		case <-stop:
			<-spawn
			return nil, errNoMoreStarts
		default:
		}
		return func() { <-spawn }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-stop:
		return nil, errNoMoreStarts
	}
}

// broken is the error every take returns once the pool has stopped
// starting processes (nil until then).
func (p *freshPool) broken() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.brokenErr
}

// fill starts one process in the background. ready has room for it
// unless takers gave up waiting (a pool of size 0 starts one for each
// taker, even one that then stops waiting), so a start that finds no
// room waits for a taker or for close, which stops it.
func (p *freshPool) fill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.brokenErr != nil {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		c, err := p.startOne()
		if c != nil && err == nil {
			p.watchAfterProbe(c)
		}
		select {
		case p.ready <- freshStart{c, err}:
		case <-p.ctx.Done():
			if c != nil {
				c.Close()
			}
		}
	}()
}

// startOne starts a process in a place of spawn and counts the outcome
// (noted) before it gives the place back: a start queued for it then
// finds the pool broken by the failure before it (startSlot), instead of
// starting while the failure is being counted.
func (p *freshPool) startOne() (*mcpclient.Client, error) {
	if p.spawn != nil {
		release, err := startSlot(p.ctx, p.spawn, p.brokenCh)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	c, err := p.start(p.ctx)
	p.noted(err)
	return c, err
}

// take returns a started, probed process no one has used (or the error
// its start ended with) and starts the next one.
func (p *freshPool) take(ctx context.Context) (*mcpclient.Client, error) {
	if err := p.broken(); err != nil {
		return nil, err
	}
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
		return p.handOut(r)
	case <-p.brokenCh:
		// A start that ended as the pool broke still goes to a taker.
		select {
		case r := <-p.ready:
			return p.handOut(r)
		default:
			return nil, p.broken()
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-p.ctx.Done():
		return nil, p.ctx.Err()
	}
}

// handOut gives a start's process (or its error) to a taker; the pool
// closes the process again when the run ends.
func (p *freshPool) handOut(r freshStart) (*mcpclient.Client, error) {
	if errors.Is(r.err, errNoMoreStarts) {
		return nil, p.broken()
	}
	if r.c != nil {
		p.mu.Lock()
		p.taken = append(p.taken, r.c)
		p.mu.Unlock()
	}
	return r.c, r.err
}

// close stops the processes nobody took, those still starting, and the
// taken ones still running (called when no check runs any more). They are
// stopped together where their Close waits (in Run each is closed aside,
// and Run's Stops waits for them).
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

// handChain is the order in which checks of a stdio repetition pass one
// process on when the run shares processes (quietPlan.share): each takes
// the process the last one before it was done with (takeHandedOn), or a
// new one, and hands it on (handOn) when a later one runs in the same
// repetition. Each follows every check before it (Check.Follows,
// handFollows), so whichever of them are selected, the order holds. Why
// each observes there what it would on a new process is said where it
// takes the process: META-1 (what STATE-1 sent), STDIO-4 (no request in
// flight when stdin closes), RPC-5 (its malformed lines come
// last but for STDIO-4, on a process that still answers, servesDiscover;
// only where the plan says so, quietPlan.chainRPC5).
//
// STATE-1 and META-1 come first because what they observe depends on a
// dual-era process's era being still open: the TS SDK v2 leaves it open
// while it answers only complete server/discover requests, pins it to the
// legacy era on the first request without the version and to 2026-07-28
// on the first complete request of another method; a request without the
// version then gets -32602 where on a new process it opens a legacy
// session (docs/real-servers.md). So none of them takes a quiet process,
// whose list walk pins the era.
var handChain = []string{"STATE-1", "META-1", "RPC-5", "STDIO-4"}

// handFollows is what check id follows on stdio: the checks before it in
// handChain.
func handFollows(id string) check.Follows {
	k := handPlace(id)
	if k < 0 {
		panic("handFollows: " + id + " is not in handChain")
	}
	return check.Follows{On: check.Stdio, IDs: slices.Clone(handChain[:k])}
}

// handPlace is id's place in handChain, -1 when it has none.
func handPlace(id string) int { return slices.Index(handChain, id) }

// handRunsKey is the Memo key of the run's handRuns (set by Run).
type handRunsKey struct{}

// handRuns says, for each place of handChain, in which repetitions a
// selected check of it runs.
type handRuns [][]bool

// handWant records which checks of handChain the run selected and keeps
// the order of (follows), so that a check hands its process on only when
// a later one will take it.
func handWant(m *check.Memo, selected []*check.Check, runs int, follows func(*check.Check) bool) {
	h := make(handRuns, len(handChain))
	for k := range h {
		h[k] = make([]bool, max(runs, 1))
	}
	for _, c := range selected {
		if k := handPlace(c.ID); k >= 0 && c.Transports.Has("stdio") && follows(c) {
			n := 1
			if c.Level == check.Must {
				n = runs
			}
			for r := range min(n, len(h[k])) {
				h[k][r] = true
			}
		}
	}
	m.Do(handRunsKey{}, func() any { return h })
}

// handTakerAfter: a check after place k of handChain runs in repetition
// run.
func handTakerAfter(m *check.Memo, k, run int) bool {
	h, _ := m.Do(handRunsKey{}, func() any { return handRuns(nil) }).(handRuns)
	for _, place := range h[min(k+1, len(h)):] {
		if run < len(place) && place[run] {
			return true
		}
	}
	return false
}

// handOnKey is the Memo key of the process handed on in repetition run.
type handOnKey struct{ run int }

// handedOn is a process waiting in the Memo for the next check of
// handChain.
type handedOn struct {
	mu    sync.Mutex
	c     *mcpclient.Client
	close func()
}

// handOn gives c, the process of p's repetition that p's check of
// handChain is done with, to the next check of the chain that runs in the
// repetition, instead of closing it. Only where the run keeps the order
// (quietPlan.share), only a process that has neither exited nor gone
// silent, and only when such a check was selected; otherwise c is closed.
func handOn(p *check.Pass, c *mcpclient.Client, closeFn func()) {
	h := handedOnIn(p)
	k := handPlace(p.Check.ID)
	if h == nil || k < 0 || !quietPlanOf(p.Env.Memo).share || !handTakerAfter(p.Env.Memo, k, p.Run) || !stdioLive(c) {
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

// takeHandedOn is the process handed on in p's repetition (handOn) if it
// still runs and answers (handed is true), else a new one (Env.Fresh).
func takeHandedOn(p *check.Pass) (c *mcpclient.Client, closeFn func(), handed bool, err error) {
	if h := handedOnIn(p); h != nil {
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

// handedOnIn is the slot of p's repetition (nil without a Memo).
func handedOnIn(p *check.Pass) *handedOn {
	if p.Env.Memo == nil {
		return nil
	}
	h, _ := p.Env.Memo.Do(handOnKey{p.Run}, func() any { return &handedOn{} }).(*handedOn)
	return h
}

// servesDiscover: c answers server/discover with a result or an error
// within servesIdle of silence.
func servesDiscover(ctx context.Context, c *mcpclient.Client) bool {
	return discoverAnswered(transport.WithIdleSilence(ctx, servesIdle), c) == nil
}

// discoverAnswered is nil when c answers server/discover with a result or
// an error within wireTimeout (and whatever idle bound ctx or c's process
// sets); else what happened instead.
func discoverAnswered(ctx context.Context, c *mcpclient.Client) error {
	ctx, cancel := context.WithTimeout(ctx, wireTimeout)
	defer cancel()
	r, err := c.Do(ctx, "server/discover", nil)
	switch {
	case err != nil:
		return err
	case r == nil || r.Result == nil && r.Error == nil:
		return errors.New("no answer")
	}
	return nil
}

// answersAgain is nil when c, a new process that has answered its probe
// and nothing since, answers server/discover once more: a check that
// judges what such a process does after its own requests (RPC-5's
// malformed lines, STATE-1's and META-1's requests without a field) first
// makes sure it answers at all. One that answers its probe and then nothing
// (a server that cannot run twice at once, waiting on the first process's
// lock) would otherwise read as a server that those requests silenced or
// left without a baseline; it is the run's error. The wait is the pool's
// for a new process's first server/discover (afterProbeBounds), not
// servesIdle: a gateway's server/discover may wait on its upstreams.
func answersAgain(p *check.Pass, c *mcpclient.Client) error {
	if err := discoverAnswered(p.Ctx, c); err != nil {
		return fmt.Errorf("a new process of the server answered its probe and then not server/discover (%v), before %s sent anything of its own: there is no process that answers to judge (the server may not run twice at once)", err, p.Check.ID)
	}
	return nil
}

// servesIdle: a server that reads a request and writes nothing for
// this long has stopped answering (it needs no outside work for
// server/discover); the transport waits three times what the process
// took to answer one before where that is longer.
const servesIdle = 500 * time.Millisecond

// stdioLive: c is a stdio process that has neither exited nor been found
// silent.
func stdioLive(c *mcpclient.Client) bool {
	st, ok := c.Transport().(*transport.StdioTransport)
	return ok && !stdioGone(st)
}
