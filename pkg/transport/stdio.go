package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// StdioConfig configures a server spawned as a subprocess. The zero value of
// every field but Argv is the documented default.
type StdioConfig struct {
	// Argv is the command and its arguments; Argv[0] is looked up in PATH.
	Argv []string
	// Dir is the working directory (default: the harness's).
	Dir string
	// Env is the complete environment of the server; build it with
	// ServerEnv. Nil means the allowlist of ServerEnv alone.
	Env []string
	// MaxMessageBytes bounds one stdout line (default 4 MiB).
	MaxMessageBytes int
	// StderrBytes is how much of the end of stderr is kept (default 64 KiB).
	StderrBytes int
	// ShutdownGrace is how long the server gets to exit after stdin is
	// closed before SIGTERM (default 2s); TermGrace how long after SIGTERM
	// before SIGKILL (default 2s).
	ShutdownGrace time.Duration
	TermGrace     time.Duration
	// RunAs, when set, starts the server under that uid and gid, with a
	// private TMPDIR and HOME (see RunAs). Nil runs it as the harness.
	RunAs *RunAs
}

// Inbound is one stdout line as the raw layer sees it.
type Inbound struct {
	Raw []byte
	Msg *jsonrpc.Message // nil when the line is not a JSON-RPC message
	Err error            // why Msg is nil
	At  time.Time
}

// ShutdownReport says how the server process ended (STDIO-4).
type ShutdownReport struct {
	ExitCode int
	// Escalation is "" when the server exited after stdin was closed,
	// "SIGTERM" or "SIGKILL" when it had to be signalled.
	Escalation string
	// Took is the time from closing stdin to the process's exit.
	Took time.Duration
	// ExitedEarly is true when the process was gone before it was
	// stopped.
	ExitedEarly bool
	// Hurried: the process got less than ShutdownGrace before SIGTERM
	// (Stops.grace); Escalation then says nothing about the server.
	Hurried bool
}

// StdioTransport runs an MCP server as a child process in its own process
// group and exchanges newline-delimited JSON-RPC with it. Responses are
// matched to requests by id; notifications go to the request they belong to
// (by subscription id, progress token, or because it is the only one in
// flight) and otherwise to Unattributed.
type StdioTransport struct {
	cfg    StdioConfig
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	pgid   int

	writeMu sync.Mutex

	mu           sync.Mutex
	pending      map[string]*pendingReq
	abandoned    map[string]bool
	taps         map[int]chan Inbound
	nextTap      int
	anomalies    []Anomaly
	unattributed []*jsonrpc.Message
	stderrTail   tailBuffer
	// Budgets bound what a flooding server makes the harness keep.
	anomalyBudget keepBudget
	unattrBudget  keepBudget
	// noise counts what came instead of answers, for timeout messages.
	noise noiseCount

	// lost are the requests in flight when the process exited (Lost).
	lost       [][]byte
	exited     chan struct{} // closed when the process has exited
	readerDone chan struct{} // closed at stdout EOF
	stderrDone chan struct{} // closed at stderr EOF
	dead       chan struct{} // closed when no more responses can come
	exitCode   int
	deadErr    error

	// rawIDs are the ids of requests written through WriteLine, by when:
	// their answers are not strays, and while one may still come, a
	// stray cannot be pinned on the one request in flight.
	rawIDs map[string]time.Time
	watch  watchers

	// lastOut is when the server last wrote a line, sinceOut the first
	// message written to it after that, and silenced set once a request
	// timed out with nothing at all from the server (see Silenced).
	lastOut  time.Time
	sinceOut string
	sinceReq string // sinceOut's method when it was a request sent as one (Silence.SinceRequest)
	silenced *Silence
	// firstIdle and answered: see SetFirstIdle. oddSince: a raw line, a
	// Raw request or a notification was written since the server last
	// answered a request sent as one (Silence.SinceRequest).
	firstIdle map[string]time.Duration
	answered  bool
	oddSince  bool
	// took is, by method and whether it was sent once the process had
	// answered something (warm) or before (cold: a wait that held the
	// process's start too, as its probe's did), the longest a request sent
	// as one, alone, waited for its answer on this process. An idle bound
	// (WithIdleSilence, SetFirstIdle) is never less than three times the
	// warm figure, or the cold one (at most coldMost) while there is no
	// warm one: a process that took that long to answer a method, idle (a
	// gateway asking its upstreams), is not silent for taking as long
	// again. (The cold figure alone made go-sdk's 1,000-tool server, deaf
	// after a malformed line, wait 3 × its start instead of 0.5 s in each
	// of RPC-5's runs: 3.84 s → 4.74 s a run.)
	took map[tookKey]time.Duration
	warm bool // the process has answered a request (unlike answered, never reset)

	closeOnce sync.Once
	shutdown  ShutdownReport
	aside     *Stops // see CloseAside; guarded by mu
	asideOnce sync.Once
	wroteRaw  bool   // a line went out through WriteLine; guarded by mu
	cleanup   func() // removes the RunAs private directory
}

// tookKey is a method, and whether its request was sent once the process
// had answered something (StdioTransport.took).
type tookKey struct {
	method string
	warm   bool
}

type pendingReq struct {
	id       json.RawMessage
	method   string
	body     []byte          // the request as sent, read only if the process dies with it in flight
	progress json.RawMessage // the request's _meta.progressToken
	ch       chan *jsonrpc.Message
	ex       *Exchange
	budget   keepBudget // messages kept in ex
	onNote   func(*jsonrpc.Message)
	// err is why a nil was sent on ch: the answer came but was unusable.
	// Written before the send, read after the receive.
	err *Error
}

