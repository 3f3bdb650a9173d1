package conformance

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// ERR: error codes (basic/index.mdx §Error Codes, checklist §1.3).

var errFamily = family{name: "ERR", title: "error codes", checks: []*check.Check{ERR1, ERR2, ERR3, ERR4}}

// errSample is one request sent to make the server fail, and its answer.
type errSample struct {
	what    string // e.g. "an unknown tool"
	method  string
	r       *reply
	version string // the protocol version the request named ("" when none)
	// missingMeta: the request lacked a required _meta field (META-1, HTTP 400).
	missingMeta bool
	// id is the request id sent.
	id json.RawMessage
	// rpc2: a request RPC-2 judges (one that should fail, the method's
	// capability declared).
	rpc2 bool
}

// errUnknownMethod is the method no server serves.
const errUnknownMethod = "mcp-eval/no-such-method"

// The sweep's requests that HTTP-6 and HTTP-7 judge too (their status).
const (
	errWhatMethod   = "an unknown method"
	errWhatTool     = "an unknown tool"
	errWhatResource = "a resource that does not exist"
)

// errAnswer is the repetition's sweep answer to the request what (one of
// errWhat*); nil with a nil error when the sweep did not send it.
func errAnswer(p *check.Pass, what string) (*reply, error) {
	samples, err := errSamples(p)
	for _, s := range samples {
		if s.what == what {
			return s.r, nil
		}
	}
	return nil, err
}

// errSweepKey names one repetition's errSweep in Env.Memo.
type errSweepKey struct{ run int }

type errSweep struct {
	samples []errSample
	err     error
}

// errSamples is the repetition's sweep of errors (errProvoke), sent once
// and judged by ERR-1..4, RPC-2 (the requests that should fail) and RPC-1
// (the envelope of the unknown method's error).
func errSamples(p *check.Pass) ([]errSample, error) {
	if p.Env.Memo == nil {
		return errProvoke(p)
	}
	v, _ := p.Env.Memo.Do(errSweepKey{p.Run}, func() any {
		s, err := errProvoke(p)
		return errSweep{s, err}
	}).(errSweep)
	return v.samples, v.err
}

