package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// RES: what every result carries (basic/index.mdx §ResultType, §_meta;
// checklist §1.5).

var resFamily = family{name: "RES", title: "every result", checks: []*check.Check{RES1, RES2, RES3, RES4, RES5}}

// resSample is one result (or error) of a request the RES checks sent.
type resSample struct {
	what string
	resp *mcpclient.Response
}

// resSamples is one request of every kind the server serves: discover,
// the first page of each list, a resource read, a prompt, a tool call (only
// a tool the harness may call) and a completion.
func resSamples(p *check.Pass) ([]resSample, error) {
	f := p.Env.Facts
	probes := []rpcProbe{{"server/discover", nil}}
	for _, l := range pageLists(f) {
		probes = append(probes, rpcProbe{l.method, nil})
	}
	if len(f.Resources) > 0 {
		probes = append(probes, rpcProbe{"resources/read", map[string]any{"uri": f.Resources[0].URI}})
	}
	if len(f.Prompts) > 0 {
		probes = append(probes, rpcProbe{"prompts/get", promptGetParams(p, f.Prompts[0])})
	}
	if targets := callTargets(p); len(targets) > 0 {
		// The call every check of the repetition shares (Pass.Do).
		probes = append(probes, rpcProbe{"tools/call", map[string]any{"name": targets[0].tool.Name, "arguments": targets[0].args}})
	}
	if f.Has("completions") {
		for _, pr := range f.Prompts {
			if len(pr.Arguments) > 0 {
				probes = append(probes, rpcProbe{"completion/complete", map[string]any{
					"ref":      map[string]any{"type": "ref/prompt", "name": pr.Name},
					"argument": map[string]any{"name": pr.Arguments[0].Name, "value": ""},
				}})
				break
			}
		}
	}
	var out []resSample
	for _, pr := range probes {
		// Plain requests, each sent once per repetition for every check
		// that asks the same (RES-1..5, and the others that judge discover,
		// a list's first page or a read).
		resp, err := p.Do(pr.method, pr.params)
		if err != nil {
			if p.Ctx.Err() != nil || pr.method == "server/discover" {
				return nil, err
			}
			continue // a slow tool is no reason to stop judging the rest
		}
		out = append(out, resSample{resWhat(pr), resp})
	}
	return out, nil
}

// resWhat names a probe for messages.
func resWhat(pr rpcProbe) string {
	if name, ok := pr.params["name"].(string); ok {
		return fmt.Sprintf("%s %q", pr.method, jsonrpc.Clip(name, 60))
	}
	if uri, ok := pr.params["uri"].(string); ok {
		return fmt.Sprintf("%s %q", pr.method, jsonrpc.Clip(uri, 80))
	}
	return pr.method
}

// resResult is a sample that is a result, with its members.
type resResult struct {
	resSample
	m map[string]json.RawMessage // nil when the result is not an object
}

