package resilience

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// DisconnectID is the check id of CheckDisconnect.
const DisconnectID = "RESIL-1"

// DisconnectOptions configure CheckDisconnect.
type DisconnectOptions struct {
	// Tool is a tool the harness may call (annotated readOnlyHint, or
	// allowed by the user), whose answer is worth cutting: a slow or
	// streaming one is best. Args are its arguments. With no Tool the cut
	// requests are tools/list.
	Tool string
	Args json.RawMessage
	// Cuts is how many requests are dropped (default 4, half of them as
	// soon as the request is written, half after the first byte of the
	// answer).
	Cuts int
	// Timeout bounds each follow-up request (default 10s).
	Timeout time.Duration
}

// CheckDisconnect drops requests mid-way, as a client whose user closed
// the window or whose network failed would, and checks that the server
// still answers the next request after each drop and a few in a row at
// the end. A server that wedges a worker, a lock or a session on a
// dropped stream stops serving every client. The spec says a
// disconnection is not a cancellation; it does not say a server may stop
// answering, and no client can prevent one.
//
// It runs on Streamable HTTP only (on stdio a client cannot drop one
// request without ending the session: skipped), costs a few requests, and
// returns a Layer 0 style result (level SHOULD: a failure warns) that the
// caller may append to the conformance checks. The error of a dropped
// request itself is expected and not reported.
func CheckDisconnect(ctx context.Context, c *mcpclient.Client, opts DisconnectOptions) check.Result {
	start := time.Now()
	res := check.Result{ID: DisconnectID, Level: check.Should, Family: "RESIL", Runs: 1,
		Spec: "basic/transports.mdx §Streamable HTTP (disconnection is not cancellation)",
		Doc:  "the server keeps answering after a client drops a request mid-stream",
		Fix:  "release what a request holds (locks, workers, session state) when its connection closes, and keep serving others"}
	out := disconnect(ctx, c, opts)
	res.Outcome, res.Verdict = out, out.Verdict
	res.Counts = map[check.Verdict]int{out.Verdict: 1}
	res.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	return res
}

func disconnect(ctx context.Context, c *mcpclient.Client, opts DisconnectOptions) check.Outcome {
	ht, ok := c.Transport().(*transport.HTTPTransport)
	if !ok {
		return check.Outcome{Verdict: check.Skipped, Message: "stdio: a client cannot drop one request without ending the session"}
	}
	if opts.Cuts <= 0 {
		opts.Cuts = 4
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	method, params := "tools/list", any(nil)
	if opts.Tool != "" {
		args := opts.Args
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		method, params = "tools/call", map[string]any{"name": opts.Tool, "arguments": args}
	}
	// Its own connections: dropping a request closes the connection it
	// was on (the transport cannot reuse it), and the client's stay up.
	// Keep-alive stays on: with "Connection: close" some servers (Go's
	// net/http) stop watching the connection and never see the drop.
	hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	for i := 0; i < opts.Cuts; i++ {
		early := i%2 == 0
		how := "after the first byte of the answer"
		if early {
			how = "as soon as the request was written"
		}
		_, og, err := c.Build(method, params)
		if err != nil {
			return check.Outcome{Verdict: check.Errored, Message: "building the request: " + err.Error()}
		}
		drop(ctx, hc, ht, og, early)
		if ev, err := answers(ctx, c, opts.Timeout); err != nil {
			return check.Outcome{Verdict: check.Warned, Message: fmt.Sprintf("after a %s request was dropped %s (drop %d of %d), the server did not answer tools/list: %s",
				method, how, i+1, opts.Cuts, clip(err.Error(), 300)), Evidence: ev}
		}
	}
	for i := 0; i < 3; i++ {
		if ev, err := answers(ctx, c, opts.Timeout); err != nil {
			return check.Outcome{Verdict: check.Warned, Message: fmt.Sprintf("after %d dropped requests, request %d of 3 in a row got no answer: %s", opts.Cuts, i+1, clip(err.Error(), 300)), Evidence: ev}
		}
	}
	return check.Outcome{Verdict: check.Passed, Message: fmt.Sprintf("the server answered after each of %d dropped %s requests and 3 more in a row", opts.Cuts, method)}
}

// drop sends the request and closes the connection: right after the
// request is written (early), or after the first byte of the answer.
func drop(ctx context.Context, hc *http.Client, ht *transport.HTTPTransport, og *transport.Outgoing, early bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if early {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { cancel() }})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ht.URL(), bytes.NewReader(og.Body))
	if err != nil {
		return
	}
	for k, vs := range ht.Header() { // the user's headers (a token): never printed
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	for k, vs := range og.Header {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return // the early drop: the request was cancelled once written
	}
	_, _ = io.ReadFull(resp.Body, make([]byte, 1))
	resp.Body.Close() // before the end of the body: the connection is closed
}

// answers asks for tools/list and says whether an answer (a result or a
// JSON-RPC error: either way the server is alive) came back in time.
func answers(ctx context.Context, c *mcpclient.Client, d time.Duration) ([]check.Evidence, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	resp, err := c.Do(ctx, "tools/list", nil)
	if err == nil {
		return nil, nil
	}
	var ev []check.Evidence
	if e := check.FromResponse(resp); e != nil {
		ev = append(ev, *e)
	} else {
		ev = append(ev, check.Evidence{Transport: "http", Request: "tools/list", Response: jsonrpc.Clip(err.Error(), 300)})
	}
	return ev, err
}
