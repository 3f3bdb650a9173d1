package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonschema"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Helpers shared by the TOOL, CALL, SCHEMA, RSRC, PROMPT, COMP and MRTR
// checks: the MCP definitions as an oracle (schemaOracle), listing with
// judgement, and a cache of compiled tool schemas.

// schemaOracle validates raw JSON against one of our MCP 2026-07-28
// definitions (jsonschema.MCP: written from the spec, held against the
// official schema by pkg/jsonschema's tests) and returns what is wrong, ""
// when it is valid. The error is for a harness failure (the embedded
// definitions did not load).
func schemaOracle(def string, raw json.RawMessage) (string, error) {
	problems, _, err := schemaOracleAt(def, raw)
	return problems, err
}

// schemaOracleAt is schemaOracle that also says where the first (deepest)
// problem is: a JSON pointer into raw ("" for raw itself).
func schemaOracleAt(def string, raw json.RawMessage) (problems, at string, err error) {
	s, err := jsonschema.MCP(def)
	if err != nil {
		return "", "", err
	}
	if err := s.Validate(raw); err != nil {
		if ve, ok := errors.AsType[*jsonschema.ValidationError](err); ok {
			if len(ve.Problems) > 0 {
				at = ve.Problems[0].At
			}
			return err.Error(), at, nil
		}
		return "", "", fmt.Errorf("validating against %s: %w", def, err)
	}
	return "", "", nil
}

// schemaJudgeList lists every page of a paginated method and reports every page
// that is not complete or does not validate against def. ok is false when
// the list could not be read whole (the failure is reported).
func schemaJudgeList(p *check.Pass, method, key, def string) (lr *mcpclient.ListResult, ok bool, err error) {
	lr, lerr := p.List(method, key)
	if lr == nil {
		return nil, false, lerr // nothing listed (a gateway answered, or no connection)
	}
	bad := false
	for i, pg := range lr.Pages {
		resp := pg.Response
		if resp == nil || resp.Result == nil {
			continue
		}
		ev := check.FromResponse(resp)
		where := method
		if len(lr.Pages) > 1 {
			where = fmt.Sprintf("%s page %d", method, i+1)
		}
		rt, has := resp.ResultType()
		switch {
		case rt == mcpclient.ResultInputRequired:
			p.Failf(atResponse(ev, resp, "/result/resultType"), "%s returned resultType \"input_required\"; list results are always complete", where)
			bad = true
			continue
		case !has:
			p.Failf(absentInResponse(ev, resp, "/result/resultType"), "%s result has no resultType, want \"complete\"", where)
			bad = true
		case rt != mcpclient.ResultComplete:
			p.Failf(atResponse(ev, resp, "/result/resultType"), "%s returned resultType %q, want \"complete\"", where, jsonrpc.Clip(rt, 40))
			bad = true
		}
		problems, at, err := schemaOracleAt(def, resp.Result)
		if err != nil {
			return lr, false, err
		}
		if problems != "" {
			p.Failf(atResponse(ev, resp, check.InResult(at)), "%s does not match %s: %s", where, def, problems)
			bad = true
		}
	}
	if lerr != nil {
		if rpc, isRPC := errors.AsType[*mcpclient.RPCError](lerr); isRPC {
			p.Failf(check.FromResponse(rpc.Response), "%s returned error %d (%s): %s", method, rpc.Code(), jsonrpc.CodeName(rpc.Code()), jsonrpc.Clip(rpc.Err.Message, 120))
			return lr, false, nil
		}
		if schemaTransportErr(lerr) {
			return lr, false, lerr
		}
		if !bad {
			p.Failf(nil, "%v", lerr)
		}
		return lr, false, nil
	}
	if lr.Truncated {
		p.Warnf(nil, "%s was not read to its end (page cap or a repeated cursor)", method)
	}
	return lr, !bad, nil
}

