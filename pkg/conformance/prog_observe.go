package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// progObs is one request watched beyond its final response: what the
// server sent before it, the response, and what followed within a window.
type progObs struct {
	ID     json.RawMessage
	Before []*jsonrpc.Message // notifications and server requests before the final response
	Final  *jsonrpc.Message
	After  []*jsonrpc.Message // anything seen after the final response, within the window
	// HTTP only: the live response; Ended says the stream ended by itself
	// within the window after the final response.
	Live  *httpLive
	Ended bool
	Ev    *check.Evidence
}

// progObserve sends one request on client c (the shared one or a fresh
// one) and watches it: on HTTP its response stream, read past the final
// response until the stream ends or window passes; on stdio every stdout
// line until a later request is answered (at most window after the final
// response). On a shared stdio process the lines of other requests are seen
// too: a caller that judges notifications it cannot attribute uses
// progClient's fresh process.
func progObserve(ctx context.Context, c *mcpclient.Client, method string, params any, window time.Duration, opts ...mcpclient.CallOption) (*progObs, error) {
	switch t := c.Transport().(type) {
	case *transport.HTTPTransport:
		return progObserveHTTP(ctx, c, t, method, params, window, opts...)
	case *transport.StdioTransport:
		return progObserveStdio(ctx, c, t, method, params, window, opts...)
	}
	return nil, errors.New("unknown transport")
}

func progObserveHTTP(ctx context.Context, c *mcpclient.Client, t *transport.HTTPTransport, method string, params any, window time.Duration, opts ...mcpclient.CallOption) (*progObs, error) {
	_, out, err := c.Build(method, params, opts...)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	l, err := httpOpenLive(rctx, t, out.Body, httpRawHeader(out))
	if err != nil {
		return nil, err
	}
	defer l.Close()
	obs := &progObs{ID: out.ID, Live: l}
	// told is the exchange up to its final response, as RoundTrip would
	// have reported it to the monitors.
	told := &transport.Exchange{}
	var bad []transport.Anomaly
	for obs.Final == nil {
		it, ok, ended := l.Next(rctx, 30*time.Second)
		if ended {
			obs.Ended = true
			break
		}
		if !ok {
			break
		}
		if it.Msg == nil {
			kind := "malformed-event"
			if !l.SSE {
				kind = "malformed-body"
			}
			bad = append(bad, transport.Anomaly{Kind: kind, Detail: it.Anomaly, Excerpt: jsonrpc.Clip(it.Raw, 120)})
			continue
		}
		if it.Msg.Kind() == jsonrpc.KindResponse && (jsonrpc.SameID(it.Msg.ID, out.ID) || !l.SSE) {
			obs.Final = it.Msg
			info := l.info()
			told.HTTP, told.Elapsed = &info, time.Since(start)
			continue
		}
		obs.Before = append(obs.Before, it.Msg)
	}
	if told.HTTP == nil {
		info := l.info()
		told.HTTP, told.Elapsed = &info, time.Since(start)
	}
	// The monitors judge this request up to its final response, as they
	// judge every RoundTrip; what came after it is the caller's to judge.
	told.Response, told.Anomalies = obs.Final, bad
	told.Sort(obs.Before)
	var failed error
	if obs.Final == nil {
		failed = fmt.Errorf("%s: the response ended or stalled before its final response", method)
	}
	t.Tell(out, told, failed)
	if obs.Final != nil && !obs.Ended {
		deadline := time.Now().Add(window)
		for {
			it, ok, ended := l.Next(rctx, time.Until(deadline))
			if ended {
				obs.Ended = true
				break
			}
			if !ok {
				break
			}
			if it.Msg != nil {
				obs.After = append(obs.After, it.Msg)
			}
		}
	}
	obs.Ev = l.Ev()
	return obs, nil
}

