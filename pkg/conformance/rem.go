package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// REM: what a 2026-07-28 server answers to what was removed (changelog
// Major 1-9; checklist §1.14).

// remRemoved are the removed requests REM-1 sends, with plausible params.
var remRemoved = []struct {
	method string
	params map[string]any
}{
	{"ping", nil},
	{"logging/setLevel", map[string]any{"level": "info"}},
	{"resources/subscribe", map[string]any{"uri": "mcp-eval://no-such-resource"}},
	{"resources/unsubscribe", map[string]any{"uri": "mcp-eval://no-such-resource"}},
	{"tasks/list", nil},
	{"tasks/result", map[string]any{"taskId": "mcp-eval-no-such-task"}},
}

// remDescribe says what answered a client request, for messages.
func remDescribe(resp *mcpclient.Response) string {
	var s string
	if resp.Exchange != nil && resp.Exchange.HTTP != nil {
		s = fmt.Sprintf("HTTP %d with ", resp.Exchange.HTTP.Status)
	}
	switch {
	case resp.Error != nil:
		return s + fmt.Sprintf("error %d", resp.Error.Code)
	case resp.Result != nil:
		return s + "a result"
	}
	return s + "no response"
}

var REM1 = &check.Check{
	ID: "REM-1", Level: check.Must, Transports: check.Both,
	Spec: "changelog.mdx (removed methods); basic/transports/streamable-http.mdx §Request Metadata",
	Doc:  "ping, logging/setLevel, resources/subscribe, resources/unsubscribe, tasks/list and tasks/result get -32601 (HTTP 404)",
	Fix:  "drop the removed 2025-11-25 methods and answer them with -32601 (HTTP 404)",
	Run: func(p *check.Pass) error {
		for _, r := range remRemoved {
			resp, err := p.Env.Client.Do(p.Ctx, r.method, r.params)
			if resp == nil {
				return err
			}
			ev := check.FromResponse(resp)
			if err != nil {
				p.Failf(ev, "%s: %v, want error -32601", r.method, err)
				continue
			}
			status := 0
			if resp.Exchange != nil && resp.Exchange.HTTP != nil {
				status = resp.Exchange.HTTP.Status
			}
			if resp.Error == nil || resp.Error.Code != jsonrpc.CodeMethodNotFound || (p.Env.Transport == "http" && status != http.StatusNotFound) {
				want := "error -32601"
				if p.Env.Transport == "http" {
					want = "HTTP 404 with error -32601"
				}
				p.Failf(ev, "removed method %s got %s, want %s", r.method, remDescribe(resp), want)
			}
		}
		return nil
	},
}

// remInitParams are a legacy initialize's params (checklist §3.8).
var remInitParams = map[string]any{"protocolVersion": mcpclient.Legacy1125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcp-eval", "version": "0.1.0"}}

// remLegacyInit is initialize exactly as a 2025-11-25 client sends it.
func remLegacyInit(id json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": remInitParams})
	return b
}

// remInitAnswer judges an answer to initialize: an error (naming the
// supported versions, SHOULD) or, from a dual-era server, a legacy
// InitializeResult.
func remInitAnswer(p *check.Pass, ev *check.Evidence, what string, m *jsonrpc.Message) {
	if m == nil {
		p.Failf(ev, "%s got no JSON-RPC response, want an error", what)
		return
	}
	if m.Error == nil {
		var ir struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities"`
		}
		if json.Unmarshal(m.Result, &ir) == nil && slices.Contains(mcpclient.LegacyVersions, ir.ProtocolVersion) && bytes.HasPrefix(bytes.TrimSpace(ir.Capabilities), []byte("{")) {
			p.Passf(ev, "%s got a legacy InitializeResult for %s: a dual-era server", what, ir.ProtocolVersion)
			return
		}
		p.Failf(ev, "%s got a result that is not a legacy InitializeResult, want a JSON-RPC error", what)
		return
	}
	versions := []string{mcpclient.Latest}
	if d := p.Env.Facts.Discover; d != nil {
		for _, v := range d.SupportedVersions {
			if !slices.Contains(versions, v) {
				versions = append(versions, v)
			}
		}
	}
	text := m.Error.Message + string(m.Error.Data)
	for _, v := range versions {
		if strings.Contains(text, v) {
			return
		}
	}
	p.Warnf(ev, "%s got error %d without naming the supported versions; it should name them (%s)", what, m.Error.Code, strings.Join(versions, ", "))
}

