package conformance

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// META: per-request _meta (basic/index.mdx §_meta, checklist §1.2).

var metaFamily = family{name: "META", title: "per-request _meta", checks: []*check.Check{META1, META2, META3, META4}}

// metaMethods are the requests the META, STATE and VER checks vary:
// server/discover and a list the server answers (pageVehicle: the first,
// or a short one when the first is long), since those rules judge the
// envelope, not the page.
func metaMethods(f *check.Facts) []string {
	out := []string{"server/discover"}
	if l := pageVehicle(f); l != "" {
		out = append(out, l)
	}
	return out
}

// metaServed is metaMethods without server/discover when the server gave
// no result to it (DISC-1's finding): a check whose rule is that a
// request is served normally would only find that again. Empty when no
// list is served either.
func metaServed(f *check.Facts) []string {
	ms := metaMethods(f)
	if f.Discover == nil {
		ms = slices.DeleteFunc(ms, func(m string) bool { return m == "server/discover" })
	}
	return ms
}

// metaNoneServed is the skip of a check that finds no request metaServed
// lets it send.
const metaNoneServed = "the server gave no server/discover result (DISC-1) and serves no list to send the requests on instead"

// metaVariant is one way to break or extend a request's _meta.
type metaVariant struct {
	what string
	edit func(w *wire)
	// dropsVersion: the body no longer names a protocol version while the
	// header still does, so on HTTP -32020 fits as well as -32602 (AMB-11).
	dropsVersion bool
	// noMeta: nothing in the request says which era it is from. On stdio
	// (no header to say it either) a dual-era server may serve it as a
	// legacy request: the spec does not say (docs/real-servers.md §Spec
	// ambiguities).
	noMeta bool
}

// metaNoMeta is the metaMissing variant without params._meta.
const metaNoMeta = 2

var metaMissing = []metaVariant{
	{"without _meta io.modelcontextprotocol/protocolVersion", func(w *wire) { delete(w.meta(), mcpclient.MetaProtocolVersion) }, true, false},
	{"without _meta io.modelcontextprotocol/clientCapabilities", func(w *wire) { delete(w.meta(), mcpclient.MetaClientCapabilities) }, false, false},
	{"without params._meta", func(w *wire) { delete(w.params(), "_meta") }, true, true},
}

// metaMissingKey is the Memo key of one repetition's request of method
// with metaMissing[variant] on the shared client.
type metaMissingKey struct {
	run     int
	method  string
	variant int
}

type metaReply struct {
	r   *reply
	err error
}

// metaSendMissing sends method with metaMissing[variant] on c. On the
// shared client (HTTP: on stdio META-1 has a process of its own) it is sent
// once per repetition: META-1 and HTTP-7 judge the same answer (its code,
// its status). The reply is shared: read it only.
func metaSendMissing(p *check.Pass, c *mcpclient.Client, method string, variant int) (*reply, error) {
	send := func() (*reply, error) {
		w, err := newWire(c, method, nil)
		if err != nil {
			return nil, err
		}
		metaMissing[variant].edit(w)
		return sendWire(p.Ctx, c.Transport(), w)
	}
	if c != p.Env.Client || p.Env.Memo == nil {
		return send()
	}
	v, ok := p.Env.Memo.Do(metaMissingKey{p.Run, method, variant}, func() any {
		r, err := send()
		return metaReply{r, err}
	}).(metaReply)
	if !ok {
		return nil, fmt.Errorf("%s %s: the shared request failed (a harness bug: see the check that sent it)", method, metaMissing[variant].what)
	}
	return v.r, v.err
}