// resResults keeps the samples that are results, decoded.
func resResults(samples []resSample) []resResult {
	var out []resResult
	for _, s := range samples {
		if s.resp.Error != nil || s.resp.Result == nil {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(s.resp.Result, &m) != nil {
			m = nil
		}
		out = append(out, resResult{s, m})
	}
	return out
}

var RES1 = &check.Check{
	ID: "RES-1", Level: check.Must, Transports: check.Both, Seed: 4,
	Spec:    "basic/index.mdx §ResultType; schema.ts Result",
	Doc:     "every result object has resultType",
	Fix:     "add resultType \"complete\" (or \"input_required\" for an interim MRTR result) to every result",
	Monitor: res1Monitor,
	Run: func(p *check.Pass) error {
		samples, err := resSamples(p)
		if err != nil {
			return err
		}
		results := resResults(samples)
		if len(results) == 0 {
			p.Skipf("no request got a result")
			return nil
		}
		var ok passTally
		for _, r := range results {
			ev := check.FromResponse(r.resp)
			switch {
			case r.m == nil:
				p.Failf(atResponse(ev, r.resp, "/result"), "the %s result is %s, want an object with resultType", r.what, shown(r.resp.Result))
			case r.m["resultType"] == nil:
				p.Failf(absentInResponse(ev, r.resp, "/result/resultType"), "the %s result has no resultType (a 2026-07-28 server MUST send it)", r.what)
			default:
				ok.add(ev)
			}
		}
		ok.report(p, "all %d results (discover, lists, reads, prompts, tool calls) carry resultType", ok.n)
		return nil
	},
}

// resTasksExtension is the official extension that adds resultType "task".
const resTasksExtension = "io.modelcontextprotocol/tasks"

var RES2 = &check.Check{
	ID: "RES-2", Level: check.Must, Transports: check.Both, Seed: 4,
	Spec:    "basic/index.mdx §ResultType",
	Doc:     "resultType is \"complete\" or \"input_required\" (or a value of an extension the request declared)",
	Fix:     "send resultType \"complete\" for final results and \"input_required\" only for MRTR interim results",
	Monitor: res2Monitor,
	Run: func(p *check.Pass) error {
		samples, err := resSamples(p)
		if err != nil {
			return err
		}
		judged := 0
		for _, r := range resResults(samples) {
			raw, ok := r.m["resultType"]
			if !ok {
				continue // RES-1 reports it
			}
			judged++
			ev := check.FromResponseAt(r.resp, "/result/resultType")
			var rt string
			switch {
			case json.Unmarshal(raw, &rt) != nil:
				p.Failf(ev, "the %s result has resultType %s, want a string", r.what, shown(raw))
			case rt == mcpclient.ResultComplete || rt == mcpclient.ResultInputRequired:
			case rt == "task":
				p.Failf(ev, "the %s result has resultType \"task\" although the request did not declare the %s extension", r.what, resTasksExtension)
			default:
				p.Failf(ev, "the %s result has resultType %q, want \"complete\" or \"input_required\" (clients treat unknown values as invalid)", r.what, jsonrpc.Clip(rt, 60))
			}
		}
		if judged == 0 {
			p.Skipf("no result carried a resultType to judge")
		}
		return nil
	},
}

var RES3 = &check.Check{
	ID: "RES-3", Level: check.Should, Transports: check.Both,
	Spec: "basic/index.mdx §_meta (Per-response protocol fields); schema.ts ResultMetaObject",
	Doc:  "every result's _meta carries io.modelcontextprotocol/serverInfo with name and version",
	Fix:  "add _meta[\"io.modelcontextprotocol/serverInfo\"] = {name, version} to every result, input_required ones included",
	Run: func(p *check.Pass) error {
		samples, err := resSamples(p)
		if err != nil {
			return err
		}
		if target, _, err := stateFindTarget(p); err == nil && target != nil {
			if resp, err := p.DoWithCapabilities(stateAllCaps, target.Method, target.Params); err == nil {
				samples = append(samples, resSample{target.Label + " (input_required)", resp})
			}
		}
		results := resResults(samples)
		if len(results) == 0 {
			p.Skipf("no request got a result")
			return nil
		}
		for _, r := range results {
			var meta struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			_ = json.Unmarshal(r.resp.Result, &meta)
			raw, ok := meta.Meta[mcpclient.MetaServerInfo]
			var si mcpclient.Implementation
			at := check.Pointer("result", "_meta", mcpclient.MetaServerInfo)
			if meta.Meta == nil {
				at = "/result/_meta"
			}
			switch {
			case !ok:
				p.Failf(check.FromResponseAbsent(r.resp, at), "the %s result has no _meta[%q]", r.what, mcpclient.MetaServerInfo)
			case json.Unmarshal(raw, &si) != nil || si.Name == "" || si.Version == "":
				p.Failf(check.FromResponseAt(r.resp, at), "the %s result has serverInfo %s, want {name, version} strings", r.what, shown(raw))
			}
		}
		return nil
	},
}

// resMetaKey is the _meta key grammar: an optional prefix of dot-separated
// labels ending in "/", then a name that is empty or starts and ends with an
// alphanumeric (basic/index.mdx §_meta).
var resMetaKey = regexp.MustCompile(`^(?:(?:[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$`)

// resOTelKeys are reserved for OpenTelemetry and exempt from the prefix
// rules.
var resOTelKeys = []string{"traceparent", "tracestate", "baggage"}

// resSkipSubtrees hold schemas or tool output, where a member named _meta
// is data, not metadata.
var resSkipSubtrees = map[string]bool{"inputSchema": true, "outputSchema": true, "structuredContent": true, "requestedSchema": true, "properties": true, "$defs": true}

// resMetaKeys calls visit for every key of every _meta object in v.
func resMetaKeys(v any, where string, visit func(where, key string)) {
	resMetaKeysAt(v, where, nil, func(where, key string, _ []any) { visit(where, key) })
}

// resMetaKeysAt is resMetaKeys that also gives the reference tokens of
// each key's value inside v (for a pointer).
func resMetaKeysAt(v any, where string, at []any, visit func(where, key string, at []any)) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			val := x[k]
			if k == "_meta" {
				if m, ok := val.(map[string]any); ok {
					for _, mk := range slices.Sorted(maps.Keys(m)) {
						visit(where, mk, append(slices.Clone(at), "_meta", mk))
					}
				}
				continue
			}
			if resSkipSubtrees[k] {
				continue
			}
			resMetaKeysAt(val, where+"."+k, append(slices.Clone(at), k), visit)
		}
	case []any:
		for i, e := range x {
			resMetaKeysAt(e, fmt.Sprintf("%s[%d]", where, i), append(slices.Clone(at), i), visit)
		}
	}
}