var _ Transport = (*StdioTransport)(nil)

// StartStdio spawns the server. The process lives until Close, or until ctx
// is done, whichever comes first; either way its whole process group is
// stopped.
func StartStdio(ctx context.Context, cfg StdioConfig) (*StdioTransport, error) {
	if len(cfg.Argv) == 0 || cfg.Argv[0] == "" {
		return nil, errors.New("no server command given: pass --cmd \"server args…\"")
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.StderrBytes <= 0 {
		cfg.StderrBytes = DefaultStderrBytes
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 2 * time.Second
	}
	if cfg.TermGrace <= 0 {
		cfg.TermGrace = 2 * time.Second
	}
	op := fmt.Sprintf("start %q", cfg.Argv[0])
	path, err := LookCommand(cfg.Argv[0], cfg.Dir)
	if err != nil {
		return nil, &Error{Kind: KindConnect, Op: op, Err: err}
	}
	if cfg.Env == nil {
		cfg.Env, _ = ServerEnv(nil, nil, os.LookupEnv)
	}
	var cred *syscall.Credential
	cleanup := func() {}
	if cfg.RunAs != nil {
		if cred, cfg.Env, cleanup, err = cfg.RunAs.prepare(cfg.Env); err != nil {
			return nil, &Error{Kind: KindConnect, Op: op, Err: err}
		}
	}
	started := false
	defer func() {
		if !started {
			cleanup()
		}
	}()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, &Error{Kind: KindConnect, Op: op, Err: err}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, &Error{Kind: KindConnect, Op: op, Err: err}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, &Error{Kind: KindConnect, Op: op, Err: err}
	}
	cmd := &exec.Cmd{Path: path, Args: cfg.Argv, Dir: cfg.Dir, Env: cfg.Env, Stdin: inR, Stdout: outW, Stderr: errW}
	// Setpgid: the server and everything it spawns can be signalled as one
	// group. Pdeathsig: if the harness itself is killed outright, the kernel
	// still stops the server (it cannot reach grandchildren; the group kill
	// in Close does).
	// Credential drops root when RunAs is set; Go sets the parent-death
	// signal after the uid change, which would otherwise clear it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, &Error{Kind: KindConnect, Op: op, Err: cfg.RunAs.explainStart(err)}
	}
	started = true
	t := &StdioTransport{
		cfg: cfg, cmd: cmd, stdin: inW, stdout: outR, stderr: errR, pgid: cmd.Process.Pid, cleanup: cleanup,
		pending: map[string]*pendingReq{}, abandoned: map[string]bool{}, taps: map[int]chan Inbound{}, rawIDs: map[string]time.Time{},
		stderrTail: tailBuffer{max: cfg.StderrBytes},
		exited:     make(chan struct{}), readerDone: make(chan struct{}), stderrDone: make(chan struct{}), dead: make(chan struct{}),
	}
	go t.readStderr()
	go t.readStdout()
	go t.wait()
	go func() {
		select {
		case <-ctx.Done():
			t.Close()
		case <-t.exited:
		}
	}()
	return t, nil
}

// LookCommand resolves a server's program as StartStdio runs it: a bare
// name through PATH, a relative path under dir (the directory the server
// runs in, not the harness's).
func LookCommand(argv0, dir string) (string, error) {
	lookup := argv0
	if dir != "" && strings.ContainsRune(lookup, '/') && !filepath.IsAbs(lookup) {
		if abs, err := filepath.Abs(filepath.Join(dir, lookup)); err == nil {
			lookup = abs
		}
	}
	path, err := exec.LookPath(lookup)
	switch {
	case err == nil:
	case strings.ContainsRune(lookup, '/'):
		// A path is not looked up on PATH: the file is missing or cannot
		// be run.
		return "", fmt.Errorf("no program to run at that path (is it built, and executable?): %w", err)
	default:
		return "", fmt.Errorf("command not found (is it installed and on PATH?): %w", err)
	}
	return path, nil
}

// Kind implements Transport.
func (t *StdioTransport) Kind() string { return "stdio" }

// Pid is the server's process id (and process group id).
func (t *StdioTransport) Pid() int { return t.pgid }

func (t *StdioTransport) wait() {
	err := t.cmd.Wait()
	code := 0
	if err != nil {
		code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	}
	t.mu.Lock()
	t.exitCode = code
	t.mu.Unlock()
	close(t.exited)
	// A grandchild may keep stdout open after the server exits; do not wait
	// for its EOF forever.
	select {
	case <-t.readerDone:
	case <-time.After(500 * time.Millisecond):
	}
	t.awaitStderr()
	t.markDead()
}

func (t *StdioTransport) markDead() {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.dead:
		return
	default:
	}
	select {
	case <-t.exited:
		t.deadErr = &Error{Kind: KindProcessExited, ExitCode: t.exitCode, Excerpt: t.stderrTail.String(), Serving: t.servingLocked()}
		t.lost = t.lostLocked()
	default:
		t.deadErr = &Error{Kind: KindClosed, Err: errors.New("the server closed its stdout")}
	}
	close(t.dead)
}

// lostMax bounds the requests Lost keeps (a caller sends some again):
// enough for a few distinct ones beside several calls of one tool.
const lostMax = 16

