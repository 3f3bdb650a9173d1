package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// APIError is a provider's refusal: an HTTP status with the provider's
// message, secrets redacted.
type APIError struct {
	Status    int
	Type      string // the provider's error type or code, e.g. rate_limit_exceeded
	Message   string // the provider's message, bounded and redacted
	RequestID string
	Attempts  int
	// Retryable is true for 429 and 5xx; an error that is retryable was
	// returned because the retries or the deadline ran out.
	Retryable bool
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("provider answered HTTP %d", e.Status)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Retryable {
		s += fmt.Sprintf(" (gave up after %d attempts)", e.Attempts)
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		s += " (check the key in the environment variable the endpoint names)"
	case http.StatusNotFound:
		s += " (check the base URL and the model name)"
	}
	return s
}

// ErrNoAnswer: a provider that answers from a record (a replayed
// cassette) holds no answer for this request, and invents none. The run
// that asked is not measured.
var ErrNoAnswer = errors.New("no recorded answer for this request")

// ErrInvalidOutput: the model's answer to Request.Output was not JSON
// matching the schema, even after one repair turn.
var ErrInvalidOutput = errors.New("model output is not valid JSON for the requested schema")

// exchange is one successful HTTP exchange after retries.
type exchange struct {
	body      []byte
	requestID string
	attempts  int
}

// target is where a request goes: the dialect's one path, or a
// token-counting endpoint beside it, with its headers and a bound on the
// reply.
type target struct {
	url      string
	headers  map[string]string
	maxBytes int
}

// post sends body to the endpoint, retrying 429, 5xx and network errors
// with exponential backoff or the server's Retry-After, each attempt under
// AttemptTimeout and all of them under ctx.
func (p *provider) post(ctx context.Context, body []byte) (*exchange, error) {
	return p.postTo(ctx, target{url: p.wire.url, headers: p.wire.headers, maxBytes: maxResponseBytes}, body)
}

func (p *provider) postTo(ctx context.Context, to target, body []byte) (*exchange, error) {
	main := to.url == p.wire.url // not a token-counting endpoint beside it
	if r := p.refused.Load(); r != nil && main {
		e := *r
		e.Message = strings.TrimSpace(e.Message + " (not sent: an earlier call of this model got this answer, which does not change from call to call)")
		return nil, &e
	}
	wasUnreachable, wasFailing := p.unreachable.Load(), p.failing.Load()
	for attempt := 1; ; attempt++ {
		ex, apiErr, netErr := p.attempt(ctx, to, body)
		if ex != nil {
			ex.attempts = attempt
			p.unreachable.Store(false)
			p.failing.Store(false)
			if main {
				p.answered.Store(true)
			}
			return ex, nil
		}
		serverErr := apiErr != nil && apiErr.Status >= 500
		if apiErr != nil {
			// It answered: reachable, whatever it said.
			p.unreachable.Store(false)
			if !serverErr {
				p.failing.Store(false)
			}
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("calling %s: %w after %d attempts", p.id, ctx.Err(), attempt)
		}
		var wait time.Duration
		if apiErr != nil {
			apiErr.Attempts = attempt
			if main && !p.answered.Load() && (apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusNotFound) {
				e := *apiErr.APIError
				p.refused.Store(&e)
			}
			if serverErr && wasFailing && attempt == 1 && p.failing.Load() {
				apiErr.Message = strings.TrimSpace(apiErr.Message + " (one attempt: earlier calls got only server errors, so calls try once until one gets another answer)")
				return nil, apiErr.APIError
			}
			if !apiErr.Retryable || attempt > p.opts.MaxRetries {
				if serverErr && apiErr.Retryable {
					p.failing.Store(true)
				}
				return nil, apiErr.APIError
			}
			wait = apiErr.retryAfter
		} else if !dialFailed(netErr) {
			// A connection was made: reachable, and this error is retried
			// as any other.
			p.unreachable.Store(false)
			if attempt > p.opts.MaxRetries {
				return nil, fmt.Errorf("calling %s: %w (gave up after %d attempts)", p.id, netErr, attempt)
			}
		} else if wasUnreachable && attempt == 1 && p.unreachable.Load() {
			return nil, fmt.Errorf("calling %s: %w (one attempt: earlier calls could not connect either, so calls try once until one gets through)", p.id, netErr)
		} else if attempt > p.opts.MaxRetries {
			p.unreachable.Store(true)
			return nil, fmt.Errorf("calling %s: %w (gave up after %d attempts; later calls try once until one gets through)", p.id, netErr, attempt)
		}
		if wait <= 0 {
			wait = backoff(attempt)
		}
		if wait > p.opts.MaxBackoff {
			return nil, p.giveUp(apiErr, netErr, attempt, fmt.Sprintf("the server asked to wait %s, more than the %s limit", wait, p.opts.MaxBackoff))
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, p.giveUp(apiErr, netErr, attempt, fmt.Sprintf("waiting %s would pass the call's deadline", wait.Round(time.Millisecond)))
		}
		if err := p.opts.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("calling %s: %w after %d attempts", p.id, err, attempt)
		}
	}
}

