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

// A subscriptions/listen request held open: on HTTP its own event stream,
// on stdio a listen on the repetition's listen-only process (sub_host.go).

// subAckWait bounds the wait for the acknowledgment; subGrace is how long
// the stream is watched after it.
const (
	subAckWait = 10 * time.Second
	subGrace   = 30 * time.Millisecond
)

// subStream is one open listen request.
type subStream struct {
	ID   json.RawMessage
	Sent []byte
	// HTTP
	live *httpLive
	// stdio
	client    *mcpclient.Client
	st        *transport.StdioTransport
	tap       <-chan transport.Inbound // the lines of this listen (subProc.demux)
	host      *subHost
	proc      *subProc
	alone     bool
	cancelled bool
	closed    bool
	raw       []string // stdout lines seen, for evidence
	// lastAt is when the message Next last returned was read (stdio).
	lastAt time.Time
}

// subOpen sends subscriptions/listen with filter on its own connection
// (HTTP) or on the repetition's listen process (stdio).
func subOpen(p *check.Pass, filter map[string]any, opts ...mcpclient.CallOption) (*subStream, error) {
	return subOpenOn(p, filter, false, opts...)
}

// subOpenOn is subOpen; alone asks on stdio for no other listen to be
// open on the process while this one is.
func subOpenOn(p *check.Pass, filter map[string]any, alone bool, opts ...mcpclient.CallOption) (*subStream, error) {
	params := map[string]any{"notifications": filter}
	if p.Env.Transport == "http" {
		_, out, err := p.Env.Client.Build("subscriptions/listen", params, opts...)
		if err != nil {
			return nil, err
		}
		l, err := httpOpenLive(p.Ctx, p.Env.HTTP, out.Body, httpRawHeader(out))
		if err != nil {
			return nil, err
		}
		return &subStream{ID: out.ID, Sent: out.Body, live: l}, nil
	}
	host := subHostsOf(p.Env.Memo).host(p.Run)
	pr, err := host.acquire(p, alone)
	if err != nil {
		return nil, err
	}
	_, out, err := pr.client.Build("subscriptions/listen", params, opts...)
	if err != nil {
		host.release(pr, alone)
		return nil, err
	}
	s := &subStream{ID: out.ID, Sent: out.Body, client: pr.client, st: pr.st, host: host, proc: pr, alone: alone}
	s.tap = pr.register(out.ID)
	if err := pr.st.WriteLine(p.Ctx, out.Body); err != nil {
		s.cancelled = true // never sent
		s.Close()
		return nil, err
	}
	return s, nil
}

// Cancel sends notifications/cancelled for the listen (stdio): the
// subscription must end without another message (SUB-7). Close sends it
// when the check did not.
func (s *subStream) Cancel(ctx context.Context) error {
	s.cancelled = true
	return s.proc.cancel(ctx, s.ID)
}

// Next returns the next message of the subscription, waiting at most d;
// ended is true when the stream is over (HTTP) or the process is gone.
func (s *subStream) Next(ctx context.Context, d time.Duration) (m *jsonrpc.Message, ended bool) {
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil, false
		}
		if s.live != nil {
			it, ok, end := s.live.Next(ctx, left)
			if end {
				return nil, true
			}
			if !ok {
				return nil, false
			}
			if it.Msg != nil {
				return it.Msg, false
			}
			continue
		}
		t := time.NewTimer(left)
		select {
		case in := <-s.tap:
			t.Stop()
			if len(s.raw) < 20 {
				s.raw = append(s.raw, string(in.Raw))
			}
			if in.Msg == nil {
				continue
			}
			if in.Msg.Kind() == jsonrpc.KindResponse && !jsonrpc.SameID(in.Msg.ID, s.ID) {
				continue // a fence or another request of this process
			}
			s.lastAt = in.At
			return in.Msg, false
		case <-s.st.Exited():
			t.Stop()
			return nil, true
		case <-t.C:
			return nil, false
		case <-ctx.Done():
			t.Stop()
			return nil, false
		}
	}
}

