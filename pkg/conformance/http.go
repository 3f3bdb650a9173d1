package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// HTTP: the Streamable HTTP transport (basic/transports/streamable-http.mdx,
// checklist §1.16).

var HTTP1 = &check.Check{
	ID: "HTTP-1", Level: check.Must, Transports: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Security & Endpoint",
	Doc:  "one MCP endpoint answers POSTed requests of every method with a JSON-RPC response",
	Fix:  "serve every MCP method by POST on the single MCP endpoint",
	Run: func(p *check.Pass) error {
		methods := []string{"server/discover"}
		for capName, m := range map[string]string{"tools": "tools/list", "resources": "resources/list", "prompts": "prompts/list"} {
			if p.Env.Facts.Has(capName) {
				methods = append(methods, m)
			}
		}
		// The plain requests as the repetition observed them: the rule is
		// about what any POST of them got.
		for _, m := range methods {
			s, err := httpObserve(p, m, nil)
			if s == nil {
				return err
			}
			switch {
			case s.final() == nil:
				p.Failf(s.Ev(), "POST of %s to the MCP endpoint got %s, want a JSON-RPC response", m, s.Describe())
			case s.resp.Reissued:
				// The first answer was a stream that ended before the
				// response; the client asked again.
				p.Failf(s.Ev(), "POST of %s to the MCP endpoint got an event stream that ended before the response (the request was sent again)", m)
			}
		}
		return nil
	},
}

// httpEvilOrigin is an Origin no local server allows.
const httpEvilOrigin = "https://evil.example"

var HTTP2 = &check.Check{
	ID: "HTTP-2", Level: check.Must, Transports: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Security & Endpoint",
	Doc:  "a request with an Origin header the server does not allow is answered with HTTP 403",
	Fix:  "validate the Origin header on every request and answer 403 for origins you do not allow",
	Run: func(p *check.Pass) error {
		if !httpIsLoopback(p.Env.HTTP.URL()) {
			p.Skipf("the server is not on a loopback address, so the harness does not know which origins it allows")
			return nil
		}
		rc, err := httpPost(p.Ctx, p.Env, "server/discover", nil, func(h http.Header, _ *[]byte) { httpSetHeader(h, "Origin", httpEvilOrigin) })
		if err != nil {
			return err
		}
		if rc.RR.Status != http.StatusForbidden {
			p.Failf(rc.EvAnswer(0), "a request with Origin %s got %s, want HTTP 403", httpEvilOrigin, rc.Describe())
			return nil
		}
		if f := rc.final(); f != nil && f.Result != nil {
			p.Failf(rc.EvAnswer(0), "the 403 for Origin %s carries a result", httpEvilOrigin)
		}
		return nil
	},
}

// httpMediaType is the media type of a Content-Type value, lower case.
func httpMediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}

var HTTP3 = &check.Check{
	ID: "HTTP-3", Level: check.Must, Transports: check.HTTP,
	Spec:    "basic/transports/streamable-http.mdx §Sending Messages",
	Doc:     "a POSTed request is answered with Content-Type application/json or text/event-stream",
	Fix:     "answer requests with application/json (one response) or text/event-stream",
	Monitor: http3Monitor,
	Run: func(p *check.Pass) error {
		judge := func(method, contentType string, ev *check.Evidence) {
			switch mt := httpMediaType(contentType); mt {
			case "application/json", "text/event-stream":
			default:
				p.Failf(ev, "%s was answered with Content-Type %q, want application/json or text/event-stream", method, contentType)
			}
		}
		// The plain requests as the repetition observed them.
		methods := []string{"server/discover"}
		if p.Env.Facts.Has("tools") {
			methods = append(methods, "tools/list")
		}
		for _, m := range methods {
			s, err := httpObserve(p, m, nil)
			if s == nil {
				return err
			}
			judge(m, s.info.ContentType, s.Ev())
		}
		// A call that may stream, so an SSE answer is judged too.
		if es := progFindEmitters(p); es.progress != nil {
			rc, err := httpPost(p.Ctx, p.Env, "tools/call", map[string]any{"name": es.progress.Tool.Name, "arguments": es.progress.Args}, nil, mcpclient.WithProgressToken("mcp-eval-http3"))
			if err != nil {
				return err
			}
			judge("tools/call", rc.RR.ContentType, rc.Ev())
		}
		return nil
	},
}

