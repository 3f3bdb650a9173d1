package conformance

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// HDR: Streamable HTTP request metadata headers (streamable-http.mdx
// §Request Metadata, §Server Validation; checklist §1.16). Each case starts
// from the exact request the client would send and changes one header.

// hdrCase is one header variant of a request and whether a correct server
// accepts it (accept) or rejects it with 400 + -32020.
type hdrCase struct {
	what   string
	accept bool
	edit   func(h http.Header)
	// lenient makes a rejection of an accept case a warning (a SHOULD).
	lenient bool
	// shared, when set, sends the case instead of edit: a variant other
	// checks send alike, once per repetition (httpPostShared).
	shared func(p *check.Pass) (*httpRawCall, error)
}

// hdrSend is one header case on one request.
type hdrSend struct {
	method string
	params any
	hdrCase
}

// hdrRun sends the cases (all of them in one repetition, again the ones
// that went wrong and one more in the others: Pass.Cases) and reports the
// ones the server got wrong.
func hdrRun(p *check.Pass, sends []hdrSend) error {
	return p.Cases("", len(sends), func(i int) error { return hdrOne(p, sends[i]) })
}

// hdrOne sends one case and reports it when the server got it wrong.
func hdrOne(p *check.Pass, s hdrSend) error {
	var rc *httpRawCall
	var err error
	if s.shared != nil {
		rc, err = s.shared(p)
	} else {
		rc, err = httpPost(p.Ctx, p.Env, s.method, s.params, func(h http.Header, _ *[]byte) { s.edit(h) })
	}
	if err != nil {
		return err
	}
	switch {
	case s.accept && rc.headerRejected():
		if s.lenient {
			p.Warnf(rc.EvAnswer(0), "%s %s was rejected with %s; it should be accepted", s.method, s.what, rc.Describe())
		} else {
			p.Failf(rc.EvAnswer(0), "%s %s was rejected with %s, want it accepted", s.method, s.what, rc.Describe())
		}
	case !s.accept && !rc.isHeaderMismatch():
		p.Failf(rc.EvAnswer(jsonrpc.CodeHeaderMismatch), "%s %s got %s, want HTTP 400 with error -32020", s.method, s.what, rc.Describe())
	}
	return nil
}

// hdrLegacyDefault is the version a server that serves pre-2025-06-18
// clients may assume when the version header is missing (HDR-1).
const hdrLegacyDefault = "2025-03-26"

var HDR1 = &check.Check{
	ID: "HDR-1", Level: check.Must, Transports: check.HTTP, Seed: 7,
	Spec: "basic/transports/streamable-http.mdx §Protocol Version Header, §Server Validation",
	Doc:  "a request without the MCP-Protocol-Version header is rejected with HTTP 400 and -32020",
	Fix:  "reject requests that lack MCP-Protocol-Version with 400 and error -32020",
	Run: func(p *check.Pass) error {
		methods := []string{"server/discover"}
		if p.Env.Facts.Has("tools") {
			methods = append(methods, "tools/list")
		}
		return p.Cases("", len(methods), func(i int) error {
			m := methods[i]
			rc, err := httpPost(p.Ctx, p.Env, m, nil, func(h http.Header, _ *[]byte) { httpDelHeader(h, mcpclient.HeaderProtocolVersion) })
			if err != nil {
				return err
			}
			if rc.isHeaderMismatch() {
				return nil
			}
			if d := p.Env.Facts.Discover; d != nil && slices.Contains(d.SupportedVersions, hdrLegacyDefault) && !rc.headerRejected() {
				p.Passf(rc.Ev(), "%s without MCP-Protocol-Version was served (%s); allowed because the server supports %s (AMB-23)", m, rc.Describe(), hdrLegacyDefault)
				return nil
			}
			p.Failf(rc.EvAnswer(jsonrpc.CodeHeaderMismatch), "%s without MCP-Protocol-Version got %s, want HTTP 400 with error -32020", m, rc.Describe())
			return nil
		})
	},
}

