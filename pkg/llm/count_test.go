package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
)

var countTools = []llm.Tool{
	{Name: "get_weather", Description: "Current weather for a city.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
	{Name: "files.read", Description: "Read a file by path.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
}

// Each counting API is asked twice, with the tools and without them, in
// the dialect's own request body cut to the fields the endpoint takes;
// the fake refuses the fields the real endpoints refuse (max_tokens on
// count_tokens, store on input_tokens, a bearer key on Gemini's native
// API), so a wrong body fails here.
func TestCountToolTokensAtEachProvider(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{})
	cases := []struct {
		spec, provider, path string
	}{
		{"anthropic:claude-sonnet-4-5", llm.CountAnthropic, "/v1/messages/count_tokens"},
		{"openai:gpt-5-mini", llm.CountOpenAI, "/v1/responses/input_tokens"},
		{"openai-compatible:gemini-2.5-flash@" + f.URL + "/v1beta/openai", llm.CountGemini, "/v1beta/models/gemini-2.5-flash:countTokens"},
	}
	for _, c := range cases {
		t.Run(c.provider, func(t *testing.T) {
			before := len(f.Requests())
			p, err := llm.New(c.spec, f.Endpoints(), f.LookupEnv, llm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.(llm.ToolCounter).CountToolTokens(context.Background(), countTools)
			if err != nil {
				t.Fatal(err)
			}
			reqs := f.Requests()[before:]
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2 (with and without tools)", len(reqs))
			}
			with, without := reqs[0], reqs[1]
			for _, r := range reqs {
				if !r.Count || r.Status != http.StatusOK || r.Path != c.path {
					t.Fatalf("request %s status %d count %v rejected %q", r.Path, r.Status, r.Count, r.Rejected)
				}
				if r.LastUserText() != llm.CountProbe {
					t.Errorf("probe message %q, want %q", r.LastUserText(), llm.CountProbe)
				}
			}
			if names := with.ToolNames(); len(names) != 2 || names[0] != "get_weather" || names[1] != "files_read" {
				t.Errorf("tools sent %v, want the provider names get_weather, files_read", names)
			}
			if len(without.Tools) != 0 {
				t.Errorf("the count without tools sent %v", without.ToolNames())
			}
			want := llm.ToolCount{Provider: c.provider, Endpoint: "POST " + c.path, WithTools: with.Counted, WithoutTools: without.Counted, Tokens: with.Counted - without.Counted}
			if *got != want || got.Tokens <= 0 {
				t.Errorf("count %+v, want %+v", *got, want)
			}
		})
	}
}

// A refusal is an error naming the provider's message, never the key; a
// dialect without a counting API says so without a request.
func TestCountToolTokensErrors(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{Count: func(*llmfake.Request) llmfake.Reply {
		return llmfake.Reply{Status: http.StatusNotFound, Message: "model not found: " + llmfake.DefaultKey}
	}})
	p, err := llm.New("anthropic:claude-x", f.Endpoints(), f.LookupEnv, llm.Options{MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.(llm.ToolCounter).CountToolTokens(context.Background(), countTools)
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") || strings.Contains(err.Error(), llmfake.DefaultKey) {
		t.Fatalf("err = %v, want the 404 with the key redacted", err)
	}
	before := len(f.Requests())
	p, err = llm.New("openai-compatible:llama3@"+f.URL+"/v1", nil, f.LookupEnv, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.(llm.ToolCounter).CountToolTokens(context.Background(), countTools); !errors.Is(err, llm.ErrNoCountEndpoint) {
		t.Fatalf("err = %v, want ErrNoCountEndpoint", err)
	}
	if n := len(f.Requests()) - before; n != 0 {
		t.Fatalf("%d requests for an endpoint without a counting API", n)
	}
}