// httpNotificationBody is a notification as the client would send it: the
// request Build makes, without its id.
func httpNotificationBody(c *mcpclient.Client, method string, params any, opts ...mcpclient.CallOption) ([]byte, http.Header, error) {
	_, out, err := c.Build(method, params, opts...)
	if err != nil {
		return nil, nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(out.Body, &m); err != nil {
		return nil, nil, err
	}
	delete(m, "id")
	body, err := json.Marshal(m)
	return body, httpRawHeader(out), err
}

// httpCancelledKey is the Memo key of one repetition's POSTed
// notifications/cancelled.
type httpCancelledKey struct{ run int }

type httpPosted struct {
	body   []byte
	header http.Header
	rr     *transport.RawResponse
	err    error
}

// httpPostCancelled POSTs a notifications/cancelled for a request that
// does not exist, as the client builds it, once per repetition: HTTP-4
// judges its status and body, RPC-3 that no JSON-RPC response answered
// it. The answer is shared: read it only.
func httpPostCancelled(p *check.Pass) httpPosted {
	send := func() httpPosted {
		body, h, err := httpNotificationBody(p.Env.Client, "notifications/cancelled", map[string]any{"requestId": "mcp-eval-no-such-request", "reason": "conformance check"})
		if err != nil {
			return httpPosted{err: err}
		}
		ctx, cancel := context.WithTimeout(p.Ctx, httpRawTimeout)
		defer cancel()
		rr, err := p.Env.HTTP.Do(ctx, &transport.RawRequest{Body: body, Header: h})
		return httpPosted{body: body, header: h, rr: rr, err: err}
	}
	if p.Env.Memo == nil {
		return send()
	}
	v, ok := p.Env.Memo.Do(httpCancelledKey{p.Run}, func() any { return send() }).(httpPosted)
	if !ok {
		return httpPosted{err: errors.New("notifications/cancelled: the shared request failed (a harness bug: see the check that sent it)")}
	}
	return v
}

var HTTP4 = &check.Check{
	ID: "HTTP-4", Level: check.Must, Transports: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Sending Messages",
	Doc:  "a POSTed notification is answered with 202 Accepted and an empty body, or with an error status when not accepted",
	Fix:  "answer accepted notifications with 202 and no body; never answer a notification with a JSON-RPC response",
	Run: func(p *check.Pass) error {
		posted := httpPostCancelled(p)
		body, h, rr := posted.body, posted.header, posted.rr
		if rr == nil {
			return posted.err
		}
		ev := check.FromRaw(body, h, rr)
		st := rr.Status
		switch {
		case st == http.StatusAccepted:
			if len(bytes.TrimSpace(rr.Body)) != 0 {
				p.Failf(ev, "notifications/cancelled got 202 with a %d-byte body, want an empty body", len(rr.Body))
			}
		case st >= 400 && st < 500:
			for _, m := range rr.Messages {
				if m.Result != nil {
					p.Failf(unaskedAt(ev, rr.Body), "notifications/cancelled got HTTP %d with a JSON-RPC result", st)
				}
			}
			p.Passf(ev, "notifications/cancelled was not accepted (HTTP %d)", st)
		default:
			ev.OnStatus = true
			p.Failf(ev, "notifications/cancelled got %s, want 202 with an empty body (or a 4xx error status)", httpDescribe(rr, nil))
		}
		return nil
	},
}

var HTTP5 = &check.Check{
	ID: "HTTP-5", Level: check.Must, Transports: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Receiving Messages",
	Doc:  "an SSE response stream carries only notifications of its request and no requests, and the final response ends it",
	Fix:  "send only the request's own progress and log notifications on its stream, never requests, and end the stream after the response",
	Run: func(p *check.Pass) error {
		es := progFindEmitters(p)
		em := es.progress
		if em == nil {
			em = es.logs
		}
		if em == nil {
			return progSkipNoEmitter(p, es, "progress or log notifications (nothing streams)")
		}
		token := "mcp-eval-http5"
		obs, err := progObserve(p.Ctx, p.Env.Client, "tools/call", map[string]any{"name": em.Tool.Name, "arguments": em.Args}, 500*time.Millisecond, mcpclient.WithProgressToken(token), mcpclient.WithLogLevel("debug"))
		if err != nil {
			return err
		}
		if !obs.Live.SSE {
			p.Skipf("the call was answered with %s, not an event stream", obs.Live.ContentType)
			return nil
		}
		tok, _ := json.Marshal(token)
		for _, m := range append(append([]*jsonrpc.Message(nil), obs.Before...), obs.After...) {
			switch {
			case m.Kind() == jsonrpc.KindRequest:
				p.Failf(check.AtMessage(obs.Ev, m, "/method"), "the response stream carries a JSON-RPC request (%s)", jsonrpc.Clip(m.Method, 60))
			case m.Kind() == jsonrpc.KindResponse:
				p.Failf(check.AtMessage(obs.Ev, m, "/id"), "the response stream carries a response with id %s, not this request's", jsonrpc.Clip(string(m.ID), 40))
			case m.Method == "notifications/progress":
				if got := progParams(m)["progressToken"]; !jsonrpc.SameID(got, tok) {
					ev := check.AtMessage(obs.Ev, m, "/params/progressToken")
					if got == nil {
						ev = check.AbsentMessage(obs.Ev, m, "/params/progressToken")
					}
					p.Failf(ev, "the response stream carries progress for token %s, not this request's %s", jsonrpc.Clip(string(got), 40), tok)
				}
			case m.Method == "notifications/message":
			default:
				p.Failf(check.AtMessage(obs.Ev, m, "/method"), "the response stream carries %s, which does not relate to the request", jsonrpc.Clip(m.Method, 60))
			}
		}
		if obs.Final == nil {
			p.Failf(obs.Ev, "the stream ended without the final response")
			return nil
		}
		if len(obs.After) > 0 {
			p.Warnf(obs.Ev, "%d message(s) followed the final response on the stream; the final response should end it", len(obs.After))
		} else if !obs.Ended {
			p.Warnf(obs.Ev, "the stream stayed open after the final response; it should end there")
		}
		if v := obs.Live.Header.Get("X-Accel-Buffering"); !strings.EqualFold(v, "no") {
			p.Warnf(obs.Ev, "the event stream has X-Accel-Buffering %q; send \"no\" so proxies do not buffer it", v)
		}
		return nil
	},
}

var HTTP6 = &check.Check{
	ID: "HTTP-6", Level: check.Must, Transports: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Request Metadata (method not found)",
	Doc:  "a method the server does not implement is answered with HTTP 404 and JSON-RPC error -32601",
	Fix:  "answer unknown methods with HTTP 404 and a -32601 error body",
	Run: func(p *check.Pass) error {
		// The error sweep's request (errProvoke), which HTTP-7, RPC-1,
		// RPC-2 and the ERR checks judge too.
		r, err := errAnswer(p, errWhatMethod)
		if r == nil {
			if err == nil {
				err = fmt.Errorf("%s: the error sweep did not send it (a harness bug)", errUnknownMethod)
			}
			return err
		}
		e, ok := r.rpcError()
		if r.status != http.StatusNotFound || !ok || e.Code != jsonrpc.CodeMethodNotFound {
			at := atStatus
			if ok && e.Code != jsonrpc.CodeMethodNotFound {
				at = "/error/code"
			}
			p.Failf(r.evidenceAt(at), "%s got %s, want HTTP 404 with error -32601", errUnknownMethod, r.describe())
		}
		return nil
	},
}

// httpStatusRule is the HTTP status a JSON-RPC error must come with (HTTP-7).
func httpStatusRule(code int64, malformed bool) (want string, ok func(int) bool) {
	switch {
	case code == jsonrpc.CodeHeaderMismatch || code == jsonrpc.CodeMissingRequiredClientCapability || code == jsonrpc.CodeUnsupportedProtocolVersion || (code == jsonrpc.CodeInvalidParams && malformed):
		return "400", func(s int) bool { return s == http.StatusBadRequest }
	case code == jsonrpc.CodeMethodNotFound:
		return "404", func(s int) bool { return s == http.StatusNotFound }
	}
	return "2xx or 4xx", func(s int) bool { return s >= 200 && s < 300 || s >= 400 && s < 500 }
}

var HTTP7 = &check.Check{
	ID: "HTTP-7", Level: check.Must, Transports: check.HTTP,
	Spec:    "basic/transports/streamable-http.mdx §Request Metadata, §Server Validation; basic/index.mdx §_meta",
	Doc:     "each JSON-RPC error comes with its defined HTTP status: 400 for missing _meta, -32020, -32021 and -32022, 404 for -32601",
	Fix:     "map errors to HTTP statuses: 400 for malformed _meta and -32020/-32021/-32022, 404 for -32601",
	Monitor: http7Monitor,
	Run: func(p *check.Pass) error {
		// Every probe is a request other checks send alike in the same
		// repetition (the variants: META-1, VER-1/2, HDR-3; the error
		// sweep's: HTTP-6, RPC-2 and the ERR checks), so HTTP-7 judges
		// their answers' statuses instead of sending them again.
		type probe struct {
			what      string
			variant   func() (*reply, error)
			mismatch  bool // httpSendMethodMismatch
			malformed bool // a -32602 here is the malformed-_meta one (400)
		}
		metaMs := metaMethods(p.Env.Facts)
		noMeta := metaMs[len(metaMs)-1] // META-1's list, or server/discover
		probes := []probe{
			{what: noMeta + " without _meta", malformed: true, variant: func() (*reply, error) { return metaSendMissing(p, p.Env.Client, noMeta, metaNoMeta) }},
			{what: "server/discover with version " + verUnsupported, variant: func() (*reply, error) { return verRejected(p, "server/discover") }},
			{what: httpMethodMismatch, mismatch: true},
		}
		for _, what := range []string{errWhatMethod, errWhatTool, errWhatResource} {
			probes = append(probes, probe{what: what, variant: func() (*reply, error) { return errAnswer(p, what) }})
		}
		seen := 0
		for _, pr := range probes {
			var (
				e      *jsonrpc.Error
				status int
				evAt   func(int64) *check.Evidence
			)
			switch {
			case pr.variant != nil:
				r, err := pr.variant()
				if err != nil {
					return err
				}
				if r == nil {
					continue // not sent: the server serves no such method
				}
				if r.raw == nil && r.status == 0 {
					return fmt.Errorf("%s: no answer within %s", pr.what, wireTimeout)
				}
				if re, ok := r.rpcError(); ok {
					e = re
				}
				status, evAt = r.status, func(int64) *check.Evidence { return r.evidenceAt(atStatus) }
			case pr.mismatch:
				rc, err := httpSendMethodMismatch(p)
				if err != nil {
					return err
				}
				e, status, evAt = rc.Error(), rc.RR.Status, rc.EvAnswer
			}
			if e == nil {
				continue // no error to judge (other checks judge whether there should be one)
			}
			seen++
			want, ok := httpStatusRule(e.Code, pr.malformed)
			if !ok(status) {
				p.Failf(evAt(e.Code), "%s: error %d came with HTTP %d, want %s", pr.what, e.Code, status, want)
			}
		}
		if seen == 0 {
			p.Skipf("none of the probes was answered with a JSON-RPC error")
		}
		return nil
	},
}

// http7Monitor watches every error the run's 2026-07-28 requests got as a
// JSON body for the codes whose status is defined whatever was asked
// (-32020, -32021, -32022: 400; -32601: 404). A -32602 is 400 only when
// the _meta was malformed, which only the request's sender knows, and an
// error on an event stream came after its 200: the check's runs judge
// those.
var http7Monitor = &check.Monitor{
	Doc: "every -32020, -32021, -32022 and -32601 of the run comes with its defined HTTP status",
	Watch: func(x *check.Exchange) (bool, string) {
		r := x.Response()
		if !x.Modern() || r == nil || r.Error == nil || x.Exchange.HTTP == nil || httpMediaType(x.Exchange.HTTP.ContentType) != "application/json" {
			return false, ""
		}
		switch r.Error.Code {
		case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingRequiredClientCapability, jsonrpc.CodeUnsupportedProtocolVersion, jsonrpc.CodeMethodNotFound:
		default:
			return false, ""
		}
		want, ok := httpStatusRule(r.Error.Code, false)
		if st := x.Exchange.HTTP.Status; !ok(st) {
			return true, fmt.Sprintf("%s: error %d came with HTTP %d, want %s", x.Method, r.Error.Code, st, want)
		}
		return true, ""
	},
}

// httpEditBody decodes a JSON-RPC body, lets fn change it, and encodes it again.
func httpEditBody(body []byte, fn func(m map[string]any)) []byte {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	fn(m)
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// httpBodyParams is the params object of a decoded message (created if absent).
func httpBodyParams(m map[string]any) map[string]any {
	pm, ok := m["params"].(map[string]any)
	if !ok {
		pm = map[string]any{}
		m["params"] = pm
	}
	return pm
}

// httpBodyMeta is params._meta of a decoded message (created if absent).
func httpBodyMeta(m map[string]any) map[string]any {
	pm := httpBodyParams(m)
	meta, ok := pm["_meta"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		pm["_meta"] = meta
	}
	return meta
}

var httpFamily = family{name: "HTTP", title: "Streamable HTTP", checks: []*check.Check{HTTP1, HTTP2, HTTP3, HTTP4, HTTP5, HTTP6, HTTP7}}

// http3Monitor watches the Content-Type of every answer to a POSTed
// request of the run that carried a JSON-RPC response.
var http3Monitor = &check.Monitor{
	Doc: "every POSTed request of the run answered with a JSON-RPC response has Content-Type application/json or text/event-stream",
	Watch: func(x *check.Exchange) (bool, string) {
		if x.Out == nil || x.Exchange == nil || x.Exchange.HTTP == nil || x.Exchange.Response == nil {
			return false, ""
		}
		switch mt := httpMediaType(x.Exchange.HTTP.ContentType); mt {
		case "application/json", "text/event-stream":
			return true, ""
		}
		return true, fmt.Sprintf("%s was answered with Content-Type %q, want application/json or text/event-stream", x.Method, jsonrpc.Clip(x.Exchange.HTTP.ContentType, 80))
	},
}
