package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// AUTH: authorization on Streamable HTTP (basic/authorization, checklist
// §1.18). The checks apply only when the user gave credentials
// (--header "Authorization: …") and the server refuses a request without
// them: authorization is optional, and its rules bind protected servers.

// authProbe is a request without (or with wrong) credentials and its answer.
type authProbe struct {
	Status int
	Header http.Header
	Body   []byte
	Sent   []byte
	SentH  http.Header
}

func (a *authProbe) Ev() *check.Evidence {
	return &check.Evidence{Transport: "http", Request: jsonrpc.Clip(string(a.Sent), 400), Headers: map[string]string{"Authorization": a.SentH.Get("Authorization"), "WWW-Authenticate": a.Header.Get("WWW-Authenticate")}, Status: a.Status, Response: jsonrpc.Clip(string(a.Body), 600)}
}

// authSend POSTs server/discover with the configured headers except
// Authorization, which is set to auth (or left out when empty).
func authSend(p *check.Pass, auth string) (*authProbe, error) {
	_, out, err := p.Env.Client.Build("server/discover", nil)
	if err != nil {
		return nil, err
	}
	h := httpRawHeader(out)
	for k, vs := range httpConfiguredHeader(p.Env.HTTP) {
		if !strings.EqualFold(k, "Authorization") && h.Values(k) == nil {
			h[k] = vs
		}
	}
	if auth != "" {
		h.Set("Authorization", auth)
	}
	ctx, cancel := context.WithTimeout(p.Ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Env.HTTP.URL(), bytes.NewReader(out.Body))
	if err != nil {
		return nil, err
	}
	req.Header = h
	resp, err := httpLiveClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return &authProbe{Status: resp.StatusCode, Header: resp.Header, Body: body, Sent: out.Body, SentH: h}, nil
}

// authGate returns the answer to a request without credentials, or nil
// after skipping the check when AUTH does not apply.
func authGate(p *check.Pass) (*authProbe, error) {
	if p.Env.HTTP == nil {
		p.Skipf("authorization applies to Streamable HTTP only")
		return nil, nil
	}
	if httpConfiguredHeader(p.Env.HTTP).Get("Authorization") == "" {
		p.Skipf("no credentials were given (--header \"Authorization: Bearer …\"), so the authorization rules are not checked")
		return nil, nil
	}
	a, err := authSend(p, "")
	if err != nil {
		return nil, err
	}
	if a.Status >= 200 && a.Status < 300 {
		p.Skipf("the server answers requests without credentials (HTTP %d); the authorization rules bind protected servers", a.Status)
		return nil, nil
	}
	return a, nil
}

// authChallenge parses the parameters of a Bearer challenge in a
// WWW-Authenticate value (RFC 9110 §11.6.1): auth-param = token "=" (token
// / quoted-string). Keys are lower-cased; ok is false without a Bearer
// challenge.
func authChallenge(v string) (params map[string]string, ok bool) {
	i := strings.Index(strings.ToLower(v), "bearer")
	for i >= 0 {
		// "Bearer" must start a challenge: at the start or after a comma.
		before := strings.TrimRight(v[:i], " \t")
		if before == "" || strings.HasSuffix(before, ",") {
			break
		}
		j := strings.Index(strings.ToLower(v[i+6:]), "bearer")
		if j < 0 {
			i = -1
			break
		}
		i += 6 + j
	}
	if i < 0 {
		return nil, false
	}
	rest := v[i+len("bearer"):]
	params = map[string]string{}
	for {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			return params, true
		}
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return params, true // the next challenge's scheme (or a token68)
		}
		key := strings.ToLower(strings.TrimSpace(rest[:eq]))
		if strings.ContainsAny(key, " \t") {
			return params, true // "Basic realm=…": a new challenge starts
		}
		rest = strings.TrimLeft(rest[eq+1:], " \t")
		var val string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			k := 1
			for ; k < len(rest); k++ {
				c := rest[k]
				if c == '\\' && k+1 < len(rest) {
					k++
					b.WriteByte(rest[k])
					continue
				}
				if c == '"' {
					break
				}
				b.WriteByte(c)
			}
			val = b.String()
			if k < len(rest) {
				k++
			}
			rest = rest[k:]
		} else {
			end := strings.IndexAny(rest, ", \t")
			if end < 0 {
				end = len(rest)
			}
			val, rest = rest[:end], rest[end:]
		}
		params[key] = val
	}
}

// authPRMLocations are where Protected Resource Metadata may be: the
// challenge's resource_metadata, then the well-known URIs (path-suffixed
// first).
func authPRMLocations(endpoint string, challenge map[string]string) []string {
	var out []string
	if u := challenge["resource_metadata"]; u != "" {
		out = append(out, u)
	}
	if u, err := url.Parse(endpoint); err == nil {
		base := u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"
		if path := strings.TrimRight(u.EscapedPath(), "/"); path != "" {
			out = append(out, base+path)
		}
		out = append(out, base)
	}
	return out
}

