package conformance

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// OTEL: W3C trace context in _meta (basic/index.mdx §OpenTelemetry trace
// context, checklist §1.15).

// Valid W3C values OTEL-1 sends (the W3C specs' own examples).
const (
	otelSentTraceparent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
	otelSentTracestate  = "mcp-eval=t61rcWkgMzE,rojo=00f067aa0ba902b7"
	otelSentBaggage     = "userId=alice,serverNode=DF%2028,isProduction=false"
)

var OTEL1 = &check.Check{
	ID: "OTEL-1", Level: check.Must, Transports: check.Both,
	Spec: "basic/index.mdx §_meta, §OpenTelemetry trace context",
	Doc:  "requests carrying valid traceparent, tracestate and baggage in _meta are handled normally",
	Fix:  "accept the unprefixed OTel keys traceparent, tracestate and baggage in _meta",
	Run: func(p *check.Pass) error {
		// META-2 sends the same request (its trace-context variant) in
		// the same repetition: both judge the one answer.
		methods := []string{"server/discover"}
		if p.Env.Facts.Has("tools") {
			methods = append(methods, "tools/list")
		}
		// Each method once per run, the rule N times (Pass.Cases).
		return p.Cases("", len(methods), func(i int) error {
			m := methods[i]
			r, err := metaSendAccepted(p, m, metaTraceContext)
			if err != nil {
				return err
			}
			if _, isErr := r.rpcError(); isErr {
				p.Failf(r.evidenceAt("/error/code"), "%s with valid traceparent, tracestate and baggage got %s", m, r.describe())
			} else if r.result() == nil {
				p.Failf(r.evidenceAt(replyAt(r)), "%s with traceparent, tracestate and baggage got %s, want a result", m, r.describe())
			}
			return nil
		})
	},
}

// otelFound is one OTel-looking key the server emitted in a _meta object.
type otelFound struct {
	where, key, value string
	raw               json.RawMessage
	// resp and at locate the key's value in a result (nil for a
	// notification, which is no part of the response message).
	resp *mcpclient.Response
	at   []any
}

// ev is the evidence of a finding: located in the response when the key
// is in a result, else the value alone.
func (f otelFound) ev(shownValue string) *check.Evidence {
	if f.resp != nil {
		return check.FromResponseAt(f.resp, check.Pointer(f.at...))
	}
	return &check.Evidence{Response: jsonrpc.Clip(shownValue, 200)}
}

// otelEmittedKey is the Memo key of one repetition's otelEmitted.
type otelEmittedKey struct{ run int }

type otelEmittedResult struct {
	found []otelFound
	err   error
}

// otelEmitted asks the server for results and notifications and returns
// every key of every _meta object in them that is, or ends in, traceparent,
// tracestate or baggage. OTEL-2 and OTEL-3 judge the same search of a
// repetition (each a different rule on the keys found), so it is made once
// per repetition; the result is shared and must not be changed.
func otelEmitted(p *check.Pass) ([]otelFound, error) {
	if p.Env.Memo == nil {
		return otelSearch(p)
	}
	v, ok := p.Env.Memo.Do(otelEmittedKey{p.Run}, func() any {
		found, err := otelSearch(p)
		return otelEmittedResult{found, err}
	}).(otelEmittedResult)
	if !ok {
		return nil, errors.New("the trace-context search of this repetition failed (a harness bug: see the check that ran it)")
	}
	return v.found, v.err
}

