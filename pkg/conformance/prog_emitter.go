package conformance

// Choosing tools to call on an arbitrary server: example arguments from an
// inputSchema, and the search for a callable tool that emits progress or log
// notifications (used by LOG, PROG, CANC, HTTP-5 and STDIO-5).

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonpointer"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// progSkipNoTool skips a check that needs a tool call when no tool may
// be called.
func progSkipNoTool(p *check.Pass) {
	if len(p.Env.Facts.Tools) == 0 {
		p.Skipf("the server lists no tools")
		return
	}
	callSkip(p, "no tool may be called")
}

// progArgs makes arguments for a tool from its inputSchema: every
// required property gets a plausible value (default, const, first enum
// value, or one of its type within its bounds). The tool may still reject
// them; checks that only need "a call" accept a tool execution error.
// large picks the largest allowed integers (for calls that should take a
// while, e.g. a counter to cancel).
func progArgs(inputSchema json.RawMessage, large bool) map[string]any {
	var root map[string]any
	if json.Unmarshal(inputSchema, &root) != nil || root == nil {
		return map[string]any{}
	}
	v, _ := progValue(root, root, 0, large).(map[string]any)
	if v == nil {
		v = map[string]any{}
	}
	return v
}

func progValue(node, root map[string]any, depth int, large bool) any {
	if depth > 16 || node == nil {
		return nil
	}
	if ref, ok := node["$ref"].(string); ok {
		if target := progPointer(root, ref); target != nil {
			return progValue(target, root, depth+1, large)
		}
	}
	if v, ok := node["default"]; ok {
		return v
	}
	if v, ok := node["const"]; ok {
		return v
	}
	if e, ok := node["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if e, ok := node["examples"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if subs, ok := node[key].([]any); ok && len(subs) > 0 {
			if sub, ok := subs[0].(map[string]any); ok {
				if v := progValue(sub, root, depth+1, large); v != nil {
					return v
				}
			}
		}
	}
	typ := progSchemaType(node)
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := node["properties"].(map[string]any)
		req, _ := node["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			prop, _ := props[name].(map[string]any)
			if prop == nil {
				out[name] = "example"
				continue
			}
			out[name] = progValue(prop, root, depth+1, large)
		}
		return out
	case "string":
		return progString(node)
	case "integer", "number":
		lo, hasLo := progNum(node["minimum"])
		if x, ok := progNum(node["exclusiveMinimum"]); ok {
			lo, hasLo = x+1, true
		}
		hi, hasHi := progNum(node["maximum"])
		if x, ok := progNum(node["exclusiveMaximum"]); ok {
			hi, hasHi = x-1, true
		}
		v := 1.0
		switch {
		case large && hasHi:
			v = hi
		case hasLo:
			v = lo
		}
		if hasHi && v > hi {
			v = hi
		}
		if typ == "integer" {
			return int64(v)
		}
		return v
	case "boolean":
		return false
	case "array":
		n, _ := progNum(node["minItems"])
		items, _ := node["items"].(map[string]any)
		out := []any{}
		for i := 0; i < int(n) && i < 10; i++ {
			out = append(out, progValue(items, root, depth+1, large))
		}
		return out
	case "null":
		return nil
	}
	return "example"
}

func progSchemaType(node map[string]any) string {
	switch t := node["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, _ := x.(string); s != "" && s != "null" {
				return s
			}
		}
	}
	if _, ok := node["properties"]; ok {
		return "object"
	}
	return ""
}

func progString(node map[string]any) string {
	s := "example"
	switch node["format"] {
	case "email":
		s = "user@example.com"
	case "date":
		s = "2026-01-01"
	case "date-time":
		s = "2026-01-01T00:00:00Z"
	case "uri", "url", "iri":
		s = "https://example.com/"
	case "uuid":
		s = "00000000-0000-4000-8000-000000000000"
	}
	if n, ok := progNum(node["minLength"]); ok {
		for len(s) < int(n) && len(s) < 1000 {
			s += "x"
		}
	}
	if n, ok := progNum(node["maxLength"]); ok && int(n) < len(s) && n >= 0 {
		s = s[:int(n)]
	}
	return s
}

func progNum(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	}
	return 0, false
}

// progPointer follows a same-document JSON pointer ("#/$defs/x").
func progPointer(root map[string]any, ref string) map[string]any {
	v, _ := jsonpointer.Get(root, ref)
	m, _ := v.(map[string]any)
	return m
}

// progEmitter is a callable tool that sent notifications of a kind when called
// with example arguments, a progressToken and logLevel debug.
type progEmitter struct {
	Tool mcpclient.Tool
	Args map[string]any
	// Sent is the notification that made it an emitter during the search
	// and ev the evidence of that call (nil for a tool picked otherwise).
	Sent *jsonrpc.Message
	ev   *check.Evidence
}

// At is the evidence of the search call, located in the notification the
// tool sent; nil when the tool was not found by the search.
func (e *progEmitter) At(ptr string) *check.Evidence {
	if e == nil || e.Sent == nil {
		return nil
	}
	return check.AtMessage(e.ev, e.Sent, ptr)
}

// progEmitters is what one search found for one run's facts.
type progEmitters struct {
	once sync.Once
	done chan struct{} // closed once the search is over
	// wanted: a check of the run needs the search, so the first quiet
	// process opened makes it (quietProc.open).
	wanted   atomic.Bool
	progress *progEmitter // sends notifications/progress for a progressToken
	logs     *progEmitter // sends notifications/message for a logLevel
	tried    []string
	// shared is why a stdio search ran on the run's own process: a new
	// one could not be started.
	shared error
	// refused: a call of the search met a gateway's refusal instead of
	// the server, so "no tool sent them" is not known.
	refused error
}