// Ev is the exchange so far as evidence.
func (s *subStream) Ev() *check.Evidence {
	if s.live != nil {
		return s.live.Ev()
	}
	out := ""
	for _, r := range s.raw {
		out += r + "\n"
	}
	return &check.Evidence{Transport: "stdio", Request: jsonrpc.Clip(string(s.Sent), 400), Response: jsonrpc.Clip(out, 600)}
}

// Close ends the listen request: the HTTP stream is closed; on stdio the
// listen is cancelled and its messages go to no one from now on, and the
// process is stopped only when no listen of the repetition is left.
func (s *subStream) Close() {
	if s.live != nil {
		s.live.Close()
		return
	}
	if s.closed {
		return
	}
	s.closed = true
	if !s.cancelled && !s.proc.dead() {
		ctx, cancel := context.WithTimeout(context.Background(), subCancelWait)
		_ = s.Cancel(ctx)
		cancel()
	}
	s.proc.unregister(s.ID)
	s.host.release(s.proc, s.alone)
}

// subAck is what happened up to the acknowledgment.
type subAck struct {
	Ack    *jsonrpc.Message   // nil when none came
	Before []*jsonrpc.Message // messages of the subscription before it
	Final  *jsonrpc.Message   // a response to the listen request (error or closing result)
	Ended  bool
}

// subIsAck reports whether m is a subscription acknowledgment.
func subIsAck(m *jsonrpc.Message) bool {
	return m.Method == "notifications/subscriptions/acknowledged"
}

// WaitAck reads until the acknowledgment, a response to the listen, the
// end of the stream, or subAckWait.
func (s *subStream) WaitAck(ctx context.Context) subAck {
	var a subAck
	deadline := time.Now().Add(subAckWait)
	for time.Now().Before(deadline) {
		m, ended := s.Next(ctx, time.Until(deadline))
		if ended {
			a.Ended = true
			return a
		}
		if m == nil {
			return a
		}
		switch {
		case m.Kind() == jsonrpc.KindResponse:
			a.Final = m
			return a
		case subIsAck(m):
			a.Ack = m
			return a
		}
		a.Before = append(a.Before, m)
	}
	return a
}

// Watch collects messages for d (or until the stream ends).
func (s *subStream) Watch(ctx context.Context, d time.Duration) (msgs []*jsonrpc.Message, ended bool) {
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return msgs, false
		}
		m, end := s.Next(ctx, left)
		if end {
			return msgs, true
		}
		if m == nil {
			return msgs, false
		}
		msgs = append(msgs, m)
	}
}

// subCaps are the subscribable features the server declares.
type subCaps struct {
	tools, prompts, resources, subscribe bool
}

func subDeclared(f *check.Facts) subCaps {
	flag := func(capName, key string) bool {
		var m map[string]json.RawMessage
		if json.Unmarshal(f.Capabilities[capName], &m) != nil {
			return false
		}
		var b bool
		return json.Unmarshal(m[key], &b) == nil && b
	}
	return subCaps{tools: flag("tools", "listChanged"), prompts: flag("prompts", "listChanged"), resources: flag("resources", "listChanged"), subscribe: flag("resources", "subscribe")}
}

// subFullFilter asks for every notification type the server declares
// (and toolsListChanged when it declares none).
func subFullFilter(f *check.Facts) map[string]any {
	d := subDeclared(f)
	out := map[string]any{}
	if d.tools {
		out["toolsListChanged"] = true
	}
	if d.prompts {
		out["promptsListChanged"] = true
	}
	if d.resources {
		out["resourcesListChanged"] = true
	}
	if d.subscribe && len(f.Resources) > 0 {
		out["resourceSubscriptions"] = []string{f.Resources[0].URI}
	}
	if len(out) == 0 {
		out["toolsListChanged"] = true
	}
	return out
}

