package conformance

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// authToken is the one token the fixture accepts.
const authToken = "Bearer mcp-eval-good-token"

// authFixture is the reference server behind OAuth-protected-resource
// behaviour: 401 with a Bearer challenge for a missing or invalid token,
// Protected Resource Metadata at the well-known URIs, and 403 with an
// insufficient_scope challenge for prompts/list (the given token lacks
// that scope). broken names the rule it breaks: AUTH-1's challenge names
// metadata that is not there; AUTH-5's is a server behind a static token,
// which names none and serves none.
func authFixture(t *testing.T, broken string) Target {
	t.Helper()
	ref := refserver.New(refserver.Options{})
	inner := ref.Handler()
	mux := http.NewServeMux()
	var base string
	prm := func(w http.ResponseWriter, _ *http.Request) {
		if broken == "AUTH-1" || broken == "AUTH-5" {
			http.NotFound(w, nil)
			return
		}
		scopes := []string{"mcp:tools", "mcp:prompts"}
		if broken == "AUTH-4" {
			scopes = append(scopes, "offline_access")
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": base + "/mcp", "authorization_servers": []string{"https://auth.example"}, "scopes_supported": scopes})
	}
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", prm)
	mux.HandleFunc("/.well-known/oauth-protected-resource", prm)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		meta := ` resource_metadata="` + base + `/.well-known/oauth-protected-resource/mcp",`
		if broken == "AUTH-5" {
			meta = ""
		}
		scope := "mcp:tools"
		if broken == "AUTH-4" {
			scope += " offline_access"
		}
		got := r.Header.Get("Authorization")
		if got != authToken && !(broken == "AUTH-2" && got != "") {
			w.Header().Set("WWW-Authenticate", `Bearer`+meta+` scope="`+scope+`"`)
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "prompts/list" {
			if broken != "AUTH-3" {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="mcp:prompts",`+meta+` error_description="prompts need mcp:prompts"`)
			}
			http.Error(w, `{"error":"insufficient_scope"}`, http.StatusForbidden)
			return
		}
		inner.ServeHTTP(w, r)
	})
	hs := httptest.NewServer(mux)
	base = hs.URL
	t.Cleanup(func() { hs.Close(); ref.Close() })
	return Target{URL: hs.URL + "/mcp", Header: http.Header{"Authorization": {authToken}}}
}

func TestAUTHFixture(t *testing.T) {
	for _, c := range authFamily.checks {
		want := check.Failed
		if c.Level != check.Must {
			want = check.Warned
		}
		t.Run(c.ID, func(t *testing.T) { assertFixture(t, c, authFixture, want) })
	}
}

// A server behind a static token (no resource_metadata, no metadata
// served) is not bound by the metadata rule: authorization is optional,
// and following MCP's is a SHOULD (AUTH-5's warning).
func TestAUTH1SkipsAStaticTokenServer(t *testing.T) {
	_, res := runChecks(t, authFixture(t, "AUTH-5"), 1, "AUTH-1", "AUTH-5")
	if r := res["AUTH-1"]; r.Verdict != check.Skipped {
		t.Errorf("AUTH-1: %s (%s), want skip", r.Verdict, r.Outcome.Message)
	}
	if r := res["AUTH-5"]; r.Verdict != check.Warned {
		t.Errorf("AUTH-5: %s (%s), want warn", r.Verdict, r.Outcome.Message)
	}
}

// Without credentials, or on a server that needs none, AUTH does not apply.
func TestAUTHSkips(t *testing.T) {
	withHeader := refTarget(t, "http")
	withHeader.Header = http.Header{"Authorization": {"Bearer whatever"}}
	for name, target := range map[string]Target{"no credentials": refTarget(t, "http"), "unprotected server": withHeader} {
		_, res := runChecks(t, target, 1, "AUTH")
		for _, c := range authFamily.checks {
			if v := res[c.ID].Verdict; v != check.Skipped {
				t.Errorf("%s, %s: %s, want skip", name, c.ID, v)
			}
		}
	}
}

func TestAuthChallenge(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		ok   bool
	}{
		{`Bearer resource_metadata="https://x.example/.well-known/oauth-protected-resource", scope="a b"`, map[string]string{"resource_metadata": "https://x.example/.well-known/oauth-protected-resource", "scope": "a b"}, true},
		{`Bearer error="insufficient_scope",scope=files:read, error_description="need \"files\""`, map[string]string{"error": "insufficient_scope", "scope": "files:read", "error_description": `need "files"`}, true},
		{`Basic realm="x", Bearer realm="api", scope="s"`, map[string]string{"realm": "api", "scope": "s"}, true},
		{`bearer`, map[string]string{}, true},
		{`Bearer realm="a", Basic realm="b"`, map[string]string{"realm": "a"}, true},
		{`Basic realm="bearer"`, nil, false},
		{``, nil, false},
	} {
		got, ok := authChallenge(tc.in)
		if ok != tc.ok || (tc.ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("authChallenge(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAuthPRMLocations(t *testing.T) {
	got := authPRMLocations("https://api.example/v1/mcp", map[string]string{"resource_metadata": "https://meta.example/prm"})
	want := []string{"https://meta.example/prm", "https://api.example/.well-known/oauth-protected-resource/v1/mcp", "https://api.example/.well-known/oauth-protected-resource"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// The checks see the user's configured headers (AUTH needs to know that
// credentials were given).
func TestHTTPConfiguredHeader(t *testing.T) {
	tr, err := transport.NewHTTP(transport.HTTPConfig{URL: "http://127.0.0.1:1/mcp", Header: http.Header{"Authorization": {"Bearer x"}, "X-Api-Key": {"k"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := httpConfiguredHeader(tr)
	if h.Get("Authorization") != "Bearer x" || h.Get("X-Api-Key") != "k" {
		t.Fatalf("httpConfiguredHeader = %v", h)
	}
	if httpConfiguredHeader(nil) != nil {
		t.Fatal("nil transport")
	}
}