// observedResult is a request that may ask for input (resources/read,
// prompts/get, tools/call of a tool the harness may call: read-only or
// allowed by the user) as observed in the pass's repetition, read as the
// client's ReadResource, GetPrompt and CallTool read it. Every check of the
// repetition that asks the same judges the same answer; the result is
// new, its Response shared and never to be changed.
func observedResult(p *check.Pass, method string, params map[string]any) (*mcpclient.Result, error) {
	resp, err := p.Do(method, params)
	if method == "tools/call" && err == nil && resp.Error != nil && resp.Error.Code == jsonrpc.CodeHeaderMismatch {
		// The client's own call re-lists the tools and retries (the
		// server's x-mcp-header declarations moved): let it.
		name, _ := params["name"].(string)
		return p.Env.Client.CallTool(p.Ctx, name, params["arguments"])
	}
	return mcpclient.ResultOf(method, resp, err)
}

// freshListsKey is the Memo key of one repetition's lists on a connection
// of their own.
type freshListsKey struct{ run int }

type freshWalks struct {
	open  error // opening the connection failed
	lists map[string]freshWalk
}

type freshWalk struct {
	lr  *mcpclient.ListResult
	err error
}

// freshList is method's walk on a fresh connection (a new process on
// stdio), for the checks that compare a list across connections (TOOL-2,
// RSRC-1, PROMPT-1). One connection per repetition walks every list the
// server answered when the facts were gathered: on HTTP it is the
// connection the repetition walks every list on (Env.Lists), so the walk
// the other checks judge is this one; on stdio it is the repetition's
// first quiet process. Each check compares its own list with it. openErr is the
// failure to open it.
func freshList(p *check.Pass, method string) (lr *mcpclient.ListResult, err, openErr error) {
	if p.Env.Lists != nil {
		if _, err := p.Env.Lists(p.Run); err != nil {
			return nil, nil, err
		}
		lr, err := p.List(method, pageKey(method))
		return lr, err, nil
	}
	if p.Env.Transport == "stdio" && p.Env.Memo != nil {
		// On stdio the walk is the first thing asked of the
		// repetition's first quiet process (quiet.go), which LOG and PROG
		// checks take turns on afterwards: one start for all of them.
		if w := quietWalks(p); w != nil {
			return freshListOf(p, w, method)
		}
	}
	v := p.Env.Memo.Do(freshListsKey{run: p.Run}, func() any {
		c, closeFresh, err := p.Env.Fresh(p.Ctx)
		if err != nil {
			return &freshWalks{open: err}
		}
		defer closeFresh()
		w := &freshWalks{lists: map[string]freshWalk{}}
		for _, l := range pageLists(p.Env.Facts) {
			lr, err := c.List(p.Ctx, l.method, l.key)
			w.lists[l.method] = freshWalk{lr, err}
		}
		return w
	})
	w, _ := v.(*freshWalks)
	return freshListOf(p, w, method)
}

// freshListOf is method's list from the repetition's walk w.
func freshListOf(p *check.Pass, w *freshWalks, method string) (lr *mcpclient.ListResult, err, openErr error) {
	switch {
	case w == nil:
		return nil, nil, errors.New("the fresh connection's lists were not read")
	case w.open != nil:
		return nil, nil, w.open
	}
	if fw, ok := w.lists[method]; ok {
		return fw.lr, fw.err, nil
	}
	// A list that failed when the facts were gathered and answers now:
	// a connection of this check's own.
	c, closeFresh, err := p.Env.Fresh(p.Ctx)
	if err != nil {
		return nil, nil, err
	}
	defer closeFresh()
	lr, err = c.List(p.Ctx, method, pageKey(method))
	return lr, err, nil
}