// subOpenAck opens a listen and waits for its acknowledgment; it skips the
// check (and returns nil) when the server rejects subscriptions/listen.
func subOpenAck(p *check.Pass, filter map[string]any, opts ...mcpclient.CallOption) (*subStream, subAck, error) {
	s, a, rejected, err := subOpenAckQuiet(p, filter, false, opts...)
	if rejected != "" {
		p.Skipf("%s", rejected)
	}
	return s, a, err
}

// subOpenAckQuiet is subOpenAck that says why the server rejected the
// listen (rejected, with a nil stream) instead of skipping.
func subOpenAckQuiet(p *check.Pass, filter map[string]any, alone bool, opts ...mcpclient.CallOption) (s *subStream, a subAck, rejected string, err error) {
	s, err = subOpenOn(p, filter, alone, opts...)
	if err != nil {
		return nil, subAck{}, "", err
	}
	a = s.WaitAck(p.Ctx)
	if a.Final != nil && a.Final.Error != nil && a.Ack == nil {
		s.Close()
		return nil, a, fmt.Sprintf("subscriptions/listen was rejected with error %d (%s)", a.Final.Error.Code, jsonrpc.Clip(a.Final.Error.Message, 120)), nil
	}
	if s.live != nil && s.live.Status >= 300 && a.Ack == nil {
		s.Close()
		return nil, a, fmt.Sprintf("subscriptions/listen was answered with HTTP %d", s.live.Status), nil
	}
	return s, a, "", nil
}

// subWatch is one listen request seen to its end: opened, acknowledged
// (or not), watched for subGrace after that and closed.
type subWatch struct {
	s     *subStream // closed: read its ID, Sent and live.SSE, not its stream
	a     subAck
	after []*jsonrpc.Message // after the acknowledgment
	ended bool               // the stream ended while watched
	ev    *check.Evidence    // the exchange as it was when watching ended
	// rejected says why the server refused the listen (s is nil).
	rejected string
	err      error
}

type subWatchKey struct {
	run    int
	filter string
}

// subWatched is the repetition's listen request with filter and no
// options, shared by the checks that only read what it brought (SUB-1,
// SUB-2, SUB-4 when their filters are the same): one listen (one process
// on stdio) instead of one per check.
func subWatched(p *check.Pass, filter map[string]any) *subWatch {
	key, _ := json.Marshal(filter)
	v := p.Env.Memo.Do(subWatchKey{run: p.Run, filter: string(key)}, func() any {
		// Alone on the process: SUB-4 judges the id of every message, and
		// one mislabelled with another open listen's id would go there.
		s, a, rejected, err := subOpenAckQuiet(p, filter, true)
		w := &subWatch{s: s, a: a, rejected: rejected, err: err}
		if s == nil {
			return w
		}
		defer s.Close()
		if a.Final == nil && !a.Ended {
			w.after, w.ended = s.Watch(p.Ctx, subGrace)
		}
		w.ev = s.Ev()
		return w
	})
	if w, ok := v.(*subWatch); ok {
		return w
	}
	return &subWatch{err: errors.New("the listen request was not observed")}
}

// open reports the watch to p: false when the check is over (the listen
// was rejected and the check skipped, or err is a failure to send it).
func (w *subWatch) open(p *check.Pass) (ok bool, err error) {
	switch {
	case w.err != nil:
		return false, w.err
	case w.rejected != "":
		p.Skipf("%s", w.rejected)
		return false, nil
	}
	return true, nil
}

// subNoAck fails a check whose listen got no acknowledgment.
func subNoAck(p *check.Pass, s *subStream, a subAck) { subNoAckEv(p, s.Ev(), a) }

func subNoAckEv(p *check.Pass, ev *check.Evidence, a subAck) {
	switch {
	case a.Final != nil:
		p.Failf(ev, "subscriptions/listen was answered with a response before any acknowledgment")
	case a.Ended:
		p.Failf(ev, "the listen stream ended without notifications/subscriptions/acknowledged")
	default:
		p.Failf(ev, "no notifications/subscriptions/acknowledged within %s", subAckWait)
	}
}

func subShowID(id json.RawMessage) string {
	if id == nil {
		return "missing"
	}
	return jsonrpc.Clip(string(id), 60)
}
