package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
)

// Request is one client request as a behaviour sees it.
type Request struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	// Raw is the request's bytes as received.
	Raw []byte
}

// cursor is params.cursor, "" on the first page of a list.
func (r *Request) cursor() string {
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(r.Params, &p)
	return p.Cursor
}

// Server is the reference server with one behaviour. Safe for concurrent
// use by one stdio stream or any number of HTTP requests.
type Server struct {
	b   *Behaviour
	ref *refserver.Server
	// Tripwire is a URL that nothing should ever fetch (HOSTILE_TRIPWIRE).
	Tripwire string
	// Out is where the secrets probe writes what it found (HOSTILE_OUT).
	Out string
	// Stderr receives the server's own diagnostics and floods.
	Stderr io.Writer

	once  sync.Map // per-process "only the first time" flags, by name
	state sync.Map // per-behaviour scratch state
}

// New returns a server running behaviour name.
func New(name string) (*Server, error) {
	b := Lookup(name)
	if b == nil {
		return nil, fmt.Errorf("no behaviour %q (see --list)", name)
	}
	return &Server{b: b, ref: refserver.New(refserver.Options{}), Tripwire: os.Getenv("HOSTILE_TRIPWIRE"), Out: os.Getenv("HOSTILE_OUT"), Stderr: io.Discard}, nil
}

// Close stops the reference server.
func (s *Server) Close() { s.ref.Close() }

// first reports whether this is the first call with key in this process.
func (s *Server) first(key string) bool {
	_, loaded := s.once.LoadOrStore(key, true)
	return !loaded
}

// reference is the reference server's answer to req as a JSON object, for a
// behaviour to change. Nil for notifications.
func (s *Server) reference(ctx context.Context, req *Request) map[string]any {
	msg, perr := refserver.ParseMessage(req.Raw)
	if perr != nil {
		return decodeObject(mustJSON(perr))
	}
	resp := s.ref.Handle(ctx, msg, nil)
	if resp == nil {
		return nil
	}
	return decodeObject(mustJSON(resp))
}

// referenceStreaming is reference with the notifications the reference
// server sends while it works (progress, logs) passed to notify as they
// come, so a behaviour can garble the answer and keep the stream.
func (s *Server) referenceStreaming(ctx context.Context, req *Request, notify func([]byte)) map[string]any {
	msg, perr := refserver.ParseMessage(req.Raw)
	if perr != nil {
		return decodeObject(mustJSON(perr))
	}
	resp := s.ref.Handle(ctx, msg, func(n refserver.Notification) error {
		notify(mustJSON(n))
		return nil
	})
	if resp == nil {
		return nil
	}
	return decodeObject(mustJSON(resp))
}

func decodeObject(b []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	_ = dec.Decode(&m)
	return m
}

// mustJSON encodes v without HTML escaping; the values here are ours.
func mustJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func parseRequest(raw []byte) *Request {
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(raw, &env) != nil || env.Method == "" {
		return nil
	}
	return &Request{ID: env.ID, Method: env.Method, Params: env.Params, Raw: raw}
}

// ---- stdio

// StdioOut is the server's stdout, shared by the reference server and the
// behaviour: whole lines are written under one lock so neither splits the
// other's message.
type StdioOut struct {
	mu      sync.Mutex
	w       io.Writer
	partial []byte // an unfinished line of the reference server's
}

// Write takes the reference server's output and passes on whole lines.
func (o *StdioOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.partial = append(o.partial, p...)
	if i := bytes.LastIndexByte(o.partial, '\n'); i >= 0 {
		if _, err := o.w.Write(o.partial[:i+1]); err != nil {
			return 0, err
		}
		o.partial = append(o.partial[:0], o.partial[i+1:]...)
	}
	return len(p), nil
}

// Raw writes b as is, between whole lines of the reference server.
func (o *StdioOut) Raw(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err := o.w.Write(b)
	return err
}

// Line writes b and a newline.
func (o *StdioOut) Line(b []byte) error { return o.Raw(append(append([]byte(nil), b...), '\n')) }

// ServeStdio serves newline-delimited JSON-RPC on in and out until in ends
// or ctx is done.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	o := &StdioOut{w: out}
	if s.b.StdioStart != nil {
		if err := s.b.StdioStart(ctx, s, o); err != nil {
			return err
		}
	}
	pr, pw := io.Pipe()
	refDone := make(chan error, 1)
	go func() { refDone <- s.ref.ServeStdio(ctx, pr, o) }()
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if req := parseRequest(bytes.TrimSpace(line)); req != nil && s.b.takes(req, nil) {
				// Concurrently, as the reference server serves requests:
				// a slow hook must not stall the others. A hook that
				// declines hands the line on (io.Pipe serialises writes).
				go func(line []byte) {
					if !s.handleStdio(ctx, o, req) {
						_, _ = pw.Write(line)
					}
				}(line)
			} else if _, werr := pw.Write(line); werr != nil {
				return werr
			}
		}
		if err != nil {
			pw.Close()
			if s.b.StdioEOF != nil {
				s.b.StdioEOF(ctx, s)
			}
			rerr := <-refDone
			if errors.Is(err, io.EOF) {
				return rerr
			}
			return err
		}
	}
}

func (s *Server) handleStdio(ctx context.Context, o *StdioOut, req *Request) bool {
	if s.b.Stdio != nil && s.b.Stdio(ctx, s, o, req) {
		return true
	}
	if s.b.Reply != nil {
		if b := s.b.Reply(ctx, s, req); b != nil {
			_ = o.Line(b)
			return true
		}
	}
	return false
}

// ---- HTTP

// Handler serves Streamable HTTP at any path.
func (s *Server) Handler() http.Handler {
	ref := s.ref.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req := parseRequest(body); req != nil && r.Method == http.MethodPost && s.b.takes(req, r.Header) {
			if s.b.HTTP != nil && s.b.HTTP(r.Context(), s, w, r, req) {
				return
			}
			if s.b.Reply != nil {
				if b := s.b.Reply(r.Context(), s, req); b != nil {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write(b)
					return
				}
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		ref.ServeHTTP(w, r)
	})
}