func progObserveStdio(ctx context.Context, c *mcpclient.Client, t *transport.StdioTransport, method string, params any, window time.Duration, opts ...mcpclient.CallOption) (*progObs, error) {
	tap, stop := t.Tap(512)
	defer stop()
	type done struct {
		resp *mcpclient.Response
		err  error
	}
	ch := make(chan done, 1)
	go func() {
		resp, err := c.Do(ctx, method, params, opts...)
		ch <- done{resp, err}
	}()
	obs := &progObs{}
	var d done
	var lines []transport.Inbound
	got := false
	for !got {
		select {
		case in := <-tap:
			lines = append(lines, in)
		case d = <-ch:
			got = true
		}
	}
	if d.err != nil && d.resp == nil {
		return nil, d.err
	}
	obs.ID = d.resp.ID
	obs.Ev = check.FromResponse(d.resp)
	if d.err != nil {
		return obs, d.err
	}
	// A fence: once a later request is answered, what the server meant to
	// send after the final response is out. Its answer usually reaches the
	// tap before its id comes on fence, so the watch runs to the end of
	// window; on a shared quiet process settle waits for the answer.
	fence := make(chan json.RawMessage, 1)
	go func() {
		if resp, err := c.Do(ctx, "server/discover", nil); err == nil {
			fence <- resp.ID
		}
		close(fence)
	}()
	timer := time.NewTimer(window)
	defer timer.Stop()
	var fenceID json.RawMessage
collect:
	for {
		select {
		case in := <-tap:
			if fenceID != nil && in.Msg != nil && in.Msg.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(in.Msg.ID, fenceID) {
				break collect
			}
			lines = append(lines, in)
		case id, ok := <-fence:
			if !ok {
				fence = nil
				continue
			}
			fenceID = id
			// Its response may already be in the tap: drain what is there.
			for {
				select {
				case in := <-tap:
					if in.Msg != nil && in.Msg.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(in.Msg.ID, fenceID) {
						break collect
					}
					lines = append(lines, in)
				default:
					continue collect
				}
			}
		case <-timer.C:
			break collect
		case <-ctx.Done():
			break collect
		}
	}
	for _, in := range lines {
		m := in.Msg
		if m == nil {
			continue
		}
		if m.Kind() == jsonrpc.KindResponse {
			if obs.Final == nil && jsonrpc.SameID(m.ID, obs.ID) {
				obs.Final = m
			} else if obs.Final != nil && jsonrpc.SameID(m.ID, obs.ID) {
				obs.After = append(obs.After, m)
			}
			continue // other requests' responses
		}
		if obs.Final == nil {
			obs.Before = append(obs.Before, m)
		} else {
			obs.After = append(obs.After, m)
		}
	}
	if obs.Final == nil && d.resp.Exchange != nil {
		obs.Final = d.resp.Exchange.Response
	}
	return obs, nil
}

// progClient is the client for checks that judge notifications a stdio
// transport cannot attribute (log messages, progress of a request without a
// token): on stdio a turn on one of the repetition's quiet processes (quiet.go),
// where only the check's own requests run while it watches; the shared
// connection on HTTP, where every response has its own stream. The func
// ends the turn.
func progClient(p *check.Pass) (*mcpclient.Client, func(), error) {
	if p.Env.Transport == "stdio" {
		return quietTurn(p)
	}
	return p.Env.Client, func() {}, nil
}

// progFor keeps the notifications/progress whose token is token (same
// value and JSON type).
func progFor(msgs []*jsonrpc.Message, token json.RawMessage) []*jsonrpc.Message {
	var out []*jsonrpc.Message
	for _, m := range msgs {
		if m.Method == "notifications/progress" && jsonrpc.SameID(progParams(m)["progressToken"], token) {
			out = append(out, m)
		}
	}
	return out
}

// progByMethod keeps the messages with this method.
func progByMethod(msgs []*jsonrpc.Message, method string) []*jsonrpc.Message {
	var out []*jsonrpc.Message
	for _, m := range msgs {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}
