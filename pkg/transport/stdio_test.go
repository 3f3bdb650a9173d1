package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// The test binary doubles as a set of small misbehaving servers: with
// TRANSPORT_HELPER set it runs one behaviour instead of the tests. These are
// the harness's own fakes for transport edge cases; real MCP servers are
// exercised in pkg/mcpclient and internal/interop.
func TestMain(m *testing.M) {
	if h := os.Getenv("TRANSPORT_HELPER"); h != "" {
		runHelper(h)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runHelper(name string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	reply := func(line string, result string) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(line), &m)
		if m.ID != nil {
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", m.ID, result)
		}
	}
	switch name {
	case "echo":
		for in.Scan() {
			fmt.Println(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)
			reply(in.Text(), `{"resultType":"complete"}`)
		}
	case "noisy":
		fmt.Println("Server starting on stdio... v1.2.3")
		for in.Scan() {
			fmt.Println("DEBUG got a line")
			fmt.Println(`{"jsonrpc":"2.0","id":"never-sent","result":{}}`)
			reply(in.Text(), `{"resultType":"complete"}`)
		}
	case "exit-at-once":
		fmt.Fprintln(os.Stderr, "fatal: missing config file /etc/srv.conf")
		os.Exit(3)
	case "exit-on-call":
		// Serves until a tool is called, then dies with it in flight.
		for in.Scan() {
			if strings.Contains(in.Text(), `"tools/call"`) {
				os.Exit(3)
			}
		}
	case "silent":
		for in.Scan() {
		}
	case "mute-after-junk":
		// Answers until a line is not JSON, then reads on and answers
		// nothing, like a server whose stream decoder waits for the rest.
		for in.Scan() {
			if !json.Valid(in.Bytes()) {
				for in.Scan() {
				}
				return
			}
			reply(in.Text(), `{"resultType":"complete"}`)
		}
	case "mute-after-answered-junk":
		// Answers a line that is not JSON with a parse error, then reads
		// on and answers nothing.
		for in.Scan() {
			if !json.Valid(in.Bytes()) {
				fmt.Println(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
				for in.Scan() {
				}
				return
			}
			reply(in.Text(), `{"resultType":"complete"}`)
		}
	case "sleepy":
		// Answers every request after 2.5 s without computing.
		for in.Scan() {
			time.Sleep(2500 * time.Millisecond)
			reply(in.Text(), `{"resultType":"complete"}`)
		}
	case "unhurried":
		// Answers every request after 0.6 s without computing, as a
		// gateway waits for its upstreams.
		for in.Scan() {
			time.Sleep(600 * time.Millisecond)
			reply(in.Text(), `{"resultType":"complete"}`)
		}
	case "slow-start-mute-after-junk", "slower-start-mute-after-junk":
		// Waits 1 s (2.5 s) before it reads anything, as a slow start
		// does, then answers at once until a line is not JSON, then
		// nothing.
		time.Sleep(map[string]time.Duration{"slow-start-mute-after-junk": time.Second, "slower-start-mute-after-junk": 2500 * time.Millisecond}[name])
		for in.Scan() {
			if !json.Valid(in.Bytes()) {
				for in.Scan() {
				}
				return
			}
			reply(in.Text(), `{"resultType":"complete"}`)
		}
	case "busy":
		// Computes for a while before every answer.
		for in.Scan() {
			for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
			}
			reply(in.Text(), `{"resultType":"complete"}`)
		}
	case "chatty-exit":
		// Writes many lines that are not JSON-RPC once stdin closes, then
		// exits.
		for in.Scan() {
		}
		for i := range 800 {
			fmt.Printf("shutting down, step %d\n", i)
		}
	case "ignore-eof":
		// Reads to EOF, then waits for a signal.
		for in.Scan() {
		}
		time.Sleep(time.Hour)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		for in.Scan() {
		}
		time.Sleep(time.Hour)
	case "grandchild":
		// A child that keeps stdout open after this process exits.
		cmd := exec.Command("sleep", "300")
		cmd.Stdout = os.Stdout
		_ = cmd.Start()
		fmt.Fprintf(os.Stderr, "child %d\n", cmd.Process.Pid)
		os.Exit(0)
	case "huge-line":
		for in.Scan() {
			fmt.Println(`{"jsonrpc":"2.0","id":1,"result":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`)
		}
	case "env":
		for in.Scan() {
			b, _ := json.Marshal(os.Environ())
			reply(in.Text(), string(b))
		}
	}
}

