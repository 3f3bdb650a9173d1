package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// TOOL: tools/list (server/tools.mdx §Listing Tools, §Tool; checklist §1.8).

// toolServed reports whether the server declares tools or serves them
// anyway (DISC-6 reports the missing declaration).
func toolServed(f *check.Facts) bool {
	return f.Has("tools") || f.ToolsErr == nil && len(f.Tools)+len(f.Dropped) > 0
}

const toolNotServed = "the server does not declare the tools capability"

// toolListRaw is every tool as the server sent it in this repetition's
// walk of tools/list (shared by the checks that judge the list). When the
// list fails the check skips (TOOL-1 judges it) and ok is false; err is a
// transport failure.
func toolListRaw(p *check.Pass) (items []json.RawMessage, lr *mcpclient.ListResult, ok bool, err error) {
	return toolListJudged(p, p.List)
}

// toolListOwn is toolListRaw with a walk of this check's own, for a rule
// about when the list is taken (after a call, a second time in a row).
func toolListOwn(p *check.Pass) (items []json.RawMessage, lr *mcpclient.ListResult, ok bool, err error) {
	return toolListJudged(p, func(method, key string) (*mcpclient.ListResult, error) {
		return p.Env.Client.List(p.Ctx, method, key)
	})
}

func toolListJudged(p *check.Pass, list func(method, key string) (*mcpclient.ListResult, error)) (items []json.RawMessage, lr *mcpclient.ListResult, ok bool, err error) {
	lr, err = list("tools/list", "tools")
	if err != nil {
		if schemaTransportErr(err) {
			return nil, lr, false, err
		}
		p.Skipf("tools/list failed (TOOL-1 reports it): %s", jsonrpc.Clip(err.Error(), 160))
		return nil, lr, false, nil
	}
	return lr.Items, lr, true, nil
}

// toolListAt is the evidence of a list's first page located at its array
// (a set or order of entries that is wrong as a whole).
func toolListAt(lr *mcpclient.ListResult, key string) *check.Evidence {
	if lr == nil || len(lr.Pages) == 0 || lr.Pages[0].Response == nil {
		return toolEvidence(lr)
	}
	return check.FromResponseAt(lr.Pages[0].Response, check.Pointer("result", key))
}

// toolEvidence is the evidence of a list's first page.
func toolEvidence(lr *mcpclient.ListResult) *check.Evidence {
	if lr == nil || len(lr.Pages) == 0 {
		return nil
	}
	return check.FromResponse(lr.Pages[0].Response)
}

var TOOL1 = &check.Check{
	ID: "TOOL-1", Level: check.Must, Transports: check.Both,
	Spec: "server/tools.mdx §Listing Tools; schema.ts ListToolsResult",
	Doc:  "every page of tools/list is a complete ListToolsResult: tools[], ttlMs, cacheScope, resultType \"complete\", optional nextCursor",
	Fix:  "answer tools/list with {resultType: \"complete\", tools: [...], ttlMs, cacheScope} and never input_required",
	Run: func(p *check.Pass) error {
		if !toolServed(p.Env.Facts) {
			p.Skipf(toolNotServed)
			return nil
		}
		lr, ok, err := schemaJudgeList(p, "tools/list", "tools", "ListToolsResult")
		if err != nil || !ok {
			return err
		}
		p.Passf(toolEvidence(lr), "tools/list: %d tools on %d pages, each a valid ListToolsResult", len(lr.Items), len(lr.Pages))
		return nil
	},
}

