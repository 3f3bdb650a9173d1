package hostile

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// SleeperArg makes the hostile-server binary sleep for five minutes and do
// nothing else: the child that orphan-child leaves holding stdout.
const SleeperArg = "--sleeper"

// Behaviours of the server as a process: noise on stdout, dying mid-message,
// refusing to stop, leaving a child behind.
func processBehaviours() []*Behaviour {
	return []*Behaviour{
		{
			Name: "stdout-noise", Transports: stdioOnly,
			Doc: "prints a banner at start and a log line before every answer on stdout",
			StdioStart: func(_ context.Context, _ *Server, o *StdioOut) error {
				return o.Raw([]byte("Server v1.2.3 starting on stdio...\n\x1b[32mready\x1b[0m\n"))
			},
			Stdio: func(_ context.Context, _ *Server, o *StdioOut, req *Request) bool {
				_ = o.Line([]byte("DEBUG handling " + req.Method))
				return false
			},
		},
		{
			Name: "exit-mid-response", Transports: both,
			Doc: "writes half of its tools/list answer, then exits (stdio) or drops the connection (HTTP)",
			Stdio: func(ctx context.Context, s *Server, o *StdioOut, req *Request) bool {
				if req.Method != "tools/list" {
					return false
				}
				b := mustJSON(s.reference(ctx, req))
				_ = o.Raw(b[:len(b)/2])
				os.Exit(3)
				return true
			},
			HTTP: func(ctx context.Context, s *Server, w http.ResponseWriter, _ *http.Request, req *Request) bool {
				if req.Method != "tools/list" {
					return false
				}
				b := mustJSON(s.reference(ctx, req))
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", "100000")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(b[:len(b)/2])
				_ = http.NewResponseController(w).Flush()
				// Abort the handler: net/http drops the connection
				// without finishing the response.
				panic(http.ErrAbortHandler)
			},
		},
		{
			Name: "ignore-sigterm", Transports: stdioOnly,
			Doc: "ignores SIGTERM and keeps running after stdin closes",
			StdioStart: func(context.Context, *Server, *StdioOut) error {
				signal.Ignore(syscall.SIGTERM)
				return nil
			},
			StdioEOF: func(context.Context, *Server) { time.Sleep(time.Hour) },
		},
		{
			Name: "orphan-child", Transports: stdioOnly,
			Doc: "starts a child that keeps stdout open, then exits on the first tools/list without answering",
			StdioStart: func(context.Context, *Server, *StdioOut) error {
				self, err := os.Executable()
				if err != nil {
					return err
				}
				child := exec.Command(self, SleeperArg)
				child.Stdout = os.Stdout // the point: the pipe outlives this process
				return child.Start()
			},
			Stdio: func(_ context.Context, _ *Server, _ *StdioOut, req *Request) bool {
				if req.Method == "tools/list" {
					os.Exit(0)
				}
				return false
			},
		},
	}
}
