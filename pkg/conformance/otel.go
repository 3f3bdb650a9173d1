package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
		// META-2 sends the same requests (its trace-context variant):
		// both judge the one answer.
		methods := metaServed(p.Env.Facts)
		if len(methods) == 0 {
			p.Skipf(metaNoneServed)
			return nil
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
	// resp is the response the key came with (nil in a monitor's
	// finding); at locates the key's value in its result or, when msg is
	// set, in msg, the notification the key is in.
	resp *mcpclient.Response
	msg  *jsonrpc.Message
	at   []any
}

// ev is the evidence of a finding: located in the response when the key
// is in a result, else the value alone.
func (f otelFound) ev(shownValue string) *check.Evidence {
	switch {
	case f.resp != nil && f.msg != nil:
		return check.AtMessage(check.FromResponse(f.resp), f.msg, check.Pointer(f.at...))
	case f.resp != nil:
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

// otelEmitted returns every key of every _meta object in the results and
// notifications of the repetition's shared observations (resSamples:
// discover, the lists, a read, a get, the shared tool call, a completion)
// that is, or ends in, traceparent, tracestate or baggage. OTEL-2 and
// OTEL-3 judge the same search of a repetition (each a different rule on
// the keys found), so it is made once per repetition; the result is
// shared and must not be changed. Their monitors judge every other result
// and notification the client reports: the calls with a progress token
// are the emitter search's, PROG-1's (on HTTP it follows its streams
// itself and tells the transport's watchers, progTell) and on stdio
// STDIO-5's. The search sends nothing of its own.
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
	samples, err := resSamples(p)
	if err != nil {
		return nil, err
	}
	var out []otelFound
	for _, sm := range samples {
		out = append(out, otelInResponse(sm.what, sm.resp)...)
	}
	return out, nil
}

// otelInExchange is what otelWalk finds in one exchange of the run: the
// result's _meta keys (at pointers into the response) and each
// notification's (msg set, at into the notification). Most answers carry
// no such key, so only one whose bytes name one is decoded.
func otelInExchange(x *check.Exchange) []otelFound {
	return otelIn(x.Method, x.RawResult, x.Exchange.Notifications)
}

// otelInResponse is otelInExchange on a response a check holds: its
// findings keep the response for their evidence.
func otelInResponse(what string, resp *mcpclient.Response) []otelFound {
	var notes []*jsonrpc.Message
	if resp.Exchange != nil {
		notes = resp.Exchange.Notifications
	}
	found := otelIn(what, resp.Result, notes)
	for i := range found {
		found[i].resp = resp
	}
	return found
}

func otelIn(what string, result json.RawMessage, notes []*jsonrpc.Message) []otelFound {
	var out []otelFound
	walk := func(where string, raw json.RawMessage, root string) []otelFound {
		if !otelNamed(raw) {
			return nil
		}
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return nil
		}
		var found []otelFound
		otelWalk(where, v, false, []any{root}, &found)
		return found
	}
	out = append(out, walk(what+" result", result, "result")...)
	for _, n := range notes {
		for _, f := range walk(n.Method, n.Params, "params") {
			f.msg = n
			out = append(out, f)
		}
	}
	return out
}

// otelNamed reports whether raw may hold a trace-context key: it names
// one, or has a \u escape that could spell one.
func otelNamed(raw []byte) bool {
	for _, k := range []string{"traceparent", "tracestate", "baggage", `\u`} {
		if bytes.Contains(raw, []byte(k)) {
			return true
		}
	}
	return false
}

// otelMonitor watches every result and notification of the run's 2026-07-28
// requests for a trace-context key that rule finds wrong ("" when the key
// keeps it).
func otelMonitor(doc string, rule func(otelFound) string) *check.Monitor {
	first := func(x *check.Exchange) (otelFound, string) {
		for _, f := range otelInExchange(x) {
			if msg := rule(f); msg != "" {
				return f, msg
			}
		}
		return otelFound{}, ""
	}
	return &check.Monitor{
		Doc: doc,
		Watch: func(x *check.Exchange) (bool, string) {
			if !x.Modern() || x.Exchange == nil || x.Response() == nil {
				return false, ""
			}
			_, msg := first(x)
			return true, msg
		},
		Locate: func(x *check.Exchange) (string, bool) {
			if f, msg := first(x); msg != "" && f.msg == nil {
				return check.Pointer(f.at...), false
			}
			return "", false
		},
		LocateIn: func(x *check.Exchange) (*jsonrpc.Message, string, bool) {
			if f, msg := first(x); msg != "" && f.msg != nil {
				return f.msg, check.Pointer(f.at...), false
			}
			return nil, "", false
		},
	}
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
	Spec:    "basic/index.mdx §OpenTelemetry trace context",
	Doc:     "traceparent, tracestate and baggage the server emits in _meta hold valid W3C values",
	Fix:     "emit W3C-valid traceparent (non-zero ids), tracestate and baggage values, or none",
	Monitor: otelMonitor("every traceparent, tracestate and baggage in the _meta of a result or notification of the run holds a valid W3C value", otel2Problem),
	Run: func(p *check.Pass) error {
		found, err := otelEmitted(p)
		if err != nil {
			return err
		}
		for _, f := range found {
			if msg := otel2Problem(f); msg != "" {
				shown := f.value
				if f.value == "" {
					shown = string(f.raw)
				}
				p.Failf(f.ev(shown), "%s", msg)
			}
		}
		return nil
	},
}

// otel2Problem is OTEL-2's finding on one key, "" when it keeps the rule
// (a namespaced variant is OTEL-3's).
func otel2Problem(f otelFound) string {
	if strings.Contains(f.key, "/") {
		return ""
	}
	if f.value == "" && string(f.raw) != `""` {
		return fmt.Sprintf("%s: _meta.%s is %s, want a string", f.where, f.key, jsonrpc.Clip(string(f.raw), 60))
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
	if problem == "" {
		return ""
	}
	return fmt.Sprintf("%s: _meta.%s %q %s", f.where, f.key, jsonrpc.Clip(f.value, 80), problem)
}

// otel3Problem is OTEL-3's finding on one key, "" when it is not a
// namespaced variant.
func otel3Problem(f otelFound) string {
	if !strings.Contains(f.key, "/") {
		return ""
	}
	return fmt.Sprintf("%s: _meta key %q is a namespaced variant of %s; OTel expects the unprefixed key", f.where, jsonrpc.Clip(f.key, 80), otelKeyName(f.key))
}

var OTEL3 = &check.Check{
	ID: "OTEL-3", Level: check.Info, Transports: check.Both,
	Spec:    "SEP-414 §Rationale; basic/index.mdx §_meta",
	Doc:     "trace context is not sent under namespaced keys such as io.modelcontextprotocol/traceparent",
	Fix:     "use the unprefixed keys traceparent, tracestate and baggage",
	Monitor: otelMonitor("no result or notification of the run carries trace context under a namespaced _meta key", otel3Problem),
	Run: func(p *check.Pass) error {
		found, err := otelEmitted(p)
		if err != nil {
			return err
		}
		for _, f := range found {
			if msg := otel3Problem(f); msg != "" {
				p.Warnf(f.ev(string(f.raw)), "%s", msg)
			}
		}
		return nil
	},
}

var otelFamily = family{name: "OTEL", title: "trace context", checks: []*check.Check{OTEL1, OTEL2, OTEL3}}