// errProvoke provokes the errors any server can be made to return: an
// unknown method, tool, resource and prompt, a bogus cursor, an unsupported
// version, a missing _meta field, an unknown log level, and, when a request
// asks for input, the same request without client capabilities. The
// unknown method goes under a string id and the unknown tool under an
// integer one, for RPC-2 to judge both kinds echoed (on stdio the resource
// and the prompt too; on HTTP they are the repetition's observations,
// under the client's own ids).
func errProvoke(p *check.Pass) ([]errSample, error) {
	f := p.Env.Facts
	c := p.Env.Client
	version := c.Info().ProtocolVersion
	type probe struct {
		what, method string
		params       map[string]any
		opts         []mcpclient.CallOption
		id           json.RawMessage
		rpc2         bool
		// shared is the same request as other checks of the repetition
		// send it (VER's, META's, MRTR's): its answer is judged here too,
		// not asked again. A nil reply with a nil error means no shared
		// answer can be judged here (stdio keeps no bytes of one): the
		// sweep sends the request itself.
		shared func() (*reply, error)
	}
	probes := []probe{{what: errWhatMethod, method: errUnknownMethod, id: wireStringID(false), rpc2: true}}
	if f.Has("tools") || f.ToolsErr == nil {
		probes = append(probes, probe{what: errWhatTool, method: "tools/call", params: map[string]any{"name": callNoSuchTool, "arguments": map[string]any{}}, id: wireNumberID(), rpc2: true})
	}
	if f.Has("resources") || f.ResourcesErr == nil {
		pr := probe{what: errWhatResource, method: "resources/read", params: map[string]any{"uri": rsrcMissingURI(f)}, id: wireStringID(false), rpc2: f.Has("resources")}
		if p.Env.Transport == "http" {
			// The repetition's read of a missing resource, which RSRC-3
			// judges too (HTTP keeps the bytes of a shared answer; the
			// string id is the unknown method's).
			pr.shared = func() (*reply, error) { return observedReply(p, pr.method, pr.params) }
		}
		probes = append(probes, pr)
	}
	if f.Has("prompts") || f.PromptsErr == nil {
		pr := probe{what: "an unknown prompt", method: "prompts/get", params: map[string]any{"name": promptNoSuchPrompt}, id: wireNumberID(), rpc2: f.Has("prompts")}
		if p.Env.Transport == "http" {
			// The get PROMPT-2 judges too.
			pr.shared = func() (*reply, error) { return observedReply(p, pr.method, pr.params) }
		}
		probes = append(probes, pr)
	}
	// The first list served even when it is long (metaMethods avoids a
	// long one): a server may check cursors only on a list long enough
	// to page, and an error answer costs nothing whatever its length.
	if lists := pageLists(f); len(lists) > 0 {
		probes = append(probes, probe{what: "a bogus cursor", method: lists[0].method, params: map[string]any{"cursor": pageBogusCursor}})
	}
	probes = append(probes,
		probe{what: "an unsupported protocol version", method: "server/discover", shared: func() (*reply, error) { return verRejected(p, "server/discover") }},
		probe{what: "an unknown logLevel", method: "server/discover", opts: []mcpclient.CallOption{mcpclient.WithLogLevel("verbose")}},
	)
	if p.Env.Transport == "http" {
		// The HTTP 400 of a missing _meta field (ERR-4). Not on stdio, where
		// it has no status to judge and a dual-era server may take it for a
		// legacy request and switch the shared process's era (META-1 sends
		// it to a process of its own).
		methods := metaMethods(f)
		last := methods[len(methods)-1]
		probes = append(probes, probe{what: "no clientCapabilities in _meta", method: last, shared: func() (*reply, error) { return metaSendMissing(p, c, last, 1) }})
	}
	if target, _, err := stateFindTarget(p); err == nil && target != nil {
		pr := probe{what: target.Label + " without client capabilities", method: target.Method, params: target.Params, opts: []mcpclient.CallOption{mcpclient.WithCapabilities(stateNoCaps)}}
		if p.Env.Transport == "http" {
			// The repetition's request that MRTR-4 and META-4 judge too,
			// as the server wrote it.
			pr.shared = func() (*reply, error) {
				resp, err := stateNoCapsShared(p, p.Ctx, target.Method, target.Params)
				if r := replyOfHTTP(resp); err == nil && r != nil {
					return r, nil
				}
				return nil, nil
			}
		}
		probes = append(probes, pr)
	}
	var out []errSample
	for _, pr := range probes {
		if pr.shared != nil {
			r, err := pr.shared()
			if err != nil {
				return out, &errProbeFailed{method: pr.method, rpc2: pr.rpc2, err: err}
			}
			if r != nil {
				s := errSampleOf(pr.what, pr.method, version, r)
				s.rpc2 = pr.rpc2
				out = append(out, s)
				continue
			}
		}
		w, err := newWire(c, pr.method, pr.params, pr.opts...)
		if err != nil {
			return nil, err
		}
		s := errSample{what: pr.what, method: pr.method, version: version, rpc2: pr.rpc2}
		if pr.id != nil {
			w.setID(pr.id)
		}
		s.id = w.id()
		if v, ok := w.meta()[mcpclient.MetaProtocolVersion].(string); ok {
			s.version = v
		}
		s.missingMeta = w.meta()[mcpclient.MetaClientCapabilities] == nil
		if s.r, err = sendWire(p.Ctx, c.Transport(), w); err != nil {
			// What was answered before is still judged by the checks that
			// need only that (RPC-1, RPC-2).
			return out, &errProbeFailed{method: pr.method, rpc2: pr.rpc2, err: err}
		}
		out = append(out, s)
	}
	return out, nil
}

// errSampleOf is the sample of a request another check sent as it was
// built: its id, version and _meta are read back from the bytes sent.
func errSampleOf(what, method, version string, r *reply) errSample {
	s := errSample{what: what, method: method, r: r, version: version}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(r.sent, &m)
	s.id = m.ID
	var v string
	if json.Unmarshal(m.Params.Meta[mcpclient.MetaProtocolVersion], &v) == nil {
		s.version = v
	}
	_, hasCaps := m.Params.Meta[mcpclient.MetaClientCapabilities]
	s.missingMeta = !hasCaps
	return s
}

