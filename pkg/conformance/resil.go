package conformance

import (
	"bytes"
	"context"
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

// The RESIL family is the transport-level half of Layer 2 (package
// resilience has the model-level half): whether the server survives what
// real clients do to it.
var resilFamily = family{name: "RESIL", title: "resilience",
	checks:          []*check.Check{RESIL1},
	beyondChecklist: "the checklist lists CANC-3 (closing the stream cancels the request) as unobservable; RESIL-1 checks what a client can see of it, that the server serves on"}

// RESIL-1 is SHOULD: streamable-http.mdx §Cancellation says closing a
// response stream MUST be treated as cancellation of that request (CANC-3),
// and a cancellation ends that request only, but no sentence says the
// server MUST go on answering others; a failure warns with evidence and
// does not fail conformance. It runs alone (Exclusive) so that no check in
// flight shares the server with its drops and fails for them.
var RESIL1 = &check.Check{
	ID: "RESIL-1", Level: check.Should, Transports: check.HTTP, Exclusive: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Cancellation (closing the response stream cancels that request only)",
	Doc:  "the server keeps answering after a client drops a request mid-stream",
	Fix:  "release what a request holds (locks, workers, state) when its stream closes, and keep serving others",
	Run:  runDisconnect,
}

// Bounds of RESIL-1: each dropped request and each follow-up.
const (
	resilCuts         = 4 // half dropped once written, half after the first byte back
	resilDropTimeout  = 10 * time.Second
	resilAnswerWithin = 10 * time.Second
)

// runDisconnect drops tools/list requests mid-way, as a client whose user
// closed the window or whose network failed would, and checks that the
// server answers the next request after each drop and three in a row at
// the end. A server that wedges a worker, a lock or a session on a dropped
// stream stops serving every client. The error of a dropped request itself
// is expected and not reported. tools/list is cut rather than a tool call:
// it has no side effects, and every server serves it.
func runDisconnect(p *check.Pass) error {
	if p.Env.HTTP == nil {
		p.Skipf("stdio: a client cannot drop one request without ending the session")
		return nil
	}
	// The follow-ups go over a fresh client: new connections, as a client
	// arriving after the drop would make, and the shared one stays clean.
	c, done, err := p.Env.Fresh(p.Ctx)
	if err != nil {
		return fmt.Errorf("opening a fresh connection: %w", err)
	}
	defer done()
	// The drops use their own connections: dropping a request closes the
	// connection it was on. Keep-alive stays on: with "Connection: close"
	// some servers (Go's net/http) stop watching the connection and never
	// see the drop.
	hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	for i := 0; i < resilCuts; i++ {
		early := i%2 == 0
		how := "after the first byte of the answer"
		if early {
			how = "as soon as the request was written"
		}
		_, og, err := c.Build("tools/list", nil)
		if err != nil {
			return fmt.Errorf("building the request: %w", err)
		}
		dropRequest(p.Ctx, hc, p.Env, og.Body, og.Header, early)
		if ev, err := answersWithin(p.Ctx, c, resilAnswerWithin); err != nil {
			if transport.GatewayRefused(err) {
				// A gateway's refusal says nothing of the server, as on
				// every other path (a server dead behind it shows as not
				// judged, not as passing).
				return fmt.Errorf("after a dropped tools/list request, the next one met the gateway: %w", err)
			}
			p.Failf(ev, "after a tools/list request was dropped %s (drop %d of %d), the server did not answer tools/list: %s",
				how, i+1, resilCuts, jsonrpc.Clip(err.Error(), 300))
			return nil
		}
	}
	for i := 0; i < 3; i++ {
		if ev, err := answersWithin(p.Ctx, c, resilAnswerWithin); err != nil {
			if transport.GatewayRefused(err) {
				return fmt.Errorf("after %d dropped requests, request %d of 3 met the gateway: %w", resilCuts, i+1, err)
			}
			p.Failf(ev, "after %d dropped requests, request %d of 3 in a row got no answer: %s", resilCuts, i+1, jsonrpc.Clip(err.Error(), 300))
			return nil
		}
	}
	p.Passf(nil, "the server answered after each of %d dropped tools/list requests and 3 more in a row", resilCuts)
	return nil
}

// dropRequest sends body and closes the connection: right after the
// request is written (early), or after the first byte of the answer.
func dropRequest(ctx context.Context, hc *http.Client, env check.Env, body []byte, h http.Header, early bool) {
	ctx, cancel := context.WithTimeout(ctx, resilDropTimeout)
	defer cancel()
	if early {
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { cancel() }})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, env.HTTP.URL(), bytes.NewReader(body))
	if err != nil {
		return
	}
	for k, vs := range env.HTTP.Header() { // the user's headers (a token): never printed
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	for k, vs := range h {
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

// answersWithin asks for tools/list and says whether an answer (a result
// or a JSON-RPC error: either way the server is alive) came back in time.
func answersWithin(ctx context.Context, c *mcpclient.Client, d time.Duration) (*check.Evidence, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	resp, err := c.Do(ctx, "tools/list", nil)
	if err == nil {
		return nil, nil
	}
	if ev := check.FromResponse(resp); ev != nil {
		return ev, err
	}
	return &check.Evidence{Transport: "http", Request: "tools/list", Response: jsonrpc.Clip(err.Error(), 300)}, err
}