var META1 = &check.Check{
	ID: "META-1", Level: check.Must, Transports: check.Both,
	Waits: true, // a process of its own (stdio)
	// STATE-1 hands its process on (handOn).
	Follows: handFollows("META-1"),
	Spec:    "basic/index.mdx §_meta (Per-request protocol fields); schema.json RequestMetaObject.required",
	Doc:     "a request missing _meta protocolVersion, clientCapabilities or _meta itself gets -32602 (HTTP 400)",
	Fix:     "reject requests without _meta protocolVersion and clientCapabilities with -32602 (and HTTP 400)",
	Run: func(p *check.Pass) error {
		// Some dual-era stdio servers take a request without _meta for a
		// legacy one and switch the whole process to the legacy era, so on
		// stdio the malformed requests go to a process of their own:
		// STATE-1's after it (takeHandedOn), or a new one. STATE-1
		// sends complete requests and two of META-1's own variants, in the
		// same order, so the first request that could switch the process
		// (server/discover without protocolVersion) is the same one, right
		// after a complete server/discover, whichever check sent it (STATE-1
		// begins with server/discover on stdio). That
		// holds for a server that decides a process's era on its first
		// request without the version, of any method (the TS SDK v2, the
		// reference server's dual-era mode); one that waited for a method
		// other than server/discover would take STATE-1's complete
		// tools/list as its opening here, and META-1's on a new process.
		c := p.Env.Client
		if p.Env.Transport == "stdio" {
			fc, closeFresh, handed, err := takeHandedOn(p)
			if err != nil {
				return err
			}
			defer handOn(p, fc, closeFresh)
			if !handed {
				// A complete server/discover, as STATE-1's first: the
				// opening the comment above relies on still holds.
				if err := answersAgain(p, fc); err != nil {
					return err
				}
			}
			c = fc
		}
		var dualEra bool
		if p.Env.Transport == "stdio" {
			side, err := legacySideOf(p)
			if err != nil {
				return err
			}
			dualEra = side.dualEra
		}
		var ok passTally
		methods := metaMethods(p.Env.Facts)
		err := p.Cases("", len(methods)*len(metaMissing), func(k int) error {
			method, i := methods[k/len(metaMissing)], k%len(metaMissing)
			v := metaMissing[i]
			r, err := metaSendMissing(p, c, method, i)
			if err != nil {
				return err
			}
			ev := r.evidence()
			code := r.code()
			okCode := code == jsonrpc.CodeInvalidParams || (r.transport == "http" && v.dropsVersion && code == jsonrpc.CodeHeaderMismatch)
			switch {
			case !okCode && v.noMeta && dualEra && r.fields != nil:
				p.Warnf(ev, "%s %s got %s, want error -32602 (Invalid params); the server is dual-era and may have served it as a legacy request: the spec does not say what a dual-era server does with a request that carries neither _meta nor initialize (docs/real-servers.md §Spec ambiguities)", method, v.what, r.describe())
			case !okCode:
				want := "error -32602 (Invalid params)"
				if r.transport == "http" && v.dropsVersion {
					want = "error -32602 (or -32020, AMB-11)"
				}
				p.Failf(r.evidenceAt(replyAt(r)), "%s %s got %s, want %s", method, v.what, r.describe(), want)
			case r.transport == "http" && r.status != 400:
				p.Failf(r.evidenceAt(atStatus), "%s %s got error %d with HTTP %d, want HTTP 400", method, v.what, code, r.status)
			default:
				ok.add(ev)
			}
			return nil
		})
		if err != nil {
			return err
		}
		ok.report(p, "%d requests missing protocolVersion, clientCapabilities or _meta were rejected as invalid", ok.n)
		return nil
	},
}

// metaTraceContext is the metaAccepted variant with W3C trace context.
const metaTraceContext = 2

var metaAccepted = []metaVariant{
	{"without _meta io.modelcontextprotocol/clientInfo", func(w *wire) { delete(w.meta(), mcpclient.MetaClientInfo) }, false, false},
	{"with logLevel and progressToken in _meta", func(w *wire) {
		w.meta()[mcpclient.MetaLogLevel] = "error"
		w.meta()["progressToken"] = "mcp-eval-progress"
	}, false, false},
	metaTraceContext: {"with traceparent, tracestate and baggage in _meta", func(w *wire) {
		// OTEL-1's values: the two checks judge the same request.
		m := w.meta()
		m["traceparent"] = otelSentTraceparent
		m["tracestate"] = otelSentTracestate
		m["baggage"] = otelSentBaggage
	}, false, false},
	{"with an unknown vendor key in _meta", func(w *wire) { w.meta()["com.example.mcp-eval/probe"] = map[string]any{"n": 1} }, false, false},
}

