package hostile

import (
	"context"
	"net/http"
	"time"
)

// Behaviours that stall: the harness must give up on its own deadline.
func timingBehaviours() []*Behaviour {
	return []*Behaviour{
		{
			Name: "never-answers", Transports: both, AllRequests: true,
			Doc:   "reads every request and never answers any",
			Stdio: func(context.Context, *Server, *StdioOut, *Request) bool { return true },
			HTTP: func(ctx context.Context, _ *Server, _ http.ResponseWriter, _ *http.Request, _ *Request) bool {
				<-ctx.Done() // holds the connection until the client gives up
				return true
			},
		},
		{
			Name: "byte-per-second", Transports: both, AllRequests: true,
			Doc: "answers every request correctly, one byte per second",
			Stdio: func(ctx context.Context, s *Server, o *StdioOut, req *Request) bool {
				b := append(mustJSON(s.reference(ctx, req)), '\n')
				go func() {
					for i := range b {
						if o.Raw(b[i:i+1]) != nil {
							return
						}
						time.Sleep(time.Second)
					}
				}()
				return true
			},
			HTTP: func(ctx context.Context, s *Server, w http.ResponseWriter, _ *http.Request, req *Request) bool {
				b := mustJSON(s.reference(ctx, req))
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				rc := http.NewResponseController(w)
				for i := range b {
					if _, err := w.Write(b[i : i+1]); err != nil || rc.Flush() != nil {
						return true
					}
					select {
					case <-ctx.Done():
						return true
					case <-time.After(time.Second):
					}
				}
				return true
			},
		},
	}
}
