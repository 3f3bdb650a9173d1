// Package redact takes a run's secrets out of everything mcp-eval writes:
// reports, renderings, the log. It knows values, not patterns.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Redactor holds the secret values of a run and takes them out of
// everything mcp-eval writes. The server under test sees some of them on
// purpose (a header, a --server-env key) and may echo them back in a tool
// description, an error message or its stderr; the harness itself must
// never repeat them in a report, the PR comment or the log.
//
// It knows values, not patterns: what it has been told (header values,
// environment variables with secret-looking names, keys passed to the
// server). A value transformed on the way (base64, split) is not found;
// SECURITY.md says so.
type Redactor struct {
	mu     sync.Mutex
	values []string // longest first, so a secret containing another is replaced whole
}

// minSecret is the shortest value treated as a secret: shorter ones
// ("1", "yes") would blank out ordinary text.
const minSecret = 6

// mask replaces a secret.
const mask = "***"

// secretName matches environment variable names that hold credentials by
// convention: GITHUB_TOKEN, INPUT_GITHUB-TOKEN, OPENAI_API_KEY,
// DB_PASSWORD, AWS_SECRET_ACCESS_KEY, …
var secretName = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE|AUTHORIZATION|API[_-]?KEY|ACCESS[_-]?KEY|PRIVATE[_-]?KEY|(^|[_-])KEY$|(^|[_-])AUTH($|[_-]))`)

// WellKnownSecrets are the credentials mcp-eval itself uses or finds on a
// GitHub runner; they are looked up by name even when the environment
// cannot be listed.
func WellKnownSecrets() []string { return append([]string(nil), wellKnownSecrets...) }

var wellKnownSecrets = []string{"GITHUB_TOKEN", "INPUT_GITHUB-TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY", "AZURE_OPENAI_API_KEY"}

// FromEnv seeds a redactor with the harness's own secrets: every
// environment variable whose name looks like a credential. environ may be
// nil (the well-known names are still read through lookup).
func FromEnv(environ func() []string, lookup func(string) (string, bool)) *Redactor {
	r := &Redactor{}
	for _, k := range SecretNames(environ, lookup) {
		v, _ := lookup(k)
		r.Add(v)
	}
	return r
}

// SecretNames lists the variables of the environment that hold a secret
// (by name, or well known) and are set.
func SecretNames(environ func() []string, lookup func(string) (string, bool)) []string {
	names := append([]string(nil), wellKnownSecrets...)
	if environ != nil {
		for _, kv := range environ() {
			if k, _, ok := strings.Cut(kv, "="); ok && IsSecretName(k) && !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	var set []string
	if lookup == nil {
		return nil
	}
	for _, k := range names {
		if v, ok := lookup(k); ok && v != "" {
			set = append(set, k)
		}
	}
	return set
}

// IsSecretName reports whether an environment variable of that name holds a
// credential by convention.
func IsSecretName(name string) bool { return secretName.MatchString(name) }

// Add registers secret values. A header value such as "Bearer abc" also
// registers "abc": servers echo the token alone.
func (r *Redactor) Add(values ...string) {
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

// AddServerEnv registers the values of variables given to a stdio server
// (NAME=VALUE) whose name looks like a credential or whose value carries a
// URL password.
func (r *Redactor) AddServerEnv(env []string) {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if secretName.MatchString(k) {
			r.Add(v)
		} else if parts := credentialParts(v); len(parts) > 0 && strings.Contains(v, "://") {
			r.Add(parts...)
		}
	}
}

// String removes every secret from s.
func (r *Redactor) String(s string) string {
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
func (r *Redactor) JSON(v any) error {
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

func (r *Redactor) walk(v any, changed *bool) any {
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

// Writer passes whole lines through the redactor: a secret can only be
// recognised whole, and every output of mcp-eval is line-oriented. Flush
// writes a last unterminated line.
type Writer struct {
	w   io.Writer
	r   *Redactor
	mu  sync.Mutex
	buf []byte
}

func (l *Writer) Write(p []byte) (int, error) {
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
func (l *Writer) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(l.w, l.r.String(string(l.buf)))
	l.buf = l.buf[:0]
	return err
}

// NewWriter returns a Writer that redacts w's lines with r.
func NewWriter(w io.Writer, r *Redactor) *Writer { return &Writer{w: w, r: r} }
