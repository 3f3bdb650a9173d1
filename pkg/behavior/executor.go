package behavior

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Executor runs the model's tool calls. Implementations must be safe for
// concurrent use: the runner executes many runs at once.
type Executor interface {
	// Call runs one tool call with the model's arguments (a JSON object);
	// inputs answer MRTR input requests by key. What the server answered —
	// a result, a tool error, a JSON-RPC error — is a CallResult the model
	// sees, never an error. The error is for what ends the run: the server
	// asked for input the case does not have (*MissingInputError), or the
	// harness lost the server.
	Call(ctx context.Context, name string, args json.RawMessage, inputs map[string]json.RawMessage) (CallResult, error)
}

// CallResult is what a tool call gave the model.
type CallResult struct {
	Content string
	IsError bool
	// Stubbed is true when a configured stub answered instead of the server.
	Stubbed bool
	// Injected is true when the harness answered in the server's place
	// in Layer 2 (a fault, the attacker's tool, a call carrying the
	// canary): what the model saw says nothing of the tool, so it is no
	// error of the tool's and no timing of it.
	Injected bool
	// RPCError is true when IsError is the server's JSON-RPC error rather
	// than a tool result with isError.
	RPCError bool
	// InputRounds counts MRTR retries answered from the case's inputs.
	InputRounds int
	Duration    time.Duration
	// ResultHash is the hash of the canonical JSON of the server's whole
	// answer (the result without _meta, or the JSON-RPC error), not of
	// the clipped Content: the cache compares it to decide whether the
	// server still answers a stored run the same way. Empty when the
	// server was not asked.
	ResultHash string
}

// MissingInputError is an MRTR input request the case's inputs do not
// answer: the run fails with this reason rather than inventing an answer.
type MissingInputError struct {
	Tool string
	// Keys are the inputRequests keys without an answer; Asks describes
	// each ("elicitation/create: Send an email to …?").
	Keys []string
	Asks []string
}

func (e *MissingInputError) Error() string {
	var quoted []string
	for _, k := range e.Keys {
		quoted = append(quoted, fmt.Sprintf("%q", k))
	}
	msg := fmt.Sprintf("tool %s asked for input %s (%s) and the case has no answer for it: add it under the case's inputs (inputs: {%s: …})",
		e.Tool, strings.Join(quoted, ", "), strings.Join(e.Asks, "; "), e.Keys[0])
	return msg
}

// MCPExecutor executes calls on an MCP server through the client. A tool
// named in Stubs never reaches the server: its canned text is the result.
type MCPExecutor struct {
	Client *mcpclient.Client
	// Stubs are eval.stubs: tool name → canned result text.
	Stubs map[string]string
	// MaxResultBytes bounds the text the model sees of one result
	// (default DefaultMaxResultBytes).
	MaxResultBytes int
	// Reopen, when set, starts the server again once a call has found it
	// gone (a stdio process that exited): the runs in flight then err,
	// and the next call gets a new process, as a client reconnects, so one
	// crash does not take every later run with it. At most MaxReopens
	// times; nil: a lost server stays lost.
	Reopen func(ctx context.Context) (*mcpclient.Client, error)

	mu       sync.Mutex
	lost     *mcpclient.Client // the client a call found gone
	reopened int
}

// MaxReopens bounds how often MCPExecutor starts a lost server again: a
// server that dies on every call would otherwise be started once a run.
const MaxReopens = 10

// client is the client to call with: a new one when the last was lost.
func (x *MCPExecutor) client(ctx context.Context) *mcpclient.Client {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lost != nil && x.lost == x.Client && x.Reopen != nil && x.reopened < MaxReopens {
		x.reopened++
		if c, err := x.Reopen(ctx); err == nil {
			x.Client, x.lost = c, nil
		}
	}
	return x.Client
}

// DefaultMaxResultBytes is how much of one tool result a model sees: more
// than any sensible answer, less than a runaway server can send.
const DefaultMaxResultBytes = 16 << 10