// observedReply is the repetition's answer to a plain request (Pass.Do)
// as the server wrote it, on HTTP.
func observedReply(p *check.Pass, method string, params any) (*reply, error) {
	resp, err := p.Do(method, params)
	if r := replyOfHTTP(resp); r != nil {
		return r, nil
	}
	if err == nil {
		err = fmt.Errorf("%s: no HTTP answer", method)
	}
	return nil, err
}

// errProbeFailed is a request of the error sweep that got no answer (the
// server is gone, or the run's time is up); the samples before it were
// answered.
type errProbeFailed struct {
	method string
	rpc2   bool
	err    error
}

func (e *errProbeFailed) Error() string { return e.err.Error() }
func (e *errProbeFailed) Unwrap() error { return e.err }

// errNeeds reports whether err, from errSamples, stops a check that
// judges only the samples pick selects: the failed request is one of
// them, or the sweep failed before sending any.
func errNeeds(err error, pick func(method string, rpc2 bool) bool) bool {
	var pf *errProbeFailed
	if !errors.As(err, &pf) {
		return err != nil
	}
	return pick(pf.method, pf.rpc2)
}

// errResult is a sample answered with an error that has an integer code.
type errResult struct {
	errSample
	e *jsonrpc.Error
}

// errErrors keeps the samples answered with an error that has an integer
// code (RPC-2 judges the others).
func errErrors(samples []errSample) []errResult {
	var out []errResult
	for _, s := range samples {
		if e, ok := s.r.rpcError(); ok {
			out = append(out, errResult{s, e})
		}
	}
	return out
}

var ERR1 = &check.Check{
	ID: "ERR-1", Level: check.Must, Transports: check.Both, Seed: 6,
	Spec:    "basic/index.mdx §Error Codes",
	Doc:     "no code in -32020..-32099 other than -32020, -32021 and -32022, each only with its defined meaning",
	Fix:     "use -32020 only for header problems (HTTP), -32021 for a missing client capability, -32022 for an unsupported version, and no other code in -32020..-32099",
	Monitor: err1Monitor,
	Run: func(p *check.Pass) error {
		samples, err := errSamples(p)
		if err != nil {
			return err
		}
		for _, s := range errErrors(samples) {
			ev := s.r.evidenceAt("/error/code")
			code := s.e.Code
			switch msg := err1Code(code, s.r.transport); {
			case msg != "":
				p.Failf(ev, "%s (%s) got %s", s.what, s.method, msg)
			case code == jsonrpc.CodeUnsupportedProtocolVersion && s.version != verUnsupported:
				p.Failf(ev, "%s (%s) got -32022 UnsupportedProtocolVersion although the request named %s, a version the server supports", s.what, s.method, s.version)
			case code == jsonrpc.CodeHeaderMismatch:
				p.Failf(ev, "%s (%s) got -32020 HeaderMismatch although its headers match the body", s.what, s.method)
			}
		}
		return nil
	},
}

var ERR2 = &check.Check{
	ID: "ERR-2", Level: check.Must, Transports: check.Both,
	Spec:    "basic/index.mdx §Error Codes",
	Doc:     "no -32002 (resource not found, 2025-11-25) and no -32042 (URL elicitation required, 2025-11-25)",
	Fix:     "answer a missing resource with -32602 (data.uri) and ask for URL elicitation through input_required",
	Monitor: err2Monitor,
	Run: func(p *check.Pass) error {
		samples, err := errSamples(p)
		if err != nil {
			return err
		}
		for _, s := range errErrors(samples) {
			if msg := err2Code(s.e.Code, s.r.transport); msg != "" {
				p.Failf(s.r.evidenceAt("/error/code"), "%s (%s) got %s", s.what, s.method, msg)
			}
		}
		return nil
	},
}

// errPreGA names the pre-release draft numbers of the new codes (AMB-19).
var errPreGA = map[int64]string{-32001: "HeaderMismatch (-32020)", -32003: "MissingRequiredClientCapability (-32021)", -32004: "UnsupportedProtocolVersion (-32022)"}

