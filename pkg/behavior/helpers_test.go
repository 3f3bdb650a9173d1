package behavior

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// refServer is the reference MCP server over real Streamable HTTP, with a
// count of the tools/call requests it received per tool.
type refServer struct {
	client *mcpclient.Client
	mu     sync.Mutex
	calls  map[string]int
}

func (r *refServer) callsTo(tool string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[tool]
}

func newRefServer(t testing.TB) *refServer {
	t.Helper()
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	rs := &refServer{calls: map[string]int{}}
	h := srv.Handler()
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
			rs.mu.Lock()
			rs.calls[m.Params.Name]++
			rs.mu.Unlock()
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, req)
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	tr, err := transport.NewHTTP(transport.HTTPConfig{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mcpclient.Connect(ctx, tr, mcpclient.Config{RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("connecting to the reference server: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	rs.client = c
	return rs
}

// turn is one scripted model reply: tool calls, or a final text.
type turn struct {
	calls []llm.ToolCall
	text  string
}

func call(name, args string) llm.ToolCall {
	return llm.ToolCall{Name: name, Arguments: json.RawMessage(args), ArgumentsRaw: args}
}

// script is what a scripted model does in one run: its turns in order.
// After the last turn it answers "done".
type script []turn

// scripted is a Provider whose "intelligence" is a table: for each prompt,
// the scripts of successive runs (the i-th run that starts with the prompt
// follows scripts[i % len]). A run's script travels in the assistant
// message's Raw field, as a real dialect's provider-native turn would.
type scripted struct {
	id      string
	scripts map[string][]script
	usage   llm.Usage
	latency time.Duration
	served  string

	mu                    sync.Mutex
	starts                map[string]int
	calls                 atomic.Int64
	inFlight, maxInFlight atomic.Int64
}

func newScripted(id string, scripts map[string][]script) *scripted {
	return &scripted{id: id, scripts: scripts, starts: map[string]int{}, usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}
}

func (s *scripted) ID() string { return s.id }

func (s *scripted) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	s.calls.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxInFlight.Load()
		if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	if s.latency > 0 {
		select {
		case <-time.After(s.latency):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	prompt := req.Messages[0].Text
	var which, step int
	for _, m := range req.Messages {
		if m.Role == llm.Assistant {
			if step == 0 {
				fmt.Sscanf(string(m.Raw), "%d", &which)
			}
			step++
		}
	}
	if step == 0 {
		s.mu.Lock()
		which = s.starts[prompt]
		s.starts[prompt]++
		s.mu.Unlock()
	}
	resp := &llm.Response{StopReason: "end_turn", Usage: s.usage, ServedModel: s.served, Latency: s.latency, Attempts: 1}
	resp.Message = llm.Message{Role: llm.Assistant, Raw: json.RawMessage(fmt.Sprint(which))}
	scs := s.scripts[prompt]
	if len(scs) == 0 {
		resp.Message.Text = "I cannot help with that."
		return resp, nil
	}
	sc := scs[which%len(scs)]
	if step >= len(sc) {
		resp.Message.Text = "done"
		return resp, nil
	}
	t := sc[step]
	resp.Message.Text = t.text
	for i, c := range t.calls {
		c.ID = fmt.Sprintf("call_%d_%d", step, i)
		if c.Arguments != nil && !json.Valid(c.Arguments) {
			c.ParseError, c.Arguments = "invalid JSON", nil
		}
		resp.Message.Calls = append(resp.Message.Calls, c)
	}
	if len(t.calls) > 0 {
		resp.StopReason = "tool_use"
	}
	return resp, nil
}

// judgeFake answers judge requests: verdict is called with the user text
// and returns the JSON (or an error).
type judgeFake struct {
	id      string
	verdict func(user string) (string, error)
	calls   atomic.Int64
}

func (j *judgeFake) ID() string { return j.id }

func (j *judgeFake) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	j.calls.Add(1)
	if req.Output == nil {
		return nil, fmt.Errorf("judge request without an output schema")
	}
	out, err := j.verdict(req.Messages[0].Text)
	if err != nil {
		return nil, err
	}
	return &llm.Response{Output: json.RawMessage(out), Message: llm.Message{Role: llm.Assistant, Text: out}, Usage: llm.Usage{InputTokens: 300, OutputTokens: 30}}, nil
}

// The cases the tests use, on the reference server's tools.
func weatherCase() golden.Case {
	return golden.Case{ID: "weather", Prompt: "What's the weather in Seattle?", ExpectTool: "get_weather",
		ExpectArgs: map[string]any{"location": "Seattle, WA"}, ArgMatch: map[string]golden.Matcher{"location": {Kind: golden.MatchSemantic}}, Kind: golden.Hard}
}

func invoiceCase() golden.Case {
	return golden.Case{ID: "invoices", Prompt: "List the open invoices of customer C1234.", ExpectTool: "search_invoices",
		ExpectArgs: map[string]any{"customer_id": "C1234", "status": "open"}, Kind: golden.Soft}
}

func negativeCase() golden.Case {
	return golden.Case{ID: "hello", Prompt: "Say hello.", Negative: true, Kind: golden.Hard}
}

func chainCase() golden.Case {
	return golden.Case{ID: "chain", Prompt: "Check the weather in Paris, then count to 3.", ExpectSequence: []string{"get_weather", "slow_count"},
		ExpectSequenceArgs: []map[string]any{{"location": "Paris"}, {"n": 3}}, Kind: golden.Hard}
}

func emailCase(inputs bool) golden.Case {
	c := golden.Case{ID: "email", Prompt: "Email bob@example.com that the report is ready.", ExpectTool: "send_email",
		ExpectArgs: map[string]any{"to": "bob@example.com"}, Kind: golden.Hard}
	if inputs {
		c.Inputs = map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)}
	}
	return c
}

func set(cases ...golden.Case) *golden.Set { return &golden.Set{Path: "tasks.yaml", Cases: cases} }

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