// Call implements Executor.
func (x *MCPExecutor) Call(ctx context.Context, name string, args json.RawMessage, inputs map[string]json.RawMessage) (CallResult, error) {
	start := time.Now()
	limit := x.MaxResultBytes
	if limit <= 0 {
		limit = DefaultMaxResultBytes
	}
	if text, ok := x.Stubs[name]; ok {
		return CallResult{Content: clip(text, limit), Stubbed: true, Duration: time.Since(start)}, nil
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	cl := x.client(ctx)
	start = time.Now() // a new process's start is not the tool's time
	res, err := cl.CallTool(ctx, name, args)
	if err == nil && res.InputRequired != nil {
		var missing *MissingInputError
		res, err = cl.Resolve(ctx, res, answerFrom(name, inputs, &missing))
		if missing != nil {
			return CallResult{Duration: time.Since(start)}, missing
		}
	}
	out := CallResult{Duration: time.Since(start)}
	if res != nil && res.Rounds > 1 {
		out.InputRounds = res.Rounds - 1
	}
	var rpc *mcpclient.RPCError
	switch {
	case errors.As(err, &rpc):
		// A JSON-RPC error is an answer: the model sent arguments the
		// server rejects, or a tool it does not know. A real client shows
		// the model the error, so the model may correct itself.
		out.Content = clip(fmt.Sprintf("error %d: %s", rpc.Err.Code, rpc.Err.Message), limit)
		out.IsError, out.RPCError = true, true
		out.ResultHash, _ = report.Hash(map[string]any{"error": map[string]any{"code": rpc.Err.Code, "message": rpc.Err.Message}})
		return out, nil
	case transport.Lost(err):
		x.mu.Lock()
		x.lost = cl
		x.mu.Unlock()
		return out, fmt.Errorf("%s: calling tool %s: %w", report.ServerLost, name, err)
	case err != nil:
		return out, fmt.Errorf("calling tool %s: %w", name, err)
	}
	out.ResultHash = resultHash(res.Response.Result)
	tr, err := res.Tool()
	if err != nil {
		out.Content, out.IsError = clip("the server's result could not be read: "+err.Error(), limit), true
		return out, nil
	}
	text := tr.TextContent()
	if text == "" && len(tr.StructuredContent) > 0 {
		text = string(tr.StructuredContent)
	}
	if text == "" && len(tr.Content) > 0 {
		b, _ := json.Marshal(tr.Content)
		text = string(b)
	}
	out.Content, out.IsError = clip(text, limit), tr.IsError
	return out, nil
}

// resultHash hashes a tools/call result without its _meta, which carries
// protocol bookkeeping (trace ids, timings) rather than the answer.
func resultHash(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) == nil && m != nil {
		delete(m, "_meta")
		h, _ := report.Hash(m)
		return h
	}
	h, _ := report.Hash(raw)
	return h
}

// answerFrom answers input requests from a case's inputs; a key it lacks
// stops the loop and is reported through missing.
func answerFrom(tool string, inputs map[string]json.RawMessage, missing **MissingInputError) mcpclient.InputHandler {
	return func(_ context.Context, reqs map[string]mcpclient.InputRequest) (map[string]json.RawMessage, error) {
		keys := make([]string, 0, len(reqs))
		for k := range reqs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := map[string]json.RawMessage{}
		var m *MissingInputError
		for _, k := range keys {
			if v, ok := inputs[k]; ok {
				out[k] = v
				continue
			}
			if m == nil {
				m = &MissingInputError{Tool: tool}
			}
			m.Keys = append(m.Keys, k)
			m.Asks = append(m.Asks, describeAsk(reqs[k]))
		}
		if m != nil {
			*missing = m
			return nil, m
		}
		return out, nil
	}
}

// describeAsk is "elicitation/create: <message>", clipped: enough for a
// reader to know what to put in inputs.
func describeAsk(r mcpclient.InputRequest) string {
	var p struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(r.Params, &p)
	s := r.Method
	if p.Message != "" {
		s += ": " + p.Message
	}
	return clip(s, 200)
}
