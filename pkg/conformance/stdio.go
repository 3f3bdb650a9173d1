package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// STDIO: the stdio transport (basic/transports/stdio.mdx, checklist §1.17).
// STDIO-1 and STDIO-2 judge everything the shared process printed, plus
// the lines of a few requests of their own.

// stdioExercise sends a few ordinary requests on the shared process while
// watching stdout, so the STDIO checks see lines of their own even when
// they run first.
func stdioExercise(p *check.Pass) ([]transport.Inbound, error) {
	st := p.Env.Stdio
	tap, stop := st.Tap(512)
	defer stop()
	for _, m := range []string{"server/discover", "tools/list"} {
		if m == "tools/list" && !p.Env.Facts.Has("tools") {
			continue
		}
		if _, err := p.Env.Client.Do(p.Ctx, m, nil); err != nil {
			return nil, err
		}
	}
	var out []transport.Inbound
	for {
		select {
		case in := <-tap:
			out = append(out, in)
		default:
			return out, nil
		}
	}
}

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

var STDIO1 = &check.Check{
	ID: "STDIO-1", Level: check.Must, Transports: check.Stdio,
	Spec: "basic/transports/stdio.mdx §Message Framing",
	Doc:  "every stdout line is exactly one JSON-RPC message, and nothing else (banners, logs) appears on stdout",
	Fix:  "write only JSON-RPC messages to stdout, one per line, and send logs and banners to stderr",
	Run: func(p *check.Pass) error {
		lines, err := stdioExercise(p)
		if err != nil {
			return err
		}
		fail := stdioOnce(p)
		for _, in := range lines {
			if in.Msg == nil {
				fail(jsonrpc.Clip(string(in.Raw), 300), "stdout carried a line that is not a JSON-RPC message: %v", in.Err)
			} else if in.Msg.Kind() == jsonrpc.KindInvalid {
				fail(jsonrpc.Clip(string(in.Raw), 300), "stdout carried a message that is neither a request, a notification nor a response")
			}
		}
		for _, a := range p.Env.Stdio.Anomalies() {
			switch a.Kind {
			case "non-json-line":
				fail(a.Excerpt, "stdout carried a line that is not a JSON-RPC message: %s", a.Detail)
			case "invalid-message":
				fail(a.Excerpt, "stdout carried a message that is neither a request, a notification nor a response")
			}
		}
		return nil
	},
}

var STDIO2 = &check.Check{
	ID: "STDIO-2", Level: check.Must, Transports: check.Stdio,
	Spec: "basic/transports/stdio.mdx §Message Framing; basic/patterns/index.mdx",
	Doc:  "the server writes no JSON-RPC requests to stdout",
	Fix:  "never send requests to the client; ask for input with an input_required result (MRTR)",
	Run: func(p *check.Pass) error {
		lines, err := stdioExercise(p)
		if err != nil {
			return err
		}
		fail := stdioOnce(p)
		for _, in := range lines {
			if in.Msg != nil && in.Msg.Kind() == jsonrpc.KindRequest {
				fail(jsonrpc.Clip(string(in.Raw), 300), "the server sent a JSON-RPC request (%s)", jsonrpc.Clip(in.Msg.Method, 60))
			}
		}
		for _, a := range p.Env.Stdio.Anomalies() {
			if a.Kind == "server-request" {
				fail(a.Excerpt, "the %s", a.Detail)
			}
		}
		return nil
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
	Run: func(p *check.Pass) error {
		c, closeFn, err := p.Env.Fresh(p.Ctx)
		if err != nil {
			return err
		}
		st, ok := c.Transport().(*transport.StdioTransport)
		if !ok {
			closeFn()
			return fmt.Errorf("fresh connection is not stdio")
		}
		closeFn() // closes stdin, then escalates SIGTERM → SIGKILL
		rep := st.Shutdown()
		switch {
		case rep.ExitedEarly:
			p.Failf(nil, "the server process had already exited (code %d) before stdin was closed", rep.ExitCode)
		case rep.Escalation != "":
			p.Failf(nil, "the server did not exit after stdin was closed; it needed %s (after %s)", rep.Escalation, rep.Took.Round(time.Millisecond))
		default:
			p.Passf(nil, "the server exited %s after stdin was closed (code %d)", rep.Took.Round(time.Millisecond), rep.ExitCode)
		}
		return nil
	},
}

// stdioInterleaved is how many quick requests STDIO-5 sends while a
// streaming call is in flight.
const stdioInterleaved = 4

// stdioHeadStart is how long the streaming call of STDIO-5 runs alone
// before the quick requests are sent: far less than an emitter streams for.
const stdioHeadStart = 50 * time.Millisecond

var STDIO5 = &check.Check{
	ID: "STDIO-5", Level: check.Must, Transports: check.Stdio,
	Spec: "basic/transports/stdio.mdx; basic/index.mdx §Statelessness",
	Doc:  "the server handles interleaved, unrelated requests in one process and correlates progress by progressToken",
	Fix:  "serve requests independently on one stdio stream and echo each request's progressToken",
	Run: func(p *check.Pass) error {
		es := progFindEmitters(p)
		type answer struct {
			what string
			resp *mcpclient.Response
			err  error
		}
		var wg sync.WaitGroup
		answers := make(chan answer, stdioInterleaved+1)
		ctx, cancel := context.WithTimeout(p.Ctx, 30*time.Second)
		defer cancel()
		token := "mcp-eval-stdio5"
		if es.progress != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := p.Env.Client.Do(ctx, "tools/call", map[string]any{"name": es.progress.Tool.Name, "arguments": es.progress.Args}, mcpclient.WithProgressToken(token))
				answers <- answer{"tools/call " + es.progress.Tool.Name, resp, err}
			}()
			// The rule is about requests that arrive while the streaming
			// call runs: give it a head start, or a scheduler that runs the
			// quick requests first tests nothing (and a server that serves
			// one request at a time passes by chance).
			select {
			case <-time.After(stdioHeadStart):
			case <-ctx.Done():
			}
		}
		for i := 0; i < stdioInterleaved; i++ {
			m := "server/discover"
			if i%2 == 1 && p.Env.Facts.Has("tools") {
				m = "tools/list"
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := p.Env.Client.Do(ctx, m, nil)
				answers <- answer{m, resp, err}
			}()
		}
		wg.Wait()
		close(answers)
		for a := range answers {
			ev := check.FromResponse(a.resp)
			switch {
			case a.err != nil:
				p.Failf(ev, "%s sent among interleaved requests failed: %v", a.what, a.err)
			case a.resp.Error != nil:
				p.Failf(atResponse(ev, a.resp, "/error/code"), "%s sent among interleaved requests got error %d (%s)", a.what, a.resp.Error.Code, jsonrpc.Clip(a.resp.Error.Message, 120))
			case strings.HasPrefix(a.what, "tools/call") && a.resp.Exchange != nil:
				for _, n := range a.resp.Exchange.Notifications {
					if n.Method == "notifications/progress" && !jsonrpc.SameID(progParams(n)["progressToken"], jsonrpc.StringID(token)) {
						p.Failf(ev, "progress for the interleaved call carried token %s, want %q", jsonrpc.Clip(string(progParams(n)["progressToken"]), 40), token)
					}
				}
			}
		}
		return nil
	},
}

var stdioFamily = family{name: "STDIO", title: "stdio", checks: []*check.Check{STDIO1, STDIO2, STDIO3, STDIO4, STDIO5}}
