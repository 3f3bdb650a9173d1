package check

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Env is the server under test as a check sees it. The driver builds it
// once per run; checks must not change it.
type Env struct {
	// Client is the shared connection, already probed as modern.
	Client *mcpclient.Client
	// Transport is "stdio" or "http".
	Transport string
	// HTTP is the raw layer on Streamable HTTP (nil on stdio): any body,
	// any headers, the status and raw bytes back.
	HTTP *transport.HTTPTransport
	// Stdio is the shared server process on stdio (nil on HTTP); its
	// WriteLine and Tap are the raw layer.
	Stdio *transport.StdioTransport
	// Fresh opens a new connection (a new process on stdio, probed; a new
	// connection without keep-alive on HTTP, which speaks as Client does
	// without a server/discover of its own), for checks
	// that must not share state with earlier requests or that send
	// initialize. The returned func closes it.
	Fresh func(ctx context.Context) (*mcpclient.Client, func(), error)
	// FreshLegacy opens a new connection whose first message is a legacy
	// initialize (the client's legacy handshake), to learn whether the
	// server is dual-era. It returns the client whatever initialize got
	// (its Info().Initialize is the answer) with the handshake's error;
	// the func closes it. Nil when the driver cannot open connections.
	FreshLegacy func(ctx context.Context) (*mcpclient.Client, func(), error)
	// Lists, when set, is the connection repetition run walks its lists
	// on (Pass.List, Pass.ListTools) instead of Client: on Streamable
	// HTTP each repetition's walk goes over a connection of its own
	// (kept alive from one request to the next), so that the one walk
	// every check judges is also the other connection's list that
	// TOOL-2, RSRC-1 and PROMPT-1 compare with
	// the first (a separate walk per repetition would ask every list
	// twice). Every call for one run returns the same client or error.
	Lists func(run int) (*mcpclient.Client, error)
	// Facts are what the driver learnt once, before the checks.
	Facts *Facts
	// CallTools names tools the user allows the harness to call although
	// they are not annotated readOnlyHint: true.
	CallTools map[string]bool
	// Memo holds what several checks derive from the server once per run
	// and share (the poisoning scan of the tool list). Execute sets a new
	// one when it is nil.
	Memo *Memo
	// Observed shares the plain requests of each repetition between its
	// checks (see Pass.Do). Execute sets one when it is nil.
	Observed *Observations
}

// Memo computes a value once per run for every check that asks for it.
// Keys are values of a type unexported by the package that computes them
// (as with context.Context values), so packages cannot collide.
type Memo struct {
	mu      sync.Mutex
	entries map[any]*memoEntry
}

type memoEntry struct {
	once sync.Once
	v    any
}

// Do returns the value for key, calling compute for the first caller
// only; later callers wait for it. A compute that panics leaves nil.
func (m *Memo) Do(key any, compute func() any) any {
	m.mu.Lock()
	if m.entries == nil {
		m.entries = map[any]*memoEntry{}
	}
	e := m.entries[key]
	if e == nil {
		e = &memoEntry{}
		m.entries[key] = e
	}
	m.mu.Unlock()
	// Outside the lock: the computation makes requests, and checks that
	// want other keys must not wait for it.
	e.once.Do(func() { e.v = compute() })
	return e.v
}

// Facts are read once per run and shared by every check, to choose targets
// (which tool to call, which resource to read). A check verifies what it
// judges with requests of its own.
type Facts struct {
	Discover     *mcpclient.DiscoverResult
	DiscoverRaw  json.RawMessage
	Capabilities map[string]json.RawMessage
	Tools        []mcpclient.Tool
	Dropped      []mcpclient.DroppedTool
	ToolsErr     error
	// ToolsCut says the listing stopped with a cursor left (too many
	// pages, a repeated cursor): a tool missing from Tools may be listed.
	ToolsCut     bool
	Resources    []mcpclient.Resource
	ResourcesErr error
	Templates    []mcpclient.ResourceTemplate
	TemplatesErr error
	Prompts      []mcpclient.Prompt
	PromptsErr   error
	// seen are the requests GatherFacts made on the shared client, to be
	// repetition 0's observations of them (Observations.seed).
	seen []seenFact
}

// seenFact is one request GatherFacts made, as Pass.Do, List or ListTools
// would have observed it.
type seenFact struct {
	key observeKey
	v   observed
}

// CapabilitiesUnread says why no capability can be judged absent: the
// server gave no complete server/discover result to read them from
// (DISC-1's or DISC-8's finding), "" when it gave one. A check whose rule is about what the
// server declares skips with it instead of failing on every feature.
func (f *Facts) CapabilitiesUnread() string {
	switch {
	case f.Discover == nil:
		return "the server gave no server/discover result (DISC-1), so there are no capabilities to judge against"
	case f.Discover.ResultType == "input_required":
		return "the server answered server/discover with input_required (DISC-8), so there are no capabilities to judge against"
	}
	return ""
}