// resMayHoldMeta says whether raw can hold a member named _meta: the
// name spelled out, or with one of its letters escaped (\u005f, \u006d,
// \u0065, \u0074, \u0061, hex in either case). What cannot is not decoded:
// on a server of 1,000 tools that was every listed tool and the whole
// tools/list result again in each repetition of RES-4 (0.12 s of CPU a
// run), for no key.
func resMayHoldMeta(raw []byte) bool {
	if bytes.Contains(raw, []byte("_meta")) {
		return true
	}
	for rest := raw; ; {
		i := bytes.Index(rest, []byte(`\u00`))
		if i < 0 || i+6 > len(rest) {
			return false
		}
		switch strings.ToLower(string(rest[i+4 : i+6])) {
		case "5f", "6d", "65", "74", "61":
			return true
		}
		rest = rest[i+4:]
	}
}

// resEmitted walks every message the RES samples brought back: results,
// notifications on their streams, and the listed tools, resources,
// templates and prompts.
func resEmitted(p *check.Pass, samples []resSample, visit func(ev *check.Evidence, where, key string)) {
	for _, s := range samples {
		ev := check.FromResponse(s.resp)
		if s.resp.Result != nil && resMayHoldMeta(s.resp.Result) {
			var v any
			if json.Unmarshal(s.resp.Result, &v) == nil {
				resMetaKeysAt(v, s.what+" result", []any{"result"}, func(w, k string, at []any) {
					visit(check.FromResponseAt(s.resp, check.Pointer(at...)), w, k)
				})
			}
		}
		if s.resp.Exchange != nil {
			for _, n := range s.resp.Exchange.Notifications {
				var v any
				if resMayHoldMeta(n.Params) && json.Unmarshal(n.Params, &v) == nil {
					resMetaKeys(v, fmt.Sprintf("%s notification during %s", jsonrpc.Clip(n.Method, 60), s.what), func(w, k string) { visit(ev, w, k) })
				}
			}
		}
	}
	f := p.Env.Facts
	var items []json.RawMessage
	for _, t := range f.Tools {
		items = append(items, t.Raw)
	}
	for _, r := range f.Resources {
		items = append(items, r.Raw)
	}
	for _, t := range f.Templates {
		items = append(items, t.Raw)
	}
	for _, pr := range f.Prompts {
		items = append(items, pr.Raw)
	}
	for _, raw := range items {
		var v any
		if resMayHoldMeta(raw) && json.Unmarshal(raw, &v) == nil {
			resMetaKeys(v, "list entry "+resEntryName(raw), func(w, k string) { visit(nil, w, k) })
		}
	}
}

func resEntryName(raw json.RawMessage) string {
	var e struct {
		Name        string `json:"name"`
		URI         string `json:"uri"`
		URITemplate string `json:"uriTemplate"`
	}
	_ = json.Unmarshal(raw, &e)
	for _, s := range []string{e.Name, e.URI, e.URITemplate} {
		if s != "" {
			return fmt.Sprintf("%q", jsonrpc.Clip(s, 60))
		}
	}
	return "(unnamed)"
}

var RES4 = &check.Check{
	ID: "RES-4", Level: check.Must, Transports: check.Both,
	Spec: "basic/index.mdx §_meta (key format)",
	Doc:  "every _meta key the server emits follows the key format (optional prefix/, then a name), except traceparent, tracestate and baggage",
	Fix:  "name _meta keys like com.example/key-name: dot-separated labels, a slash, then letters, digits, . _ -",
	Run: func(p *check.Pass) error {
		samples, err := resSamples(p)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		resEmitted(p, samples, func(ev *check.Evidence, where, key string) {
			if slices.Contains(resOTelKeys, key) || resMetaKey.MatchString(key) || seen[key] {
				return
			}
			seen[key] = true
			p.Failf(ev, "%s has the _meta key %q, which does not follow the key format (optional prefix like com.example/, then a name of letters, digits, . _ -)", where, jsonrpc.Clip(key, 80))
		})
		return nil
	},
}