// metaAcceptedKey is the Memo key of one repetition's request of method
// with metaAccepted[variant].
type metaAcceptedKey struct {
	run     int
	method  string
	variant int
}

// metaSendAccepted sends method with metaAccepted[variant] on the shared
// client, once per repetition: META-2 and OTEL-1 judge the same answer to
// the trace-context variant. The reply is shared: read it only.
func metaSendAccepted(p *check.Pass, method string, variant int) (*reply, error) {
	send := func() (*reply, error) {
		w, err := newWire(p.Env.Client, method, nil)
		if err != nil {
			return nil, err
		}
		metaAccepted[variant].edit(w)
		return sendWire(p.Ctx, p.Env.Client.Transport(), w)
	}
	if p.Env.Memo == nil {
		return send()
	}
	v, ok := p.Env.Memo.Do(metaAcceptedKey{p.Run, method, variant}, func() any {
		r, err := send()
		return metaReply{r, err}
	}).(metaReply)
	if !ok {
		return nil, fmt.Errorf("%s %s: the shared request failed (a harness bug: see the check that sent it)", method, metaAccepted[variant].what)
	}
	return v.r, v.err
}

var META2 = &check.Check{
	ID: "META-2", Level: check.Must, Transports: check.Both,
	Spec: "basic/index.mdx §_meta; schema.ts RequestMetaObject",
	Doc:  "a request without clientInfo, or with logLevel, progressToken, OTel keys or unknown vendor _meta keys, is served",
	Fix:  "treat clientInfo as optional and _meta as an open map; ignore keys you do not know",
	Run: func(p *check.Pass) error {
		var ok passTally
		methods := metaServed(p.Env.Facts)
		if len(methods) == 0 {
			p.Skipf(metaNoneServed)
			return nil
		}
		err := p.Cases("", len(methods)*len(metaAccepted), func(k int) error {
			method, i := methods[k/len(metaAccepted)], k%len(metaAccepted)
			r, err := metaSendAccepted(p, method, i)
			if err != nil {
				return err
			}
			if r.result() == nil {
				p.Failf(r.evidenceAt(replyAt(r)), "%s %s got %s, want a result", method, metaAccepted[i].what, r.describe())
				return nil
			}
			ok.add(r.evidence())
			return nil
		})
		if err != nil {
			return err
		}
		ok.report(p, "%d requests without clientInfo or with optional, OTel and vendor _meta keys were served", ok.n)
		return nil
	},
}

var META3 = &check.Check{
	ID: "META-3", Level: check.Must, Transports: check.Both,
	Spec: "schema.ts RequestMetaObject (\"Servers MUST NOT infer capabilities from prior requests\"); basic/index.mdx §Statelessness",
	Doc:  "capabilities declared by an earlier request are not used for a later one that declares none",
	Fix:  "read client capabilities only from the request being handled",
	Run: func(p *check.Pass) error {
		// One connection: the shared client (a keep-alive HTTP connection,
		// the shared stdio process), A then B.
		return stateEach(p, func(j *mrtrJudge, target *stateTarget) (mrtrStatus, string, *check.Evidence, error) {
			if first, note, err := stateAsk(p, target); first == nil {
				return mrtrNA, note, nil, err
			}
			b, err := stateSend(p.Ctx, p.Env.Client, target, stateNoCaps)
			if err != nil {
				return mrtrNA, "", nil, err
			}
			ev := check.FromResponse(b)
			if rt, _ := b.ResultType(); rt == mcpclient.ResultInputRequired {
				var needs []string
				at := ""
				for _, in := range stateInputRequests(b.Result) {
					if c := stateCapabilityFor(in.method); c != "" && !slices.Contains(needs, in.method) {
						needs = append(needs, in.method)
						if at == "" {
							at = check.Pointer("result", "inputRequests", in.key, "method")
						}
					}
				}
				if len(needs) > 0 {
					j.Failf(check.FromResponseAt(b, at), "%s declared no client capabilities but got input requests %q, right after the same request declared them: capabilities were taken from an earlier request (or ignored)", target.Label, needs)
					return mrtrBad, "", nil, nil
				}
			}
			return mrtrOK, fmt.Sprintf("%s without capabilities, right after the same request with them, got %s", target.Label, stateLabel(b)), ev, nil
		})
	},
}