var ERR3 = &check.Check{
	ID: "ERR-3", Level: check.Should, Transports: check.Both,
	Spec:    "basic/index.mdx §Error Codes; changelog.mdx (Minor 12)",
	Doc:     "no codes in -32000..-32019 (flagging -32001/-32003/-32004, the pre-GA draft numbers)",
	Fix:     "use the standard JSON-RPC codes or the MCP codes -32020/-32021/-32022 instead of -32000..-32019",
	Monitor: err3Monitor,
	Run: func(p *check.Pass) error {
		samples, err := errSamples(p)
		if err != nil {
			return err
		}
		for _, s := range errErrors(samples) {
			if msg := err3Code(s.e.Code, s.r.transport); msg != "" {
				p.Failf(s.r.evidenceAt("/error/code"), "%s (%s) got %s", s.what, s.method, msg)
			}
		}
		return nil
	},
}

var ERR4 = &check.Check{
	ID: "ERR-4", Level: check.Must, Transports: check.Both, Seed: 6,
	Spec: "basic/index.mdx §Error Codes; schema.ts (error types); basic/transports/streamable-http.mdx §Request Metadata",
	Doc:  "errors have their defined shapes: -32022 data.supported/requested, -32021 data.requiredCapabilities, and HTTP 400/404 where defined",
	Fix:  "send the data each MCP error defines and the HTTP status the transport defines for it",
	Run: func(p *check.Pass) error {
		samples, err := errSamples(p)
		if err != nil {
			return err
		}
		http := p.Env.Transport == "http"
		for _, s := range errErrors(samples) {
			var problems []problem
			switch s.e.Code {
			case jsonrpc.CodeUnsupportedProtocolVersion:
				requested := ""
				if s.version == verUnsupported {
					requested = verUnsupported
				}
				problems = errShape32022(s.e.Data, requested)
				if http && s.r.status != 400 {
					problems = append(problems, problem{at: atStatus, msg: fmt.Sprintf("-32022 came with HTTP %d, want 400", s.r.status)})
				}
			case jsonrpc.CodeMissingRequiredClientCapability:
				problems = errShape32021(s.e.Data)
				if http && s.r.status != 400 {
					problems = append(problems, problem{at: atStatus, msg: fmt.Sprintf("-32021 came with HTTP %d, want 400", s.r.status)})
				}
			case jsonrpc.CodeHeaderMismatch:
				if http && s.r.status != 400 {
					problems = append(problems, problem{at: atStatus, msg: fmt.Sprintf("-32020 came with HTTP %d, want 400", s.r.status)})
				}
			case jsonrpc.CodeMethodNotFound:
				if http && s.r.status != 404 {
					problems = append(problems, problem{at: atStatus, msg: fmt.Sprintf("-32601 came with HTTP %d, want 404", s.r.status)})
				}
			case jsonrpc.CodeInvalidParams:
				if http && s.missingMeta && s.r.status != 400 {
					problems = append(problems, problem{at: atStatus, msg: fmt.Sprintf("-32602 for a missing _meta field came with HTTP %d, want 400", s.r.status)})
				}
			}
			for _, pb := range problems {
				p.Failf(s.r.evidenceFor(pb), "%s (%s): %s", s.what, s.method, pb.msg)
			}
		}
		return nil
	},
}

// errShape32022 lists what is wrong with -32022 data; requested, when set,
// is the version the request named. The problems point into the error
// response.
func errShape32022(data json.RawMessage, requested string) []problem {
	var d map[string]json.RawMessage
	if json.Unmarshal(data, &d) != nil || d == nil {
		return []problem{{at: "/error/data", absent: len(data) == 0, msg: fmt.Sprintf("-32022 data is %s, want {supported: string[], requested: string}", shown(data))}}
	}
	var out []problem
	var supported []string
	if raw, ok := d["supported"]; !ok {
		out = append(out, problem{at: "/error/data/supported", msg: "-32022 data.supported is missing", absent: true})
	} else if json.Unmarshal(raw, &supported) != nil || supported == nil {
		out = append(out, problem{at: "/error/data/supported", msg: fmt.Sprintf("-32022 data.supported is %s, want an array of strings", shown(raw))})
	}
	var req string
	if raw, ok := d["requested"]; !ok {
		out = append(out, problem{at: "/error/data/requested", msg: "-32022 data.requested is missing", absent: true})
	} else if json.Unmarshal(raw, &req) != nil {
		out = append(out, problem{at: "/error/data/requested", msg: fmt.Sprintf("-32022 data.requested is %s, want a string", shown(raw))})
	} else if requested != "" && req != requested {
		out = append(out, problem{at: "/error/data/requested", msg: fmt.Sprintf("-32022 data.requested is %q, want the version sent, %q", jsonrpc.Clip(req, 40), requested)})
	}
	return out
}