// resKnownReserved are the io.modelcontextprotocol/ keys the core protocol
// defines (basic/index.mdx §_meta).
var resKnownReserved = []string{"protocolVersion", "clientInfo", "clientCapabilities", "logLevel", "subscriptionId", "serverInfo"}

// resReserved reports whether a key's prefix is reserved: its second label
// is modelcontextprotocol or mcp (io.modelcontextprotocol/, dev.mcp/).
func resReserved(key string) (prefix, name string, reserved bool) {
	prefix, name, ok := strings.Cut(key, "/")
	if !ok {
		return "", key, false
	}
	labels := strings.Split(prefix, ".")
	return prefix, name, len(labels) >= 2 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp")
}

var RES5 = &check.Check{
	ID: "RES-5", Level: check.Info, Transports: check.Both,
	Spec: "basic/index.mdx §_meta (reserved prefixes)",
	Doc:  "reserved _meta prefixes (second label modelcontextprotocol or mcp) carry only keys the spec or an advertised official extension defines",
	Fix:  "use your own prefix (com.example/) for vendor _meta keys",
	Run: func(p *check.Pass) error {
		samples, err := resSamples(p)
		if err != nil {
			return err
		}
		var exts map[string]json.RawMessage
		_ = json.Unmarshal(p.Env.Facts.Capabilities["extensions"], &exts)
		seen := map[string]bool{}
		resEmitted(p, samples, func(ev *check.Evidence, where, key string) {
			prefix, name, reserved := resReserved(key)
			if !reserved || seen[key] {
				return
			}
			if prefix == "io.modelcontextprotocol" && slices.Contains(resKnownReserved, name) {
				return
			}
			for ext := range exts {
				ep, en, _ := strings.Cut(ext, "/")
				if ep == prefix && en != "" && strings.Contains(name, strings.TrimSuffix(en, "s")) {
					return // defined by an advertised official extension
				}
			}
			seen[key] = true
			p.Failf(ev, "%s has the _meta key %q under a reserved prefix that neither the spec nor an advertised extension defines", where, jsonrpc.Clip(key, 80))
		})
		return nil
	},
}

// res1Monitor watches every result of a 2026-07-28 request of the run.
var res1Monitor = &check.Monitor{
	Doc: "every result of a request that declared 2026-07-28 has resultType",
	Watch: func(x *check.Exchange) (bool, string) {
		if !x.Modern() || x.RawResult == nil {
			return false, ""
		}
		if x.Result == nil {
			return true, fmt.Sprintf("the %s result is %s, want an object with resultType", x.Method, shown(x.RawResult))
		}
		if x.Result["resultType"] == nil {
			return true, fmt.Sprintf("the %s result has no resultType", x.Method)
		}
		return true, ""
	},
	Locate: func(x *check.Exchange) (string, bool) {
		if x.Result == nil {
			return "/result", false
		}
		return "/result/resultType", true
	},
}

// res2Monitor watches the resultType of every result of a 2026-07-28
// request of the run. "task" is left to RES-2's own probes, which know
// whether the request declared the tasks extension.
var res2Monitor = &check.Monitor{
	Doc: "every resultType of the run is \"complete\" or \"input_required\"",
	Watch: func(x *check.Exchange) (bool, string) {
		raw, ok := x.Result["resultType"]
		if !x.Modern() || !ok {
			return false, ""
		}
		var rt string
		switch {
		case json.Unmarshal(raw, &rt) != nil:
			return true, fmt.Sprintf("the %s result has resultType %s, want a string", x.Method, shown(raw))
		case rt == "task":
			return false, ""
		case rt != mcpclient.ResultComplete && rt != mcpclient.ResultInputRequired:
			return true, fmt.Sprintf("the %s result has resultType %q, want \"complete\" or \"input_required\"", x.Method, jsonrpc.Clip(rt, 60))
		}
		return true, ""
	},
	Locate: func(*check.Exchange) (string, bool) { return "/result/resultType", false },
}