// lostLocked is the requests in flight, as sent: tool calls first (the
// likeliest to end a process), then by method and body, for one order
// from run to run.
func (t *StdioTransport) lostLocked() [][]byte {
	ps := make([]*pendingReq, 0, len(t.pending))
	for _, p := range t.pending {
		if len(p.body) > 0 {
			ps = append(ps, p)
		}
	}
	sort.Slice(ps, func(i, j int) bool {
		ci, cj := ps[i].method == "tools/call", ps[j].method == "tools/call"
		if ci != cj {
			return ci
		}
		if ps[i].method != ps[j].method {
			return ps[i].method < ps[j].method
		}
		return bytes.Compare(ps[i].body, ps[j].body) < 0
	})
	var out [][]byte
	for _, p := range ps {
		if len(out) == lostMax {
			break
		}
		out = append(out, bytes.Clone(p.body))
	}
	return out
}

// Lost says, once the process has exited, its exit code and the requests
// it was serving then (at most lostMax, each as sent; none when nothing
// was in flight, or before it exited): what to send again, alone, to learn
// which of them ends the server.
func (t *StdioTransport) Lost() (code int, requests [][]byte) {
	select {
	case <-t.dead:
	default:
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exitCode, t.lost
}

// servingLocked names the requests in flight, tool calls first (the
// likeliest to have ended a process that exits with them): "tools/call
// \"add\", server/discover and 2 more". Every later error of the process
// says it, so a run that lost its server says which call was there.
func (t *StdioTransport) servingLocked() string {
	count := map[string]int{}
	var calls, other []string
	for _, p := range t.pending {
		what := p.method
		if p.method == "tools/call" {
			var m struct {
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal(p.body, &m)
			what = fmt.Sprintf("tools/call %q", jsonrpc.Clip(m.Params.Name, 60))
		}
		if count[what]++; count[what] > 1 {
			continue
		}
		if p.method == "tools/call" {
			calls = append(calls, what)
		} else {
			other = append(other, what)
		}
	}
	sort.Strings(calls)
	sort.Strings(other)
	all := append(calls, other...)
	for i, w := range all {
		if n := count[w]; n > 1 {
			all[i] = fmt.Sprintf("%s (%d)", w, n)
		}
	}
	const named = 3
	switch {
	case len(all) == 0:
		return ""
	case len(all) > named:
		return strings.Join(all[:named], ", ") + fmt.Sprintf(" and %d more", len(all)-named)
	case len(all) == 1:
		return all[0]
	}
	return strings.Join(all[:len(all)-1], ", ") + " and " + all[len(all)-1]
}

// awaitStderr gives the stderr reader a moment to take in the last words
// of a process that exited, so the error that reports the exit quotes
// them ("fatal: missing config") rather than racing them. Bounded: a
// grandchild may hold stderr open.
func (t *StdioTransport) awaitStderr() {
	select {
	case <-t.stderrDone:
	case <-time.After(200 * time.Millisecond):
	}
}

func (t *StdioTransport) readStderr() {
	defer close(t.stderrDone)
	buf := make([]byte, 8<<10)
	for {
		n, err := t.stderr.Read(buf)
		if n > 0 {
			t.mu.Lock()
			t.stderrTail.Write(buf[:n])
			t.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (t *StdioTransport) readStdout() {
	defer func() {
		close(t.readerDone)
		go func() {
			// stdout closed while the process runs: wait briefly for the
			// exit so the error says "exited with code N" when it did.
			select {
			case <-t.exited:
				t.awaitStderr()
			case <-time.After(200 * time.Millisecond):
			}
			t.markDead()
		}()
	}()
	r := bufio.NewReaderSize(t.stdout, 64<<10)
	for {
		line, tooLong, err := readBoundedLine(r, t.cfg.MaxMessageBytes)
		switch {
		case tooLong:
			t.handleTooLong(line)
		case err != nil && len(line) > 0 && !json.Valid(line):
			// stdout ended inside a line: the server stopped in the
			// middle of a message (it exited or closed stdout). The
			// requests still waiting get why it stopped ("exited with
			// code 3"), not a parse error of half a message.
			t.handleCut(line)
		case len(line) > 0 || err == nil:
			t.handleLine(line)
		}
		if err != nil {
			return
		}
	}
}

// readBoundedLine reads up to '\n'. Past limit bytes it keeps the first limit,
// discards the rest of the line and reports tooLong.
//
// A line longer than r's buffer comes in pieces. They are kept apart and
// joined once at the end: appending each to the line instead regrew it
// five times for a 370 KB tools/list answer (1.5 MB allocated for it
// against 0.7 MB; BenchmarkReadBoundedLine).
func readBoundedLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	var parts [][]byte
	n := 0
	for {
		chunk, e := r.ReadSlice('\n')
		if n+len(chunk) > limit {
			chunk = chunk[:max(0, limit-n)]
			tooLong = true
		}
		if e != bufio.ErrBufferFull {
			return bytes.TrimRight(bytes.Join(append(parts, chunk), nil), "\r\n"), tooLong, e
		}
		if len(chunk) > 0 {
			parts = append(parts, bytes.Clone(chunk))
			n += len(chunk)
		}
	}
}

func (t *StdioTransport) handleCut(partial []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.anomalyLocked(Anomaly{Kind: "cut-line", Detail: "stdout ended inside a line: the server stopped in the middle of a message", Excerpt: excerpt(partial)})
}

func (t *StdioTransport) handleTooLong(prefix []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.anomalyLocked(Anomaly{Kind: "line-too-long", Detail: fmt.Sprintf("stdout line longer than %d bytes was dropped", t.cfg.MaxMessageBytes), Excerpt: excerpt(prefix[:min(len(prefix), 200)])})
	// The dropped line is the answer to the request its id names (the id
	// comes early in the line), or most likely to the one request in
	// flight; fail that one now instead of letting it wait for its
	// deadline.
	p := t.pendingByEnvelopeLocked(prefix)
	if p == nil {
		p = t.soleLocked()
	}
	if p != nil {
		t.failLocked(p, Anomaly{Kind: "line-too-long", Detail: "a stdout line over the size limit was dropped"}, &Error{Kind: KindTooLarge, Limit: int64(t.cfg.MaxMessageBytes)})
	}
}

// pendingByEnvelopeLocked is the request a line that could not be used as
// a message was meant to answer, going by its envelope's id.
func (t *StdioTransport) pendingByEnvelopeLocked(line []byte) *pendingReq {
	id, ok := envelopeID(line)
	if !ok {
		return nil
	}
	return t.pending[jsonrpc.IDKey(id)]
}

// failLocked ends a pending request with err: its answer arrived but cannot
// be used. The request leaves pending at once, so a later line with its id
// is a late response rather than a second send on its channel (which,
// with t.mu held, would hang the reader and the harness).
func (t *StdioTransport) failLocked(p *pendingReq, a Anomaly, err *Error) {
	key := jsonrpc.IDKey(p.id)
	delete(t.pending, key)
	t.abandoned[key] = true
	p.ex.Anomalies = append(p.ex.Anomalies, a)
	p.err = err
	p.ch <- nil // buffered, and p is no longer reachable: never blocks
}

// anomalyLocked records a framing problem within the anomaly budget and
// reports whether it was kept.
func (t *StdioTransport) anomalyLocked(a Anomaly) bool {
	ok, first := t.anomalyBudget.take(len(a.Excerpt))
	switch {
	case ok:
		t.anomalies = append(t.anomalies, a)
	case first:
		t.anomalies = append(t.anomalies, floodAnomaly("stray lines"))
	}
	return ok
}

// lineAnomalyLocked records a line that breaks the framing rules and
// returns it for the watchers while the budget keeps it: past the budget
// a flood of such lines is one anomaly, not a call per line.
func (t *StdioTransport) lineAnomalyLocked(a Anomaly) *Anomaly {
	if !t.anomalyLocked(a) {
		return nil
	}
	return &a
}

// keepLocked reports whether one more message of size bytes may be kept in
// p's exchange, recording the flood once when it may not.
func (p *pendingReq) keepLocked(size int) bool {
	ok, first := p.budget.take(size)
	if first {
		p.ex.Anomalies = append(p.ex.Anomalies, floodAnomaly("messages for one request"))
	}
	return ok
}

// handleLine routes one stdout line and tells the watchers of a stray
// response or of a line that breaks the framing rules, outside the lock.
func (t *StdioTransport) handleLine(line []byte) {
	stray, bad := t.route(line)
	if stray != nil {
		t.watch.tell(Seen{Exchange: strayExchange(stray), Transport: "stdio"})
	}
	if bad != nil {
		t.watch.tell(Seen{Line: bad, Transport: "stdio"})
	}
}

// strayGrace is how long the one request in flight still waits for an
// answer under its own id after a response under an id nobody sent; then
// that response is taken for its answer, under a wrong id, and the
// request fails at once instead of waiting out its deadline.
const strayGrace = time.Second

// StrayPinned is the Anomaly kind of a request that failed because the
// one response that came while it was alone in flight carried another id.
// The watchers were told of that response as a stray already.
const StrayPinned = "stray-pinned"

// pinLater fails p with the stray m as its answer unless p's own answer
// comes within strayGrace.
func (t *StdioTransport) pinLater(p *pendingReq, m *jsonrpc.Message, ex string) {
	time.AfterFunc(strayGrace, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.pending[jsonrpc.IDKey(p.id)] != p {
			return // answered, failed or gone meanwhile
		}
		p.ex.Response = m
		t.failLocked(p, Anomaly{Kind: StrayPinned, Detail: "the only response while this request was in flight carries another id", Excerpt: ex},
			&Error{Kind: KindBadID, Excerpt: ex, Err: fmt.Errorf("response id %s, request id %s", jsonrpc.Clip(string(m.ID), 40), p.id)})
	})
}

// rawGrace is how long a request written through WriteLine may still be
// answered (the raw layer's exchanges are bounded by 10s).
const rawGrace = 10 * time.Second

// rawOutstandingLocked reports whether a raw request may still be
// answered.
func (t *StdioTransport) rawOutstandingLocked(now time.Time) bool {
	for _, at := range t.rawIDs {
		if now.Sub(at) < rawGrace {
			return true
		}
	}
	return false
}

// route routes one stdout line; it returns a response that answers no
// request in flight and could not be pinned on one (a stray), and the
// anomaly of a line that is not a JSON-RPC message, neither request,
// notification nor response, or a request from the server (bad).
func (t *StdioTransport) route(line []byte) (stray *jsonrpc.Message, bad *Anomaly) {
	// line is the reader's own copy (readBoundedLine appends into a new
	// slice), so taps may keep it.
	in := Inbound{Raw: line, At: time.Now()}
	if len(bytes.TrimSpace(line)) == 0 {
		in.Err = errors.New("blank line")
	} else {
		in.Msg, in.Err = decode(line)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.heardLocked(in.At)
	for _, ch := range t.taps {
		select {
		case ch <- in:
		default:
		}
	}
	if in.Err != nil {
		// STDIO-1: nothing but JSON-RPC on stdout. Recorded, never fatal,
		// unless the line says which request it answers.
		bad = t.lineAnomalyLocked(Anomaly{Kind: "non-json-line", Detail: in.Err.Error(), Excerpt: excerpt(line)})
		t.noise.add(&t.noise.lines, line)
		if p := t.pendingByEnvelopeLocked(line); p != nil {
			t.failLocked(p, Anomaly{Kind: "malformed-response", Detail: in.Err.Error(), Excerpt: excerpt(line)},
				&Error{Kind: KindMalformed, Excerpt: excerpt(line), Err: fmt.Errorf("the answer to this request is not a JSON-RPC message: %w", in.Err)})
		}
		return nil, bad
	}
	m := in.Msg
	switch m.Kind() {
	case jsonrpc.KindResponse:
		key := jsonrpc.IDKey(m.ID)
		if p, ok := t.pending[key]; ok {
			delete(t.pending, key)
			p.ch <- m
			return nil, nil
		}
		if m.Result != nil && string(bytes.TrimSpace(m.ID)) == "null" {
			// A result under id null answers nothing; with one request
			// in flight it can only be that request's, broken.
			if p := t.soleLocked(); p != nil {
				t.failLocked(p, Anomaly{Kind: "null-id", Detail: "result with id null", Excerpt: excerpt(line)},
					&Error{Kind: KindBadID, Excerpt: excerpt(line), Err: errors.New("result with id null")})
				return nil, nil
			}
		}
		kind := "unknown-id"
		_, raw := t.rawIDs[key]
		delete(t.rawIDs, key)
		switch {
		case t.abandoned[key]:
			kind = "late-response"
		case raw:
			// The answer to a line the raw layer wrote, which reads it
			// from a tap.
		case len(bytes.TrimSpace(m.ID)) == 0 || string(bytes.TrimSpace(m.ID)) == "null":
			// An error without an id (or under id null) answers a
			// request whose id could not be read, which the raw layer
			// and RPC-5 send on purpose: it is pinned on no request.
			t.noise.add(&t.noise.idless, line)
		default:
			// An id no request carries: with one request in flight it is
			// that request's answer under a wrong id (basic/index.mdx:
			// the response MUST carry the request's id), a finding now,
			// not a wait for its deadline.
			t.noise.add(&t.noise.strays, line)
			stray = m
			if p := t.soleLocked(); p != nil && !t.rawOutstandingLocked(in.At) {
				t.pinLater(p, m, excerpt(line))
			}
		}
		t.anomalyLocked(Anomaly{Kind: kind, Detail: "response to no request in flight", Excerpt: excerpt(line)})
	case jsonrpc.KindNotification:
		if p := t.attributeLocked(m); p != nil {
			if p.onNote != nil {
				p.onNote(m)
			}
			if p.keepLocked(len(line)) {
				p.ex.Notifications = append(p.ex.Notifications, m)
			}
			return nil, nil
		}
		if ok, first := t.unattrBudget.take(len(line)); ok {
			t.unattributed = append(t.unattributed, m)
		} else if first {
			t.anomalyLocked(floodAnomaly("notifications outside any request"))
		}
	case jsonrpc.KindRequest:
		// RPC-4 / STDIO-2: a 2026-07-28 server never sends requests.
		if p := t.soleLocked(); p != nil && p.keepLocked(len(line)) {
			p.ex.ServerRequests = append(p.ex.ServerRequests, m)
		}
		bad = t.lineAnomalyLocked(Anomaly{Kind: "server-request", Detail: "server sent a JSON-RPC request (" + jsonrpc.Clip(sanitize(m.Method), 60) + ")", Excerpt: excerpt(line)})
	default:
		bad = t.lineAnomalyLocked(Anomaly{Kind: "invalid-message", Detail: "neither request, notification nor response", Excerpt: excerpt(line)})
		if p := t.pendingByEnvelopeLocked(line); p != nil {
			t.failLocked(p, Anomaly{Kind: "invalid-message", Detail: "neither request, notification nor response", Excerpt: excerpt(line)},
				&Error{Kind: KindMalformed, Excerpt: excerpt(line), Err: errors.New("the answer to this request is neither a result nor an error")})
		}
	}
	return stray, bad
}

// attributeLocked finds the request a notification belongs to: by the
// subscription id, the request id a cancellation names, the progress token,
// or because it is the only request in flight.
func (t *StdioTransport) attributeLocked(m *jsonrpc.Message) *pendingReq {
	var p struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		RequestID     json.RawMessage `json:"requestId"` // notifications/cancelled
		Meta          struct {
			SubscriptionID json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.Meta.SubscriptionID != nil {
		if pr, ok := t.pending[jsonrpc.IDKey(p.Meta.SubscriptionID)]; ok {
			return pr
		}
	}
	if p.RequestID != nil {
		if pr, ok := t.pending[jsonrpc.IDKey(p.RequestID)]; ok {
			return pr
		}
	}
	if p.ProgressToken != nil {
		for _, pr := range t.pending {
			if pr.progress != nil && jsonrpc.SameID(pr.progress, p.ProgressToken) {
				return pr
			}
		}
	}
	pr := t.soleLocked()
	if pr != nil && len(t.pending) > 1 {
		// Besides pr only subscriptions/listen streams are open, and the
		// notification may be theirs.
		pr.ex.Ambiguous = true
	}
	return pr
}

// soleLocked is the one request in flight other than subscriptions, if any.
func (t *StdioTransport) soleLocked() *pendingReq {
	var found *pendingReq
	for _, p := range t.pending {
		if p.method == "subscriptions/listen" {
			continue
		}
		if found != nil {
			return nil
		}
		found = p
	}
	return found
}

// Watch implements Watchable.
func (t *StdioTransport) Watch(fn func(Seen)) { t.watch.add(fn) }

// RoundTrip implements Transport.
func (t *StdioTransport) RoundTrip(ctx context.Context, out *Outgoing) (*Exchange, error) {
	ex, err := t.roundTrip(ctx, out)
	if !out.Raw {
		t.watch.tell(Seen{Out: out, Exchange: ex, Err: err, Transport: "stdio"})
	}
	return ex, err
}

func (t *StdioTransport) roundTrip(ctx context.Context, out *Outgoing) (*Exchange, error) {
	op := "stdio " + out.Method
	if len(out.ID) == 0 {
		return nil, &Error{Kind: KindMalformed, Op: op, Err: errors.New("request without an id")}
	}
	key := jsonrpc.IDKey(out.ID)
	p := &pendingReq{id: out.ID, method: out.Method, body: out.Body, progress: progressTokenOf(out.Body), ch: make(chan *jsonrpc.Message, 1), ex: &Exchange{}, onNote: out.OnNotification}
	t.mu.Lock()
	// On a silent server, waiting out the deadline again would only say
	// the same thing: the request gets silenceRetry to revive it.
	again := t.silenced != nil
	bound := idleSilenceOf(ctx)
	if bound <= 0 && !out.Raw && !t.answered && !t.oddSince && len(t.pending) == 0 {
		bound = t.firstIdle[out.Method]
	}
	if bound > 0 {
		took, ok := t.took[tookKey{out.Method, true}]
		if !ok {
			took = min(t.took[tookKey{out.Method, false}], coldMost)
		}
		bound = max(bound, idleTook*took)
	}
	// Timed only when sent alone: one queued behind another request
	// waited for that one too.
	warm, alone := t.warm, len(t.pending) == 0
	if _, dup := t.pending[key]; dup {
		t.mu.Unlock()
		return nil, &Error{Kind: KindMalformed, Op: op, Err: fmt.Errorf("id %s is already in flight", out.ID)}
	}
	t.pending[key] = p
	before := t.noise
	t.mu.Unlock()
	start := time.Now()
	fail := func(err error) (*Exchange, error) {
		t.mu.Lock()
		delete(t.pending, key)
		t.abandoned[key] = true
		ex := *p.ex
		t.mu.Unlock()
		ex.Elapsed = time.Since(start)
		return &ex, err
	}
	method := out.Method
	if out.Raw {
		method = ""
	}
	if err := t.writeLine(ctx, out.Body, method); err != nil {
		return fail(t.opErr(ctx, op, start, err))
	}
	var resp *jsonrpc.Message
	var idle <-chan struct{}
	if bound > 0 {
		var stop func()
		idle, stop = t.idleWatch(start, bound)
		defer stop()
	}
	if again {
		ch := make(chan struct{})
		tm := time.AfterFunc(silenceRetry, func() { close(ch) })
		defer tm.Stop()
		idle = ch
	}
	select {
	case resp = <-p.ch:
	case <-idle:
		t.mu.Lock()
		s := t.silentLocked(op, start, time.Since(start), !again)
		t.mu.Unlock()
		if s == nil {
			// A line came as the watch fired: wait for the answer after all.
			select {
			case resp = <-p.ch:
			case <-ctx.Done():
				return fail(t.opErr(ctx, op, start, ctx.Err()))
			case <-t.dead:
				return fail(t.opErr(ctx, op, start, nil))
			}
			break
		}
		return fail(&Error{Kind: KindTimeout, Op: op, After: time.Since(start), Silent: s, stillSilent: again})
	case <-ctx.Done():
		err := t.opErr(ctx, op, start, ctx.Err())
		if te, ok := err.(*Error); ok && te.Kind == KindTimeout {
			t.mu.Lock()
			te.Meanwhile = t.noise.since(before)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && te.After >= silenceMin {
				te.Silent = t.silentLocked(op, start, te.After, false)
			}
			t.mu.Unlock()
		}
		return fail(err)
	case <-t.dead:
		select {
		case resp = <-p.ch:
		default:
			return fail(t.opErr(ctx, op, start, nil))
		}
	}
	if resp == nil { // its answer came but was unusable (failLocked)
		e := *p.err
		e.Op = op
		return fail(&e)
	}
	took := time.Since(start)
	t.mu.Lock()
	ex := *p.ex
	t.answered, t.warm = true, true
	if !out.Raw {
		t.oddSince = false
	}
	if k := (tookKey{out.Method, warm}); !out.Raw && alone && took > t.took[k] {
		if t.took == nil {
			t.took = map[tookKey]time.Duration{}
		}
		t.took[k] = took
	}
	t.mu.Unlock()
	ex.Response = resp
	ex.Elapsed = took
	return &ex, nil
}

func (t *StdioTransport) opErr(ctx context.Context, op string, start time.Time, err error) error {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		// The server closed stdin, almost always because it is exiting:
		// wait briefly so the error can say how it exited, with stderr.
		select {
		case <-t.dead:
		case <-time.After(time.Second):
		}
	}
	select {
	case <-t.dead:
		t.mu.Lock()
		de := *(t.deadErr.(*Error))
		t.mu.Unlock()
		de.Op = op
		return &de
	default:
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return &Error{Kind: KindTimeout, Op: op, After: waited(ctx, start), Err: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Kind: KindClosed, Op: op, Err: err}
	}
	return &Error{Kind: KindClosed, Op: op, Err: err}
}

func progressTokenOf(body []byte) json.RawMessage {
	var p struct {
		Params struct {
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &p)
	return p.Params.Meta.ProgressToken
}

// writeLine writes one line with the context's deadline, so a server that
// stops reading stdin cannot block the harness. method is b's method when
// b is a request sent as one (wroteLocked), else "".
func (t *StdioTransport) writeLine(ctx context.Context, b []byte, method string) error {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if dl, ok := ctx.Deadline(); ok {
		_ = t.stdin.SetWriteDeadline(dl)
	} else {
		_ = t.stdin.SetWriteDeadline(time.Time{})
	}
	line := make([]byte, 0, len(b)+1)
	line = append(append(line, b...), '\n')
	t.mu.Lock()
	t.wroteLocked(b, method)
	t.mu.Unlock()
	_, err := t.stdin.Write(line)
	return err
}

// Notify implements Transport.
func (t *StdioTransport) Notify(ctx context.Context, out *Outgoing) (*Exchange, error) {
	start := time.Now()
	if err := t.writeLine(ctx, out.Body, ""); err != nil {
		return nil, t.opErr(ctx, "stdio "+out.Method, start, err)
	}
	return &Exchange{Elapsed: time.Since(start)}, nil
}

// WriteLine is the raw layer: it writes line plus a newline, whatever line
// holds.
func (t *StdioTransport) WriteLine(ctx context.Context, line []byte) error {
	var env struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &env) == nil && len(env.ID) > 0 && string(env.ID) != "null" {
		now := time.Now()
		t.mu.Lock()
		for k, at := range t.rawIDs {
			if now.Sub(at) > 3*rawGrace {
				delete(t.rawIDs, k) // never answered: bounded memory
			}
		}
		t.rawIDs[jsonrpc.IDKey(env.ID)] = now
		t.mu.Unlock()
	}
	t.mu.Lock()
	t.wroteRaw = true
	t.mu.Unlock()
	if err := t.writeLine(ctx, line, ""); err != nil {
		return t.opErr(ctx, "stdio write", time.Now(), err)
	}
	return nil
}

// Tap returns a channel that receives every stdout line from now on, and a
// function that stops it. Lines are dropped when the channel is full.
func (t *StdioTransport) Tap(buffer int) (<-chan Inbound, func()) {
	ch := make(chan Inbound, buffer)
	t.mu.Lock()
	id := t.nextTap
	t.nextTap++
	t.taps[id] = ch
	t.mu.Unlock()
	return ch, func() {
		t.mu.Lock()
		delete(t.taps, id)
		t.mu.Unlock()
	}
}

// Anomalies returns the framing problems seen outside any exchange.
func (t *StdioTransport) Anomalies() []Anomaly {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Anomaly(nil), t.anomalies...)
}

// Unattributed returns notifications that matched no request in flight.
func (t *StdioTransport) Unattributed() []*jsonrpc.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*jsonrpc.Message(nil), t.unattributed...)
}

// Stderr returns the kept tail of the server's stderr (STDIO-3).
func (t *StdioTransport) Stderr() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stderrTail.String()
}

