package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// STDIO: the stdio transport (basic/transports/stdio.mdx, checklist §1.17).
// STDIO-1 and STDIO-2 hold for every line every process writes: their
// monitors watch the lines of every process of the run (the shared one,
// each fresh one), and each run judges what the shared process wrote so
// far, which includes the lines it wrote before any watcher was added.
// They send nothing of their own: every other check's traffic is theirs,
// RPC-5's process included: stdout carries nothing but JSON-RPC messages
// whatever the server read, so a plain-text complaint about a malformed
// line breaks STDIO-1 although the client broke the rules first.

// stdioOnce reports each distinct problem once, with the first line that
// showed it as evidence.
func stdioOnce(p *check.Pass) func(excerpt, format string, args ...any) {
	seen := map[string]bool{}
	return func(excerpt, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if seen[msg] {
			return
		}
		seen[msg] = true
		p.Failf(&check.Evidence{Transport: "stdio", Response: excerpt}, "%s", msg)
	}
}

// stdioNotJSONRPC is STDIO-1's finding on a line the transport reported,
// "" when the line keeps the rule.
func stdioNotJSONRPC(a transport.Anomaly) string {
	switch a.Kind {
	case "non-json-line":
		return "stdout carried a line that is not a JSON-RPC message: " + a.Detail
	case "invalid-message":
		return "stdout carried a message that is neither a request, a notification nor a response"
	}
	return ""
}

// stdioRequest is STDIO-2's finding on a line, "" when the line keeps the
// rule.
func stdioRequest(a transport.Anomaly) string {
	if a.Kind == "server-request" {
		return "the " + a.Detail
	}
	return ""
}

// stdioLines runs one repetition of a line rule: what the shared process
// wrote so far.
func stdioLines(p *check.Pass, finding func(transport.Anomaly) string, pass string) error {
	fail := stdioOnce(p)
	found := false
	for _, a := range p.Env.Stdio.Anomalies() {
		if msg := finding(a); msg != "" {
			fail(a.Excerpt, "%s", msg)
			found = true
		}
	}
	if !found {
		p.Passf(nil, "%s", pass)
	}
	return nil
}

// stdioLineMonitor watches every line of every process for one line rule:
// an exchange that got its response was a line that kept it (a response
// under a wrong id pinned on the one request in flight was counted when
// it came, as a stray).
func stdioLineMonitor(doc string, finding func(transport.Anomaly) string) *check.Monitor {
	return &check.Monitor{
		Doc: doc,
		Watch: func(x *check.Exchange) (bool, string) {
			switch {
			case x.Transport != "stdio":
				return false, ""
			case x.Line != nil:
				msg := finding(*x.Line)
				return msg != "", msg
			}
			return x.Response() != nil && !rpcPinnedStray(x), ""
		},
	}
}

var STDIO1 = &check.Check{
	ID: "STDIO-1", Level: check.Must, Transports: check.Stdio,
	Spec:    "basic/transports/stdio.mdx §Message Framing",
	Doc:     "every stdout line is exactly one JSON-RPC message, and nothing else (banners, logs) appears on stdout",
	Fix:     "write only JSON-RPC messages to stdout, one per line, and send logs and banners to stderr",
	Monitor: stdioLineMonitor("every stdout line of every server process of the run is a JSON-RPC message", stdioNotJSONRPC),
	Run: func(p *check.Pass) error {
		return stdioLines(p, stdioNotJSONRPC, "every line the shared process wrote to stdout so far is a JSON-RPC message")
	},
}

var STDIO2 = &check.Check{
	ID: "STDIO-2", Level: check.Must, Transports: check.Stdio,
	Spec:    "basic/transports/stdio.mdx §Message Framing; basic/patterns/index.mdx",
	Doc:     "the server writes no JSON-RPC requests to stdout",
	Fix:     "never send requests to the client; ask for input with an input_required result (MRTR)",
	Monitor: stdioLineMonitor("no server process of the run writes a JSON-RPC request to stdout", stdioRequest),
	Run: func(p *check.Pass) error {
		return stdioLines(p, stdioRequest, "the shared process wrote no JSON-RPC request to stdout so far")
	},
}

