package transport

import (
	"fmt"
	"sort"
	"strings"
)

// baseEnv is what a spawned server inherits without being asked: enough to
// find programs and write temp files, and nothing that could be a secret
// (INPUT_*, GITHUB_TOKEN and provider keys all stay in the harness).
var baseEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// ServerEnv builds the environment of a stdio server: the allowlist, the
// variables the user passes by name, then the ones the user sets. lookup is
// os.LookupEnv in production.
func ServerEnv(pass []string, set []string, lookup func(string) (string, bool)) ([]string, error) {
	vals := map[string]string{}
	for _, name := range append(append([]string(nil), baseEnv...), pass...) {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, fmt.Errorf("invalid --pass-env name %q: want a variable name such as API_BASE", name)
		}
		if v, ok := lookup(name); ok {
			vals[name] = v
		}
	}
	for _, kv := range set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsRune(kv, 0) {
			return nil, fmt.Errorf("invalid --server-env %q: want NAME=VALUE", kv)
		}
		vals[k] = v
	}
	env := make([]string, 0, len(vals))
	for k, v := range vals {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env, nil
}
