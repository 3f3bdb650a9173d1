package target

import (
	"regexp"
	"strings"
)

// secretName matches environment variable names that hold credentials by
// convention: GITHUB_TOKEN, INPUT_GITHUB-TOKEN, OPENAI_API_KEY,
// DB_PASSWORD, AWS_SECRET_ACCESS_KEY, … The redactor masks their values
// and the user policy protects them from the server: one list, so that
// what is never printed is also what the server is kept away from.
var secretName = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE|AUTHORIZATION|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|(^|[_-])KEY$|(^|[_-])AUTH($|[_-]))`)

// SecretEnvName reports whether an environment variable of that name holds
// a credential by convention (see WellKnownSecrets for names every one of
// which it matches). A model endpoint's key-env may name any variable;
// callers add those themselves (EnvHoldsSecrets).
func SecretEnvName(name string) bool { return secretName.MatchString(name) }

// WellKnownSecrets are the credentials mcp-eval itself uses or finds on a
// GitHub runner; they are looked up by name even when the environment
// cannot be listed.
func WellKnownSecrets() []string {
	return []string{"GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY", "AZURE_OPENAI_API_KEY"}
}

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
