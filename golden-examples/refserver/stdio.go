package refserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"
)

// stdioDrainTimeout bounds how long ServeStdio waits, after its input ends,
// for in-flight requests to write their responses (STDIO-4: exit promptly).
const stdioDrainTimeout = 5 * time.Second

// ServeStdio serves newline-delimited JSON-RPC: one message per line read
// from in, one per line written to out, and nothing else on out (STDIO-1).
// Each request runs in its own goroutine, so a long subscriptions/listen or
// slow_count never blocks the requests after it (STDIO-5).
//
// It returns nil when in reaches EOF, after in-flight requests finish (at
// most stdioDrainTimeout); open subscriptions end silently then, since the
// client closed the transport. It returns ctx.Err() when ctx ends, after
// ending open subscriptions gracefully and abandoning other requests. A read
// blocked inside in cannot be interrupted; close in to release it.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	in, out = s.mutStdioStreams(in, out)
	sess := &stdioSession{srv: s, out: out, calls: map[string]*stdioCall{}, broken: make(chan struct{})}
	lines := make(chan stdioLine)
	readErr := make(chan error, 1)
	stopRead := make(chan struct{})
	defer close(stopRead)
	go readLines(in, s.opts.MaxBodyBytes, lines, readErr, stopRead)

	teardown := make(chan struct{})
	// Requests outlive ctx's cancellation on purpose: on shutdown,
	// subscriptions must still write their closing result.
	base := withTeardown(context.WithoutCancel(ctx), teardown)
	for {
		select {
		case <-ctx.Done():
			close(teardown)
			sess.cancelAll(func(c *stdioCall) bool { return c.method != "subscriptions/listen" })
			sess.wg.Wait()
			return ctx.Err()
		case <-sess.broken:
			sess.cancelAll(nil)
			sess.wg.Wait()
			return sess.writeErr
		case line, ok := <-lines:
			if ok {
				sess.handleLine(base, line)
				continue
			}
			err := <-readErr
			sess.drain(ctx)
			return err
		}
	}
}

type stdioLine struct {
	data    []byte
	tooLong bool
}

// readLines feeds lines to the session until EOF or a read error.
func readLines(in io.Reader, limit int64, lines chan<- stdioLine, readErr chan<- error, stop <-chan struct{}) {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(br, limit)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			select {
			case lines <- stdioLine{line, tooLong}:
			case <-stop:
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			readErr <- err
			close(lines)
			return
		}
	}
}

// readLine reads one line of at most limit bytes; a longer line is consumed
// and reported as tooLong, so one oversized message cannot exhaust memory.
func readLine(br *bufio.Reader, limit int64) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if int64(len(line)+len(chunk)) > limit+2 { // +2 for "\r\n"
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, tooLong, err
	}
}

type stdioSession struct {
	srv *Server
	out io.Writer
	wg  sync.WaitGroup

	mu        sync.Mutex // guards calls and every write to out
	calls     map[string]*stdioCall
	writeErr  error
	broken    chan struct{}
	closeOnce sync.Once
}

type stdioCall struct {
	id        json.RawMessage
	method    string
	cancel    context.CancelFunc
	cancelled bool // set under mu; once true nothing more is written for the call
}

var errCancelled = errors.New("refserver: request cancelled")

func (ss *stdioSession) handleLine(base context.Context, line stdioLine) {
	if line.tooLong {
		ss.send(nil, errorResponse(nil, errorf(CodeInvalidRequest, "Invalid Request: message exceeds %d bytes", ss.srv.opts.MaxBodyBytes)))
		return
	}
	msg, perr := ParseMessage(line.data)
	if perr != nil {
		if ss.mutBadInputStdio() {
			return
		}
		ss.send(nil, perr) // RPC-5: -32700 carries no id
		return
	}
	if msg.IsNotification() {
		if answer := ss.srv.mutNotificationAnswer(); answer != nil {
			ss.send(nil, answer)
		}
		// RPC-3: never answered. Only cancellation means anything.
		if msg.Method == "notifications/cancelled" {
			ss.cancelRequest(msg.Params)
		}
		return
	}
	ss.start(base, msg)
}

