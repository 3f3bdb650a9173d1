// Package target is the one way the harness reaches the server under test:
// a Target says how (a URL, or a command to start), Open makes the
// transport and Connect the client on top of it. Every layer opens the
// server through here, so a stdio server runs under the same user, with
// the same environment and limits, whichever layer starts it.
package target

import (
	"context"
	"net/http"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Target says how to reach the server under test: URL for Streamable HTTP,
// Argv for stdio.
type Target struct {
	URL    string
	Header http.Header
	Argv   []string
	Dir    string
	// Env is the complete environment of a stdio server, already reduced
	// to the allowlist by transport.ServerEnv.
	Env []string
	// MaxMessageBytes bounds one response (default 4 MiB).
	MaxMessageBytes int64
	// RunAs runs a stdio server, and every fresh process of it, under an
	// unprivileged uid (see transport.RunAs and ResolveUser); nil runs it
	// as the harness.
	RunAs *transport.RunAs
	// Why says why the server runs as RunAs, for the reader of an error:
	// "in the GitHub Action", "with secrets in its environment
	// (OPENAI_API_KEY)". Empty: root, and nothing more to say.
	Why string
}

// Kind is "http" or "stdio".
func (t Target) Kind() string {
	if t.URL != "" {
		return "http"
	}
	return "stdio"
}

// Describe names the target for reports, without secrets.
func (t Target) Describe() string {
	if t.URL != "" {
		return t.URL
	}
	return strings.Join(t.Argv, " ")
}

// Open starts a transport for the target: a new process on stdio, a
// connection pool on HTTP. fresh asks for a connection that shares nothing
// with earlier ones (no kept-alive HTTP connection); a stdio process is
// always new.
//
// Before starting a stdio server under RunAs, Open checks that the
// unprivileged user can enter the working directory and run the command,
// and says how to fix it when not (see UnreachableError): a failed exec
// as uid 65534 reads as a bare "permission denied" otherwise.
func (t Target) Open(ctx context.Context, fresh bool) (transport.Transport, error) {
	if t.URL != "" {
		return transport.NewHTTP(transport.HTTPConfig{URL: t.URL, Header: t.Header, MaxMessageBytes: t.MaxMessageBytes, DisableKeepAlives: fresh})
	}
	if t.RunAs != nil {
		if err := t.preflight(); err != nil {
			return nil, err
		}
	}
	st, err := transport.StartStdio(ctx, transport.StdioConfig{Argv: t.Argv, Dir: t.Dir, Env: t.Env, MaxMessageBytes: int(t.MaxMessageBytes), RunAs: t.RunAs})
	if err != nil {
		return nil, t.explainStart(err)
	}
	return st, nil
}

// Connect opens the target and connects a client, which probes the
// server's era. It gives cfg a trace context when it has none (in the
// trace ctx inherited, mcpclient.NewTraceFor), so that every request the
// harness sends carries W3C trace context whichever layer connects; cfg.Observer, when set, watches every request of the
// client, the probe included.
//
// Like mcpclient.Connect, the client is returned even with an error once
// the transport started (closed then): its Info().Probe says how far the
// probe got and its Transport() holds a stdio server's stderr.
func (t Target) Connect(ctx context.Context, fresh bool, cfg mcpclient.Config) (*mcpclient.Client, error) {
	if cfg.Trace == nil {
		cfg.Trace = mcpclient.NewTraceFor(ctx)
	}
	tr, err := t.Open(ctx, fresh)
	if err != nil {
		return nil, err
	}
	cl, err := mcpclient.Connect(ctx, tr, cfg)
	if err != nil {
		cl.Close()
		return cl, err
	}
	return cl, nil
}
