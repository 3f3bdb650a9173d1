package target

import (
	"errors"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// UserPolicy says who a stdio server runs as: server.user in mcp-eval.yaml,
// the action input server-user, the flag --server-user.
type UserPolicy string

const (
	// UserAuto drops to uid 65534 when that protects something: see
	// ResolveUser. The default.
	UserAuto UserPolicy = "auto"
	// UserUnprivileged always runs the server as uid 65534 (nobody); it
	// needs mcp-eval to run as root.
	UserUnprivileged UserPolicy = "unprivileged"
	// UserCurrent runs the server as mcp-eval's own user, root included.
	UserCurrent UserPolicy = "current"
)

// ParseUserPolicy reads a policy as written in a config, an input or a
// flag; empty is UserAuto.
func ParseUserPolicy(s string) (UserPolicy, error) {
	switch p := UserPolicy(s); p {
	case "":
		return UserAuto, nil
	case UserAuto, UserUnprivileged, UserCurrent:
		return p, nil
	}
	return "", fmt.Errorf("unknown server user %q: want auto, unprivileged or current", s)
}

// Facts are what the user policy depends on; the caller finds them out.
type Facts struct {
	// IsRoot: mcp-eval runs as root (os.Geteuid() == 0), the only case
	// in which it can start the server as another user.
	IsRoot bool
	// InAction: mcp-eval runs as the GitHub Action (`mcp-eval action`,
	// or GITHUB_ACTIONS=true), next to the runner's token and workspace.
	InAction bool
	// HoldsSecrets: mcp-eval's environment holds a secret the redactor
	// masks (redact.SecretNames: model keys, GITHUB_TOKEN,
	// ACTIONS_*_TOKEN, any *_TOKEN, *_API_KEY, …), or a variable a
	// config's key-env names.
	HoldsSecrets bool
}

// Notes and errors of ResolveUser.
const (
	NoteRootNothingToProtect = "the stdio server runs as root, as mcp-eval does: mcp-eval is not the GitHub Action and its environment holds no secret (set server.user: unprivileged to run the server as uid 65534 anyway)"
	NoteSameUserSecrets      = "the stdio server runs as mcp-eval's own user, which can read mcp-eval's environment, secrets included (model keys, tokens); only a root mcp-eval (the Docker action) can start the server as another user"
	NoteCurrentRoot          = "server.user is current: the stdio server runs as root, as mcp-eval does, so it can read mcp-eval's environment (model keys, GITHUB_TOKEN) and change anything root can on this machine"
)

// ErrCannotDrop is ResolveUser's error for UserUnprivileged without root.
var ErrCannotDrop = errors.New("server.user is unprivileged, but mcp-eval is not running as root and only root can start the server as another user (uid 65534): run mcp-eval as root (the Docker action does), or set server.user: current")

// ResolveUser decides who a stdio server runs as; nil is mcp-eval's own
// user. The note, when not empty, is one line for the run's log saying
// what the choice risks.
//
//   - auto runs the server as uid 65534 (transport.Nobody) when mcp-eval
//     runs as root AND (it runs as the GitHub Action OR its environment
//     holds a secret), since the server is untrusted code that could
//     otherwise read them from /proc; otherwise as mcp-eval's own user,
//     with NoteRootNothingToProtect as root and NoteSameUserSecrets when
//     a non-root environment holds secrets (nothing can be done about it
//     without root, but the user should know).
//   - unprivileged runs it as uid 65534, and is ErrCannotDrop without
//     root: a policy asked for and silently not applied would protect
//     nothing.
//   - current runs it as mcp-eval's user; as root with NoteCurrentRoot.
func ResolveUser(policy UserPolicy, f Facts) (*transport.RunAs, string, error) {
	switch policy {
	case UserAuto, "":
		switch {
		case f.IsRoot && (f.InAction || f.HoldsSecrets):
			return transport.Nobody(), "", nil
		case f.IsRoot:
			return nil, NoteRootNothingToProtect, nil
		case f.HoldsSecrets:
			return nil, NoteSameUserSecrets, nil
		}
		return nil, "", nil
	case UserUnprivileged:
		if !f.IsRoot {
			return nil, "", ErrCannotDrop
		}
		return transport.Nobody(), "", nil
	case UserCurrent:
		if f.IsRoot {
			return nil, NoteCurrentRoot, nil
		}
		return nil, "", nil
	}
	_, err := ParseUserPolicy(string(policy))
	return nil, "", err
}