var STDIO3 = &check.Check{
	ID: "STDIO-3", Level: check.Info, Transports: check.Stdio,
	Spec: "basic/transports/stdio.mdx §Message Framing",
	Doc:  "stderr is free-form; what the server wrote there is reported, never judged",
	Fix:  "keep diagnostics on stderr",
	Run: func(p *check.Pass) error {
		s := p.Env.Stdio.Stderr()
		if s == "" {
			p.Passf(nil, "the server wrote nothing to stderr")
			return nil
		}
		lines := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
		p.Passf(&check.Evidence{Transport: "stdio", Response: jsonrpc.Clip(s, 600)}, "the server wrote %d bytes (%d lines) to stderr so far", len(s), lines)
		return nil
	},
}

var STDIO4 = &check.Check{
	ID: "STDIO-4", Level: check.Should, Transports: check.Stdio,
	Spec: "basic/transports/stdio.mdx §Shutdown",
	Doc:  "the server exits promptly once its stdin is closed",
	Fix:  "exit when stdin reaches EOF instead of waiting for a signal",
	// The checks before it in handChain hand their process on: one start
	// fewer.
	Follows: handFollows("STDIO-4"),
	Run: func(p *check.Pass) error {
		// The process the checks before it in handChain are done with, or
		// a new one. What is timed is the same either way: stdin closed
		// with no request in flight. A handed process that exited before
		// stdin was closed or needed a signal is judged again on a new
		// one: their malformed requests, not EOF, may have ended it or
		// stopped its reader.
		c, closeFn, handed, err := takeHandedOn(p)
		if err != nil {
			return err
		}
		if !handed {
			rep, err := stdioShutdown(c, closeFn)
			if err != nil {
				return err
			}
			stdio4Judge(p, rep, false)
			return nil
		}
		// A handed process still there after stdio4Doubt may need a
		// signal: a new one is stopped beside it then, not after its
		// grace, to be judged instead if it does.
		handedDone := stdioShutdownBeside(c, closeFn)
		var hs *stdioStopped
		select {
		case r := <-handedDone:
			hs = &r
		case <-time.After(stdio4Doubt):
		}
		if hs != nil && hs.err != nil {
			return hs.err
		}
		if hs != nil && hs.fit() {
			stdio4Judge(p, hs.rep, true)
			return nil
		}
		fc, fcloseFn, err := p.Env.Fresh(p.Ctx)
		var freshDone <-chan stdioStopped
		if err == nil {
			freshDone = stdioShutdownBeside(fc, fcloseFn)
		}
		if hs == nil {
			r := <-handedDone
			hs = &r
		}
		if hs.err == nil && hs.fit() {
			if freshDone != nil {
				// Not waited for: stopped beside the run, whose Stops
				// waits for it (CloseAside).
				fcloseFn()
			}
			stdio4Judge(p, hs.rep, true)
			return nil
		}
		if err != nil {
			return err
		}
		fs := <-freshDone
		if fs.err != nil {
			return fs.err
		}
		stdio4Judge(p, fs.rep, false)
		return nil
	},
}

// stdio4Doubt is how long STDIO-4 lets a handed process exit on EOF before
// it stops a new one beside it (a server exits within milliseconds).
const stdio4Doubt = 500 * time.Millisecond

// stdioStopped is how a process STDIO-4 stopped ended.
type stdioStopped struct {
	rep transport.ShutdownReport
	err error
}

// fit: the process was there when stdin was closed, and exited on EOF.
func (s stdioStopped) fit() bool { return !s.rep.ExitedEarly && s.rep.Escalation == "" }

func stdio4Judge(p *check.Pass, rep transport.ShutdownReport, handed bool) {
	which := "a new process"
	if handed {
		which = "a process the repetition's earlier checks handed on"
	}
	switch {
	case rep.ExitedEarly:
		p.Failf(nil, "the server process had already exited (code %d) before stdin was closed (%s)", rep.ExitCode, which)
	case rep.Escalation != "":
		p.Failf(nil, "the server did not exit after stdin was closed; it needed %s (after %s; %s)", rep.Escalation, rep.Took.Round(time.Millisecond), which)
	default:
		p.Passf(nil, "the server exited %s after stdin was closed (code %d; %s)", rep.Took.Round(time.Millisecond), rep.ExitCode, which)
	}
}

