package resilience

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// fakeServer is the server under test as an Executor: canned results per
// tool, and a count of the calls that reached it.
type fakeServer struct {
	results map[string]string
	errors  map[string]string

	mu    sync.Mutex
	calls map[string]int
	args  map[string][]string
}

func newFakeServer() *fakeServer {
	return &fakeServer{
		results: map[string]string{
			"get_weather": `{"location": "Seattle, WA", "temperature": 18, "conditions": "light rain"}`,
			"search_docs": `{"hits": [{"title": "Rain gear guide", "id": "doc-314"}]}`,
			"send_email":  `{"status": "queued"}`,
		},
		errors: map[string]string{},
		calls:  map[string]int{},
		args:   map[string][]string{},
	}
}

func (s *fakeServer) Call(_ context.Context, name string, args json.RawMessage, _ map[string]json.RawMessage) (behavior.CallResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[name]++
	s.args[name] = append(s.args[name], string(args))
	if e, ok := s.errors[name]; ok {
		return behavior.CallResult{Content: e, IsError: true}, nil
	}
	r, ok := s.results[name]
	if !ok {
		return behavior.CallResult{Content: "error -32602: unknown tool " + name, IsError: true}, nil
	}
	return behavior.CallResult{Content: r}, nil
}

func (s *fakeServer) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[name]
}

func boolp(b bool) *bool { return &b }

// serverTools are the fake server's tools: two read-only, one not.
func serverTools() []mcpclient.Tool {
	return []mcpclient.Tool{
		{Name: "get_weather", Description: "Get the current weather for a location.", InputSchema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`),
			Annotations: &mcpclient.ToolAnnotations{ReadOnlyHint: boolp(true)}},
		{Name: "search_docs", Description: "Search the help articles.", InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`),
			Annotations: &mcpclient.ToolAnnotations{ReadOnlyHint: boolp(true)}},
		{Name: "send_email", Description: "Send an email.", InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}}}`),
			Annotations: &mcpclient.ToolAnnotations{ReadOnlyHint: boolp(false)}},
	}
}

// behaviourFunc is a scripted model: given the conversation so far, its
// next turn. It is the whole "intelligence" of a test model.
type behaviourFunc func(req *llm.Request) llm.Message

// scripted is an llm.Provider driven by a behaviourFunc.
type scripted struct {
	id string
	fn behaviourFunc

	mu    sync.Mutex
	calls int
}

func (s *scripted) ID() string { return s.id }

func (s *scripted) Complete(_ context.Context, req *llm.Request) (*llm.Response, error) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	m := s.fn(req)
	// A behaviour may return the same message to concurrent runs: copy
	// the calls before filling in their ids.
	m.Calls = append([]llm.ToolCall(nil), m.Calls...)
	for i := range m.Calls {
		if m.Calls[i].ID == "" {
			m.Calls[i].ID = fmt.Sprintf("call_%d_%d", n, i)
		}
		if m.Calls[i].ArgumentsRaw == "" {
			m.Calls[i].ArgumentsRaw = string(m.Calls[i].Arguments)
		}
	}
	stop := "end_turn"
	if len(m.Calls) > 0 {
		stop = "tool_use"
	}
	return &llm.Response{Message: m, StopReason: stop, ServedModel: s.id + "-served", Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}, nil
}

func toolCall(name, args string) llm.ToolCall {
	return llm.ToolCall{Name: name, Arguments: json.RawMessage(args), ArgumentsRaw: args}
}

func calls(cs ...llm.ToolCall) llm.Message { return llm.Message{Calls: cs} }
func say(text string) llm.Message          { return llm.Message{Text: text} }

// turns counts the assistant turns so far.
func turns(req *llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == llm.Assistant {
			n++
		}
	}
	return n
}

// lastResults are the results of the latest tool turn.
func lastResults(req *llm.Request) []llm.ToolResult {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.ToolRole {
		return req.Messages[n-1].Results
	}
	return nil
}

// sees reports whether any tool result so far contains s.
func sees(req *llm.Request, s string) bool {
	for _, m := range req.Messages {
		for _, r := range m.Results {
			if strings.Contains(r.Content, s) {
				return true
			}
		}
	}
	return false
}

// weatherCase is one golden case expecting get_weather.
func weatherCase(faults ...string) golden.Case {
	return golden.Case{ID: "weather-seattle", Prompt: "What's the weather in Seattle, WA right now?", ExpectTool: "get_weather",
		ExpectArgs: map[string]any{"location": "Seattle, WA"}, Kind: golden.Hard, Faults: faults}
}