func (ss *stdioSession) start(base context.Context, msg *Message) {
	key := string(msg.ID)
	ss.mu.Lock()
	if _, dup := ss.calls[key]; dup {
		ss.mu.Unlock()
		// Cancellation names requests by id, so two in flight would be ambiguous.
		ss.send(nil, errorResponse(msg.ID, errorf(CodeInvalidRequest, "Invalid Request: a request with this id is already in flight")))
		return
	}
	if len(ss.calls) >= ss.srv.opts.MaxConcurrent {
		ss.mu.Unlock()
		ss.send(nil, errorResponse(msg.ID, errorf(CodeInternalError, "Internal error: too many requests in flight (limit %d)", ss.srv.opts.MaxConcurrent)))
		return
	}
	ctx, cancel := context.WithCancel(base)
	call := &stdioCall{id: msg.ID, method: msg.Method, cancel: cancel}
	ss.calls[key] = call
	ss.wg.Add(1)
	ss.mu.Unlock()

	go func() {
		defer ss.wg.Done()
		defer cancel()
		resp := ss.srv.Handle(ctx, msg, func(n Notification) error { return ss.send(call, n) })
		if resp != nil && resp.Error == nil && call.method == "subscriptions/listen" {
			// AMB-3: on stdio a server-ended subscription is announced with
			// notifications/cancelled naming the still-open listen request
			// (cancellation.mdx, CANC-1), then answered with the closing
			// result (SUB-6).
			ss.send(call, Notification{Method: "notifications/cancelled", Params: map[string]any{
				"_meta":     map[string]any{metaSubscriptionID: call.id},
				"requestId": call.id,
				"reason":    "server is shutting down",
			}})
		}
		if resp != nil {
			ss.send(call, resp)
		}
		ss.mu.Lock()
		delete(ss.calls, key)
		ss.mu.Unlock()
	}()
}

// cancelRequest handles notifications/cancelled: after it, nothing more is
// written for that request (SUB-7, CANC-2). Unknown or malformed
// cancellations are ignored (cancellation.mdx §Error Handling).
func (ss *stdioSession) cancelRequest(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, ok := canonicalID(p.RequestID)
	if !ok {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if call := ss.calls[string(id)]; call != nil {
		call.cancelled = true
		call.cancel()
	}
}

// cancelAll cancels the in-flight calls that selected accepts (all when nil).
func (ss *stdioSession) cancelAll(selected func(*stdioCall) bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, call := range ss.calls {
		if selected == nil || selected(call) {
			call.cancelled = true
			call.cancel()
		}
	}
}

// drain runs after the input ended: subscriptions end at once (their
// transport is gone), other requests get stdioDrainTimeout to answer.
func (ss *stdioSession) drain(ctx context.Context) {
	ss.cancelAll(func(c *stdioCall) bool { return c.method == "subscriptions/listen" })
	done := make(chan struct{})
	go func() { ss.wg.Wait(); close(done) }()
	timer := time.NewTimer(stdioDrainTimeout)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	case <-ctx.Done():
	case <-ss.broken:
	}
	ss.cancelAll(nil)
	<-done
}

// send writes one message as one line, unless its call was cancelled.
func (ss *stdioSession) send(call *stdioCall, v any) error {
	data, err := marshal(v)
	if err != nil {
		ss.srv.opts.Logger.Error("encoding stdio message", "err", err)
		return err
	}
	data = append(ss.srv.mutOutput(data), '\n')
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if call != nil && call.cancelled {
		return errCancelled
	}
	if ss.writeErr != nil {
		return ss.writeErr
	}
	if _, err := ss.out.Write(data); err != nil {
		ss.writeErr = err
		ss.closeOnce.Do(func() { close(ss.broken) })
		ss.srv.opts.Logger.Error("writing to stdio output", "err", err)
		return err
	}
	return nil
}
