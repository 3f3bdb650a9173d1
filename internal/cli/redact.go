package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/target"
)

// redactor holds the secret values of a run and takes them out of
// everything mcp-eval writes. The server under test sees some of them on
// purpose (a header, a --server-env key) and may echo them back in a tool
// description, an error message or its stderr; the harness itself must
// never repeat them in a report, the PR comment or the log.
//
// It knows values, not patterns: what it has been told (header values,
// environment variables with secret-looking names, keys passed to the
// server). A value transformed on the way (base64, split) is not found;
// SECURITY.md says so.
type redactor struct {
	mu     sync.Mutex
	values []string // longest first, so a secret containing another is replaced whole
}

// minSecret is the shortest value treated as a secret: shorter ones
// ("1", "yes") would blank out ordinary text.
const minSecret = 6

// mask replaces a secret.
const mask = "***"

// newRedactor seeds a redactor with the harness's own secrets: every
// environment variable whose name looks like a credential
// (target.SecretEnvName, which the server-user policy shares).
func (c *Command) newRedactor() *redactor {
	r := &redactor{}
	names := target.WellKnownSecrets()
	if c.Environ != nil {
		for _, kv := range c.Environ() {
			if k, _, ok := strings.Cut(kv, "="); ok && target.SecretEnvName(k) {
				names = append(names, k)
			}
		}
	}
	if c.LookupEnv != nil {
		for _, k := range names {
			if v, ok := c.LookupEnv(k); ok {
				r.add(v)
			}
		}
	}
	return r
}

// add registers secret values. A header value such as "Bearer abc" also
// registers "abc": servers echo the token alone.
func (r *redactor) add(values ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		for _, part := range append([]string{v}, credentialParts(v)...) {
			part = strings.TrimSpace(part)
			if len(part) >= minSecret && !slices.Contains(r.values, part) {
				r.values = append(r.values, part)
			}
		}
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
}

// credentialParts splits the pieces of a value that are secrets on their
// own: the token after an auth scheme, the password in a URL.
func credentialParts(v string) []string {
	var out []string
	if scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " "); ok && !strings.Contains(scheme, ":") {
		out = append(out, rest)
	}
	if u, err := url.Parse(v); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	return out
}

// addServerEnv registers the values of variables given to a stdio server
// (NAME=VALUE) whose name looks like a credential or whose value carries a
// URL password.
func (r *redactor) addServerEnv(env []string) {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if target.SecretEnvName(k) {
			r.add(v)
		} else if parts := credentialParts(v); len(parts) > 0 && strings.Contains(v, "://") {
			r.add(parts...)
		}
	}
}

// String removes every secret from s.
func (r *redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, mask)
		}
	}
	return s
}

// JSON removes every secret from the strings (keys included) of a
// JSON-encodable value, in place, through a JSON round trip: a report is
// plain JSON-tagged data, and a walk over the decoded JSON reaches every
// string whatever the Go type holding it.
func (r *redactor) JSON(v any) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	empty := len(r.values) == 0
	r.mu.Unlock()
	if empty {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	changed := false
	doc = r.walk(doc, &changed)
	if !changed {
		return nil
	}
	b, err = json.Marshal(doc)
	if err != nil {
		return err
	}
	// Decode into a fresh value: decoding into v itself would merge maps
	// and keep a key that held a secret.
	rv := reflect.ValueOf(v).Elem()
	fresh := reflect.New(rv.Type())
	if err := json.Unmarshal(b, fresh.Interface()); err != nil {
		return err
	}
	rv.Set(fresh.Elem())
	return nil
}

func (r *redactor) walk(v any, changed *bool) any {
	switch t := v.(type) {
	case string:
		if s := r.String(t); s != t {
			*changed = true
			return s
		}
	case []any:
		for i := range t {
			t[i] = r.walk(t[i], changed)
		}
	case map[string]any:
		for k, x := range t {
			nk := r.String(k)
			if nk != k {
				*changed = true
				delete(t, k)
			}
			t[nk] = r.walk(x, changed)
		}
	}
	return v
}

// lineWriter passes whole lines through the redactor: a secret can only be
// recognised whole, and every output of mcp-eval is line-oriented. Flush
// writes a last unterminated line.
type lineWriter struct {
	w   io.Writer
	r   *redactor
	mu  sync.Mutex
	buf []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if i := bytes.LastIndexByte(l.buf, '\n'); i >= 0 {
		if _, err := io.WriteString(l.w, l.r.String(string(l.buf[:i+1]))); err != nil {
			return 0, err
		}
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
	return len(p), nil
}

// Flush writes what is left.
func (l *lineWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(l.w, l.r.String(string(l.buf)))
	l.buf = l.buf[:0]
	return err
}
