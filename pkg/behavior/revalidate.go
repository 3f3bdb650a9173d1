package behavior

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// A stored run is only as good as the server answers it replayed. The key
// holds the case, the tool surface and the model, but a new build of the
// server may answer the same calls differently with the same tool list;
// so each stored run keeps the calls it made on the server, and before it
// is reused those calls are asked again and must get the same answer.

// ServerCall is one call a run made on the server, as stored with the run.
type ServerCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"` // canonical JSON
	// Result is Executor's CallResult.ResultHash: the whole answer, not
	// the clipped text the trajectory keeps.
	Result string `json:"result,omitempty"`
	// Unsafe says why the call cannot be asked again ("" when it can).
	Unsafe string `json:"unsafe,omitempty"`
}

// maxServerCalls bounds the calls stored with one run; a run with more is
// never reused (it would take as many calls to check as to redo).
const maxServerCalls = 64

// CallLog is an Executor that records every call reaching Inner: wrap the
// real executor with one per run, inside any decorator that answers calls
// itself (a fault, a planted payload), so that only the calls the server
// answered are recorded.
type CallLog struct {
	Inner Executor
	// ReadOnly are the tools annotated readOnlyHint: true, the only ones
	// safe to call again.
	ReadOnly map[string]bool

	mu       sync.Mutex
	calls    []ServerCall
	overflow bool
}

// ReadOnlyTools returns the names of the tools annotated readOnlyHint: true.
func ReadOnlyTools(tools []mcpclient.Tool) map[string]bool {
	ro := map[string]bool{}
	for _, t := range tools {
		if t.ReadOnly() {
			ro[t.Name] = true
		}
	}
	return ro
}

// Call implements Executor.
func (l *CallLog) Call(ctx context.Context, name string, args json.RawMessage, inputs map[string]json.RawMessage) (CallResult, error) {
	res, err := l.Inner.Call(ctx, name, args, inputs)
	if res.Stubbed && err == nil {
		// Never reached the server: its answer is the stub's text, which
		// is in the cache key, so there is nothing to ask again (a run
		// that called a stubbed tool was made anew on every run).
		return res, err
	}
	sc := ServerCall{Tool: name, Result: res.ResultHash}
	if b, cerr := report.CanonicalJSON(json.RawMessage(cmpArgs(args))); cerr == nil {
		sc.Args = b
	}
	if sc.Result == "" && err == nil {
		// An executor that is not an MCPExecutor (tests, benchmarks)
		// gives its whole answer as the content.
		sc.Result, _ = report.Hash(map[string]any{"content": res.Content, "isError": res.IsError})
	}
	switch {
	case res.InputRounds > 0:
		sc.Unsafe = "it asked for input (MRTR)"
	case err != nil:
		sc.Unsafe = "it ended the run"
	case !l.ReadOnly[name]:
		sc.Unsafe = "the tool is not annotated readOnlyHint: true"
	case sc.Args == nil:
		sc.Unsafe = "its arguments are not JSON"
	}
	l.mu.Lock()
	if len(l.calls) < maxServerCalls {
		l.calls = append(l.calls, sc)
	} else {
		l.overflow = true
	}
	l.mu.Unlock()
	return res, err
}

func cmpArgs(args json.RawMessage) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	return args
}

// Calls returns what was recorded; a run that made more calls than are
// kept gets one unsafe entry in their place.
func (l *CallLog) Calls() []ServerCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]ServerCall{}, l.calls...)
	if l.overflow {
		out = append(out, ServerCall{Unsafe: fmt.Sprintf("the run made more than %d server calls", maxServerCalls)})
	}
	return out
}

// Revalidation is what asking a stored run's calls again showed.
type Revalidation int

const (
	// Valid: every call answered as stored; the run may be reused.
	Valid Revalidation = iota
	// Unsafe: a call cannot be asked again; the run is made anew.
	Unsafe
	// Stale: the server answers a call differently now, and the same
	// way twice: it changed, and the run is made anew.
	Stale
	// Unstable: the tool answered the same call differently twice in a
	// row; it cannot be cached, and the run is made anew.
	Unstable
	// Unchecked: a call could not be asked (the server failed, the run's
	// deadline passed); the run is made anew.
	Unchecked
)

// Revalidator asks stored runs' calls again, each distinct (tool,
// arguments) once per plan however many runs made it, and a second time
// only when the first answer differs from a stored one, to tell a
// changed server from a tool that answers the same call differently.
type Revalidator struct {
	// Executor is the server's, undecorated.
	Executor Executor

	mu       sync.Mutex
	asked    map[string]*reissue
	unstable map[string]bool
	counts   [Unchecked + 1]int
}

type reissue struct {
	first, second    sync.Once
	hash1, hash2     string
	failed1, failed2 bool
}

// Check decides whether a stored run with these server calls may be
// reused. ctx bounds the calls; each is also bounded by the client's
// request timeout.
func (v *Revalidator) Check(ctx context.Context, calls []ServerCall) Revalidation {
	out := v.check(ctx, calls)
	v.mu.Lock()
	v.counts[out]++
	v.mu.Unlock()
	return out
}

func (v *Revalidator) check(ctx context.Context, calls []ServerCall) Revalidation {
	for _, c := range calls {
		if c.Unsafe != "" || c.Result == "" {
			return Unsafe
		}
	}
	for _, c := range calls {
		v.mu.Lock()
		if v.asked == nil {
			v.asked, v.unstable = map[string]*reissue{}, map[string]bool{}
		}
		k := c.Tool + "\x00" + string(c.Args)
		r := v.asked[k]
		if r == nil {
			r = &reissue{}
			v.asked[k] = r
		}
		unstable := v.unstable[c.Tool]
		v.mu.Unlock()
		if unstable {
			return Unstable
		}
		r.first.Do(func() { r.hash1, r.failed1 = v.ask(ctx, c) })
		if r.failed1 {
			return Unchecked
		}
		if r.hash1 == c.Result {
			continue
		}
		r.second.Do(func() { r.hash2, r.failed2 = v.ask(ctx, c) })
		switch {
		case r.failed2:
			return Unchecked
		case r.hash2 != r.hash1:
			v.mu.Lock()
			v.unstable[c.Tool] = true
			v.mu.Unlock()
			return Unstable
		default:
			return Stale
		}
	}
	return Valid
}

func (v *Revalidator) ask(ctx context.Context, c ServerCall) (hash string, failed bool) {
	if ctx.Err() != nil {
		return "", true
	}
	res, err := v.Executor.Call(ctx, c.Tool, c.Args, nil)
	if err != nil || res.InputRounds > 0 {
		return "", true
	}
	if res.ResultHash == "" {
		res.ResultHash, _ = report.Hash(map[string]any{"content": res.Content, "isError": res.IsError})
	}
	return res.ResultHash, false
}

// Count is how many Checks came out as r.
func (v *Revalidator) Count(r Revalidation) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.counts[r]
}

// Notes are sentences for the gate section, prefixed with the layer's
// name: the tools found to answer identically asked calls differently.
func (v *Revalidator) Notes(layer string) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var tools []string
	for t := range v.unstable {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	var notes []string
	for _, t := range tools {
		notes = append(notes, fmt.Sprintf("%s: tool %s answered the same call differently; runs that call it are not reused", layer, clip(t, 100)))
	}
	return notes
}