// stdioShutdownBeside is stdioShutdown in a goroutine of its own.
func stdioShutdownBeside(c *mcpclient.Client, closeFn func()) <-chan stdioStopped {
	done := make(chan stdioStopped, 1)
	go func() {
		rep, err := stdioShutdown(c, closeFn)
		done <- stdioStopped{rep, err}
	}()
	return done
}

// stdioShutdown stops c's process (stdin closed, then SIGTERM → SIGKILL),
// waiting until it is gone, and says how it ended.
func stdioShutdown(c *mcpclient.Client, closeFn func()) (transport.ShutdownReport, error) {
	defer closeFn()
	st, ok := c.Transport().(*transport.StdioTransport)
	if !ok {
		return transport.ShutdownReport{}, fmt.Errorf("the connection is not stdio")
	}
	st.Stop()
	rep := st.Shutdown()
	if rep.Hurried {
		return rep, errors.New("the process was stopped before STDIO-4 could time its shutdown (a harness bug)")
	}
	return rep, nil
}

// stdioQuickList is the list STDIO-5 asks for besides server/discover
// while its call streams: of the lists the server served when the run
// gathered its facts, the one with the fewest items (tools/list on a
// tie), "" when it served none. A server of 1,000 tools takes tens of ms
// to answer tools/list, which is no quick request.
func stdioQuickList(f *check.Facts) string {
	best, n := "", -1
	for _, l := range []struct {
		capability, method string
		items              int
		err                error
	}{{"tools", "tools/list", len(f.Tools), f.ToolsErr}, {"prompts", "prompts/list", len(f.Prompts), f.PromptsErr}, {"resources", "resources/list", len(f.Resources), f.ResourcesErr}} {
		// Without a discover result (DISC-1) no capability is declared;
		// a list answered without error is served all the same.
		if (f.Has(l.capability) || f.Discover == nil) && l.err == nil && (n < 0 || l.items < n) {
			best, n = l.method, l.items
		}
	}
	return best
}

// stdioInterleaved is how many quick requests STDIO-5 sends while a
// streaming call is in flight.
const stdioInterleaved = 4

// stdioRounds bounds how many rounds of quick requests STDIO-5 sends.
const stdioRounds = 5

// stdioBusyWait bounds how long STDIO-5 waits for the streaming call's
// first notification before it sends the quick requests anyway, and how
// long the call may run on after they were answered.
const stdioBusyWait = 5 * time.Second

