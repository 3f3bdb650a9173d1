package pipeline

import (
	"context"
	"fmt"
	"os"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/target"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// serverUser applies the server-user policy (target.ResolveUser) to this
// process: root or not, the action or not, secrets in the environment or
// not. keyEnvs are the variables the config's endpoints read keys from,
// secrets whatever their names.
func (p *Plan) serverUser(policy string, keyEnvs []string) (*transport.RunAs, string, error) {
	if p.Env.ServerUser != nil {
		return p.Env.ServerUser(), "", nil
	}
	pol, err := target.ParseUserPolicy(policy)
	if err != nil {
		return nil, "", fmt.Errorf("server user (--server-user, server.user, or the server-user input): %w", err)
	}
	var environ []string
	if p.Env.Environ != nil {
		environ = p.Env.Environ()
	}
	actions, _ := p.Env.lookup("GITHUB_ACTIONS")
	facts := target.Facts{
		IsRoot:       os.Geteuid() == 0,
		InAction:     p.Env.InAction || actions == "true",
		HoldsSecrets: target.EnvHoldsSecrets(environ, p.Env.LookupEnv, keyEnvs...),
	}
	return target.ResolveUser(pol, facts)
}

// Connect opens a client to the plan's server through the one opener
// (target.Target.Connect: environment allowlist, process group, the
// server's user, a fresh trace context), with the plan's deadlines and
// observer. On error the returned client, when there is one, is closed but
// still tells what the probe saw.
func (p *Plan) Connect(ctx context.Context, observer func(mcpclient.Call)) (*mcpclient.Client, error) {
	return p.Target.Connect(ctx, false, mcpclient.Config{RequestTimeout: p.Conformance.RequestTimeout, ProbeTimeout: p.Conformance.ProbeTimeout, Observer: observer})
}
