package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
)

// The production clients decode the response examples of the providers'
// API references (llmfake/testdata/apidocs, each file naming its source):
// the fake serves each example body verbatim, so what is decoded is the
// documented JSON, not the fake's rendering of it.

func docBody(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("llmfake", "testdata", "apidocs", name))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Body json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(b, &d); err != nil || len(d.Body) == 0 {
		t.Fatalf("%s: no body (%v)", name, err)
	}
	return string(d.Body)
}

func TestClientsDecodeDocumentedResponses(t *testing.T) {
	weather := func(name string) []llm.Tool {
		return []llm.Tool{{Name: name, Description: "Weather.", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string"}},"required":["location"]}`)}}
	}
	chat := func(f *llmfake.Server) string { return "openai-compatible:gpt-5.4@" + f.URL + "/v1" }
	responses := func(*llmfake.Server) string { return "openai:gpt-5.4" }
	anthropic := func(*llmfake.Server) string { return "anthropic:claude-3-5-sonnet" }
	type call struct{ id, name, args string }
	cases := []struct {
		file   string
		spec   func(*llmfake.Server) string
		tools  []llm.Tool
		text   string
		calls  []call
		stop   string
		usage  llm.Usage
		served string
	}{
		{file: "openai-chat/response-default.json", spec: chat, text: "Hello! How can I assist you today?", stop: "end_turn",
			usage: llm.Usage{InputTokens: 19, OutputTokens: 10}, served: "gpt-5.4"},
		{file: "openai-chat/response-functions.json", spec: chat, tools: weather("get_current_weather"),
			calls: []call{{"call_abc123", "get_current_weather", `{"location":"Boston, MA"}`}}, stop: "tool_use",
			usage: llm.Usage{InputTokens: 82, OutputTokens: 17}, served: "gpt-4o-mini"},
		{file: "openai-responses/response-text.json", spec: responses, text: "In a peaceful grove beneath a silver moon, a unicorn named Lumina discovered a hidden pool that reflected the stars. As she dipped her horn into the water, the pool began to shimmer, revealing a pathway to a magical realm of endless night skies. Filled with wonder, Lumina whispered a wish for all who dream to find their own hidden magic, and as she glanced back, her hoofprints sparkled like stardust.",
			stop: "end_turn", usage: llm.Usage{InputTokens: 36, OutputTokens: 87}, served: "gpt-5.4"},
		{file: "openai-responses/response-functions.json", spec: responses, tools: weather("get_current_weather"),
			calls: []call{{"call_unLAR8MvFNptuiZK6K6HCy5k", "get_current_weather", `{"location":"Boston, MA","unit":"celsius"}`}}, stop: "tool_use",
			usage: llm.Usage{InputTokens: 291, OutputTokens: 23}, served: "gpt-5.4"},
		{file: "openai-responses/response-reasoning.json", spec: responses, text: "The classic tongue twister...", stop: "end_turn",
			usage: llm.Usage{InputTokens: 81, OutputTokens: 1035, ReasoningTokens: 832}, served: "o1-2024-12-17"},
		{file: "anthropic-messages/response-basic.json", spec: anthropic, text: "Hello!", stop: "end_turn",
			usage: llm.Usage{InputTokens: 12, OutputTokens: 6}, served: "claude-3-5-sonnet-20240620"},
		// Abridged on the page: no usage, so none is decoded.
		{file: "anthropic-messages/response-tool-use.json", spec: anthropic, tools: weather("get_weather"),
			text:  "<thinking>get_weather関数を呼び出す必要があり、ユーザーはSFを求めています。これはおそらくサンフランシスコ、カリフォルニア州のことでしょう。</thinking>",
			calls: []call{{"toolu_01A09q90qw90lq917835lq9", "get_weather", `{"location":"San Francisco, CA","unit":"celsius"}`}}, stop: "tool_use",
			served: "claude-3-opus-20240229"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{}, llmfake.Reply{RawBody: docBody(t, c.file)})
			p := newProvider(t, f, c.spec(f), llm.Options{})
			resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "What is the weather like in Boston today?"}}, Tools: c.tools})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != c.text {
				t.Errorf("text %q, want %q", resp.Message.Text, c.text)
			}
			if len(resp.Message.Calls) != len(c.calls) {
				t.Fatalf("calls %+v, want %v", resp.Message.Calls, c.calls)
			}
			for i, w := range c.calls {
				g := resp.Message.Calls[i]
				if g.ID != w.id || g.Name != w.name || g.ParseError != "" {
					t.Errorf("call %d = %+v, want id %s name %s", i, g, w.id, w.name)
				}
				jsonEq(t, "arguments", g.Arguments, []byte(w.args))
			}
			if resp.StopReason != c.stop {
				t.Errorf("stop %q, want %q", resp.StopReason, c.stop)
			}
			if resp.Usage != c.usage {
				t.Errorf("usage %+v, want %+v", resp.Usage, c.usage)
			}
			if resp.ServedModel != c.served {
				t.Errorf("served model %q, want %q", resp.ServedModel, c.served)
			}
		})
	}
}

// Anthropic's documented error body decodes into the APIError the
// pipeline reports: status, type, message.
func TestClientDecodesDocumentedAnthropicError(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Reply{Status: 400, RawBody: docBody(t, "anthropic-messages/error-invalid-request.json")})
	p := newProvider(t, f, "anthropic:claude-3-5-sonnet", llm.Options{})
	_, err := p.Complete(context.Background(), userTurn("hi"))
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want an *llm.APIError", err)
	}
	if apiErr.Status != 400 || apiErr.Type != "invalid_request_error" || apiErr.Message != `messages: roles must alternate between "user" and "assistant"` || apiErr.Retryable {
		t.Errorf("APIError = %+v", apiErr)
	}
}