// errShape32021 lists what is wrong with -32021 data, pointing into the
// error response.
func errShape32021(data json.RawMessage) []problem {
	var d map[string]json.RawMessage
	if json.Unmarshal(data, &d) != nil || d == nil {
		return []problem{{at: "/error/data", absent: len(data) == 0, msg: fmt.Sprintf("-32021 data is %s, want {requiredCapabilities: {...}}", shown(data))}}
	}
	raw, ok := d["requiredCapabilities"]
	var caps map[string]json.RawMessage
	switch {
	case !ok:
		return []problem{{at: "/error/data/requiredCapabilities", msg: "-32021 data.requiredCapabilities is missing", absent: true}}
	case json.Unmarshal(raw, &caps) != nil || caps == nil:
		return []problem{{at: "/error/data/requiredCapabilities", msg: fmt.Sprintf("-32021 data.requiredCapabilities is %s, want a ClientCapabilities object", shown(raw))}}
	}
	return nil
}

// errCodeMonitor watches the code of every error a 2026-07-28 request of
// the run got, whoever sent it: problem names what is wrong with code on
// the transport ("" when nothing is). What depends on what was sent (a
// -32022 for a version the server supports, a -32020 for headers that
// match) stays with the checks' runs over the error sweep.
func errCodeMonitor(doc string, problem func(code int64, transport string) string) *check.Monitor {
	return &check.Monitor{
		Doc: doc,
		Watch: func(x *check.Exchange) (bool, string) {
			r := x.Response()
			if !x.Modern() || r == nil || r.Error == nil {
				return false, ""
			}
			if msg := problem(r.Error.Code, x.Transport); msg != "" {
				return true, fmt.Sprintf("%s got %s", x.Method, msg)
			}
			return true, ""
		},
		Locate: func(*check.Exchange) (string, bool) { return "/error/code", false },
	}
}

var (
	err1Monitor = errCodeMonitor("no error of the run has an undefined code in -32020..-32099, nor -32020 on stdio", err1Code)
	err2Monitor = errCodeMonitor("no error of the run is -32002 or -32042, the 2025-11-25 codes", err2Code)
	err3Monitor = errCodeMonitor("no error of the run has a code in -32000..-32019", err3Code)
)

// err1Code, err2Code and err3Code are what ERR-1, ERR-2 and ERR-3 find
// wrong with an error code whatever was sent, "" when nothing: the checks'
// runs over the error sweep and their monitors over the rest of the run
// judge with them.
func err1Code(code int64, transport string) string {
	switch {
	case code <= -32020 && code >= -32099 && code != jsonrpc.CodeHeaderMismatch && code != jsonrpc.CodeMissingRequiredClientCapability && code != jsonrpc.CodeUnsupportedProtocolVersion:
		return fmt.Sprintf("error %d, a code in the reserved range -32020..-32099 that MCP does not define", code)
	case code == jsonrpc.CodeHeaderMismatch && transport == "stdio":
		return "-32020 HeaderMismatch on stdio, which has no headers"
	}
	return ""
}

func err2Code(code int64, _ string) string {
	switch code {
	case -32002:
		return "-32002, the 2025-11-25 resource-not-found code; 2026-07-28 uses -32602 with data.uri"
	case -32042:
		return "-32042, the 2025-11-25 URL-elicitation code; 2026-07-28 asks through an input_required result"
	}
	return ""
}

func err3Code(code int64, _ string) string {
	if code > -32000 || code < -32019 {
		return ""
	}
	if now, ok := errPreGA[code]; ok {
		return fmt.Sprintf("error %d, the pre-GA draft number of %s", code, now)
	}
	return fmt.Sprintf("error %d, in -32000..-32019, which new implementations do not use", code)
}