var TOOL2 = &check.Check{
	ID: "TOOL-2", Level: check.Must, Transports: check.Both,
	Waits: true, // the list walk on another connection
	Spec:  "server/tools.mdx §Listing Tools; SEP-2567 §Session-independent list endpoints",
	Doc:   "the tool set does not vary per connection or as a side effect of other requests",
	Fix:   "serve the same tools/list to every connection, whatever was called before (it may depend only on authorization)",
	Run: func(p *check.Pass) error {
		if !toolServed(p.Env.Facts) {
			p.Skipf(toolNotServed)
			return nil
		}
		before, lr1, ok, err := toolListRaw(p)
		if !ok {
			return err
		}
		// The set listed before any check ran is the reference: other
		// checks' calls come between it and this run, so a side effect of
		// theirs shows here even when this run's own call causes none.
		var first []string
		for _, t := range p.Env.Facts.Tools {
			first = append(first, t.Name)
		}
		for _, d := range p.Env.Facts.Dropped {
			first = append(first, d.Name)
		}
		if added, removed := schemaSetDiff(first, schemaEntryNames(before, "name")); p.Env.Facts.ToolsErr == nil && len(added)+len(removed) > 0 {
			p.Failf(toolListAt(lr1, "tools"), "the tool set changed since the start of the run, after other requests on the same server: %s", schemaDiffText(added, removed))
		}
		// A tools/call between two lists: the set must not move as a side
		// effect. The first list is the repetition's (taken before or
		// after other checks' calls; a change by those shows against the
		// facts above; on HTTP it is walked on the repetition's own
		// connection, see freshList), the second is this check's own on
		// the shared connection, taken after its call.
		called := ""
		if targets := callTargets(p); len(targets) > 0 {
			ct := targets[0]
			if _, err := p.Env.Client.CallTool(p.Ctx, ct.tool.Name, ct.args); err != nil && schemaTransportErr(err) {
				return err
			}
			called = ct.tool.Name
		}
		after, lr2, ok, err := toolListOwn(p)
		if !ok {
			return err
		}
		a, b := schemaEntryNames(before, "name"), schemaEntryNames(after, "name")
		if added, removed := schemaSetDiff(a, b); len(added)+len(removed) > 0 {
			p.Failf(toolListAt(lr2, "tools"), "after a tools/call of %q the server lists a different tool set than before it: %s", called, schemaDiffText(added, removed))
		}
		lr3, err, openErr := freshList(p, "tools/list")
		if openErr != nil {
			return fmt.Errorf("opening a fresh connection: %w", openErr)
		}
		if err != nil {
			if schemaTransportErr(err) {
				return err
			}
			p.Failf(toolEvidence(lr3), "tools/list fails on a fresh connection while it works on the first: %s", jsonrpc.Clip(err.Error(), 160))
			return nil
		}
		fresh := schemaEntryNames(lr3.Items, "name")
		if added, removed := schemaSetDiff(b, fresh); len(added)+len(removed) > 0 {
			p.Failf(toolListAt(lr3, "tools"), "a fresh connection lists a different tool set than the first: %s", schemaDiffText(added, removed))
			return nil
		}
		p.Passf(toolEvidence(lr3), "the same %d tools on two connections", len(fresh))
		return nil
	},
}

var TOOL3 = &check.Check{
	ID: "TOOL-3", Level: check.Should, Transports: check.Both, Seed: 2,
	Spec: "server/tools.mdx §Listing Tools; changelog.mdx Minor 3",
	Doc:  "two consecutive tools/list calls return the tools in the same order, across pages",
	Fix:  "return tools in a fixed order (e.g. sorted by name or by registration)",
	Run: func(p *check.Pass) error {
		if !toolServed(p.Env.Facts) {
			p.Skipf(toolNotServed)
			return nil
		}
		first, _, ok, err := toolListRaw(p)
		if !ok {
			return err
		}
		a := schemaEntryNames(first, "name")
		// The first list is the repetition's; the next two are this
		// check's own, each a new call.
		for i := 0; i < 2; i++ {
			next, lr, ok, err := toolListOwn(p)
			if !ok {
				return err
			}
			if b := schemaEntryNames(next, "name"); !slices.Equal(a, b) {
				p.Failf(toolListAt(lr, "tools"), "two consecutive tools/list calls gave different orders: %q then %q", schemaClipList(a, 8), schemaClipList(b, 8))
				return nil
			}
		}
		p.Passf(nil, "three tools/list calls gave the same order of %d tools", len(a))
		return nil
	},
}

var TOOL4 = &check.Check{
	ID: "TOOL-4", Level: check.Must, Transports: check.Both,
	Spec: "server/tools.mdx §Tool; schema.ts Tool",
	Doc:  "every tool has a string name and an inputSchema object with root type \"object\"; an outputSchema is an object",
	Fix:  "give every tool a name and an inputSchema like {\"type\": \"object\", \"properties\": {...}}",
	Run: func(p *check.Pass) error {
		items, lr, ev, ok, err := toolListed(p)
		if !ok {
			return err
		}
		for i, raw := range items {
			for _, pb := range toolShapeProblems(raw) {
				p.Failf(toolEntryAt(lr, i, pb), "tool #%d %s", i+1, pb.msg)
			}
		}
		p.Passf(ev, "%d tools, each with a name and an object inputSchema", len(items))
		return nil
	},
}

// toolShape lists what is wrong with a Tool's name and schemas; each item
// starts with the tool's name when it has one.
func toolShape(raw json.RawMessage) []string { return msgs(toolShapeProblems(raw)) }