var STDIO5 = &check.Check{
	ID: "STDIO-5", Level: check.Must, Transports: check.Stdio,
	// Not Waits, though its runs wait on a streaming call: its rule needs
	// the quick requests to reach the server while the call streams, and
	// the waiting runs start at the run's busiest moment. Marked Waits, it
	// missed its own mutant in the mutant-pointer test twice in one CI run
	// on a loaded machine (never before, nor in four runs since); the
	// likely cause is that moment's load delaying the quick requests past
	// the call, so it starts with the quick checks, as it did before.
	Spec: "basic/transports/stdio.mdx; basic/index.mdx §Statelessness",
	Doc:  "the server handles interleaved, unrelated requests in one process and correlates progress by progressToken",
	Fix:  "serve requests independently on one stdio stream and echo each request's progressToken",
	Run: func(p *check.Pass) error {
		es := progFindEmitters(p)
		ctx, cancel := context.WithTimeout(p.Ctx, 30*time.Second)
		defer cancel()
		c := p.Env.Client
		own := false // c is a process of this check's own
		args := map[string]any(nil)
		if es.progress != nil {
			args = es.progress.Args
			// The streaming call counts as far as it may, so that it is
			// still running when the quick requests come. On a process of
			// its own: one that outlasts the check is stopped with it
			// instead of streaming into the next checks.
			if p.Env.Fresh != nil {
				if fc, closeFn, err := p.Env.Fresh(ctx); err == nil {
					defer closeFn()
					c, args, own = fc, progArgs(es.progress.Tool.InputSchema, true), true
				}
			}
		}
		// A trial whose streaming call ended before any quick answer came
		// back interleaved nothing, so it cannot tell a server that
		// serves one request at a time (whose "busy" errors come only
		// while the call runs) from one that serves them together: a
		// loaded machine may delay the quick requests past a short call.
		// Another trial, on the same process, gets another chance.
		quickList := stdioQuickList(p.Env.Facts)
		if quickList == "" && p.Env.Facts.Discover == nil {
			p.Skipf("the server gave no server/discover result and serves no list: there is no quick request to interleave")
			return nil
		}
		var trials []*stdio5Trial
		sent := 0
		for attempt := 0; attempt < stdio5Trials; attempt++ {
			t := stdio5Try(ctx, c, es.progress, args, quickList, p.Env.Facts.Discover != nil, attempt)
			trials, sent = append(trials, t), sent+t.sent
			if t.overlapped() || es.progress == nil || ctx.Err() != nil || t.anyError() {
				break
			}
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < 2*stdioBusyWait {
				// Another trial could run into the check's own bound,
				// and its cancelled requests read as the server's.
				break
			}
		}
		// Only the last trial's answers are judged: an earlier one ended
		// the loop had any drawn an error (anyError).
		t := trials[len(trials)-1]
		all, overlapped := t.all, t.overlapped()
		for _, a := range all {
			ev := check.FromResponse(a.resp)
			streaming := strings.HasPrefix(a.what, "tools/call")
			switch {
			case streaming && a.err != nil && overlapped && ctx.Err() == nil:
				// Our own bound ran out on a long count; the quick
				// requests were judged.
			case !own && transport.Lost(a.err):
				// The run's process, which every check shares, exited:
				// any check's request may have ended it (a tool allowed
				// with --call-tool that exits), so it says nothing of
				// interleaving. On a process of its own, only this
				// check's requests were there to end it.
				return fmt.Errorf("%s sent among interleaved requests: %w", a.what, a.err)
			case a.err != nil:
				p.Failf(ev, "%s sent among interleaved requests failed: %v", a.what, a.err)
			case a.resp.Error != nil:
				p.Failf(atResponse(ev, a.resp, "/error/code"), "%s sent among interleaved requests got error %d (%s)", a.what, a.resp.Error.Code, jsonrpc.Clip(a.resp.Error.Message, 120))
			}
		}
		for _, t := range trials {
			for _, m := range t.notes {
				if m.Method == "notifications/progress" && !jsonrpc.SameID(progParams(m)["progressToken"], jsonrpc.StringID(t.token)) {
					p.Failf(check.AtMessage(&check.Evidence{Transport: "stdio"}, m, "/params/progressToken"), "progress for the interleaved call carried token %s, want %q", jsonrpc.Clip(string(progParams(m)["progressToken"]), 40), t.token)
				}
			}
		}
		switch {
		case overlapped:
			p.Passf(nil, "%d concurrent requests were answered, %d of them while %s streamed progress%s", sent, t.during.Load(), es.progress.Tool.Name, stdio5Which(len(trials)))
		case es.progress != nil:
			p.Passf(nil, "%d concurrent requests were answered; %s ended before they were in each of %d calls, so they were not interleaved with a streaming call", sent, es.progress.Tool.Name, len(trials))
		default:
			p.Passf(nil, "%d concurrent requests were answered (no tool that streams progress was found to interleave them with)", stdioInterleaved)
		}
		return nil
	},
}

// stdio5Which says which streaming call the quick requests overlapped,
// when it was not the first.
func stdio5Which(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(" (call %d: the earlier ones ended first)", n)
}

// stdio5Trials bounds how many streaming calls STDIO-5 makes to get
// quick requests answered while one runs.
const stdio5Trials = 3

type stdio5Answer struct {
	what string
	resp *mcpclient.Response
	err  error
}

// stdio5Trial is one streaming call of STDIO-5 and the rounds of quick
// requests sent while it ran.
type stdio5Trial struct {
	token  string             // the streaming call's progressToken
	all    []stdio5Answer     // the quick answers, then the streaming call's
	notes  []*jsonrpc.Message // what the streaming call received, as it came
	sent   int                // quick requests
	during atomic.Int32       // quick answers that came back before the call's
}