// logsUnseen is why a search that found no tool sending logs cannot say
// none does, nil when it can. On stdio a log message names no request:
// the run's own process, busy with the other checks' requests, gives it
// to none, so a search made there finds logs or not as the timing goes.
func (es *progEmitters) logsUnseen() error {
	if es.logs != nil || es.shared == nil {
		return nil
	}
	return fmt.Errorf("finding a tool that sends logs: no new process could be started for the search (%w), and on the run's own process a log message cannot be told apart from other requests'", es.shared)
}

// run makes the search on c (nil: on a new process on stdio, else the
// shared client) unless it was made, and waits for it.
func (es *progEmitters) run(ctx context.Context, env check.Env, c *mcpclient.Client) {
	es.once.Do(func() {
		defer close(es.done)
		es.search(ctx, env, c)
	})
}

// progEmittersOf is the run's search, made or not (nil without a Memo).
func progEmittersOf(m *check.Memo) *progEmitters {
	if m == nil {
		return nil
	}
	es, _ := m.Do(progEmittersKey{}, func() any { return &progEmitters{done: make(chan struct{})} }).(*progEmitters)
	return es
}

// progEmittersKey names the run's search in its Memo.
type progEmittersKey struct{}

// progMaxTries bounds the tools called to find an emitter.
const progMaxTries = 4

// progSearchChecks are the stdio checks that call progFindEmitters: where
// one is selected, the run's first quiet process makes the search before
// any turn (progWant). One missing here is still served, maybe later:
// behind the turn or the listens that hold the quiet process.
var progSearchChecks = []string{"LOG-1", "LOG-2", "LOG-3", "PROG-1", "CANC-2", "STDIO-5"}

// progWant marks the run's search wanted when a check among selected
// needs it (stdio only).
func progWant(m *check.Memo, kind string, selected []*check.Check) {
	if kind != "stdio" {
		return
	}
	for _, c := range selected {
		if slices.Contains(progSearchChecks, c.ID) {
			progEmittersOf(m).wanted.Store(true)
			return
		}
	}
}

// progFindEmitters calls callable tools, those whose description speaks of
// progress or logs first, until one sends progress and one sends logs (or
// the tries run out). The search runs once per run and is shared. On stdio
// it needs a process where the one call in flight owns every notification:
// the first quiet process a repetition opens, after its walk and before
// its turns (quietSearched), or else a new one. It must not be called by
// a check that holds a quiet turn.
func progFindEmitters(p *check.Pass) *progEmitters {
	es := progEmittersOf(p.Env.Memo)
	if es == nil {
		es = &progEmitters{done: make(chan struct{})}
	} else if p.Env.Transport == "stdio" {
		quietSearched(p, es)
	}
	es.run(p.Ctx, p.Env, nil)
	return es
}

func (es *progEmitters) search(ctx context.Context, env check.Env, c *mcpclient.Client) {
	tools := env.CallableTools()
	if len(tools) == 0 {
		return
	}
	score := func(t mcpclient.Tool) int {
		text := strings.ToLower(t.Name + " " + t.Description)
		n := 0
		for _, w := range []string{"progress", "notification", "log", "stream", "slow", "count", "long"} {
			if strings.Contains(text, w) {
				n++
			}
		}
		return n
	}
	slices.SortStableFunc(tools, func(a, b mcpclient.Tool) int { return score(b) - score(a) })
	if c == nil {
		c = env.Client
		if env.Transport == "stdio" && env.Fresh != nil {
			fc, closeFn, err := env.Fresh(ctx)
			if err == nil {
				defer closeFn()
				c = fc
			} else {
				es.shared = err
			}
		}
	}
	for i, t := range tools {
		if i >= progMaxTries || (es.progress != nil && es.logs != nil) {
			break
		}
		args := progArgs(t.InputSchema, false)
		es.tried = append(es.tried, t.Name)
		token := fmt.Sprintf("mcp-eval-probe-%d", i)
		resp, err := c.Do(ctx, "tools/call", map[string]any{"name": t.Name, "arguments": args}, mcpclient.WithProgressToken(token), mcpclient.WithLogLevel("debug"))
		if transport.GatewayRefused(err) && es.refused == nil {
			es.refused = err
		}
		if err != nil || resp.Exchange == nil {
			continue
		}
		for _, n := range resp.Exchange.Notifications {
			switch n.Method {
			case "notifications/progress":
				if es.progress == nil {
					es.progress = &progEmitter{Tool: t, Args: args, Sent: n, ev: check.FromResponse(resp)}
				}
			case "notifications/message":
				if es.logs == nil {
					es.logs = &progEmitter{Tool: t, Args: args, Sent: n, ev: check.FromResponse(resp)}
				}
			}
		}
	}
}

// progSkipNoEmitter skips a check that needs a tool sending kind
// notifications; the error, when there is one, is the check's: a call of
// the search met a gateway instead of the server.
func progSkipNoEmitter(p *check.Pass, es *progEmitters, kind string) error {
	if len(p.Env.CallableTools()) == 0 {
		progSkipNoTool(p)
		return nil
	}
	if es.refused != nil {
		return es.refused
	}
	callSkip(p, fmt.Sprintf("no callable tool sent %s when called with example arguments (tried %s)", kind, strings.Join(es.tried, ", ")))
	return nil
}

// progParams is the notification's params as a map of raw members.
func progParams(m *jsonrpc.Message) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	_ = json.Unmarshal(m.Params, &out)
	return out
}

// progSubID is params._meta["io.modelcontextprotocol/subscriptionId"].
func progSubID(m *jsonrpc.Message) json.RawMessage {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.Meta[mcpclient.MetaSubscriptionID]
}
