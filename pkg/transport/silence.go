package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// Silence is what made a stdio server stop answering: the first message
// written after its last line on stdout, and the request that then waited
// in vain.
type Silence struct {
	// Since describes the first message the server got after it last
	// wrote: most often the probe that silenced it.
	Since string
	// Request is the operation that timed out, e.g. "stdio server/discover".
	Request string
	// After is how long Request waited.
	After time.Duration
	// Idle is true when the wait ended early because the server had read
	// everything and sat idle (see WithIdleSilence).
	Idle bool
	// SinceRequest is the method of Since when it was a request sent as
	// one (RoundTrip, not marked Raw) and nothing but such requests was
	// written since the server last answered one; "" otherwise. A server
	// silenced then stopped at messages any client may send, while one
	// that got a raw line or a notification may have been broken by it,
	// even if it answered the line first.
	SinceRequest string
}

func (s *Silence) String() string {
	return fmt.Sprintf("the server has written nothing since %s (%s got no answer within %s%s)", s.Since, s.Request, s.After.Round(time.Millisecond), s.idleNote())
}

func (s *Silence) idleNote() string {
	if s.Idle {
		return ", the server having read it and used no CPU since"
	}
	return ""
}

// silenceMin is the shortest timeout taken for silence: a caller that
// waits less is asking whether something comes at all (a notification
// that must go unanswered), not waiting for an answer.
const silenceMin = 2 * time.Second

// silenceRetry is how long a request to a server found silent waits for
// an answer: one that comes revives it, and the request then waits its
// full deadline.
const silenceRetry = time.Second

// idleTook is how many times the longest a process took to answer a
// method its idle bound for that method is at least
// (StdioTransport.took).
const idleTook = 3

// coldMost bounds what a process's answers before its first one count
// toward its idle bounds: their wait holds its start, and a start of
// seconds (docker run -i) must not keep a server that went deaf from
// being found so for most of the request's timeout.
const coldMost = time.Second

type idleSilenceKey struct{}

// WithIdleSilence marks requests made with ctx as needing no outside work
// (server/discover after a raw line, say): on stdio, once the server has
// read the whole request, written nothing, and used no CPU for bound, it
// is taken as silent instead of waiting out the deadline. A server that is
// merely slow is still reading or still computing, so it is not cut short;
// a request whose answer waits on the network must not use this. The
// bound is never less than three times what the process took to answer
// the method before (StdioTransport.took): a gateway's
// server/discover that waits on its upstreams is not silence.
func WithIdleSilence(ctx context.Context, bound time.Duration) context.Context {
	return context.WithValue(ctx, idleSilenceKey{}, bound)
}

func idleSilenceOf(ctx context.Context) time.Duration {
	d, _ := ctx.Value(idleSilenceKey{}).(time.Duration)
	return d
}

// SetFirstIdle gives the requests of the methods in bounds an idle bound
// (WithIdleSilence) until the server answers a request from now on: for
// a new process of a server whose first process answered them, one that
// reads such a request and sits idle that long is stuck, not slow. Only
// a request sent alone, on a server that has been sent nothing but
// requests since it last answered one, gets it: one queued behind another
// request, a raw line or a notification may be waiting for it, or broken
// by it. A request whose context carries its own bound, or one marked
// Raw, keeps its own wait.
func (t *StdioTransport) SetFirstIdle(bounds map[string]time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.firstIdle, t.answered = bounds, false
}

// Silenced returns what silenced the server, or nil while it answers.
// Once a request has timed out with no line at all from the server since
// it was written, later requests fail after silenceRetry instead of their
// deadline, naming it, until the server writes again.
func (t *StdioTransport) Silenced() *Silence {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.silenced == nil {
		return nil
	}
	s := *t.silenced
	return &s
}

// LastLine is when the server last wrote a line (zero before its first).
func (t *StdioTransport) LastLine() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastOut
}

// Waiting is how many requests sent on the transport still wait for
// their answer.
func (t *StdioTransport) Waiting() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

// heardLocked notes a line from the server: it is not silent.
func (t *StdioTransport) heardLocked(at time.Time) {
	t.lastOut, t.sinceOut, t.silenced = at, "", nil
}

// wroteLocked notes a message written to the server; method is its
// method when it was a request sent as one (Silence.SinceRequest), else "".
func (t *StdioTransport) wroteLocked(b []byte, method string) {
	if t.sinceOut == "" {
		t.sinceOut, t.sinceReq = describeLine(b), method
	}
	if method == "" {
		t.oddSince = true
	}
}

// silentLocked records that op, written at start, got no answer.
func (t *StdioTransport) silentLocked(op string, start time.Time, after time.Duration, idle bool) *Silence {
	if t.lastOut.After(start) {
		return nil // the server wrote meanwhile: busy or confused, not silent
	}
	if t.silenced == nil {
		since, sinceReq := t.sinceOut, t.sinceReq
		if since == "" {
			since = op
		}
		if t.oddSince {
			sinceReq = ""
		}
		t.silenced = &Silence{Since: since, Request: op, After: after, Idle: idle, SinceRequest: sinceReq}
	}
	s := *t.silenced
	return &s
}