func (t *stdio5Trial) overlapped() bool { return t.during.Load() > 0 }

// anyError says whether a request of the trial drew an error or no
// answer: that is judged whether or not the call was still running.
func (t *stdio5Trial) anyError() bool {
	for _, a := range t.all {
		if a.err != nil || (a.resp != nil && a.resp.Error != nil) {
			return true
		}
	}
	return false
}

// stdio5Try makes one trial on c: the streaming call (when progress is
// a tool that streams it) and rounds of quick requests once its
// first notification came. The quick requests alternate server/discover
// with quickList, or are all quickList where the server gave no result to
// server/discover (discovers false: DISC-1's finding, not this rule's).
func stdio5Try(ctx context.Context, c *mcpclient.Client, progress *progEmitter, args map[string]any, quickList string, discovers bool, attempt int) *stdio5Trial {
	t := &stdio5Trial{token: "mcp-eval-stdio5"}
	if attempt > 0 {
		t.token = fmt.Sprintf("mcp-eval-stdio5-%d", attempt+1)
	}
	answers := make(chan stdio5Answer, stdioInterleaved*stdioRounds)
	streamed := make(chan stdio5Answer, 1)
	// The call may stream on after the trial (it counts as far as it
	// may); what it sends then is not the trial's, and the notes are
	// read once it returns.
	var (
		mu     sync.Mutex
		notes  []*jsonrpc.Message
		closed bool
	)
	ended := make(chan struct{})
	if progress != nil {
		// The rule is about requests that arrive while the streaming
		// call runs, so the quick requests wait for its first
		// notification: then the server is busy with it, whatever the
		// scheduler did (a delay guessed here made a server that
		// serves one request at a time pass by chance).
		busy := make(chan struct{}, 1)
		go func() {
			resp, err := c.Do(ctx, "tools/call", map[string]any{"name": progress.Tool.Name, "arguments": args},
				mcpclient.WithProgressToken(t.token), mcpclient.WithNotificationHook(func(m *jsonrpc.Message) {
					mu.Lock()
					if !closed && len(notes) < 64 {
						notes = append(notes, m)
					}
					mu.Unlock()
					select {
					case busy <- struct{}{}:
					default:
					}
				}))
			streamed <- stdio5Answer{"tools/call " + progress.Tool.Name, resp, err}
			close(ended)
		}()
		select {
		case <-busy:
		case <-ended:
		case <-time.After(stdioBusyWait):
		case <-ctx.Done():
		}
	} else {
		close(ended)
	}
	// A quick request answered before the streaming call was is one
	// the server served while busy with it: only those were
	// interleaved. A loaded machine may be slow to send a round, so
	// rounds go on until one lands while the call runs (or it ends).
	for round := 0; round < stdioRounds; round++ {
		var quick sync.WaitGroup
		for i := 0; i < stdioInterleaved; i++ {
			m := "server/discover"
			if (i%2 == 1 || !discovers) && quickList != "" {
				m = quickList
			}
			quick.Add(1)
			t.sent++
			go func() {
				defer quick.Done()
				resp, err := c.Do(ctx, m, nil)
				select {
				case <-ended:
				default:
					t.during.Add(1)
				}
				answers <- stdio5Answer{m, resp, err}
			}()
		}
		quick.Wait()
		if t.overlapped() || ctx.Err() != nil {
			break
		}
		select {
		case <-ended:
			round = stdioRounds
		default:
		}
	}
	select {
	case <-ended:
	case <-time.After(stdioBusyWait):
		// A call still counting is not a fault: its process is
		// closed with the check.
	case <-ctx.Done():
	}
	close(answers)
	for a := range answers {
		t.all = append(t.all, a)
	}
	select {
	case a := <-streamed:
		t.all = append(t.all, a)
	default:
	}
	mu.Lock()
	t.notes, closed = notes, true
	mu.Unlock()
	return t
}

var stdioFamily = family{name: "STDIO", title: "stdio", checks: []*check.Check{STDIO1, STDIO2, STDIO3, STDIO4, STDIO5}}