// authPRM is a fetched Protected Resource Metadata document.
type authPRM struct {
	URL                  string
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
	Raw                  []byte
}

// authFetchPRM fetches the first PRM document found, without credentials.
func authFetchPRM(ctx context.Context, locs []string) (*authPRM, []string) {
	var tried []string
	for _, loc := range locs {
		u, err := url.Parse(loc)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			tried = append(tried, loc+" (not an http(s) URL)")
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		req, _ := http.NewRequestWithContext(cctx, http.MethodGet, loc, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := httpLiveClient.Do(req)
		if err != nil {
			cancel()
			tried = append(tried, fmt.Sprintf("%s (%v)", loc, err))
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 256<<10))
		resp.Body.Close()
		cancel()
		if resp.StatusCode != http.StatusOK {
			tried = append(tried, fmt.Sprintf("%s (HTTP %d)", loc, resp.StatusCode))
			continue
		}
		prm := &authPRM{URL: loc, Raw: body}
		if json.Unmarshal(body, prm) != nil {
			tried = append(tried, loc+" (not a JSON object)")
			continue
		}
		return prm, tried
	}
	return nil, tried
}

var AUTH1 = &check.Check{
	ID: "AUTH-1", Level: check.Must, Transports: check.HTTP,
	Spec: "basic/authorization/index.mdx; authorization-server-discovery.mdx (RFC 9728)",
	Doc:  "a protected server publishes Protected Resource Metadata with at least one authorization server",
	Fix:  "serve RFC 9728 metadata at /.well-known/oauth-protected-resource (or name it in WWW-Authenticate resource_metadata) with authorization_servers",
	Run: func(p *check.Pass) error {
		a, err := authGate(p)
		if a == nil {
			return err
		}
		ch, _ := authChallenge(a.Header.Get("WWW-Authenticate"))
		prm, tried := authFetchPRM(p.Ctx, authPRMLocations(p.Env.HTTP.URL(), ch))
		if prm == nil && ch["resource_metadata"] == "" {
			// Authorization is OPTIONAL, and an HTTP server that has some
			// SHOULD (not MUST) follow MCP's: a server behind a static
			// token is AUTH-5's warning, not this rule's failure.
			p.Skipf("the server does not use MCP's authorization (its challenge names no resource_metadata and no Protected Resource Metadata is served: tried %s); the metadata rule binds servers that do (AUTH-5)", strings.Join(tried, ", "))
			return nil
		}
		if prm == nil {
			p.Failf(a.Ev(), "a request sent without the Authorization header (on purpose) was challenged with resource_metadata, but no Protected Resource Metadata was found; tried %s", strings.Join(tried, ", "))
			return nil
		}
		ev := &check.Evidence{Transport: "http", Request: "GET " + prm.URL, Response: jsonrpc.Clip(string(prm.Raw), 600)}
		var ok []string
		for _, s := range prm.AuthorizationServers {
			if strings.TrimSpace(s) != "" {
				ok = append(ok, s)
			}
		}
		if len(ok) == 0 {
			p.Failf(ev, "the metadata at %s lists no authorization_servers", prm.URL)
		}
		return nil
	},
}

var AUTH2 = &check.Check{
	ID: "AUTH-2", Level: check.Must, Transports: check.HTTP,
	Spec: "basic/authorization/index.mdx §Token Handling, §Error Handling",
	Doc:  "a request without a token, or with an invalid one, is answered with HTTP 401",
	Fix:  "answer missing and invalid bearer tokens with 401 and a WWW-Authenticate challenge",
	Run: func(p *check.Pass) error {
		a, err := authGate(p)
		if a == nil {
			return err
		}
		if a.Status != http.StatusUnauthorized {
			p.Failf(a.Ev(), "a request without a token got HTTP %d, want 401", a.Status)
		}
		bad, err := authSend(p, "Bearer mcp-eval-invalid-token")
		if err != nil {
			return err
		}
		if bad.Status != http.StatusUnauthorized {
			p.Failf(bad.Ev(), "a request with an invalid token got HTTP %d, want 401", bad.Status)
		}
		return nil
	},
}

