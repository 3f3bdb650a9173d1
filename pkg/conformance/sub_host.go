package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// On stdio the listen requests of one repetition's SUB checks share one
// process that carries nothing else while they are open (no other check's
// requests, so a log or progress notification on it can only be on a
// listen stream, SUB-5): the repetition's quiet process once its turns are
// over and settled, which RPC-5 takes over after the listens on a dear
// start (subHost.process). The spec lets several subscriptions run on one
// connection, demultiplexed by _meta subscriptionId (basic/patterns/subscriptions.mdx
// §Multiple Subscriptions), so each listen reads what carries its id:
//
//   - a notification (or server request) whose subscriptionId is the id of
//     a listen open on the process goes to that listen only;
//   - one with no subscriptionId, or an id no open listen has (a made-up
//     one, or the id of a listen the client already cancelled), belongs
//     to no subscription it could be attributed to, so every listen open
//     when it arrives sees it and judges it as it would on a process of
//     its own (SUB-4 fails on the wrong id, SUB-5 on a log message);
//   - a response goes to the open listen with its id, and is dropped
//     otherwise (a fence, or the answer to a cancelled listen).
//
// A listen the check closes is cancelled (notifications/cancelled for its
// id) instead of its process being stopped. The listens that judge the
// subscriptionId of every message (subWatched: SUB-2, SUB-4) hold the
// process alone while open: with another listen open, a notification
// mislabelled with that listen's id would go to it and look right there.
//
// Lifetime: Run counts the SUB check runs of each repetition (subCount);
// every SUB check says when it returned (subRun), and when the last of a
// repetition has, its process is stopped. Whatever is left is stopped when
// Execute returns (closeAll). Without the count (a driver that did not
// call subCount) a process is stopped as soon as no listen uses it.

type subHostsKey struct{}

// subHosts are the listen processes of a run, by repetition.
type subHosts struct {
	mu      sync.Mutex
	counted bool
	left    map[int]int // SUB check runs of the repetition still to return
	hosts   map[int]*subHost
}

// subCount registers in memo how many SUB check runs each repetition has
// among selected, so the repetition's listen process is stopped when the
// last returned. It returns the registry, whose closeAll the caller runs
// after check.Execute.
func subCount(memo *check.Memo, kind string, selected []*check.Check, runs int) *subHosts {
	h := subHostsOf(memo)
	if kind != "stdio" {
		return h
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counted = true
	for r, n := range runsByRepetition(selected, runs, subUsesHost) {
		h.left[r] += n
	}
	return h
}

// runsByRepetition counts, for each repetition, the runs of the checks
// among selected that want says take part: a MUST check runs in each of
// runs repetitions, any other in the first only (check.Execute).
func runsByRepetition(selected []*check.Check, runs int, want func(*check.Check) bool) map[int]int {
	n := map[int]int{}
	for _, c := range selected {
		if !want(c) {
			continue
		}
		k := 1
		if c.Level == check.Must {
			k = runs
		}
		for r := range k {
			n[r]++
		}
	}
	return n
}

func subUsesHost(c *check.Check) bool {
	for _, s := range subFamily.checks {
		if s == c {
			return c.Transports.Has("stdio")
		}
	}
	return false
}

func subHostsOf(memo *check.Memo) *subHosts {
	v := memo.Do(subHostsKey{}, func() any { return &subHosts{left: map[int]int{}, hosts: map[int]*subHost{}} })
	h, _ := v.(*subHosts)
	return h
}

// host is repetition run's listen host.
func (h *subHosts) host(run int) *subHost {
	h.mu.Lock()
	defer h.mu.Unlock()
	x := h.hosts[run]
	if x == nil {
		x = &subHost{finished: !h.counted}
		x.cond = sync.NewCond(&x.mu)
		h.hosts[run] = x
	}
	return x
}

// checkDone is called when a SUB check of repetition run returned.
func (h *subHosts) checkDone(run int) {
	h.mu.Lock()
	if !h.counted {
		h.mu.Unlock()
		return
	}
	h.left[run]--
	last := h.left[run] == 0
	x := h.hosts[run]
	h.mu.Unlock()
	if last && x != nil {
		x.finish(false)
	}
}

// closeAll stops every listen process still running.
func (h *subHosts) closeAll() {
	h.mu.Lock()
	hosts := make([]*subHost, 0, len(h.hosts))
	for _, x := range h.hosts {
		hosts = append(hosts, x)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, x := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.finish(true)
		}()
	}
	wg.Wait()
}

