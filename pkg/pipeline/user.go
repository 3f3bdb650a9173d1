package pipeline

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/redact"
	"github.com/mcp-eval/mcp-eval-action/pkg/target"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// serverUser applies the server-user policy (target.ResolveUser) to this
// process: root or not, the action or not, secrets in the environment or
// not. keyEnvs are the variables the config's endpoints read keys from,
// secrets whatever their names.
//
// It returns who the server runs as, why (for an error that must say what
// made mcp-eval drop privileges) and the note for the reader, if any.
func (p *Plan) serverUser(policy string, keyEnvs []string) (runAs *transport.RunAs, why, note string, err error) {
	if p.Env.ServerUser != nil {
		return p.Env.ServerUser(), "", "", nil
	}
	pol, err := target.ParseUserPolicy(policy)
	if err != nil {
		return nil, "", "", fmt.Errorf("server user (--server-user, server.user, or the server-user input): %w", err)
	}
	secrets := redact.SecretNames(p.Env.Environ, p.Env.LookupEnv)
	for _, k := range keyEnvs {
		if v, ok := p.Env.lookup(k); ok && v != "" && !slices.Contains(secrets, k) {
			secrets = append(secrets, k)
		}
	}
	actions, _ := p.Env.lookup("GITHUB_ACTIONS")
	facts := target.Facts{IsRoot: os.Geteuid() == 0, InAction: p.Env.InAction || actions == "true", HoldsSecrets: len(secrets) > 0}
	runAs, note, err = target.ResolveUser(pol, facts)
	if err != nil || runAs == nil {
		return runAs, "", note, err
	}
	switch {
	case pol == target.UserUnprivileged:
		why = "and server.user is unprivileged"
	case facts.InAction:
		why = "in the GitHub Action"
	default:
		sort.Strings(secrets)
		why = "with secrets in its environment (" + strings.Join(secrets, ", ") + ")"
	}
	if note == "" && pol != target.UserUnprivileged && !facts.InAction {
		// Said outside the action (where it is the documented default),
		// so that a server failing on its own files is not a mystery: it
		// is not running as the user who started mcp-eval.
		note = fmt.Sprintf("the stdio server runs as uid %d, not as root: mcp-eval runs as root %s (server.user: current runs it as root, with access to them)", runAs.UID, why)
	}
	return runAs, why, note, nil
}

// Connect opens a client to the plan's server through the one opener
// (target.Target.Connect: environment allowlist, process group, the
// server's user, a fresh trace context), with the plan's deadlines and
// observer. On error the returned client, when there is one, is closed but
// still tells what the probe saw.
func (p *Plan) Connect(ctx context.Context, observer func(mcpclient.Call)) (*mcpclient.Client, error) {
	return p.Target.Connect(ctx, false, mcpclient.Config{RequestTimeout: p.Conformance.RequestTimeout, ProbeTimeout: p.Conformance.ProbeTimeout, Observer: observer})
}