// Exited is closed when the server process has exited.
func (t *StdioTransport) Exited() <-chan struct{} { return t.exited }

// ExitCode is the process's exit code once Exited is closed (ok false
// before).
func (t *StdioTransport) ExitCode() (code int, ok bool) {
	select {
	case <-t.exited:
	default:
		return 0, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exitCode, true
}

// Close implements Transport: it stops the process (Stop), and returns
// once it is gone, or at once after CloseAside.
func (t *StdioTransport) Close() error {
	t.mu.Lock()
	stops := t.aside
	// Only a process sent nothing raw (a malformed line may have stopped
	// its reader), with no request in flight and not found silent, tells
	// how the server treats EOF.
	plain := !t.wroteRaw && len(t.pending) == 0 && t.silenced == nil
	t.mu.Unlock()
	if stops == nil {
		t.Stop()
		return nil
	}
	t.asideOnce.Do(func() {
		done := make(chan struct{})
		stops.add(done)
		go func() {
			defer close(done)
			t.stop(stops.grace(t.cfg.ShutdownGrace))
			stops.ended(t.Shutdown(), plain)
		}()
	})
	return nil
}

// CloseAside makes Close return at once and stop the process beside its
// caller; stops.Wait waits for it. For a caller that does not judge how
// the process ends: a server that needs SIGTERM, or takes a while to exit
// once stdin is closed, then holds up no one for ShutdownGrace.
func (t *StdioTransport) CloseAside(stops *Stops) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.aside = stops
}