// subRun wraps a SUB check's Run so that its repetition's listen process
// learns when the check is over.
func subRun(run func(*check.Pass) error) func(*check.Pass) error {
	return func(p *check.Pass) error {
		if p.Env.Transport == "stdio" && p.Env.Memo != nil {
			defer subHostsOf(p.Env.Memo).checkDone(p.Run)
		}
		return run(p)
	}
}

// subHost is one repetition's listen process (a new one replaces it when
// it died, so a server that a listen made exit fails that check, not the
// later ones).
type subHost struct {
	mu       sync.Mutex
	cond     *sync.Cond
	cur      *subProc
	procs    []*subProc
	finished bool // no SUB check of the repetition is left
	// shared counts the listens open; alone is set while a listen that
	// must have the process to itself is open.
	shared int
	alone  bool
	// laneUsed: the host has had the repetition's quiet process.
	laneUsed bool
}

// acquire waits until a listen may open (alone: with no other open) and
// returns the process to open it on.
func (x *subHost) acquire(p *check.Pass, alone bool) (*subProc, error) {
	x.mu.Lock()
	for x.alone || (alone && x.shared > 0) {
		if p.Ctx.Err() != nil {
			x.mu.Unlock()
			return nil, p.Ctx.Err()
		}
		x.cond.Wait()
	}
	if alone {
		x.alone = true
	}
	x.shared++
	defer x.mu.Unlock()
	opened := false
	defer func() {
		// A panic while the process is got (the driver recovers it) must
		// not leave this listen counted: the others would wait for it
		// for ever.
		if v := recover(); v != nil {
			if !opened {
				x.releaseLocked(nil, alone)
			}
			panic(v)
		}
	}()
	if x.cur == nil || x.cur.dead() {
		if x.cur != nil && x.cur.users == 0 {
			go x.cur.close()
		}
		c, closeFn, err := x.process(p)
		if err == nil {
			var pr *subProc
			if pr, err = newSubProc(c, closeFn); err == nil {
				x.cur = pr
				x.procs = append(x.procs, pr)
			}
		}
		if err != nil {
			x.releaseLocked(nil, alone)
			return nil, err
		}
	}
	opened = true
	x.cur.users++
	return x.cur, nil
}

// process is a process for the host's listens: where the run shares
// processes (quietPlan) the first is the repetition's quiet process, held
// as one long turn from the first listen until the repetition's last SUB
// check has returned (the SUB checks follow the checks that take quiet
// turns); otherwise, and for a process
// that replaces one that died, a new one. Called with x.mu held.
func (x *subHost) process(p *check.Pass) (*mcpclient.Client, func(), error) {
	if x.laneUsed || p.Env.Memo == nil || !quietPlanOf(p.Env.Memo).share {
		return p.Env.Fresh(p.Ctx)
	}
	x.laneUsed = true
	return quietTurn(p)
}

// release ends a listen's use of pr.
func (x *subHost) release(pr *subProc, alone bool) {
	x.mu.Lock()
	stop := x.releaseLocked(pr, alone)
	x.mu.Unlock()
	if stop {
		pr.close()
	}
}

func (x *subHost) releaseLocked(pr *subProc, alone bool) (stop bool) {
	x.shared--
	if alone {
		x.alone = false
	}
	x.cond.Broadcast()
	if pr == nil {
		return false
	}
	pr.users--
	if pr.users == 0 && (x.finished || pr != x.cur) {
		if pr == x.cur {
			x.cur = nil
		}
		return true
	}
	return false
}