// describeLine names a written line for a message: its method, or an
// excerpt when it is not a JSON-RPC request.
func describeLine(b []byte) string {
	var m struct {
		Method json.RawMessage `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(b, &m) == nil {
		var method string
		if json.Unmarshal(m.Method, &method) == nil && method != "" {
			if len(m.ID) > 0 {
				return "the request " + method
			}
			return "the notification " + method
		}
		return fmt.Sprintf("the line %q", jsonrpc.Clip(string(b), 80))
	}
	return fmt.Sprintf("the unparseable line %q", jsonrpc.Clip(string(b), 80))
}

// idleWatch closes the returned channel once the server has read all of
// stdin, written nothing since start, and its process group has used no
// CPU for bound. It stops with stop.
func (t *StdioTransport) idleWatch(start time.Time, bound time.Duration) (idle <-chan struct{}, stop func()) {
	ch := make(chan struct{})
	done := make(chan struct{})
	go func() {
		tick := bound / 5
		tk := time.NewTicker(tick)
		defer tk.Stop()
		var quietSince time.Time
		// A first CPU sample before the first tick, so that the first tick
		// can already find the server idle (with none, the first tick only
		// took the sample, and every silence was found one tick later).
		// Not at once: most requests are answered within a few ms, and a
		// sample reads /proc for each of the group's threads (2-3 ms of CPU
		// for a Go server under load; twenty a run).
		lastCPU := int64(-1)
		first := time.NewTimer(tick / 4)
		defer first.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.dead:
				return
			case <-first.C:
				lastCPU, _ = groupCPU(t.pgid)
			case now := <-tk.C:
				t.mu.Lock()
				heard := t.lastOut.After(start)
				t.mu.Unlock()
				if heard {
					return
				}
				cpu, running := groupCPU(t.pgid)
				if unread := t.stdinUnread(); unread != 0 || running || cpu < 0 || cpu > lastCPU+1 {
					// Still reading, computing, or unknowable: not idle.
					quietSince, lastCPU = time.Time{}, cpu
					continue
				}
				if quietSince.IsZero() {
					quietSince = now
					continue
				}
				if now.Sub(quietSince) >= bound {
					close(ch)
					return
				}
			}
		}
	}()
	return ch, func() { close(done) }
}

// stdinUnread is how many bytes wait in the server's stdin pipe, or -1
// when that cannot be known.
func (t *StdioTransport) stdinUnread() int {
	rc, err := t.stdin.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	_ = rc.Control(func(fd uintptr) {
		var v int32
		// FIONREAD works on either end of a Linux pipe.
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&v))); e == 0 {
			n = int(v)
		}
	})
	return n
}

// clockTicks is the unit of /proc's CPU times per second (USER_HZ, 100 on
// Linux).
const clockTicks = 100

// CPU is the CPU time the server's process and its live descendants have
// used so far (not descendants that already exited: their time is not in
// /proc until reaped); false when /proc cannot tell.
func (t *StdioTransport) CPU() (time.Duration, bool) {
	ticks, _ := groupCPU(t.pgid)
	if ticks < 0 {
		return 0, false
	}
	return time.Duration(ticks) * time.Second / clockTicks, true
}

// MachineCPU is the CPU time all the machine's cores have spent busy
// since boot (/proc/stat: all but idle and iowait), whoever the work was
// for: a server that runs in a daemon's processes (docker run -i) uses it
// without using any of its own process group's; false where /proc cannot
// tell.
func MachineCPU() (time.Duration, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var buf [512]byte
	n, _ := f.Read(buf[:])
	line, _, ok := strings.Cut(string(buf[:n]), "\n")
	if !ok {
		return 0, false
	}
	fields := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice],
	// guest time already counted in user.
	if len(fields) < 8 || fields[0] != "cpu" {
		return 0, false
	}
	var busy int64
	for i, v := range fields[1:min(len(fields), 9)] {
		ticks, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		if i != 3 && i != 4 {
			busy += ticks
		}
	}
	return time.Duration(busy) * (time.Second / clockTicks), true
}

// groupCPU is the CPU time, in clock ticks, of the process pid and its
// descendants, and whether one of them is running; -1 when /proc cannot
// tell.
func groupCPU(pid int) (ticks int64, running bool) {
	seen := map[int]bool{}
	var walk func(p int) bool
	walk = func(p int) bool {
		if seen[p] || len(seen) > 64 {
			return true
		}
		seen[p] = true
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "stat"))
		if err != nil {
			return len(seen) > 1 // a child may exit meanwhile; the leader must be there
		}
		// Fields after the command name, which is in parentheses and may
		// hold spaces: state is the first, utime and stime the 12th and 13th.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			return false
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 13 {
			return false
		}
		if f[0] == "R" || f[0] == "D" || anyThreadRunning(p) {
			running = true
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(p), "task", "*", "children"))
		for _, tf := range tasks {
			cb, _ := os.ReadFile(tf)
			for _, c := range strings.Fields(string(cb)) {
				if n, err := strconv.Atoi(c); err == nil && !walk(n) {
					return false
				}
			}
		}
		return true
	}
	if !walk(pid) {
		return -1, false
	}
	return ticks, running
}

// anyThreadRunning reports whether a thread of pid is running or waiting
// for a CPU (state R) or in uninterruptible sleep (D): a process that is
// about to answer on a loaded machine.
func anyThreadRunning(pid int) bool {
	stats, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "stat"))
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && (s[i+2] == 'R' || s[i+2] == 'D') {
			return true
		}
	}
	return false
}
