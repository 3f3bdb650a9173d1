package target

import (
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/redact"
)

// SecretEnvName reports whether an environment variable of that name holds
// a credential by convention. It is the redactor's rule: what is never
// printed is also what the server is kept away from. A model endpoint's
// key-env may name any variable; callers add those (EnvHoldsSecrets).
func SecretEnvName(name string) bool { return redact.IsSecretName(name) }

// WellKnownSecrets are the redactor's well-known credentials.
func WellKnownSecrets() []string { return redact.WellKnownSecrets() }

// EnvHoldsSecrets reports whether mcp-eval's environment holds a non-empty
// secret: a variable of environ whose name SecretEnvName matches, or one of
// WellKnownSecrets and extra (a config's key-env names) that lookup
// finds. Either of environ and lookup may be nil.
func EnvHoldsSecrets(environ []string, lookup func(string) (string, bool), extra ...string) bool {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && v != "" && SecretEnvName(k) {
			return true
		}
	}
	if lookup == nil {
		return false
	}
	for _, k := range append(WellKnownSecrets(), extra...) {
		if v, ok := lookup(k); ok && k != "" && v != "" {
			return true
		}
	}
	return false
}