// finish stops the processes no listen uses (all of them when force).
func (x *subHost) finish(force bool) {
	x.mu.Lock()
	x.finished = true
	var stop []*subProc
	keep := x.procs[:0]
	for _, pr := range x.procs {
		if pr.users == 0 || force {
			stop = append(stop, pr)
			if pr == x.cur {
				x.cur = nil
			}
		} else {
			keep = append(keep, pr)
		}
	}
	x.procs = keep
	x.mu.Unlock()
	for _, pr := range stop {
		pr.close()
	}
}

// subProc is a listen-only process and the listens open on it.
type subProc struct {
	client *mcpclient.Client
	st     *transport.StdioTransport
	users  int // guarded by the host's mu

	mu     sync.Mutex
	open   map[string]chan transport.Inbound // by jsonrpc.IDKey of the listen id
	done   chan struct{}
	once   sync.Once
	closeC func()
	stopT  func()
}

func newSubProc(c *mcpclient.Client, closeFn func()) (*subProc, error) {
	st, ok := c.Transport().(*transport.StdioTransport)
	if !ok {
		closeFn()
		return nil, errors.New("fresh connection is not stdio")
	}
	tap, stop := st.Tap(512)
	pr := &subProc{client: c, st: st, open: map[string]chan transport.Inbound{}, done: make(chan struct{}), closeC: closeFn, stopT: stop}
	go pr.demux(tap)
	return pr, nil
}

func (pr *subProc) dead() bool {
	select {
	case <-pr.st.Exited():
		return true
	default:
		return false
	}
}

// demux hands each stdout line to the listens it belongs to (see the
// comment at the top of this file).
func (pr *subProc) demux(tap <-chan transport.Inbound) {
	for {
		select {
		case <-pr.done:
			return
		case in := <-tap:
			pr.mu.Lock()
			var to []chan transport.Inbound
			switch m := in.Msg; {
			case m != nil && m.Kind() == jsonrpc.KindResponse:
				if ch := pr.open[jsonrpc.IDKey(m.ID)]; ch != nil {
					to = append(to, ch)
				}
			case m != nil:
				if id := progSubID(m); id != nil {
					if ch := pr.open[jsonrpc.IDKey(id)]; ch != nil {
						to = append(to, ch)
						break
					}
				}
				fallthrough
			default:
				// No id, an unknown one, or a line that is no message:
				// no listen can be told apart as its own.
				for _, ch := range pr.open {
					to = append(to, ch)
				}
			}
			pr.mu.Unlock()
			for _, ch := range to {
				select {
				case ch <- in:
				default: // as Tap: a reader that fell that far behind loses lines
				}
			}
		}
	}
}

// register makes id's messages go to a new channel, before the listen is
// written so that its acknowledgment cannot be missed.
func (pr *subProc) register(id json.RawMessage) <-chan transport.Inbound {
	ch := make(chan transport.Inbound, 512)
	pr.mu.Lock()
	pr.open[jsonrpc.IDKey(id)] = ch
	pr.mu.Unlock()
	return ch
}

func (pr *subProc) unregister(id json.RawMessage) {
	pr.mu.Lock()
	delete(pr.open, jsonrpc.IDKey(id))
	pr.mu.Unlock()
}

// cancel writes notifications/cancelled for the listen id.
func (pr *subProc) cancel(ctx context.Context, id json.RawMessage) error {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": id, "reason": "conformance check"}})
	return pr.st.WriteLine(ctx, line)
}

func (pr *subProc) close() {
	pr.once.Do(func() {
		close(pr.done)
		pr.stopT()
		pr.closeC()
	})
}

// subCancelWait bounds writing a cancellation when a listen is closed.
const subCancelWait = 2 * time.Second