var AUTH3 = &check.Check{
	ID: "AUTH-3", Level: check.Should, Transports: check.HTTP,
	Spec: "basic/authorization/index.mdx §Scope Challenge Handling",
	Doc:  "insufficient scope is answered with 403 and WWW-Authenticate: Bearer error=\"insufficient_scope\", scope and resource_metadata",
	Fix:  "answer requests whose token lacks a scope with 403 and a Bearer insufficient_scope challenge naming the scope",
	Run: func(p *check.Pass) error {
		a, err := authGate(p)
		if a == nil {
			return err
		}
		methods := []string{"server/discover"}
		for capName, m := range map[string]string{"tools": "tools/list", "resources": "resources/list", "prompts": "prompts/list"} {
			if p.Env.Facts.Has(capName) {
				methods = append(methods, m)
			}
		}
		slices.Sort(methods[1:])
		refused := 0
		for _, m := range methods {
			rc, err := httpPost(p.Ctx, p.Env, m, nil, nil)
			if err != nil {
				return err
			}
			if rc.RR.Status != http.StatusForbidden {
				continue
			}
			refused++
			ch, ok := authChallenge(rc.RR.Header.Get("WWW-Authenticate"))
			switch {
			case !ok:
				p.Failf(rc.Ev(), "%s was refused with 403 without a Bearer WWW-Authenticate challenge", m)
			case ch["error"] != "insufficient_scope":
				p.Failf(rc.Ev(), "%s was refused with 403 and error=%q, want error=\"insufficient_scope\"", m, ch["error"])
			default:
				for _, k := range []string{"scope", "resource_metadata"} {
					if ch[k] == "" {
						p.Failf(rc.Ev(), "the insufficient_scope challenge for %s has no %s", m, k)
					}
				}
			}
		}
		if refused == 0 {
			p.Skipf("no request made with the given credentials was refused for insufficient scope")
		}
		return nil
	},
}

var AUTH4 = &check.Check{
	ID: "AUTH-4", Level: check.Should, Transports: check.HTTP,
	Spec: "basic/authorization/index.mdx §Scope Selection Strategy",
	Doc:  "offline_access appears neither in the WWW-Authenticate scope nor in the metadata's scopes_supported",
	Fix:  "leave offline_access out of challenges and scopes_supported",
	Run: func(p *check.Pass) error {
		a, err := authGate(p)
		if a == nil {
			return err
		}
		ch, _ := authChallenge(a.Header.Get("WWW-Authenticate"))
		if slices.Contains(strings.Fields(ch["scope"]), "offline_access") {
			p.Failf(a.Ev(), "the WWW-Authenticate challenge asks for scope offline_access")
		}
		if prm, _ := authFetchPRM(p.Ctx, authPRMLocations(p.Env.HTTP.URL(), ch)); prm != nil && slices.Contains(prm.ScopesSupported, "offline_access") {
			p.Failf(&check.Evidence{Transport: "http", Request: "GET " + prm.URL, Response: jsonrpc.Clip(string(prm.Raw), 600)}, "scopes_supported in %s lists offline_access", prm.URL)
		}
		return nil
	},
}

var AUTH5 = &check.Check{
	ID: "AUTH-5", Level: check.Should, Transports: check.HTTP,
	Spec: "basic/authorization/index.mdx §Protocol Requirements",
	Doc:  "a server that refuses requests without credentials follows MCP's authorization: OAuth 2.1 with discoverable Protected Resource Metadata",
	Fix:  "to let any MCP client obtain a token, serve RFC 9728 metadata (/.well-known/oauth-protected-resource, named in WWW-Authenticate resource_metadata); a static token works for clients that are configured with it, which the spec allows",
	Run: func(p *check.Pass) error {
		a, err := authGate(p)
		if a == nil {
			return err
		}
		ch, _ := authChallenge(a.Header.Get("WWW-Authenticate"))
		if ch["resource_metadata"] != "" {
			p.Passf(a.Ev(), "the challenge names resource_metadata %q", jsonrpc.Clip(ch["resource_metadata"], 120))
			return nil
		}
		if prm, tried := authFetchPRM(p.Ctx, authPRMLocations(p.Env.HTTP.URL(), ch)); prm == nil {
			p.Failf(a.Ev(), "a request sent without the Authorization header (on purpose) got HTTP %d, and no Protected Resource Metadata is served (tried %s): a client can only use a token it was configured with", a.Status, strings.Join(tried, ", "))
		} else {
			p.Passf(&check.Evidence{Transport: "http", Request: "GET " + prm.URL, Response: jsonrpc.Clip(string(prm.Raw), 600)}, "Protected Resource Metadata at %s", prm.URL)
		}
		return nil
	},
}

var authFamily = family{name: "AUTH", title: "authorization", checks: []*check.Check{AUTH1, AUTH2, AUTH3, AUTH4, AUTH5},
	added: map[string]string{"AUTH-5": "authorization/index.mdx: HTTP implementations that support authorization SHOULD conform to it; AUTH-1's MUST binds those that do, and failed a server behind a static token (a user's trial)"}}