// Has reports whether the server declared a capability in server/discover.
func (f *Facts) Has(capability string) bool {
	_, ok := f.Capabilities[capability]
	return ok
}

// CapabilityNames lists the declared capabilities.
func (f *Facts) CapabilityNames() []string { return slices.Sorted(maps.Keys(f.Capabilities)) }

// MayCall reports whether the harness may call a tool: it has no side
// effects by default, so only tools annotated readOnlyHint: true or named by
// the user (--call-tool) are called.
func (e Env) MayCall(t mcpclient.Tool) bool { return t.ReadOnly() || e.CallTools[t.Name] }

// CallableTools are the tools MayCall allows, in the server's order.
func (e Env) CallableTools() []mcpclient.Tool {
	var out []mcpclient.Tool
	for _, t := range e.Facts.Tools {
		if e.MayCall(t) {
			out = append(out, t)
		}
	}
	return out
}

// Uncalled is how many listed tools MayCall refuses: the ones --call-tool
// could allow. A count, not the tools: skips ask it in every run, and on a
// server of 1,000 tools a copy each time was a tenth of what a run
// allocates.
func (e Env) Uncalled() int {
	if e.Facts == nil {
		return 0
	}
	n := 0
	for _, t := range e.Facts.Tools {
		if !e.MayCall(t) {
			n++
		}
	}
	return n
}

// evidenceHeaders are the request headers worth showing.
var evidenceHeaders = []string{"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "Origin", "Content-Type", "Accept"}

// FromResponse turns a client response into evidence.
func FromResponse(resp *mcpclient.Response) *Evidence {
	if resp == nil {
		return nil
	}
	ev := &Evidence{Request: excerpt(resp.Sent, 400)}
	if resp.SentHeader != nil {
		ev.Transport = "http"
		ev.Headers = pickHeaders(resp.SentHeader)
	} else {
		ev.Transport = "stdio"
	}
	if ex := resp.Exchange; ex != nil {
		if ex.HTTP != nil {
			ev.Status = ex.HTTP.Status
			ev.Response = excerpt(ex.HTTP.Body, 600)
		} else if ex.Response != nil {
			ev.Response = messageExcerpt(ex.Response, 600)
		}
	}
	return ev
}

// messageExcerpt is excerpt(json.Marshal(m), n) without compacting more of
// a large result than the excerpt shows: a page of 1,000 tools is 370 KB,
// and its evidence is the first 600 bytes, asked for by many checks.
func messageExcerpt(m *jsonrpc.Message, n int) string {
	if len(m.Result) <= 4*n {
		b, _ := json.Marshal(m)
		return excerpt(b, n)
	}
	// The members before result, as Marshal writes them (its order is the
	// struct's: result comes after jsonrpc, id, method and params).
	head := *m
	head.Result, head.Error = nil, nil
	b, err := json.Marshal(&head)
	if err != nil || len(b) < 2 {
		return ""
	}
	b = b[:len(b)-1]
	if len(b) > 1 {
		b = append(b, ',')
	}
	b = append(b, `"result":`...)
	// Where the result fills the excerpt, what comes after it is never
	// shown; where it does not (mostly white space), Marshal it is.
	b, full := appendCompactPrefix(b, m.Result, n+1)
	if !full {
		all, _ := json.Marshal(m)
		return excerpt(all, n)
	}
	return excerpt(b, n)
}

// appendCompactPrefix appends src, which must be valid JSON, compacted as
// json.Marshal compacts a json.RawMessage (no white space outside strings;
// <, >, &, U+2028 and U+2029 escaped), until dst is at least limit bytes
// long; full says it got there.
func appendCompactPrefix(dst, src []byte, limit int) (out []byte, full bool) {
	const hex = "0123456789abcdef"
	inString, escaped := false, false
	for i := 0; i < len(src) && len(dst) < limit; i++ {
		c := src[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			escaped = false
			continue
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			dst = append(dst, `\u202`...)
			dst = append(dst, hex[src[i+2]&0xF])
			i += 2
			escaped = false
			continue
		}
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			continue
		}
		dst = append(dst, c)
	}
	return dst, len(dst) >= limit
}

// FromRaw turns a raw HTTP exchange into evidence.
func FromRaw(body []byte, h http.Header, rr *transport.RawResponse) *Evidence {
	ev := &Evidence{Transport: "http", Request: excerpt(body, 400), Headers: pickHeaders(h)}
	if rr != nil {
		ev.Status = rr.Status
		ev.Response = excerpt(rr.Body, 600)
	}
	return ev
}

func pickHeaders(h http.Header) map[string]string {
	out := map[string]string{}
	for _, k := range evidenceHeaders {
		if vs := h.Values(k); len(vs) > 0 {
			out[k] = strings.Join(vs, ", ")
		}
	}
	for k, vs := range h {
		if strings.HasPrefix(http.CanonicalHeaderKey(k), "Mcp-Param-") {
			out[k] = strings.Join(vs, ", ")
		}
	}
	return out
}

func excerpt(b []byte, n int) string { return jsonrpc.Clip(string(b), n) }
