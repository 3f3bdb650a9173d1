package hostile

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Behaviours that send too much: the harness must stop reading at its
// limits and never hold the whole thing in memory.
func sizeBehaviours() []*Behaviour {
	return []*Behaviour{
		{
			Name: "gigabyte-body", Transports: both,
			Doc: "answers tools/list with a 1 GiB JSON body (one 1 GiB line on stdio), streamed",
			Stdio: func(_ context.Context, _ *Server, o *StdioOut, req *Request) bool {
				if req.Method != "tools/list" {
					return false
				}
				o.mu.Lock()
				defer o.mu.Unlock()
				_ = writeGigabyte(o.w, req)
				_, _ = o.w.Write([]byte("\n"))
				return true
			},
			HTTP: func(_ context.Context, _ *Server, w http.ResponseWriter, _ *http.Request, req *Request) bool {
				if req.Method != "tools/list" {
					return false
				}
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", fmt.Sprint(gigabyteLen(req)))
				_ = writeGigabyte(w, req)
				return true
			},
		},
		{
			Name: "gzip-bomb", Transports: httpOnly,
			Doc: "answers tools/list with Content-Encoding: gzip, 10 MiB on the wire that inflate to 10 GiB",
			HTTP: func(_ context.Context, s *Server, w http.ResponseWriter, _ *http.Request, req *Request) bool {
				if req.Method != "tools/list" {
					return false
				}
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				w.WriteHeader(http.StatusOK)
				// Concatenated gzip members are one stream to a reader:
				// the JSON head, 640 members of 16 MiB of blanks each
				// (valid JSON whitespace), the tail.
				head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[`, req.ID)
				if _, err := w.Write(gzipOf([]byte(head))); err != nil {
					return true
				}
				blanks := s.blanks()
				for range 640 {
					if _, err := w.Write(blanks); err != nil {
						return true
					}
				}
				_, _ = w.Write(gzipOf([]byte("]}}")))
				return true
			},
		},
		{
			Name: "stderr-flood", Transports: stdioOnly,
			Doc: "writes 1 GiB to stderr while serving correctly",
			StdioStart: func(_ context.Context, s *Server, _ *StdioOut) error {
				go func() {
					chunk := bytes.Repeat([]byte("stderr noise \x1b[31m::error::fake\x1b[0m\n"), 2048)
					for n := 0; n < 1<<30; n += len(chunk) {
						if _, err := s.Stderr.Write(chunk); err != nil {
							return
						}
					}
				}()
				return nil
			},
		},
		{
			Name: "stdout-flood", Transports: stdioOnly,
			Doc: "writes a million non-JSON lines to stdout before serving",
			StdioStart: func(_ context.Context, _ *Server, o *StdioOut) error {
				chunk := bytes.Repeat([]byte("x\n"), 32<<10)
				for range 32 {
					if err := o.Raw(chunk); err != nil {
						return err
					}
				}
				return nil
			},
		},
		{
			Name: "notification-flood", Transports: both, Methods: []string{"tools/list", "tools/call"},
			Doc: "sends 5,000 notifications/message (unasked for) before each tools/list and tools/call answer",
			Stdio: func(ctx context.Context, s *Server, o *StdioOut, req *Request) bool {
				if s.hasParamHeaders(ctx, req) {
					return false
				}
				n := floodNotification()
				o.mu.Lock()
				for range 5_000 {
					if _, err := o.w.Write(n); err != nil {
						break
					}
				}
				o.mu.Unlock()
				resp := s.referenceStreaming(ctx, req, func(b []byte) { _ = o.Line(b) })
				_ = o.Line(mustJSON(resp))
				return true
			},
			HTTP: func(ctx context.Context, s *Server, w http.ResponseWriter, _ *http.Request, req *Request) bool {
				if s.hasParamHeaders(ctx, req) {
					return false
				}
				rc := sseHeader(w)
				n := bytes.TrimSuffix(floodNotification(), []byte("\n"))
				for range 5_000 {
					if sseEvent(w, n) != nil {
						return true
					}
				}
				resp := s.referenceStreaming(ctx, req, func(b []byte) {
					_ = sseEvent(w, b)
					_ = rc.Flush()
				})
				_ = sseEvent(w, mustJSON(resp))
				return true
			},
		},
		{
			Name: "huge-error", Transports: both,
			Doc: "answers tools/list with a JSON-RPC error whose message is 1 MiB of Markdown, HTML and mentions",
			Reply: onMethod("tools/list", func(_ context.Context, _ *Server, req *Request) []byte {
				msg := strings.Repeat("<script>alert(1)</script> **@octocat** | col | [x](https://evil.example) ", (1<<20)/80)
				return mustJSON(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32603, "message": msg}})
			}),
		},
	}
}

func floodNotification() []byte {
	return []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood"}}` + "\n")
}

const gigabyte = 1 << 30

func gigabyteHead(req *Request) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[],"padding":"`, req.ID)
}

const gigabyteTail = `"}}`

func gigabyteLen(req *Request) int { return len(gigabyteHead(req)) + gigabyte + len(gigabyteTail) }

// writeGigabyte streams the body in 64 KiB chunks: the server never holds
// it either. It stops at the first write error (the client hung up).
func writeGigabyte(w io.Writer, req *Request) error {
	if _, err := io.WriteString(w, gigabyteHead(req)); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	for n := 0; n < gigabyte; n += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, gigabyteTail)
	return err
}

func gzipOf(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// blanks is one gzip member of 16 MiB of spaces, compressed once per process.
func (s *Server) blanks() []byte {
	if b, ok := s.state.Load("blanks"); ok {
		return b.([]byte)
	}
	b := gzipOf(bytes.Repeat([]byte(" "), 16<<20))
	s.state.Store("blanks", b)
	return b
}