var REM2 = &check.Check{
	ID: "REM-2", Level: check.Must, Transports: check.Both,
	Spec: "basic/versioning.mdx §Backward Compatibility with Initialization-Based Versions",
	Doc:  "initialize gets a JSON-RPC error naming the supported versions (HTTP: 400 without modern headers, 404/-32601 with them), unless the server is dual-era",
	Fix:  "answer initialize with an error that names the supported versions, or run a full legacy session (dual-era)",
	Run: func(p *check.Pass) error {
		c, closeFn, err := p.Env.Fresh(p.Ctx)
		if err != nil {
			return err
		}
		defer closeFn()
		// With modern _meta and headers.
		resp, err := c.Do(p.Ctx, "initialize", remInitParams)
		if resp == nil {
			return err
		}
		ev := check.FromResponse(resp)
		if resp.Exchange == nil || resp.Exchange.Response == nil {
			p.Failf(ev, "initialize with modern _meta: %v, want a JSON-RPC error", err)
		} else {
			remInitAnswer(p, ev, "initialize with modern _meta", resp.Exchange.Response)
			if h := resp.Exchange.HTTP; h != nil && resp.Error != nil && (h.Status != http.StatusNotFound || resp.Error.Code != jsonrpc.CodeMethodNotFound) {
				p.Failf(ev, "initialize with modern headers and _meta got %s, want HTTP 404 with error -32601", remDescribe(resp))
			}
		}
		// Legacy-style: no _meta, no modern headers.
		id := jsonrpc.StringID("mcp-eval-initialize")
		body := remLegacyInit(id)
		switch t := c.Transport().(type) {
		case *transport.HTTPTransport:
			h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
			ctx, cancel := context.WithTimeout(p.Ctx, httpRawTimeout)
			defer cancel()
			rr, err := t.Do(ctx, &transport.RawRequest{Body: body, Header: h, StopAtID: id})
			if rr == nil {
				return err
			}
			ev := check.FromRaw(body, h, rr)
			var m *jsonrpc.Message
			if len(rr.Messages) > 0 {
				m = rr.Messages[len(rr.Messages)-1]
			}
			if m != nil && m.Result != nil {
				remInitAnswer(p, ev, "a legacy-style initialize", m)
			} else if rr.Status != http.StatusBadRequest {
				p.Failf(ev, "a legacy-style initialize (no Mcp-Method, no _meta) got %s, want HTTP 400 from header validation", httpDescribe(rr, m))
			}
		case *transport.StdioTransport:
			m, raw, err := remStdioRoundTrip(p.Ctx, t, body, id)
			if err != nil {
				return err
			}
			remInitAnswer(p, &check.Evidence{Transport: "stdio", Request: string(body), Response: jsonrpc.Clip(raw, 600)}, "a legacy-style initialize (no _meta)", m)
		}
		return nil
	},
}

// remStdioRoundTrip writes one raw line and waits for the response with id.
func remStdioRoundTrip(ctx context.Context, t *transport.StdioTransport, line []byte, id json.RawMessage) (*jsonrpc.Message, string, error) {
	tap, stop := t.Tap(256)
	defer stop()
	if err := t.WriteLine(ctx, line); err != nil {
		return nil, "", err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		select {
		case in := <-tap:
			if in.Msg != nil && in.Msg.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(in.Msg.ID, id) {
				return in.Msg, string(in.Raw), nil
			}
		case <-wctx.Done():
			return nil, "", nil
		}
	}
}

// remLegacyNotifications are 2025-11-25 client notifications.
var remLegacyNotifications = []string{"notifications/initialized", "notifications/roots/list_changed"}

// stdioQuiet is how long a stdio check waits after a fence for messages
// that should not come.
const stdioQuiet = 30 * time.Millisecond

// stdioFenced writes lines to a process, then sends a fence request and
// returns every stdout line that arrived until quiet after the fence's
// response (the fence's own response excluded).
func stdioFenced(ctx context.Context, c *mcpclient.Client, lines [][]byte, quiet time.Duration) ([]transport.Inbound, error) {
	t, ok := c.Transport().(*transport.StdioTransport)
	if !ok {
		return nil, nil
	}
	tap, stop := t.Tap(512)
	defer stop()
	for _, l := range lines {
		if err := t.WriteLine(ctx, l); err != nil {
			return nil, err
		}
	}
	fence, err := c.Do(ctx, "server/discover", nil)
	if err != nil {
		return nil, err
	}
	var out []transport.Inbound
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		select {
		case in := <-tap:
			if in.Msg != nil && in.Msg.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(in.Msg.ID, fence.ID) {
				continue
			}
			out = append(out, in)
		case <-timer.C:
			return out, nil
		case <-ctx.Done():
			return out, nil
		}
	}
}