// meta4Reply is the item sent without client capabilities: on HTTP the
// repetition's shared request (stateNoCapsShared), as the server wrote
// it; on stdio, which keeps no bytes of a shared answer, or when the
// shared request got no JSON-RPC answer, a request of its own.
func meta4Reply(j *mrtrJudge, target *stateTarget) (*reply, error) {
	p := j.p
	if p.Env.Transport == "http" {
		resp, err := stateNoCapsShared(p, j.runCtx, target.Method, target.Params)
		if p.Ctx.Err() != nil {
			return nil, p.Ctx.Err()
		}
		if r := replyOfHTTP(resp); err == nil && r != nil {
			return r, nil
		}
	}
	w, err := newWire(p.Env.Client, target.Method, target.Params, mcpclient.WithCapabilities(stateNoCaps))
	if err != nil {
		return nil, err
	}
	return sendWire(p.Ctx, p.Env.Client.Transport(), w)
}

var META4 = &check.Check{
	ID: "META-4", Level: check.Must, Transports: check.Both, Seed: 6,
	Spec: "basic/index.mdx §_meta; schema.ts MissingRequiredClientCapabilityError",
	Doc:  "a request that needs an undeclared client capability gets -32021 with data.requiredCapabilities (HTTP 400)",
	Fix:  "answer -32021 with data.requiredCapabilities naming what is missing (HTTP 400) instead of asking for input the client cannot give",
	Run: func(p *check.Pass) error {
		return stateEach(p, func(j *mrtrJudge, target *stateTarget) (mrtrStatus, string, *check.Evidence, error) {
			r, err := meta4Reply(j, target)
			if err != nil {
				return mrtrNA, "", nil, err
			}
			ev := r.evidence()
			if e, ok := r.rpcError(); ok {
				if e.Code != jsonrpc.CodeMissingRequiredClientCapability {
					j.Failf(r.evidenceAt("/error/code"), "%s without client capabilities (it asks for input when they are declared) got %s, want -32021 MissingRequiredClientCapability or a result", target.Label, r.describe())
					return mrtrBad, "", nil, nil
				}
				st := mrtrOK
				for _, pb := range errShape32021(e.Data) {
					j.Failf(r.evidenceFor(pb), "%s: %s", target.Label, pb.msg)
					st = mrtrBad
				}
				if r.transport == "http" && r.status != 400 {
					j.Failf(r.evidenceAt(atStatus), "%s: -32021 came with HTTP %d, want 400", target.Label, r.status)
					st = mrtrBad
				}
				return st, fmt.Sprintf("%s without client capabilities got -32021 naming what is missing", target.Label), ev, nil
			}
			var res struct {
				ResultType string `json:"resultType"`
			}
			if raw := r.result(); raw == nil || json.Unmarshal(raw, &res) != nil {
				j.Failf(r.evidenceAt(replyAt(r)), "%s without client capabilities got %s", target.Label, r.describe())
				return mrtrBad, "", nil, nil
			}
			if res.ResultType == mcpclient.ResultInputRequired {
				for _, in := range stateInputRequests(r.result()) {
					if c := stateCapabilityFor(in.method); c != "" {
						j.Failf(r.evidenceAt(check.Pointer("result", "inputRequests", in.key, "method")), "%s declared no client capabilities but got an %s input request; a server that needs the %q capability answers -32021", target.Label, in.method, c)
						return mrtrBad, "", nil, nil
					}
				}
			}
			return mrtrOK, fmt.Sprintf("%s without client capabilities was served without them (%s)", target.Label, fmt.Sprintf("resultType %q", res.ResultType)), ev, nil
		})
	},
}