// toolShapeProblems is toolShape with where each problem is: at is a
// pointer into the tool.
func toolShapeProblems(raw json.RawMessage) []problem {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return []problem{{msg: fmt.Sprintf("is %s, want a Tool object", shown(raw))}}
	}
	var out []problem
	var name string
	label := ""
	if nraw, ok := m["name"]; !ok {
		out = append(out, problem{at: "/name", absent: true, msg: "has no name"})
	} else if json.Unmarshal(nraw, &name) != nil {
		out = append(out, problem{at: "/name", msg: fmt.Sprintf("has name %s, want a string", shown(nraw))})
	} else {
		label = fmt.Sprintf("%q ", jsonrpc.Clip(name, 80))
	}
	in, ok := m["inputSchema"]
	var schema map[string]json.RawMessage
	switch {
	case !ok:
		out = append(out, problem{at: "/inputSchema", absent: true, msg: label + "has no inputSchema"})
	case json.Unmarshal(in, &schema) != nil || schema == nil:
		out = append(out, problem{at: "/inputSchema", msg: fmt.Sprintf("%shas inputSchema %s, want a JSON object", label, shown(in))})
	default:
		var typ string
		if _, has := schema["type"]; !has {
			out = append(out, problem{at: "/inputSchema/type", absent: true, msg: fmt.Sprintf("%shas inputSchema type %s, want \"object\"", label, shown(schema["type"]))})
		} else if json.Unmarshal(schema["type"], &typ) != nil || typ != "object" {
			out = append(out, problem{at: "/inputSchema/type", msg: fmt.Sprintf("%shas inputSchema type %s, want \"object\"", label, shown(schema["type"]))})
		}
	}
	if outRaw, ok := m["outputSchema"]; ok {
		var os map[string]json.RawMessage
		if json.Unmarshal(outRaw, &os) != nil || os == nil {
			out = append(out, problem{at: "/outputSchema", msg: fmt.Sprintf("%shas outputSchema %s, want a JSON object", label, shown(outRaw))})
		}
	}
	return out
}

// toolNameRE is the recommended tool name grammar (tools.mdx §Tool Names).
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

var TOOL5 = &check.Check{
	ID: "TOOL-5", Level: check.Should, Transports: check.Both,
	Spec: "server/tools.mdx §Tool Names",
	Doc:  "tool names are 1-128 characters of [A-Za-z0-9_.-] and unique within the server",
	Fix:  "rename tools to letters, digits, '_', '-' and '.', at most 128 characters, no duplicates",
	Run: func(p *check.Pass) error {
		items, lr, ev, ok, err := toolListed(p)
		if !ok {
			return err
		}
		seen := map[string]int{}
		for i, name := range schemaEntryNames(items, "name") {
			seen[name]++
			if seen[name] == 2 {
				p.Failf(listEntryAt(lr, "tools", i, false, "name"), "tool name %q is listed more than once", jsonrpc.Clip(name, 80))
			}
			if !toolNameRE.MatchString(name) {
				p.Failf(listEntryAt(lr, "tools", i, false, "name"), "tool name %q (%d characters) does not match ^[A-Za-z0-9_.-]{1,128}$", jsonrpc.Clip(name, 80), utf8.RuneCountInString(name))
			}
		}
		p.Passf(ev, "%d tool names, all well-formed and unique", len(items))
		return nil
	},
}

var TOOL6 = &check.Check{
	ID: "TOOL-6", Level: check.Must, Transports: check.Both,
	Spec: "basic/transports/streamable-http.mdx §Schema Extension; server/tools.mdx §x-mcp-header",
	Doc:  "every x-mcp-header is a non-empty, unique RFC 9110 token on a string, integer or boolean property reached only through properties",
	Fix:  "fix the tool's x-mcp-header: a token name, unique, on a top-level or properties-nested string/integer/boolean property",
	Run: func(p *check.Pass) error {
		items, lr, ev, ok, err := toolListed(p)
		if !ok {
			return err
		}
		declared := 0
		for i, raw := range items {
			var t struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			if json.Unmarshal(raw, &t) != nil {
				continue // TOOL-4
			}
			hp, err := mcpclient.HeaderParams(t.InputSchema)
			if err != nil {
				p.Failf(listEntryAt(lr, "tools", i, false, "inputSchema"), "tool %q has an invalid x-mcp-header declaration, so HTTP clients must drop it: %v", jsonrpc.Clip(t.Name, 80), err)
				continue
			}
			declared += len(hp)
		}
		for _, d := range p.Env.Facts.Dropped {
			if strings.Contains(d.Reason, "TOOL-6") && !slices.Contains(schemaEntryNames(items, "name"), d.Name) {
				p.Failf(nil, "tool %q was dropped when the harness first listed tools: %s", jsonrpc.Clip(d.Name, 80), d.Reason)
			}
		}
		if declared == 0 {
			p.Passf(ev, "no tool declares x-mcp-header")
		} else {
			p.Passf(ev, "%d x-mcp-header declarations, all valid", declared)
		}
		return nil
	},
}

