package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRedactorFindsEverySecretPath(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-env-canary-1", "GIT_AUTHOR_NAME": "Jane Doe Smith", "INPUT_GITHUB-TOKEN": "ghs-input-canary-2", "MY_SERVICE_AUTH": "auth-canary-3"}
	c := &Command{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Environ: func() []string {
		var out []string
		for k, v := range env {
			out = append(out, k+"="+v)
		}
		return out
	}}
	r := c.newRedactor()
	r.add("Bearer header-canary-4")
	r.addServerEnv([]string{"API_KEY=server-canary-5", "DATABASE_URL=postgres://u:db-canary-6@h/db", "NODE_ENV=production"})
	in := "sk-env-canary-1 ghs-input-canary-2 auth-canary-3 header-canary-4 server-canary-5 db-canary-6 by Jane Doe Smith in production"
	got := r.String(in)
	if strings.Contains(got, "canary") || !strings.Contains(got, "Jane Doe Smith") || !strings.Contains(got, "production") {
		t.Fatalf("redacted %q", got)
	}
}

func TestRedactorJSONReachesEveryString(t *testing.T) {
	r := &redactor{}
	r.add("secret-canary")
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
	r := &redactor{}
	r.add("split-secret-canary")
	var out bytes.Buffer
	w := &lineWriter{w: &out, r: r}
	w.Write([]byte("a split-sec"))
	w.Write([]byte("ret-canary b\nlast split-secret-canary"))
	w.Flush()
	if strings.Contains(out.String(), "canary") || out.String() != "a *** b\nlast ***" {
		t.Fatalf("wrote %q", out.String())
	}
}

// A header value given on the command line never reaches the output, even
// when the server echoes it in the body of an error the harness prints.
func TestMainRedactsEchoedHeaderValues(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "invalid credentials: "+r.Header.Get("Authorization"), http.StatusInternalServerError)
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.Main(ctx, []string{"probe", "--url", srv.URL + "/mcp", "--header", "Authorization: Bearer cli-canary-token"})
	all := out.String() + errb.String()
	if strings.Contains(all, "cli-canary-token") || !strings.Contains(all, "invalid credentials") {
		t.Fatalf("want the error without the token:\n%s", all)
	}
}