var HDR2 = &check.Check{
	ID: "HDR-2", Level: check.Must, Transports: check.HTTP, Seed: 7,
	Spec: "basic/transports/streamable-http.mdx §Protocol Version Header",
	Doc:  "an MCP-Protocol-Version header that differs from _meta protocolVersion is rejected with HTTP 400 and -32020",
	Fix:  "compare MCP-Protocol-Version with params._meta protocolVersion and reject a mismatch with 400 and -32020",
	Run: func(p *check.Pass) error {
		other := mcpclient.Legacy1125
		if d := p.Env.Facts.Discover; d != nil {
			for _, v := range d.SupportedVersions {
				if v != mcpclient.Latest {
					other = v
					break
				}
			}
		}
		rc, err := httpPost(p.Ctx, p.Env, "server/discover", nil, func(h http.Header, _ *[]byte) { httpSetHeader(h, mcpclient.HeaderProtocolVersion, other) })
		if err != nil {
			return err
		}
		if rc.isHeaderMismatch() {
			return nil
		}
		if e := rc.Error(); e != nil && e.Code == jsonrpc.CodeUnsupportedProtocolVersion && rc.RR.Status == http.StatusBadRequest {
			p.Warnf(rc.EvAnswer(0), "header %s with body %s got 400 with -32022 instead of -32020 (AMB-11: the header's version is unsupported too)", other, mcpclient.Latest)
			return nil
		}
		p.Failf(rc.EvAnswer(jsonrpc.CodeHeaderMismatch), "header MCP-Protocol-Version %s with _meta protocolVersion %s got %s, want HTTP 400 with error -32020", other, mcpclient.Latest, rc.Describe())
		return nil
	},
}

var HDR3 = &check.Check{
	ID: "HDR-3", Level: check.Must, Transports: check.HTTP, Seed: 7,
	Spec: "basic/transports/streamable-http.mdx §Standard Request Headers, §Case Sensitivity, §Server Validation",
	Doc:  "Mcp-Method is required and must equal body.method exactly (values case-sensitive, header names not); otherwise HTTP 400 and -32020",
	Fix:  "require Mcp-Method on every request, compare it case-sensitively with body.method, and reject a missing or different one with 400 and -32020",
	Run: func(p *check.Pass) error {
		var sends []hdrSend
		for _, m := range []string{"server/discover", "tools/list"} {
			if m == "tools/list" && !p.Env.Facts.Has("tools") {
				continue
			}
			other := "tools/list"
			if m == "tools/list" {
				other = "server/discover"
			}
			mismatch := hdrCase{what: "with Mcp-Method " + other, edit: func(h http.Header) { httpSetHeader(h, mcpclient.HeaderMethod, other) }}
			if m == "server/discover" {
				mismatch.shared = httpSendMethodMismatch // HDR-6 and HTTP-7 judge it too
			}
			cases := []hdrCase{
				{what: "without Mcp-Method", edit: func(h http.Header) { httpDelHeader(h, mcpclient.HeaderMethod) }},
				mismatch,
				{what: "with Mcp-Method " + strings.ToUpper(m), edit: func(h http.Header) { httpSetHeader(h, mcpclient.HeaderMethod, strings.ToUpper(m)) }},
				{what: "with the header name written mcp-method", accept: true, edit: func(h http.Header) { httpSetHeader(h, "mcp-method", m) }},
				{what: "with the header name written MCP-METHOD", accept: true, edit: func(h http.Header) { httpSetHeader(h, "MCP-METHOD", m) }},
			}
			for _, c := range cases {
				sends = append(sends, hdrSend{m, nil, c})
			}
		}
		return hdrRun(p, sends)
	},
}

