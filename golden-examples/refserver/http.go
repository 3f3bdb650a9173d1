package refserver

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Handler returns the Streamable HTTP endpoint. Mount it at the MCP endpoint
// path (the example binary uses /mcp). It only accepts POST (HTTP-1, REM-4),
// never mints or reads Mcp-Session-Id, and answers each request with either
// one application/json response or, when the method emits notifications, a
// text/event-stream that ends with the response (HTTP-3, HTTP-5).
func (s *Server) Handler() http.Handler { return s.mutHTTPHandler(http.HandlerFunc(s.serveHTTP)) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	w = s.mutWriter(w)
	// HTTP-2: validate Origin on every request, before anything else.
	for _, origin := range r.Header.Values("Origin") {
		if !s.originAllowed(origin) {
			writeJSON(w, http.StatusForbidden, errorResponse(nil, errorf(CodeInvalidRequest, "Forbidden: Origin %q is not allowed", truncate(origin, 128))))
			return
		}
	}
	if r.Method == http.MethodGet && s.opts.DualEra && (legacyHTTP(r.Header) || s.opts.breaks("REM-4")) {
		// Mutant with DualEra: breaks REM-4 (the legacy stream also
		// for a GET that names 2026-07-28).
		serveLegacyGET(w)
		return
	}
	if r.Method != http.MethodPost {
		// REM-4: the GET stream and DELETE of sessions no longer exist.
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, errorResponse(nil, errorf(CodeInvalidRequest, "Method Not Allowed: the MCP endpoint only accepts POST")))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
			writeJSON(w, http.StatusRequestEntityTooLarge, errorResponse(nil, errorf(CodeInvalidRequest, "Invalid Request: body exceeds %d bytes", s.opts.MaxBodyBytes)))
			return
		}
		writeJSON(w, http.StatusBadRequest, errorResponse(nil, errorf(CodeInvalidRequest, "Invalid Request: reading body: %v", err)))
		return
	}
	msg, perr := ParseMessage(body)
	if perr != nil {
		writeJSON(w, http.StatusBadRequest, s.mutBadInputHTTP(perr))
		return
	}
	if s.opts.DualEra && legacyHTTP(r.Header) && legacyOpening(msg) {
		s.serveLegacyPOST(r.Context(), w, msg)
		return
	}
	if msg.IsNotification() {
		if answer := s.mutNotificationAnswer(); answer != nil {
			writeJSON(w, http.StatusOK, answer)
			return
		}
		// HTTP-4: accepted notifications get 202 with no body. No client
		// notification means anything here (cancellation is closing the
		// stream), and header rules for them are undefined (AMB-7).
		w.WriteHeader(http.StatusAccepted)
		return
	}
	req, rerr := s.admitHTTP(r.Header, msg)
	if rerr != nil {
		writeJSON(w, statusFor(rerr), errorResponse(msg.ID, rerr))
		return
	}
	stream := &httpStream{w: w, rc: http.NewResponseController(w), keepAlive: s.opts.KeepAliveInterval}
	req.notify = stream.notify
	resp := s.dispatch(r.Context(), req)
	stream.finish(resp)
	s.mutAfterFinal(w, stream, resp)
}

// admitHTTP validates headers and envelope in a fixed order (AMB-11 leaves
// the order open): header presence and Mcp-Method, then method and _meta,
// then header/body agreement and the version.
func (s *Server) admitHTTP(h http.Header, msg *Message) (*request, *Error) {
	if err := checkEarlyHeaders(h, msg); err != nil {
		return nil, err
	}
	req, err := s.parseRequest(msg)
	if err != nil {
		return nil, err
	}
	if err := s.checkRequestHeaders(h, req); err != nil {
		return nil, err
	}
	return req, nil
}

// statusFor maps an error to its HTTP status (HTTP-7). Statuses the spec does
// not define (unknown tool, resource not found, …) use 200 with the
// JSON-RPC error body, the usual JSON-RPC-over-HTTP convention (AMB-12).
func statusFor(e *Error) int {
	switch e.Code {
	case CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion,
		CodeParseError, CodeInvalidRequest:
		return http.StatusBadRequest
	case CodeMethodNotFound:
		return http.StatusNotFound // HTTP-6
	case CodeInvalidParams:
		if e.malformed {
			return http.StatusBadRequest // META-1
		}
	}
	return http.StatusOK
}

// originAllowed accepts loopback origins on any port (DNS-rebinding
// protection for a local server, HTTP-2) plus Options.AllowedOrigins.
func (s *Server) originAllowed(origin string) bool {
	if slices.Contains(s.opts.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	host := u.Hostname()
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// httpStream writes one request's response. It starts as a plain JSON
// response and switches to SSE on the first notification; the final
// response then ends the stream (HTTP-5, MRTR-8). While the stream is open a
// comment line keeps intermediaries from timing it out.
type httpStream struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	keepAlive time.Duration

	mu     sync.Mutex
	sse    bool
	broken bool
	stop   chan struct{}
	done   chan struct{}
}

var errStreamClosed = errors.New("refserver: response stream closed")

func (st *httpStream) notify(n Notification) error {
	data, err := marshal(n)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.broken {
		return errStreamClosed
	}
	if !st.sse {
		st.sse = true
		h := st.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no") // HTTP-5: keep proxies from buffering
		st.w.WriteHeader(http.StatusOK)
		st.stop, st.done = make(chan struct{}), make(chan struct{})
		go st.keepAliveLoop()
	}
	return st.writeLocked("event: message\ndata: " + string(data) + "\n\n")
}

func (st *httpStream) writeLocked(chunk string) error {
	if _, err := io.WriteString(st.w, chunk); err != nil {
		st.broken = true
		return errStreamClosed
	}
	if err := st.rc.Flush(); err != nil {
		st.broken = true
		return errStreamClosed
	}
	return nil
}

func (st *httpStream) keepAliveLoop() {
	defer close(st.done)
	ticker := time.NewTicker(st.keepAlive)
	defer ticker.Stop()
	for {
		select {
		case <-st.stop:
			return
		case <-ticker.C:
			st.mu.Lock()
			if !st.broken {
				st.writeLocked(": keepalive\n\n")
			}
			st.mu.Unlock()
		}
	}
}

// finish writes the final response (nil when the request was cancelled) and
// stops the keep-alive goroutine before the handler returns, so nothing
// touches the ResponseWriter afterwards.
func (st *httpStream) finish(resp *Response) {
	st.mu.Lock()
	sse := st.sse
	if sse {
		if resp != nil && !st.broken {
			if data, err := marshal(resp); err == nil {
				st.writeLocked("event: message\ndata: " + string(data) + "\n\n")
			}
		}
		st.broken = true
		close(st.stop)
	}
	st.mu.Unlock()
	if sse {
		<-st.done
		return
	}
	if resp == nil {
		return // the client is gone; there is nobody to answer
	}
	status := http.StatusOK
	if resp.Error != nil {
		status = statusFor(resp.Error)
	}
	writeJSON(st.w, status, resp)
}