func startHelper(t *testing.T, name string, mod func(*StdioConfig)) *StdioTransport {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env, _ := ServerEnv(nil, []string{"TRANSPORT_HELPER=" + name}, os.LookupEnv)
	cfg := StdioConfig{Argv: []string{exe}, Env: env, ShutdownGrace: 300 * time.Millisecond, TermGrace: 300 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	tr, err := StartStdio(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func req(id int64, method string) *Outgoing {
	m, _ := jsonrpc.NewRequest(jsonrpc.IntID(id), method, map[string]any{})
	b, _ := m.Encode()
	return &Outgoing{Body: b, ID: m.ID, Method: method}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStdioRoundTripAttributesNotifications(t *testing.T) {
	// A generous grace: under the race detector the helper is slow to exit.
	tr := startHelper(t, "echo", func(c *StdioConfig) { c.ShutdownGrace = 10 * time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ex, err := tr.RoundTrip(ctx, req(7, "tools/list"))
	if err != nil {
		t.Fatal(err)
	}
	if string(ex.Response.ID) != "7" || len(ex.Notifications) != 1 {
		t.Fatalf("got id %s and %d notifications, want 7 and 1", ex.Response.ID, len(ex.Notifications))
	}
	tr.Close()
	if sr := tr.Shutdown(); sr.Escalation != "" || sr.ExitCode != 0 {
		t.Fatalf("echo server should exit on EOF without signals, got %+v", sr)
	}
}

func TestStdioNoiseIsRecordedNotFatal(t *testing.T) {
	tr := startHelper(t, "noisy", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(1, "server/discover")); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, a := range tr.Anomalies() {
		kinds[a.Kind]++
	}
	if kinds["non-json-line"] < 2 || kinds["unknown-id"] != 1 {
		t.Fatalf("anomalies = %v, want the banner and debug line as non-json-line and one unknown-id", kinds)
	}
}

func TestStdioProcessExitShowsStderr(t *testing.T) {
	tr := startHelper(t, "exit-at-once", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := tr.RoundTrip(ctx, req(1, "server/discover"))
	var te *Error
	if !errors.As(err, &te) || te.Kind != KindProcessExited {
		t.Fatalf("err = %v, want process exited", err)
	}
	if te.ExitCode != 3 || !strings.Contains(err.Error(), "missing config file") {
		t.Fatalf("error %q should carry exit code 3 and the stderr tail", err)
	}
}

// A process that exits with requests in flight says which: every later
// error of it names the tool call that was there, the likeliest cause.
func TestStdioProcessExitSaysWhatItWasServing(t *testing.T) {
	tr := startHelper(t, "exit-on-call", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, _ := jsonrpc.NewRequest(jsonrpc.IntID(1), "tools/call", map[string]any{"name": "reserve_book", "arguments": map[string]any{}})
	b, _ := m.Encode()
	_, err := tr.RoundTrip(ctx, &Outgoing{Body: b, ID: m.ID, Method: "tools/call"})
	if !strings.Contains(fmt.Sprint(err), `server process exited with code 3 while serving tools/call "reserve_book"`) {
		t.Fatalf("err = %v, want the exit and the call it was serving", err)
	}
	if _, err := tr.RoundTrip(ctx, req(2, "server/discover")); !strings.Contains(fmt.Sprint(err), `stdio server/discover: server process exited with code 3 while serving tools/call "reserve_book"`) {
		t.Errorf("a later request: %v", err)
	}
}

func TestStdioTimeoutIsTyped(t *testing.T) {
	tr := startHelper(t, "silent", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := tr.RoundTrip(ctx, req(1, "server/discover"))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

func TestStdioEscalatesToKillAndLeavesNoProcess(t *testing.T) {
	tr := startHelper(t, "ignore-term", nil)
	pid := tr.Pid()
	tr.Close()
	if sr := tr.Shutdown(); sr.Escalation != "SIGKILL" {
		t.Fatalf("escalation = %q, want SIGKILL for a server that ignores SIGTERM", sr.Escalation)
	}
	if alive(pid) {
		t.Fatalf("process %d still alive after Close", pid)
	}
}

func TestStdioGrandchildHoldingStdoutIsKilled(t *testing.T) {
	tr := startHelper(t, "grandchild", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The parent exits at once while its child keeps stdout open: the
	// request must fail promptly, not wait for an EOF that never comes.
	_, err := tr.RoundTrip(ctx, req(1, "server/discover"))
	if !errors.Is(err, ErrProcessExited) {
		t.Fatalf("err = %v, want process exited", err)
	}
	var child int
	fmt.Sscanf(strings.TrimSpace(tr.Stderr()), "child %d", &child)
	tr.Close()
	if child == 0 {
		t.Fatalf("helper did not report its child: stderr %q", tr.Stderr())
	}
	deadline := time.Now().Add(3 * time.Second)
	for alive(child) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	// A killed child may linger as a zombie until reaped by init; check its
	// state rather than its mere existence.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child)); err == nil && !strings.Contains(string(b), ") Z") {
		t.Fatalf("grandchild %d survived Close: %s", child, b)
	}
}

func TestStdioCancelledContextStopsServer(t *testing.T) {
	exe, _ := os.Executable()
	env, _ := ServerEnv(nil, []string{"TRANSPORT_HELPER=silent"}, os.LookupEnv)
	ctx, cancel := context.WithCancel(context.Background())
	tr, err := StartStdio(ctx, StdioConfig{Argv: []string{exe}, Env: env, ShutdownGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-tr.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("server still running 5s after the run context was cancelled")
	}
}

func TestStdioOversizedLineFailsTheRequest(t *testing.T) {
	tr := startHelper(t, "huge-line", func(c *StdioConfig) { c.MaxMessageBytes = 64 << 10 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := tr.RoundTrip(ctx, req(1, "tools/list"))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want too large", err)
	}
}

func TestStdioEnvironmentIsAllowlisted(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghp_canary_should_not_leak")
	t.Setenv("INPUT_OPENAI_API_KEY", "sk-canary")
	t.Setenv("MY_SERVER_URL", "http://x")
	exe, _ := os.Executable()
	env, err := ServerEnv([]string{"MY_SERVER_URL"}, []string{"TRANSPORT_HELPER=env", "EXTRA=1"}, os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := StartStdio(context.Background(), StdioConfig{Argv: []string{exe}, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ex, err := tr.RoundTrip(ctx, req(1, "x"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(ex.Response.Result)
	for _, leak := range []string{"ghp_canary", "sk-canary"} {
		if strings.Contains(got, leak) {
			t.Fatalf("server environment contains secret %q: %s", leak, got)
		}
	}
	for _, want := range []string{"MY_SERVER_URL=http://x", "EXTRA=1", "PATH="} {
		if !strings.Contains(got, want) {
			t.Fatalf("server environment lacks %q: %s", want, got)
		}
	}
}

func TestStdioCommandNotFound(t *testing.T) {
	_, err := StartStdio(context.Background(), StdioConfig{Argv: []string{"definitely-not-a-command-xyz"}})
	if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), "command not found") {
		t.Fatalf("err = %v, want a clear command-not-found error", err)
	}
}

// A server silenced by a line is recognised without waiting out the
// deadline when the request needs no outside work, and once: the next
// request fails after silenceRetry, naming the line that silenced it.
func TestStdioSilenceIsRecognisedOnce(t *testing.T) {
	tr := startHelper(t, "mute-after-junk", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(1, "server/discover")); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteLine(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":`)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := tr.RoundTrip(WithIdleSilence(ctx, 300*time.Millisecond), req(3, "server/discover"))
	var te *Error
	if !errors.As(err, &te) || te.Kind != KindTimeout || te.Silent == nil || !te.Silent.Idle {
		t.Fatalf("err = %v, want a timeout on an idle, silent server", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("silence recognised after %s, want about 300ms of idleness", took)
	}
	if !strings.Contains(err.Error(), "the unparseable line") || !strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("err = %q, want it to name the unparseable line", err)
	}
	if te.Silent.SinceRequest != "" {
		t.Fatalf("SinceRequest = %q after a raw line, want \"\"", te.Silent.SinceRequest)
	}
	start = time.Now()
	_, err = tr.RoundTrip(ctx, req(4, "tools/list"))
	if !errors.As(err, &te) || te.Kind != KindTimeout || te.Silent == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("after silence: err = %v after %s, want a timeout after about %s", err, time.Since(start), silenceRetry)
	}
	if !strings.Contains(err.Error(), "still silent") || !strings.Contains(err.Error(), "the unparseable line") || !strings.Contains(err.Error(), "stdio server/discover got no answer") {
		t.Fatalf("after silence: err = %q, want it to name the line and the request that found the silence", err)
	}
	if s := tr.Silenced(); s == nil || s.Request != "stdio server/discover" {
		t.Fatalf("Silenced() = %+v", s)
	}
}

// A silence names the request it began with when that was a request sent
// as one, and not when it was a raw one or a notification.
func TestStdioSilenceSaysWhetherARequestBeganIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(context.Context, *StdioTransport)
		want string
	}{
		{"request", func(context.Context, *StdioTransport) {}, "tools/list"},
		{"notification", func(ctx context.Context, tr *StdioTransport) {
			_, _ = tr.Notify(ctx, &Outgoing{Body: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), Method: "notifications/initialized"})
		}, ""},
		{"raw request", func(ctx context.Context, tr *StdioTransport) {
			o := req(1, "server/discover")
			o.Raw = true
			_, _ = tr.RoundTrip(WithIdleSilence(ctx, 100*time.Millisecond), o)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := startHelper(t, "silent", nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tc.send(ctx, tr)
			_, err := tr.RoundTrip(WithIdleSilence(ctx, 200*time.Millisecond), req(2, "tools/list"))
			var te *Error
			if !errors.As(err, &te) || te.Silent == nil {
				t.Fatalf("err = %v, want a silence", err)
			}
			if te.Silent.SinceRequest != tc.want {
				t.Fatalf("SinceRequest = %q, want %q (since %s)", te.Silent.SinceRequest, tc.want, te.Silent.Since)
			}
		})
	}
}

// SetFirstIdle cuts short the wait of the requests it names, sent as
// requests, on a server that reads them and sits idle, until the server
// answers one; the others wait their deadline.
func TestStdioFirstIdleEndsOnceTheServerAnswers(t *testing.T) {
	waited := func(tr *StdioTransport, o *Outgoing) time.Duration {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		start := time.Now()
		if _, err := tr.RoundTrip(ctx, o); err == nil {
			t.Fatalf("%s was answered", o.Method)
		}
		return time.Since(start)
	}
	bounds := map[string]time.Duration{"tools/list": 200 * time.Millisecond}
	raw := req(2, "tools/list")
	raw.Raw = true
	// Each on a server of its own: once one is found silent, the next
	// request there waits silenceRetry whatever it is.
	for _, o := range []*Outgoing{req(1, "tools/list"), req(3, "resources/read"), raw} {
		silent := startHelper(t, "silent", nil)
		silent.SetFirstIdle(bounds)
		d := waited(silent, o)
		if cut := o.Method == "tools/list" && !o.Raw; cut && d > time.Second {
			t.Errorf("tools/list waited %s on an idle server, want about 200ms", d)
		} else if !cut && d < 1400*time.Millisecond {
			t.Errorf("%s (raw %v) gave up after %s, want its deadline", o.Method, o.Raw, d)
		}
	}
	// Not for a request sent while another waits (it may be queued behind
	// it), nor after a raw line, and a context's own bound is kept.
	queued := startHelper(t, "silent", nil)
	queued.SetFirstIdle(bounds)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_, _ = queued.RoundTrip(ctx, req(1, "resources/read"))
	}()
	for queued.Waiting() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if d := waited(queued, req(2, "tools/list")); d < 1400*time.Millisecond {
		t.Errorf("tools/list sent while another request waited gave up after %s, want its deadline", d)
	}
	afterRaw := startHelper(t, "silent", nil)
	afterRaw.SetFirstIdle(bounds)
	if err := afterRaw.WriteLine(context.Background(), []byte("junk")); err != nil {
		t.Fatal(err)
	}
	if d := waited(afterRaw, req(1, "tools/list")); d < 1400*time.Millisecond {
		t.Errorf("tools/list after a raw line gave up after %s, want its deadline", d)
	}
	own := startHelper(t, "silent", nil)
	own.SetFirstIdle(bounds)
	start := time.Now()
	octx, ocancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ocancel()
	if _, err := own.RoundTrip(WithIdleSilence(octx, time.Second), req(1, "tools/list")); err == nil {
		t.Fatal("tools/list was answered")
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 3*time.Second {
		t.Errorf("tools/list with an idle bound of 1s of its own gave up after %s", d)
	}
	answers := startHelper(t, "mute-after-junk", nil)
	answers.SetFirstIdle(bounds)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := answers.RoundTrip(ctx, req(1, "server/discover")); err != nil {
		t.Fatal(err)
	}
	if err := answers.WriteLine(ctx, []byte("junk")); err != nil {
		t.Fatal(err)
	}
	if d := waited(answers, req(2, "tools/list")); d < time.Second {
		t.Errorf("tools/list gave up after %s on a server that had answered, want its deadline", d)
	}
}

// A server that answered a raw line and then went silent is not taken
// for one silenced by the request that came next.
func TestStdioSilenceAfterAnAnsweredRawLineNamesNoRequest(t *testing.T) {
	tr := startHelper(t, "mute-after-answered-junk", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(1, "server/discover")); err != nil {
		t.Fatal(err)
	}
	// Read before the write: an answer to it that came before the read
	// left the loop below waiting for a line that never comes.
	answered := tr.LastLine()
	if err := tr.WriteLine(ctx, []byte("junk")); err != nil {
		t.Fatal(err)
	}
	for !tr.LastLine().After(answered) { // the parse error
		if ctx.Err() != nil {
			t.Fatal("no answer to the raw line")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err := tr.RoundTrip(WithIdleSilence(ctx, 200*time.Millisecond), req(2, "tools/list"))
	var te *Error
	if !errors.As(err, &te) || te.Silent == nil {
		t.Fatalf("err = %v, want a silence", err)
	}
	if te.Silent.SinceRequest != "" {
		t.Fatalf("SinceRequest = %q after a raw line the server answered, want \"\"", te.Silent.SinceRequest)
	}
}

// A process that once took 0.6 s, idle, to answer a method is not taken
// for silent when it takes as long again under a shorter idle bound: the
// bound is at least three times what the method took before on that
// process. Another method keeps its own bound.
func TestStdioIdleSilenceSparesWhatTheProcessTookBefore(t *testing.T) {
	tr := startHelper(t, "unhurried", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(1, "server/discover")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RoundTrip(WithIdleSilence(ctx, 200*time.Millisecond), req(2, "server/discover")); err != nil {
		t.Fatalf("the same method, as slow as before: %v", err)
	}
	_, err := tr.RoundTrip(WithIdleSilence(ctx, 200*time.Millisecond), req(3, "tools/list"))
	var te *Error
	if !errors.As(err, &te) || te.Silent == nil || !te.Silent.Idle {
		t.Fatalf("a method the process never answered, under a 200ms bound: err = %v, want an idle silence", err)
	}
}

// What a process's first answer took counts for nothing once it has
// answered the method again: the first wait held its start too. A server
// slow to start and then deaf after a malformed line is found silent
// within the request's own bound, not three times its start.
func TestStdioIdleSilenceForgetsTheStartOnceWarm(t *testing.T) {
	tr := startHelper(t, "slow-start-mute-after-junk", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for id := range int64(2) {
		if _, err := tr.RoundTrip(ctx, req(id+1, "server/discover")); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.WriteLine(ctx, []byte("junk")); err != nil {
		t.Fatal(err)
	}
	_, err := tr.RoundTrip(WithIdleSilence(ctx, 200*time.Millisecond), req(3, "server/discover"))
	var te *Error
	if !errors.As(err, &te) || te.Silent == nil || !te.Silent.Idle {
		t.Fatalf("err = %v, want an idle silence", err)
	}
	// Three times the start would be 3 s; the bound is 0.2 s, and finding
	// it idle takes a few ticks more.
	if te.After >= 2*time.Second {
		t.Fatalf("found silent after %s, want the 200ms bound, not three times the start", te.After)
	}
}

// A process's first answer holds its start: what it took counts toward
// the idle bound of its method only up to coldMost, so a server that took
// 2.5 s to start and then went deaf is found silent after three times
// coldMost (3 s), not three times its start (7.5 s).
func TestStdioIdleSilenceCapsWhatAColdStartCounts(t *testing.T) {
	tr := startHelper(t, "slower-start-mute-after-junk", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(1, "server/discover")); err != nil {
		t.Fatal(err)
	}
	if err := tr.WriteLine(ctx, []byte("junk")); err != nil {
		t.Fatal(err)
	}
	_, err := tr.RoundTrip(WithIdleSilence(ctx, 200*time.Millisecond), req(2, "server/discover"))
	var te *Error
	if !errors.As(err, &te) || te.Silent == nil || !te.Silent.Idle {
		t.Fatalf("err = %v, want an idle silence", err)
	}
	// At least the capped bound (the cold answer does count, up to
	// coldMost); well short of three times the start. Finding it idle
	// takes a few ticks past the bound.
	if te.After < idleTook*coldMost || te.After >= 6*time.Second {
		t.Fatalf("found silent after %s, want about %s (%d × coldMost)", te.After, idleTook*coldMost, idleTook)
	}
}

// A server that is computing its answer is not taken for silent.
func TestStdioIdleSilenceSparesABusyServer(t *testing.T) {
	tr := startHelper(t, "busy", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(WithIdleSilence(ctx, 300*time.Millisecond), req(1, "server/discover")); err != nil {
		t.Fatalf("a server computing for 1.5s: %v", err)
	}
	if s := tr.Silenced(); s != nil {
		t.Fatalf("Silenced() = %+v, want nil", s)
	}
}

// A short wait that ends without an answer asks whether anything comes;
// it does not mark the server silent.
func TestStdioShortTimeoutIsNotSilence(t *testing.T) {
	tr := startHelper(t, "silent", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(1, "server/discover")); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if s := tr.Silenced(); s != nil {
		t.Fatalf("Silenced() = %+v after a 200ms wait, want nil", s)
	}
}

// A server that only seemed silent (one answer came after the deadline)
// revives on its next line: the request then waiting gets its answer.
func TestStdioSilenceEndsWhenTheServerWrites(t *testing.T) {
	tr := startHelper(t, "sleepy", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2200*time.Millisecond)
	_, err := tr.RoundTrip(ctx, req(1, "server/discover"))
	cancel()
	if tr.Silenced() == nil {
		t.Fatalf("err = %v, and the server is not marked silent", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tr.RoundTrip(ctx, req(2, "tools/list")); err != nil {
		t.Fatalf("a request after the late answer: %v", err)
	}
	if s := tr.Silenced(); s != nil {
		t.Fatalf("Silenced() = %+v after the server wrote again", s)
	}
}

// CPU counts what the server's processes have used: a helper that computed
// for 1.5 s before it answered has used far more than one that echoes.
func TestStdioCPU(t *testing.T) {
	used := func(name string) time.Duration {
		tr := startHelper(t, name, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := tr.RoundTrip(ctx, req(1, "server/discover")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cpu, ok := tr.CPU()
		if !ok {
			t.Fatalf("%s: /proc could not tell the CPU time", name)
		}
		return cpu
	}
	busy, echo := used("busy"), used("echo")
	// The busy loop spins on the wall clock, so a loaded machine gives it
	// less than 1.5 s of CPU; 300 ms is far above any start.
	if busy < 300*time.Millisecond || echo >= busy/2 {
		t.Fatalf("CPU: busy helper %v, echo helper %v; want the busy one at least 300ms and twice the other", busy, echo)
	}
}

// The machine's busy time grows by at least the CPU this process spends.
func TestMachineCPUCountsThisProcessesWork(t *testing.T) {
	own := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	before, ok := MachineCPU()
	if !ok {
		t.Skip("no /proc/stat here")
	}
	start := own()
	for x := 0; own()-start < 300*time.Millisecond; x++ {
		_ = x * x
	}
	spent := own() - start
	after, ok := MachineCPU()
	if !ok {
		t.Fatal("/proc/stat could be read once and then not")
	}
	// /proc counts in 10 ms ticks per core.
	if got := after - before; got < spent-50*time.Millisecond {
		t.Fatalf("the machine was busy %s while this process spent %s", got, spent)
	}
}

// A process closed aside is stopped beside the caller: Close returns while
// the process still runs out its grace, and Stops.Wait once it is gone.
func TestCloseAsideReturnsBeforeTheProcessIsGone(t *testing.T) {
	const grace = 1500 * time.Millisecond
	tr := startHelper(t, "ignore-eof", func(c *StdioConfig) { c.ShutdownGrace = grace })
	stops := &Stops{}
	tr.CloseAside(stops)
	began := time.Now()
	tr.Close()
	if d := time.Since(began); d >= grace {
		t.Fatalf("Close took %s, the whole grace", d)
	}
	if !alive(tr.Pid()) {
		t.Fatal("the process was gone as Close returned, before its grace ran out")
	}
	stops.Wait()
	if alive(tr.Pid()) {
		t.Fatal("the process outlived Stops.Wait")
	}
	if sr := tr.Shutdown(); sr.Escalation != "SIGTERM" || sr.Took < grace {
		t.Fatalf("shutdown %+v, want SIGTERM after the %s grace", sr, grace)
	}
	// Stop after that returns the same report at once.
	tr.Stop()
	if sr := tr.Shutdown(); sr.Escalation != "SIGTERM" {
		t.Fatalf("shutdown after Stop %+v", sr)
	}
}

// Once every process stopped aside needed a signal, the next ones get
// hurriedGrace; once one exits on EOF, the full grace again. Stop, which a
// caller that judges the shutdown uses, always waits the full grace.
func TestStopsHurryOnlyWhileEveryStopNeededASignal(t *testing.T) {
	const grace = 800 * time.Millisecond
	stops := &Stops{}
	stopAside := func(name string) ShutdownReport {
		tr := startHelper(t, name, func(c *StdioConfig) {
			c.ShutdownGrace = grace
			if name == "cat" {
				// Exits on EOF within the hurried grace, under the race
				// detector too (the helper may not).
				c.Argv = []string{"cat"}
			}
		})
		tr.CloseAside(stops)
		tr.Close()
		stops.Wait()
		return tr.Shutdown()
	}
	if sr := stopAside("ignore-eof"); sr.Escalation != "SIGTERM" || sr.Took < grace {
		t.Fatalf("first stop %+v, want SIGTERM after the full %s", sr, grace)
	}
	if sr := stopAside("ignore-eof"); sr.Escalation != "SIGTERM" || sr.Took >= grace {
		t.Fatalf("second stop %+v, want SIGTERM after %s, not the full grace", sr, hurriedGrace)
	}
	judged := startHelper(t, "ignore-eof", func(c *StdioConfig) { c.ShutdownGrace = grace })
	judged.CloseAside(stops)
	judged.Stop()
	if sr := judged.Shutdown(); sr.Escalation != "SIGTERM" || sr.Took < grace {
		t.Fatalf("Stop %+v, want the full %s although stops hurry", sr, grace)
	}
	if sr := stopAside("cat"); sr.Escalation != "" {
		t.Fatalf("cat needed %s", sr.Escalation)
	}
	if sr := stopAside("ignore-eof"); sr.Escalation != "SIGTERM" || sr.Took < grace {
		t.Fatalf("stop after one exited on EOF %+v, want the full %s", sr, grace)
	}
	// A process sent a raw line, which may have stopped its reader, tells
	// nothing when it needs a signal.
	stops = &Stops{}
	raw := startHelper(t, "ignore-eof", func(c *StdioConfig) { c.ShutdownGrace = grace })
	raw.CloseAside(stops)
	if err := raw.WriteLine(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":`)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	stops.Wait()
	if sr := stopAside("ignore-eof"); sr.Took < grace {
		t.Fatalf("stop after a raw process needed a signal %+v, want the full %s", sr, grace)
	}
}

// What a server writes on its way out reaches the watchers before Stop
// returns, and before Stops.Wait for a process closed aside: the run reads
// its monitors right after.
func TestStopReturnsOnceTheWatchersHaveTheLastLines(t *testing.T) {
	for _, aside := range []bool{false, true} {
		tr := startHelper(t, "chatty-exit", func(c *StdioConfig) { c.ShutdownGrace = 10 * time.Second })
		var mu sync.Mutex
		lines := 0
		tr.Watch(func(s Seen) {
			if s.Line != nil {
				mu.Lock()
				lines++
				mu.Unlock()
			}
		})
		if aside {
			stops := &Stops{}
			tr.CloseAside(stops)
			tr.Close()
			stops.Wait()
		} else {
			tr.Stop()
		}
		mu.Lock()
		got := lines
		mu.Unlock()
		if got != 800 {
			t.Errorf("aside %v: the watcher had %d of the 800 lines written on the way out when the stop returned", aside, got)
		}
	}
}