func otelSearch(p *check.Pass) ([]otelFound, error) {
	var out []otelFound
	add := func(where string, raw json.RawMessage, resp *mcpclient.Response) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		n := len(out)
		otelWalk(where, v, false, []any{"result"}, &out)
		for i := n; resp != nil && i < len(out); i++ {
			out[i].resp = resp
		}
	}
	methods := []string{"server/discover"}
	for capName, m := range map[string]string{"tools": "tools/list", "resources": "resources/list", "prompts": "prompts/list"} {
		if p.Env.Facts.Has(capName) {
			methods = append(methods, m)
		}
	}
	sort.Strings(methods[1:])
	for _, m := range methods {
		resp, err := p.Do(m, nil)
		if resp == nil {
			return nil, err
		}
		if resp.Result != nil {
			add(m+" result", resp.Result, resp)
		}
	}
	if t := logTool(p); t != nil {
		resp, err := p.Env.Client.Do(p.Ctx, "tools/call", map[string]any{"name": t.Tool.Name, "arguments": t.Args}, mcpclient.WithProgressToken("mcp-eval-otel"))
		if resp == nil {
			return nil, err
		}
		if resp.Result != nil {
			add("tools/call result", resp.Result, resp)
		}
		if resp.Exchange != nil {
			for _, n := range resp.Exchange.Notifications {
				add(n.Method, n.Params, nil)
			}
		}
	}
	return out, nil
}

// otelWalk visits v; inMeta is true inside a _meta object's direct members.
func otelWalk(where string, v any, inMeta bool, at []any, out *[]otelFound) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if inMeta && otelKeyName(k) != "" {
				s, _ := x[k].(string)
				raw, _ := json.Marshal(x[k])
				*out = append(*out, otelFound{where: where, key: k, value: s, raw: raw, at: append(slices.Clone(at), k)})
			}
			otelWalk(where, x[k], k == "_meta", append(slices.Clone(at), k), out)
		}
	case []any:
		for i, e := range x {
			otelWalk(where, e, false, append(slices.Clone(at), i), out)
		}
	}
}

// otelKeyName is "traceparent", "tracestate" or "baggage" when k is that key
// or a prefixed variant of it, else "".
func otelKeyName(k string) string {
	base := k
	if i := strings.LastIndex(k, "/"); i >= 0 {
		base = k[i+1:]
	}
	switch base {
	case "traceparent", "tracestate", "baggage":
		return base
	}
	return ""
}

var OTEL2 = &check.Check{
	ID: "OTEL-2", Level: check.Must, Transports: check.Both,
	Spec: "basic/index.mdx §OpenTelemetry trace context",
	Doc:  "traceparent, tracestate and baggage the server emits in _meta hold valid W3C values",
	Fix:  "emit W3C-valid traceparent (non-zero ids), tracestate and baggage values, or none",
	Run: func(p *check.Pass) error {
		found, err := otelEmitted(p)
		if err != nil {
			return err
		}
		for _, f := range found {
			if strings.Contains(f.key, "/") {
				continue // a namespaced variant (OTEL-3), not the W3C key
			}
			if f.value == "" && string(f.raw) != `""` {
				p.Failf(f.ev(string(f.raw)), "%s: _meta.%s is %s, want a string", f.where, f.key, jsonrpc.Clip(string(f.raw), 60))
				continue
			}
			var problem string
			switch f.key {
			case "traceparent":
				problem = mcpclient.TraceparentProblem(f.value)
			case "tracestate":
				problem = mcpclient.TracestateProblem(f.value)
			case "baggage":
				problem = mcpclient.BaggageProblem(f.value)
			}
			if problem != "" {
				p.Failf(f.ev(f.value), "%s: _meta.%s %q %s", f.where, f.key, jsonrpc.Clip(f.value, 80), problem)
			}
		}
		return nil
	},
}

var OTEL3 = &check.Check{
	ID: "OTEL-3", Level: check.Info, Transports: check.Both,
	Spec: "SEP-414 §Rationale; basic/index.mdx §_meta",
	Doc:  "trace context is not sent under namespaced keys such as io.modelcontextprotocol/traceparent",
	Fix:  "use the unprefixed keys traceparent, tracestate and baggage",
	Run: func(p *check.Pass) error {
		found, err := otelEmitted(p)
		if err != nil {
			return err
		}
		for _, f := range found {
			if strings.Contains(f.key, "/") {
				p.Warnf(f.ev(string(f.raw)), "%s: _meta key %q is a namespaced variant of %s; OTel expects the unprefixed key", f.where, jsonrpc.Clip(f.key, 80), otelKeyName(f.key))
			}
		}
		return nil
	},
}

var otelFamily = family{name: "OTEL", title: "trace context", checks: []*check.Check{OTEL1, OTEL2, OTEL3}}
