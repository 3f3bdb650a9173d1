package redact

import (
	"bytes"
	"strings"
	"testing"
)

func TestRedactorFindsEverySecretPath(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-env-canary-1", "GIT_AUTHOR_NAME": "Jane Doe Smith", "INPUT_GITHUB-TOKEN": "ghs-input-canary-2", "MY_SERVICE_AUTH": "auth-canary-3"}
	r := FromEnv(func() []string {
		var out []string
		for k, v := range env {
			out = append(out, k+"="+v)
		}
		return out
	}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	r.Add("Bearer header-canary-4")
	r.AddServerEnv([]string{"API_KEY=server-canary-5", "DATABASE_URL=postgres://u:db-canary-6@h/db", "NODE_ENV=production"})
	in := "sk-env-canary-1 ghs-input-canary-2 auth-canary-3 header-canary-4 server-canary-5 db-canary-6 by Jane Doe Smith in production"
	got := r.String(in)
	if strings.Contains(got, "canary") || !strings.Contains(got, "Jane Doe Smith") || !strings.Contains(got, "production") {
		t.Fatalf("redacted %q", got)
	}
}

func TestRedactorJSONReachesEveryString(t *testing.T) {
	r := &Redactor{}
	r.Add("secret-canary")
	type inner struct {
		M map[string]string
		L []string
	}
	v := &struct {
		A string
		I inner
		P *inner
	}{A: "x secret-canary", I: inner{M: map[string]string{"k secret-canary": "v secret-canary"}, L: []string{"secret-canary"}}, P: &inner{L: []string{"a secret-canary b"}}}
	if err := r.JSON(v); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(v.A + v.I.L[0] + v.P.L[0])
	for k, x := range v.I.M {
		b.WriteString(k + x)
	}
	if strings.Contains(b.String(), "secret-canary") || len(v.I.M) != 1 {
		t.Fatalf("left: %+v %+v", v, v.P)
	}
}

// A secret split across two writes is still caught: the writer works on
// whole lines.
func TestLineWriterRedactsAcrossWrites(t *testing.T) {
	r := &Redactor{}
	r.Add("split-secret-canary")
	var out bytes.Buffer
	w := NewWriter(&out, r)
	w.Write([]byte("a split-sec"))
	w.Write([]byte("ret-canary b\nlast split-secret-canary"))
	w.Flush()
	if strings.Contains(out.String(), "canary") || out.String() != "a *** b\nlast ***" {
		t.Fatalf("wrote %q", out.String())
	}
}

// SecretNames finds the set, non-empty variables that hold a secret: the
// server-user policy drops privileges exactly when it finds one.
func TestSecretNames(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"PATH=/bin", "HOME=/root"}, ""},
		{[]string{"OPENAI_API_KEY=sk-x"}, "OPENAI_API_KEY"},
		{[]string{"ACTIONS_RUNTIME_TOKEN=x"}, "ACTIONS_RUNTIME_TOKEN"},
		{[]string{"GITHUB_TOKEN="}, ""}, // set but empty holds nothing
		{[]string{"MY_LLM=abc"}, ""},    // a key-env name is the caller's to add
	} {
		environ := func() []string { return tc.env }
		lookup := func(k string) (string, bool) {
			for _, kv := range tc.env {
				if name, v, _ := strings.Cut(kv, "="); name == k {
					return v, true
				}
			}
			return "", false
		}
		if got := strings.Join(SecretNames(environ, lookup), ","); got != tc.want {
			t.Errorf("SecretNames(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
	for _, k := range WellKnownSecrets() {
		if !IsSecretName(k) {
			t.Errorf("IsSecretName(%q) is false for a well-known secret", k)
		}
	}
}