// schemaTransportErr reports whether err is a failure to talk to the server at
// all rather than a judgement about what it said.
func schemaTransportErr(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := errors.AsType[*mcpclient.RPCError](err); ok {
		return false
	}
	return transport.KindOf(err) != 0 || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// schemaEntryNames returns the string member key of each raw list entry.
func schemaEntryNames(items []json.RawMessage, key string) []string {
	out := make([]string, 0, len(items))
	for _, raw := range items {
		// Items are valid JSON (decoded from a page): their top-level
		// members are read without decoding the rest (a tool's
		// inputSchema), as a map would read them.
		var value []byte
		jsonMembers(raw, func(k string, v []byte) {
			if k == key {
				value = v
			}
		})
		var s string
		_ = json.Unmarshal(value, &s)
		out = append(out, s)
	}
	return out
}

// schemaSetDiff returns what b has that a lacks (added) and the reverse (removed).
func schemaSetDiff(a, b []string) (added, removed []string) {
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, s := range a {
		inA[s] = true
	}
	for _, s := range b {
		inB[s] = true
		if !inA[s] && !slices.Contains(added, s) {
			added = append(added, s)
		}
	}
	for _, s := range a {
		if !inB[s] && !slices.Contains(removed, s) {
			removed = append(removed, s)
		}
	}
	return added, removed
}

// schemaDiffText renders a set difference for a message.
func schemaDiffText(added, removed []string) string {
	var parts []string
	if len(added) > 0 {
		parts = append(parts, fmt.Sprintf("added %q", schemaClipList(added, 5)))
	}
	if len(removed) > 0 {
		parts = append(parts, fmt.Sprintf("missing %q", schemaClipList(removed, 5)))
	}
	if len(parts) == 2 {
		return parts[0] + ", " + parts[1]
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return "no difference"
}

func schemaClipList(ss []string, n int) []string {
	out := make([]string, 0, min(len(ss), n))
	for i, s := range ss {
		if i == n {
			out = append(out, fmt.Sprintf("… %d more", len(ss)-n))
			break
		}
		out = append(out, jsonrpc.Clip(s, 80))
	}
	return out
}

// schemaCache keeps one run's compiled tool schemas by content, so the
// checks and repetitions that judge the same schema compile it once, even
// when they ask at the same moment. Compile errors are kept too: they are
// the findings. It lives in the run's Memo, not in the process: a run
// holds what it compiled and nothing longer.
type schemaCache struct {
	mu    sync.Mutex
	m     map[[32]byte]*schemaCacheEntry
	bytes int // source bytes of the schemas kept
}

type schemaCacheEntry struct {
	once sync.Once
	s    *jsonschema.Schema
	err  error
}

type schemaCacheKey struct{}

// The cache's bounds: a server with 1,000 tools of distinct schemas fits
// (a few hundred bytes each, a few KB compiled); past either bound a
// schema is compiled every time it is asked for, and the ones kept stay
// (emptying the cache when full, as an earlier version did, made a server
// with more schemas than the bound compile every schema in every
// repetition).
const (
	schemaCacheMax      = 4096
	schemaCacheMaxBytes = 8 << 20
)

// schemaCompileTool compiles an inputSchema or outputSchema with the
// harness's bounds, once per run for each distinct text; the error is a
// *jsonschema.Error.
func schemaCompileTool(env check.Env, raw json.RawMessage) (*jsonschema.Schema, error) {
	raw = bytes.TrimSpace(raw)
	if env.Memo == nil { // a unit test's bare Env
		return jsonschema.Compile(raw, jsonschema.Limits{})
	}
	c := env.Memo.Do(schemaCacheKey{}, func() any { return &schemaCache{} }).(*schemaCache)
	key := sha256.Sum256(raw)
	c.mu.Lock()
	e := c.m[key]
	if e == nil {
		if len(c.m) >= schemaCacheMax || c.bytes+len(raw) > schemaCacheMaxBytes {
			c.mu.Unlock()
			return jsonschema.Compile(raw, jsonschema.Limits{})
		}
		if c.m == nil {
			c.m = map[[32]byte]*schemaCacheEntry{}
		}
		e = &schemaCacheEntry{}
		c.m[key] = e
		c.bytes += len(raw)
	}
	c.mu.Unlock()
	e.once.Do(func() { e.s, e.err = jsonschema.Compile(raw, jsonschema.Limits{}) })
	return e.s, e.err
}

// schemaDecode decodes JSON keeping numbers exact.
func schemaDecode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// schemaSameJSON compares two JSON texts by value (numbers as float64, key order
// ignored).
func schemaSameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