// backoff is 0.5s·2^(n-1) capped at 8s, less up to 25% jitter so that
// concurrent runs hitting one limit do not retry in lockstep.
func backoff(attempt int) time.Duration {
	d := firstBackoff << min(attempt-1, 10)
	d = min(d, maxExponentialBackoff)
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

func (p *provider) giveUp(apiErr *apiErrorWait, netErr error, attempt int, why string) error {
	if apiErr != nil {
		apiErr.Message = strings.TrimSpace(apiErr.Message + " (" + why + ")")
		return apiErr.APIError
	}
	return fmt.Errorf("calling %s: %w (%s)", p.id, netErr, why)
}

// apiErrorWait is an APIError with the wait the server asked for.
type apiErrorWait struct {
	*APIError
	retryAfter time.Duration
}

// attempt makes one HTTP request. Exactly one result is non-nil.
func (p *provider) attempt(ctx context.Context, to target, body []byte) (*exchange, *apiErrorWait, error) {
	actx, cancel := context.WithTimeout(ctx, p.opts.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, to.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", p.opts.UserAgent)
	for k, v := range to.headers {
		req.Header.Set(k, v)
	}
	resp, err := p.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(to.maxBytes)+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the response: %w", err)
	}
	rid := resp.Header.Get("x-request-id")
	if rid == "" {
		rid = resp.Header.Get("request-id") // Anthropic
	}
	if resp.StatusCode/100 == 2 {
		if len(b) > to.maxBytes {
			return nil, &apiErrorWait{APIError: &APIError{Status: resp.StatusCode, Message: fmt.Sprintf("response larger than %d bytes", to.maxBytes), RequestID: rid}}, nil
		}
		return &exchange{body: b, requestID: rid}, nil, nil
	}
	typ, msg := errorMessage(b)
	e := &APIError{
		Status:    resp.StatusCode,
		Type:      p.redact(bound(typ, 100)),
		Message:   p.redact(bound(msg, maxErrorExcerpt)),
		RequestID: rid,
		Retryable: retryable(resp),
	}
	return nil, &apiErrorWait{APIError: e, retryAfter: retryAfter(resp.Header)}, nil
}

// retryable: 429 and 5xx (Anthropic's 529 "overloaded" included), unless
// the server says x-should-retry: false; 408 and 409 because OpenAI's and
// Anthropic's own clients retry them.
func retryable(resp *http.Response) bool {
	switch resp.Header.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := resp.StatusCode
	return s == http.StatusTooManyRequests || s >= 500 || s == http.StatusRequestTimeout || s == http.StatusConflict
}

// retryAfter reads retry-after-ms (OpenAI), then Retry-After as seconds or
// an HTTP date; 0 when absent or unreadable.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// errorMessage pulls type and message out of the error bodies the three
// APIs send: {"error":{"message","type","code"}} (OpenAI) and
// {"type":"error","error":{"type","message"}} (Anthropic); a body that is
// neither is kept as text.
func errorMessage(b []byte) (typ, msg string) {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && len(e.Error) > 0 {
		var inner struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		if json.Unmarshal(e.Error, &inner) == nil {
			typ = inner.Type
			if c, ok := inner.Code.(string); ok && c != "" {
				typ = c
			}
			return typ, inner.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return "", s // some compatible servers: {"error":"text"}
		}
	}
	return "", strings.TrimSpace(string(b))
}

// redact removes every secret of the endpoint from s: a provider may echo
// part of a request, and errors end up in logs and reports.
func (p *provider) redact(s string) string {
	for _, sec := range p.wire.secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

// bound cuts s to n bytes at a rune boundary.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// dialFailed says whether err is a failure to connect (refused, no route,
// no such host), as opposed to one of a connection that was made.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
