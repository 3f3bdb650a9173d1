package pipeline

import (
	"context"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// serverUser applies the server-user policy (placeholder until pkg/target
// lands).
func (p *Plan) serverUser(policy string) (*transport.RunAs, string, error) {
	if p.Env.ServerUser != nil {
		return p.Env.ServerUser(), "", nil
	}
	return transport.UnprivilegedIfRoot(), "", nil
}

// Connect opens a client to the plan's server (placeholder until
// pkg/target lands: the one opener).
func (p *Plan) Connect(ctx context.Context, observer func(mcpclient.Call)) (*mcpclient.Client, error) {
	t := p.Target
	var tr transport.Transport
	var err error
	if t.URL != "" {
		tr, err = transport.NewHTTP(transport.HTTPConfig{URL: t.URL, Header: t.Header, MaxMessageBytes: t.MaxMessageBytes})
	} else {
		tr, err = transport.StartStdio(ctx, transport.StdioConfig{Argv: t.Argv, Dir: t.Dir, Env: t.Env, MaxMessageBytes: int(t.MaxMessageBytes), RunAs: t.RunAs})
	}
	if err != nil {
		return nil, err
	}
	cl, err := mcpclient.Connect(ctx, tr, mcpclient.Config{RequestTimeout: p.Conformance.RequestTimeout, ProbeTimeout: p.Conformance.ProbeTimeout, Observer: observer, Trace: mcpclient.NewTrace()})
	if err != nil {
		tr.Close()
		return nil, err
	}
	return cl, nil
}