// Stop closes stdin, waits ShutdownGrace, SIGTERMs the process group,
// waits TermGrace, and SIGKILLs it (stdio.mdx §Shutdown); whatever is left
// of the group afterwards is killed too, so no grandchild outlives the
// harness. It returns once that is over (Shutdown says how it went),
// whoever began it.
func (t *StdioTransport) Stop() { t.stop(t.cfg.ShutdownGrace) }

func (t *StdioTransport) stop(grace time.Duration) {
	t.closeOnce.Do(func() {
		select {
		case <-t.exited:
			t.shutdown.ExitedEarly = true
		default:
		}
		start := time.Now()
		t.stdin.Close()
		esc := ""
		select {
		case <-t.exited:
		case <-time.After(grace):
			esc = "SIGTERM"
			_ = syscall.Kill(-t.pgid, syscall.SIGTERM)
			select {
			case <-t.exited:
			case <-time.After(t.cfg.TermGrace):
				esc = "SIGKILL"
				_ = syscall.Kill(-t.pgid, syscall.SIGKILL)
				select {
				case <-t.exited:
				case <-time.After(5 * time.Second):
				}
			}
		}
		_ = syscall.Kill(-t.pgid, syscall.SIGKILL)
		// What the server wrote on its way out reaches the watchers
		// before Stop returns: the reader drains the pipe to its EOF
		// (bounded, as wait bounds it: a grandchild outside the group may
		// hold it open).
		select {
		case <-t.readerDone:
		case <-time.After(500 * time.Millisecond):
		}
		t.stdout.Close()
		t.stderr.Close()
		t.markDead()
		t.cleanup()
		t.mu.Lock()
		t.shutdown.Hurried = grace < t.cfg.ShutdownGrace
		t.shutdown.Escalation = esc
		t.shutdown.Took = time.Since(start)
		t.shutdown.ExitCode = t.exitCode
		t.mu.Unlock()
	})
}

