package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/target"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// serverFlags are the flags that name the server under test; every command
// that talks to a server shares them.
type serverFlags struct {
	url            string
	cmd            string
	cwd            string
	headers        multiFlag
	serverEnv      multiFlag
	passEnv        multiFlag
	timeout        time.Duration
	requestTimeout time.Duration
	probeTimeout   time.Duration
	maxResponse    int64
}

func (sf *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&sf.url, "url", "", "Streamable HTTP endpoint of the server, e.g. http://127.0.0.1:3000/mcp")
	fs.StringVar(&sf.cmd, "cmd", "", "command that starts a stdio server, e.g. \"node dist/server.js --stdio\" (split like a shell would, never run through one)")
	fs.StringVar(&sf.cwd, "cwd", "", "working directory for --cmd (default: the current one)")
	fs.Var(&sf.headers, "header", "HTTP header `K:V` sent with every request, e.g. \"Authorization: Bearer $TOKEN\" (repeatable; values are never printed)")
	fs.Var(&sf.serverEnv, "server-env", "environment variable `K=V` for the --cmd server (repeatable)")
	fs.Var(&sf.passEnv, "pass-env", "pass this variable `NAME` from mcp-eval's environment to the --cmd server (repeatable); only PATH, HOME, LANG and TMPDIR pass by default")
	fs.DurationVar(&sf.timeout, "timeout", 2*time.Minute, "deadline for the whole run")
	fs.DurationVar(&sf.requestTimeout, "request-timeout", 30*time.Second, "deadline for each request")
	fs.DurationVar(&sf.probeTimeout, "probe-timeout", 5*time.Second, "how long a stdio server may stay silent on server/discover before it is taken for a legacy server")
	fs.Int64Var(&sf.maxResponse, "max-response-bytes", transport.DefaultMaxMessageBytes, "largest single response accepted from the server")
}

func (sf *serverFlags) validate() error {
	switch {
	case sf.url == "" && sf.cmd == "":
		return errors.New("name the server under test: --url http://host:port/mcp or --cmd \"server args…\"")
	case sf.url != "" && sf.cmd != "":
		return errors.New("--url and --cmd are exclusive: test one server at a time")
	case sf.url != "" && (len(sf.serverEnv) > 0 || len(sf.passEnv) > 0 || sf.cwd != ""):
		return errors.New("--server-env, --pass-env and --cwd only apply to a --cmd server")
	case sf.cmd != "" && len(sf.headers) > 0:
		return errors.New("--header only applies to a --url server (stdio has no headers)")
	case sf.timeout <= 0 || sf.requestTimeout <= 0 || sf.probeTimeout <= 0:
		return errors.New("--timeout, --request-timeout and --probe-timeout must be positive")
	case sf.maxResponse < 1024:
		return errors.New("--max-response-bytes must be at least 1024")
	}
	return nil
}

func parseHeaders(list []string) (http.Header, error) {
	h := http.Header{}
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("invalid --header %q: want \"Name: value\" on one line", redactHeader(kv))
		}
		h.Add(k, v)
	}
	return h, nil
}

// redactHeaders registers every header value as a secret: headers sent
// to the server carry tokens, and their values are never printed.
func (c *Command) redactHeaders(h map[string][]string) {
	for _, vs := range h {
		c.redact.add(vs...)
	}
}

// redactHeader keeps a header's name and hides its value, which is often a
// token.
func redactHeader(kv string) string {
	if k, _, ok := strings.Cut(kv, ":"); ok {
		return k + ": ***"
	}
	return "***"
}

// target describes the server for humans, without secrets.
func (sf *serverFlags) target() string {
	if sf.url != "" {
		return "http " + sf.url
	}
	return "stdio " + sf.cmd
}

// open starts the transport (spawning a stdio server) and connects the
// client, which probes the server's era.
// On error the transport, when one was made, is returned closed so that the
// caller can still show what a stdio server wrote to stderr.
func (sf *serverFlags) open(ctx context.Context, c *Command, cfg mcpclient.Config) (*mcpclient.Client, transport.Transport, error) {
	t, err := sf.conformanceTarget(c)
	if err != nil {
		return nil, nil, err
	}
	cfg.RequestTimeout = sf.requestTimeout
	cfg.ProbeTimeout = sf.probeTimeout
	cl, err := t.Connect(ctx, false, cfg)
	if err != nil {
		if cl != nil {
			return nil, cl.Transport(), err
		}
		return nil, nil, err
	}
	return cl, cl.Transport(), nil
}

// explain turns a harness error into a message with what to do next.
func explain(err error) string {
	msg := err.Error()
	if ue := (*target.UnreachableError)(nil); errors.As(err, &ue) {
		return msg // it names both fixes; "is the command right?" would mislead
	}
	switch transport.KindOf(err) {
	case transport.KindConnect:
		msg += "\nhint: is the server running and is the URL or command right?"
	case transport.KindTimeout:
		msg += "\nhint: the server did not answer in time; raise --request-timeout or --timeout if it is just slow"
	case transport.KindProcessExited:
		msg += "\nhint: the server process ended; its stderr is shown above"
	case transport.KindMalformed, transport.KindBadID:
		msg += "\nhint: the server's answer is not valid JSON-RPC for this request"
	}
	return msg
}