// hdrB64 is the =?base64?…?= encoding of v.
func hdrB64(v string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// hdrNameCases are the Mcp-Name variants of HDR-4 for a request whose body
// names value (sent as header value hv).
func hdrNameCases(value, hv string) []hdrCase {
	set := func(v string) func(http.Header) {
		return func(h http.Header) { httpSetHeader(h, mcpclient.HeaderName, v) }
	}
	return []hdrCase{
		{what: "without Mcp-Name", edit: func(h http.Header) { httpDelHeader(h, mcpclient.HeaderName) }},
		{what: "with Mcp-Name mcp-eval-mismatch", edit: set("mcp-eval-mismatch")},
		{what: "with the Mcp-Name value base64-encoded (=?base64?…?=)", accept: true, edit: set(hdrB64(value))},
		{what: "with the sentinel written =?BASE64?…?= (compared literally)", edit: set("=?BASE64?" + base64.StdEncoding.EncodeToString([]byte(value)) + "?=")},
		{what: "with invalid base64 inside =?base64?…?=", edit: set("=?base64?!!not*base64!!?=")},
		{what: "with spaces around the Mcp-Name value", accept: true, edit: set("  " + hv + " ")},
	}
}

var HDR4 = &check.Check{
	ID: "HDR-4", Level: check.Must, Transports: check.HTTP, Seed: 7,
	Spec: "basic/transports/streamable-http.mdx §Standard Request Headers, §Value Encoding, §Server Validation",
	Doc:  "tools/call, resources/read and prompts/get require Mcp-Name equal to params.name / params.uri (base64 sentinel decoded first); otherwise HTTP 400 and -32020",
	Fix:  "require Mcp-Name on tools/call, resources/read and prompts/get, decode =?base64?…?= values, and reject a missing, undecodable or different one with 400 and -32020",
	Run: func(p *check.Pass) error {
		f := p.Env.Facts
		type target struct {
			method, value string
			params        map[string]any
		}
		var targets []target
		if f.Has("tools") {
			t := target{method: "tools/call", value: "mcp-eval-no-such-tool", params: map[string]any{"name": "mcp-eval-no-such-tool", "arguments": map[string]any{}}}
			if tools := p.Env.CallableTools(); len(tools) > 0 {
				// Header validation comes before the tool lookup, so an
				// unknown name works too; a real tool is the stronger test.
				t = target{method: "tools/call", value: tools[0].Name, params: map[string]any{"name": tools[0].Name, "arguments": progArgs(tools[0].InputSchema, false)}}
			}
			targets = append(targets, t)
		}
		if f.Has("resources") {
			uri := "mcp-eval://no-such-resource"
			if len(f.Resources) > 0 {
				uri = f.Resources[0].URI
			}
			targets = append(targets, target{method: "resources/read", value: uri, params: map[string]any{"uri": uri}})
		}
		if f.Has("prompts") {
			t := target{method: "prompts/get", value: "mcp-eval-no-such-prompt", params: map[string]any{"name": "mcp-eval-no-such-prompt"}}
			if len(f.Prompts) > 0 {
				pr := f.Prompts[0]
				args := map[string]string{}
				for _, a := range pr.Arguments {
					if a.Required {
						args[a.Name] = "example"
					}
				}
				t = target{method: "prompts/get", value: pr.Name, params: map[string]any{"name": pr.Name, "arguments": args}}
			}
			targets = append(targets, t)
		}
		if len(targets) == 0 {
			p.Skipf("the server declares none of tools, resources and prompts")
			return nil
		}
		var sends []hdrSend
		for _, t := range targets {
			for _, c := range hdrNameCases(t.value, mcpclient.EncodeHeaderValue(t.value)) {
				sends = append(sends, hdrSend{t.method, t.params, c})
			}
		}
		return hdrRun(p, sends)
	},
}

// hdrParamTool is a callable tool with an x-mcp-header property, and
// arguments that set it.
type hdrParamTool struct {
	tool  mcpclient.Tool
	param mcpclient.HeaderParam
	args  map[string]any
	value any // the argument's value
}

// hdrFindParamTool picks the first callable tool that declares an
// x-mcp-header property and sets that property in example arguments.
func hdrFindParamTool(p *check.Pass) *hdrParamTool {
	for _, t := range p.Env.CallableTools() {
		hps, err := mcpclient.HeaderParams(t.InputSchema)
		if err != nil || len(hps) == 0 {
			continue
		}
		hp := hps[0]
		args := progArgs(t.InputSchema, false)
		var value any
		switch hp.Type {
		case "integer":
			value = int64(42)
		case "boolean":
			value = true
		default:
			value = "mcp-eval"
			var root map[string]any
			if json.Unmarshal(t.InputSchema, &root) == nil {
				if prop := hdrPropSchema(root, hp.Path); prop != nil {
					if s, ok := progValue(prop, root, 0, false).(string); ok && s != "" {
						value = s
					}
				}
			}
		}
		hdrSetPath(args, hp.Path, value)
		return &hdrParamTool{tool: t, param: hp, args: args, value: value}
	}
	return nil
}

// hdrPropSchema follows properties keys from the schema root.
func hdrPropSchema(root map[string]any, path []string) map[string]any {
	cur := root
	for _, k := range path {
		props, _ := cur["properties"].(map[string]any)
		next, _ := props[k].(map[string]any)
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

// hdrSetPath sets (or with nil, deletes) an argument at a property path.
func hdrSetPath(args map[string]any, path []string, v any) {
	cur := args
	for i, k := range path {
		if i == len(path)-1 {
			if v == nil {
				delete(cur, k)
			} else {
				cur[k] = v
			}
			return
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			if v == nil {
				return
			}
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
}

// hdrCloneArgs deep-copies arguments through JSON.
func hdrCloneArgs(args map[string]any) map[string]any {
	b, _ := json.Marshal(args)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// hdrParamText is the header text of an argument value.
func hdrParamText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return fmt.Sprint(v)
}

var HDR5 = &check.Check{
	ID: "HDR-5", Level: check.Must, Transports: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Custom Headers from Tool Parameters, §Server Behavior for Custom Headers",
	Doc:  "an x-mcp-header argument needs a matching Mcp-Param-* header (base64 sentinel decoded), absent arguments need none, and invalid characters are rejected",
	Fix:  "validate every Mcp-Param-* header against its x-mcp-header argument and reject missing, different or invalid values with 400 and -32020",
	Run: func(p *check.Pass) error {
		pt := hdrFindParamTool(p)
		if pt == nil {
			if len(p.Env.CallableTools()) == 0 {
				progSkipNoTool(p)
			} else {
				callSkip(p, "no callable tool declares an x-mcp-header property")
			}
			return nil
		}
		name := mcpclient.HeaderParamPrefix + pt.param.Header
		text := hdrParamText(pt.value)
		set := func(v string) func(http.Header) { return func(h http.Header) { httpSetHeader(h, name, v) } }
		none := func(http.Header) {}
		other := "mcp-eval-other"
		switch pt.param.Type {
		case "integer":
			other = "43"
		case "boolean":
			other = "false"
		}
		absent, null := hdrCloneArgs(pt.args), hdrCloneArgs(pt.args)
		hdrSetPath(absent, pt.param.Path, nil)
		hdrSetPath(null, pt.param.Path, json.RawMessage("null"))
		type step struct {
			args map[string]any
			hdrCase
		}
		steps := []step{
			{pt.args, hdrCase{what: "with the argument but without " + name, edit: none}},
			{pt.args, hdrCase{what: fmt.Sprintf("with %s: %s for argument %s", name, other, text), edit: set(other)}},
			{pt.args, hdrCase{what: fmt.Sprintf("with %s: %s", name, mcpclient.EncodeHeaderValue(text)), accept: true, edit: set(mcpclient.EncodeHeaderValue(text))}},
			{pt.args, hdrCase{what: "with " + name + " base64-encoded", accept: true, edit: set(hdrB64(text))}},
			{absent, hdrCase{what: "without the argument and without " + name, accept: true, edit: none}},
			{null, hdrCase{what: "with the argument null and without " + name, accept: true, edit: none}},
		}
		switch pt.param.Type {
		case "integer":
			// Integers SHOULD be compared numerically.
			steps = append(steps, step{pt.args, hdrCase{what: fmt.Sprintf("with %s: %s.0 for integer %s", name, text, text), accept: true, lenient: true, edit: set(text + ".0")}})
		case "string":
			// A raw non-ASCII value must have been base64-encoded.
			raw := hdrCloneArgs(pt.args)
			hdrSetPath(raw, pt.param.Path, "mcp-évál")
			steps = append(steps, step{raw, hdrCase{what: "with raw non-ASCII bytes in " + name, edit: set("mcp-évál")}})
		}
		var sends []hdrSend
		for _, s := range steps {
			c := s.hdrCase
			edit := c.edit
			c.edit = func(h http.Header) {
				httpDelHeader(h, name) // the client's own value goes first
				edit(h)
			}
			sends = append(sends, hdrSend{"tools/call", map[string]any{"name": pt.tool.Name, "arguments": s.args}, c})
		}
		if err := hdrRun(p, sends); err != nil {
			return err
		}
		if pt.param.Type == "string" {
			return hdrControlChar(p, pt, name)
		}
		return nil
	},
}

// hdrControlChar sends a control character in the Mcp-Param header through
// a hand-written request (net/http refuses to): any 4xx, or -32020, is the
// rejection the spec demands.
func hdrControlChar(p *check.Pass, pt *hdrParamTool, name string) error {
	args := hdrCloneArgs(pt.args)
	value := "mcp\x01eval"
	hdrSetPath(args, pt.param.Path, value)
	_, out, err := p.Env.Client.Build("tools/call", map[string]any{"name": pt.tool.Name, "arguments": args})
	if err != nil {
		return err
	}
	h := httpRawHeader(out)
	httpDelHeader(h, name)
	for k, vs := range httpConfiguredHeader(p.Env.HTTP) {
		if h.Values(k) == nil {
			h[k] = vs
		}
	}
	var kv [][2]string
	for k, vs := range h {
		for _, v := range vs {
			kv = append(kv, [2]string{k, v})
		}
	}
	kv = append(kv, [2]string{name, value})
	status, body, err := httpRawTCPPost(p.Ctx, p.Env.HTTP.URL(), kv, out.Body)
	ev := &check.Evidence{Transport: "http", Request: jsonrpc.Clip(string(out.Body), 400), Headers: map[string]string{name: "mcp\\x01eval"}, Status: status, Response: jsonrpc.Clip(string(body), 600)}
	if err != nil {
		p.Warnf(ev, "could not send a control character in %s by hand: %v", name, err)
		return nil
	}
	if status >= 400 && status < 500 {
		return nil
	}
	var m jsonrpc.Message
	if json.Unmarshal(body, &m) == nil && m.Error != nil && m.Error.Code == jsonrpc.CodeHeaderMismatch {
		return nil
	}
	p.Failf(ev, "%s with a control character (0x01) got HTTP %d, want it rejected (HTTP 400 with error -32020)", name, status)
	return nil
}

var HDR6 = &check.Check{
	ID: "HDR-6", Level: check.Info, Transports: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Server Validation; schema.ts HeaderMismatchError",
	Doc:  "a -32020 error has a free-text message naming the header; the spec's example has no data, which the schema allows",
	Fix:  "send -32020 with a message naming the header",
	Run: func(p *check.Pass) error {
		rc, err := httpSendMethodMismatch(p) // HDR-3's case, as this repetition sent it
		if err != nil {
			return err
		}
		e := rc.Error()
		if e == nil || e.Code != jsonrpc.CodeHeaderMismatch {
			p.Skipf("a header mismatch was not answered with -32020 (HDR-3 reports it)")
			return nil
		}
		if len(e.Data) > 0 && string(e.Data) != "null" {
			// HeaderMismatchError constrains only the code: data is an
			// Error's optional member, so carrying it is no finding.
			p.Passf(rc.Ev(), "-32020 message: %q, with data %s (the schema allows it)", jsonrpc.Clip(e.Message, 200), jsonrpc.Clip(string(e.Data), 120))
			return nil
		}
		p.Passf(rc.Ev(), "-32020 message: %q", jsonrpc.Clip(e.Message, 200))
		return nil
	},
}

var hdrFamily = family{name: "HDR", title: "HTTP headers", checks: []*check.Check{HDR1, HDR2, HDR3, HDR4, HDR5, HDR6}}