// Stops are the processes being stopped beside the callers of their Close
// (CloseAside).
type Stops struct {
	mu      sync.Mutex
	pending []<-chan struct{}
	// How the processes stopped so far ended: on EOF, or signalled.
	onEOF, signalled int
}

// hurriedGrace is how long a process stopped aside gets before SIGTERM
// once processes have been stopped and every one of them needed a signal:
// a server that ignores EOF does so in every process, and each grace
// waited out in full kept it running 2 s for nothing.
const hurriedGrace = 100 * time.Millisecond

func (s *Stops) grace(full time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signalled > 0 && s.onEOF == 0 {
		return min(full, hurriedGrace)
	}
	return full
}

// ended counts how a process ended. One hurried, signalled before its
// full grace, tells nothing (it might have exited on EOF given the time),
// nor does one that was not plain when closed (Close) and needed a signal.
func (s *Stops) ended(r ShutdownReport, plain bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.ExitedEarly:
	case r.Escalation == "":
		s.onEOF++
	case plain && !r.Hurried:
		s.signalled++
	}
}

func (s *Stops) add(stopped <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, stopped)
}

// Wait returns once every process whose Close was called before it or
// while it waits is gone (each stop is bounded: its graces, 5 s after
// SIGKILL, 0.5 s for its last lines, and removing a RunAs directory).
// Several may wait at once.
func (s *Stops) Wait() {
	for i := 0; ; i++ {
		s.mu.Lock()
		if i >= len(s.pending) {
			s.mu.Unlock()
			return
		}
		c := s.pending[i]
		s.mu.Unlock()
		<-c
	}
}