// toolSensitiveWords are name tokens that mark a credential or personal
// data; a header carrying them ends up in proxy and server logs.
var toolSensitiveWords = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "passphrase": true, "secret": true, "token": true,
	"apikey": true, "auth": true, "authorization": true, "credential": true, "credentials": true,
	"cookie": true, "session": true, "ssn": true, "email": true, "phone": true, "dob": true,
	"birthdate": true, "birthday": true, "iban": true, "cvv": true, "pin": true, "otp": true,
}

// toolSensitivePairs are two-token names of the same kind.
var toolSensitivePairs = map[string]bool{
	"api key": true, "access key": true, "private key": true, "secret key": true, "credit card": true,
	"card number": true, "social security": true, "date of birth": true, "bearer token": true,
}

// toolNameTokens splits a property or header name into lower-case words at
// punctuation and camelCase boundaries.
func toolNameTokens(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	runes := []rune(name)
	for i, r := range runes {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(runes[i-1]) || i+1 < len(runes) && unicode.IsLower(runes[i+1]) && unicode.IsUpper(runes[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// toolSensitive reports whether a name looks like a credential or PII.
func toolSensitive(name string) bool {
	words := toolNameTokens(name)
	for i, w := range words {
		if toolSensitiveWords[w] {
			return true
		}
		if i+1 < len(words) && toolSensitivePairs[w+" "+words[i+1]] {
			return true
		}
		if i+2 < len(words) && toolSensitivePairs[w+" "+words[i+1]+" "+words[i+2]] {
			return true
		}
	}
	return false
}

var TOOL7 = &check.Check{
	ID: "TOOL-7", Level: check.Should, Transports: check.Both,
	Spec: "server/tools.mdx §x-mcp-header (security considerations)",
	Doc:  "x-mcp-header is not put on sensitive parameters such as passwords, tokens, API keys or personal data (a heuristic on names)",
	Fix:  "remove x-mcp-header from credential and personal-data properties; headers end up in logs",
	Run: func(p *check.Pass) error {
		items, lr, ev, ok, err := toolListed(p)
		if !ok {
			return err
		}
		n := 0
		for i, raw := range items {
			var t struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			}
			if json.Unmarshal(raw, &t) != nil {
				continue
			}
			hp, err := mcpclient.HeaderParams(t.InputSchema)
			if err != nil {
				continue // TOOL-6
			}
			for _, h := range hp {
				n++
				prop := strings.Join(h.Path, ".")
				if toolSensitive(h.Header) || toolSensitive(h.Path[len(h.Path)-1]) {
					p.Failf(listEntryAt(lr, "tools", i, false, toolHeaderAt(h.Path)...), "tool %q mirrors property %q into header Mcp-Param-%s, which looks like a credential or personal data", jsonrpc.Clip(t.Name, 80), jsonrpc.Clip(prop, 80), jsonrpc.Clip(h.Header, 60))
				}
			}
		}
		if n == 0 {
			p.Skipf("no tool declares x-mcp-header")
			return nil
		}
		p.Passf(ev, "%d x-mcp-header declarations, none on a sensitive-looking property", n)
		return nil
	},
}

var toolFamily = family{name: "TOOL", title: "tools/list", checks: []*check.Check{TOOL1, TOOL2, TOOL3, TOOL4, TOOL5, TOOL6, TOOL7}}

// toolListed is the opening of the checks that judge every listed tool:
// skip when the server serves no tools, list them all, and keep the
// listing as evidence. ok is false when the check is over (skipped, or the
// list failed and was reported).
func toolListed(p *check.Pass) (items []json.RawMessage, lr *mcpclient.ListResult, ev *check.Evidence, ok bool, err error) {
	if !toolServed(p.Env.Facts) {
		p.Skipf(toolNotServed)
		return nil, nil, nil, false, nil
	}
	items, lr, ok, err = toolListRaw(p)
	if !ok {
		return nil, nil, nil, false, err
	}
	return items, lr, toolEvidence(lr), true, nil
}

// toolEntryAt locates a problem of the i-th listed tool; pb.at is a
// pointer into the tool ("" for the tool itself).
func toolEntryAt(lr *mcpclient.ListResult, i int, pb problem) *check.Evidence {
	resp, j := listEntryPage(lr, "tools", i)
	if resp == nil {
		return toolEvidence(lr)
	}
	return atProblem(nil, resp, problem{at: check.Pointer("result", "tools", j) + pb.at, msg: pb.msg, absent: pb.absent})
}

// toolHeaderAt is the tokens of a property's x-mcp-header inside a tool:
// the property path through properties, from the inputSchema.
func toolHeaderAt(path []string) []any {
	out := []any{"inputSchema"}
	for _, name := range path {
		out = append(out, "properties", name)
	}
	return append(out, "x-mcp-header")
}
