package transport

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrorKind says what went wrong in a transport, so that callers can tell a
// server that is unreachable from one that answered badly.
type ErrorKind int

const (
	KindTimeout       ErrorKind = iota + 1 // no answer within the deadline
	KindTooLarge                           // a message or stream over the size limit
	KindMalformed                          // bytes that are not a JSON-RPC message
	KindBadID                              // a response with a wrong or missing id
	KindHTTPStatus                         // an HTTP status with no JSON-RPC body
	KindProcessExited                      // the server process ended
	KindStreamBroken                       // an SSE stream ended before the final response
	KindRedirect                           // an HTTP redirect, never followed
	KindConnect                            // could not connect or start
	KindClosed                             // the transport was closed
)

var kindNames = map[ErrorKind]string{
	KindTimeout: "timeout", KindTooLarge: "too large", KindMalformed: "malformed message",
	KindBadID: "wrong id", KindHTTPStatus: "HTTP status", KindProcessExited: "process exited",
	KindStreamBroken: "stream broken", KindRedirect: "redirect", KindConnect: "connect failed",
	KindClosed: "closed",
}

func (k ErrorKind) String() string { return kindNames[k] }

// Error is every failure a transport returns. Fields other than Kind and Op
// are set when they apply.
type Error struct {
	Kind     ErrorKind
	Op       string        // what was being done, e.g. `POST http://127.0.0.1:3000/mcp (tools/list)`
	Status   int           // HTTP status
	Excerpt  string        // body excerpt, or the stderr tail of an exited process
	ExitCode int           // process exit code (-1 when killed by a signal)
	Serving  string        // the requests in flight when the process exited (stdio)
	Limit    int64         // the size limit that was hit
	After    time.Duration // how long was waited, for timeouts
	Location string        // redirect target
	// Meanwhile says what the server sent instead while a request waited
	// in vain (stray lines, responses to other ids), so a timeout reads as
	// what happened rather than as silence.
	Meanwhile string
	// Silent is set on a stdio timeout after which the server had written
	// nothing at all: what silenced it (see StdioTransport.Silenced).
	Silent *Silence
	// stillSilent: Silent was found by an earlier request.
	stillSilent bool
	Err         error
}

func (e *Error) Error() string {
	var msg string
	switch e.Kind {
	case KindTimeout:
		msg = fmt.Sprintf("%s: no answer within %s", e.Op, e.After.Round(time.Millisecond))
		if e.After <= 0 {
			// The deadline had passed before the request was sent: the
			// wait was not the server's to lose.
			msg = fmt.Sprintf("%s: the deadline had passed before it was sent", e.Op)
		}
		if e.Silent != nil {
			if e.stillSilent {
				msg = fmt.Sprintf("%s: no answer within %s, the server still silent: %s", e.Op, e.After.Round(time.Millisecond), e.Silent)
			} else {
				msg = fmt.Sprintf("%s: no answer within %s%s; the server has written nothing since %s", e.Op, e.After.Round(time.Millisecond), e.Silent.idleNote(), e.Silent.Since)
			}
		}
	case KindTooLarge:
		msg = fmt.Sprintf("%s: response larger than the %d-byte limit", e.Op, e.Limit)
	case KindHTTPStatus:
		msg = fmt.Sprintf("%s: HTTP status %d", e.Op, e.Status)
		if e.Excerpt != "" {
			msg += fmt.Sprintf(", body: %q", e.Excerpt)
		}
	case KindProcessExited:
		msg = fmt.Sprintf("%s: server process exited with code %d", e.Op, e.ExitCode)
		if e.Serving != "" {
			msg += " while serving " + e.Serving
		}
		if e.Excerpt != "" {
			msg += "; stderr tail:\n" + e.Excerpt
		}
	case KindRedirect:
		msg = fmt.Sprintf("%s: HTTP %d redirect to %q was not followed (point --url at the final MCP endpoint)", e.Op, e.Status, e.Location)
	default:
		msg = fmt.Sprintf("%s: %s", e.Op, e.Kind)
	}
	if e.Err != nil && e.Kind != KindTimeout {
		msg += ": " + e.Err.Error()
	}
	if e.Meanwhile != "" {
		msg += "; meanwhile " + e.Meanwhile
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, transport.ErrTimeout) and the like match by kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Kind == e.Kind
}

// Sentinels for errors.Is.
var (
	ErrTimeout       = &Error{Kind: KindTimeout}
	ErrTooLarge      = &Error{Kind: KindTooLarge}
	ErrMalformed     = &Error{Kind: KindMalformed}
	ErrBadID         = &Error{Kind: KindBadID}
	ErrHTTPStatus    = &Error{Kind: KindHTTPStatus}
	ErrProcessExited = &Error{Kind: KindProcessExited}
	ErrStreamBroken  = &Error{Kind: KindStreamBroken}
	ErrRedirect      = &Error{Kind: KindRedirect}
	ErrConnect       = &Error{Kind: KindConnect}
	ErrClosed        = &Error{Kind: KindClosed}
)

// KindOf returns the kind of a transport error in err's chain, or 0.
func KindOf(err error) ErrorKind {
	var te *Error
	if errors.As(err, &te) {
		return te.Kind
	}
	return 0
}

// waited is how long a request waited: up to its deadline when it had one,
// so that a timeout message names the configured limit, not a jittery
// measurement.
func waited(ctx context.Context, start time.Time) time.Duration {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= 0 {
		return dl.Sub(start)
	}
	return time.Since(start)
}

// Lost reports an error that says the server could not be reached at all:
// no connection (refused, or dropped before an answer), or its process
// gone. A request that got any answer, or ran out of time, is not lost.
func Lost(err error) bool {
	te := (*Error)(nil)
	return errors.As(err, &te) && (te.Kind == KindConnect || te.Kind == KindProcessExited)
}