// Shutdown reports how the process ended; valid once Stop has returned
// (or Close, unless CloseAside made it return at once).
func (t *StdioTransport) Shutdown() ShutdownReport {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.shutdown
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	buf     []byte
	max     int
	dropped int64
}

func (b *tailBuffer) Write(p []byte) {
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.dropped += int64(over)
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
}

func (b *tailBuffer) String() string {
	s := sanitize(string(bytes.ToValidUTF8(b.buf, []byte("�"))))
	if b.dropped > 0 {
		return fmt.Sprintf("[%d earlier bytes dropped]\n%s", b.dropped, s)
	}
	return s
}

var _ io.Closer = (*StdioTransport)(nil)

// noiseCount counts stdout lines that were no answer: lines that are not
// JSON-RPC, and responses to ids never sent, keeping the start of the last
// of each for the message.
type noiseCount struct {
	lines, strays, idless         int64
	lastLine, lastStray, lastNoID []byte
}

func (n *noiseCount) add(counter *int64, line []byte) {
	*counter++
	head := append([]byte(nil), line[:min(len(line), 200)]...)
	switch counter {
	case &n.lines:
		n.lastLine = head
	case &n.idless:
		n.lastNoID = head
	default:
		n.lastStray = head
	}
}

// since says what arrived after the snapshot before, or "" for nothing.
func (n *noiseCount) since(before noiseCount) string {
	var parts []string
	if d := n.lines - before.lines; d > 0 {
		parts = append(parts, fmt.Sprintf("stdout carried %d line(s) that are not JSON-RPC messages, the last: %q", d, excerpt(n.lastLine)))
	}
	if d := n.strays - before.strays; d > 0 {
		parts = append(parts, fmt.Sprintf("the server sent %d response(s) to ids never sent, the last: %q", d, excerpt(n.lastStray)))
	}
	if d := n.idless - before.idless; d > 0 {
		parts = append(parts, fmt.Sprintf("the server sent %d response(s) without an id, the last: %q", d, excerpt(n.lastNoID)))
	}
	return strings.Join(parts, "; ")
}