var REM3 = &check.Check{
	ID: "REM-3", Level: check.Must, Transports: check.Both,
	Spec: "basic/index.mdx §Notifications; basic/transports/streamable-http.mdx §Sending Messages",
	Doc:  "legacy client notifications (notifications/initialized, notifications/roots/list_changed) never get a JSON-RPC response (HTTP: 202 or a 4xx status)",
	Fix:  "ignore notifications/initialized and notifications/roots/list_changed (HTTP: 202 or a 4xx without a result)",
	Run: func(p *check.Pass) error {
		if p.Env.Transport == "http" {
			for _, n := range remLegacyNotifications {
				body, h, err := httpNotificationBody(p.Env.Client, n, nil)
				if err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(p.Ctx, httpRawTimeout)
				rr, err := p.Env.HTTP.Do(ctx, &transport.RawRequest{Body: body, Header: h})
				cancel()
				if rr == nil {
					return err
				}
				ev := check.FromRaw(body, h, rr)
				switch {
				case rr.Status == http.StatusAccepted && len(bytes.TrimSpace(rr.Body)) == 0:
				case rr.Status >= 400 && rr.Status < 500:
					for _, m := range rr.Messages {
						if m.Result != nil {
							p.Failf(ev, "%s got HTTP %d with a JSON-RPC result", n, rr.Status)
						}
					}
				default:
					p.Failf(ev, "%s got %s, want 202 with an empty body or a 4xx status", n, httpDescribe(rr, nil))
				}
			}
			return nil
		}
		c, closeFn, err := p.Env.Fresh(p.Ctx)
		if err != nil {
			return err
		}
		defer closeFn()
		var lines [][]byte
		for _, n := range remLegacyNotifications {
			lines = append(lines, []byte(`{"jsonrpc":"2.0","method":"`+n+`"}`))
		}
		got, err := stdioFenced(p.Ctx, c, lines, stdioQuiet)
		if err != nil {
			return err
		}
		for _, in := range got {
			if in.Msg != nil && in.Msg.Kind() == jsonrpc.KindResponse {
				p.Failf(&check.Evidence{Transport: "stdio", Request: string(bytes.Join(lines, []byte("\n"))), Response: jsonrpc.Clip(string(in.Raw), 600)}, "a legacy notification was answered with a JSON-RPC response")
			}
		}
		return nil
	},
}

// remSessionID is the session id REM-4 sends; the server must ignore it.
const remSessionID = "mcp-eval-session"

var REM4 = &check.Check{
	ID: "REM-4", Level: check.Should, Transports: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Earlier Streamable HTTP Revisions",
	Doc:  "GET and DELETE on the endpoint get 405, and the server neither mints nor echoes Mcp-Session-Id",
	Fix:  "answer GET and DELETE with 405 and drop Mcp-Session-Id handling",
	Run: func(p *check.Pass) error {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			h := http.Header{mcpclient.HeaderSessionID: {remSessionID}}
			if method == http.MethodGet {
				h.Set("Accept", "text/event-stream")
				h.Set("Last-Event-ID", "1")
			}
			ctx, cancel := context.WithTimeout(p.Ctx, 2*time.Second)
			rr, err := p.Env.HTTP.Do(ctx, &transport.RawRequest{Method: method, Header: h})
			cancel()
			if rr == nil {
				return err
			}
			ev := check.FromRaw(nil, h, rr)
			ev.Request = method
			if rr.Status != http.StatusMethodNotAllowed {
				p.Failf(ev, "%s on the MCP endpoint got HTTP %d, want 405", method, rr.Status)
			}
			if v := rr.Header.Get(mcpclient.HeaderSessionID); v != "" {
				p.Failf(ev, "%s was answered with Mcp-Session-Id %q; 2026-07-28 has no sessions", method, jsonrpc.Clip(v, 60))
			}
		}
		rc, err := httpPost(p.Ctx, p.Env, "server/discover", nil, func(h http.Header, _ *[]byte) { h.Set(mcpclient.HeaderSessionID, remSessionID) })
		if err != nil {
			return err
		}
		if rc.final() == nil || rc.final().Result == nil {
			p.Failf(rc.Ev(), "server/discover with an Mcp-Session-Id header got %s; the header must be ignored", rc.Describe())
		}
		if v := rc.RR.Header.Get(mcpclient.HeaderSessionID); v != "" {
			p.Failf(rc.Ev(), "server/discover was answered with Mcp-Session-Id %q; 2026-07-28 has no sessions", jsonrpc.Clip(v, 60))
		}
		return nil
	},
}

var remFamily = family{name: "REM", title: "removed methods", checks: []*check.Check{REM1, REM2, REM3, REM4}}
