package llm_test

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

func TestParseSpec(t *testing.T) {
	cases := []struct {
		in   string
		want llm.Spec
		err  string
	}{
		{in: "openai:gpt-5-mini", want: llm.Spec{Endpoint: "openai", Model: "gpt-5-mini"}},
		{in: "anthropic:claude-sonnet-5-5", want: llm.Spec{Endpoint: "anthropic", Model: "claude-sonnet-5-5"}},
		{in: "openai-compatible:llama3.1:8b@http://localhost:11434/v1",
			want: llm.Spec{Endpoint: "openai-compatible", Model: "llama3.1:8b", BaseURL: "http://localhost:11434/v1"}},
		// The URL starts at the first "@http": a model name may hold "@".
		{in: "openai-compatible:org@team/model@https://proxy.example/v1",
			want: llm.Spec{Endpoint: "openai-compatible", Model: "org@team/model", BaseURL: "https://proxy.example/v1"}},
		{in: "azure:gpt-4o", want: llm.Spec{Endpoint: "azure", Model: "gpt-4o"}},
		{in: "gpt-4o", err: `model "gpt-4o" has no endpoint prefix`},
		{in: ":gpt-4o", err: "has no endpoint prefix"},
		{in: "openai:", err: `names no model after "openai:"`},
		{in: "openai-compatible:llama3", err: "has no @BASE_URL (write openai-compatible:MODEL@BASE_URL"},
		{in: "openai-compatible:@http://x", err: "names no model before @"},
	}
	for _, c := range cases {
		got, err := llm.ParseSpec(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseSpec(%q) err = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if got.String() != c.in {
			t.Errorf("String() = %q, want %q", got.String(), c.in)
		}
	}
}

func TestNewErrors(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-secret-value-1234", "EMPTY": " "}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	eps := map[string]config.Endpoint{
		"zeta":     {Dialect: "openai-chat", BaseURL: "http://z.example/v1"},
		"alpha":    {Dialect: "openai-chat", BaseURL: "http://a.example/v1"},
		"badlect":  {Dialect: "gemini-native", BaseURL: "http://b.example"},
		"nourl":    {Dialect: "openai-chat"},
		"ftp":      {Dialect: "openai-chat", BaseURL: "ftp://x.example"},
		"creds":    {Dialect: "openai-chat", BaseURL: "https://user:pw@x.example"},
		"needskey": {Dialect: "anthropic-messages", BaseURL: "https://x.example", KeyEnv: "MY_KEY"},
		"emptykey": {Dialect: "openai-chat", BaseURL: "https://x.example", KeyEnv: "EMPTY"},
		"hdr":      {Dialect: "openai-chat", BaseURL: "https://x.example", Headers: map[string]string{"X-T": "${NOPE}"}},
	}
	cases := []struct{ spec, err string }{
		{"anthropic:claude-x", "environment variable ANTHROPIC_API_KEY is not set (export the API key in it, or name another variable with key-env under endpoints.anthropic)"},
		{"mystery:m", `unknown endpoint "mystery" (known: openai, anthropic, openai-compatible, alpha, badlect, creds, emptykey, ftp, hdr, needskey, nourl, zeta;`},
		{"alpah:m", `unknown endpoint "alpah": did you mean alpha:m? (known: openai, anthropic, openai-compatible, alpha,`},
		{"badlect:m", `unknown dialect "gemini-native" (use openai-responses, openai-chat or anthropic-messages)`},
		{"nourl:m", `endpoint "nourl" has no base-url`},
		{"ftp:m", `base URL "ftp://x.example" is not an http(s) URL`},
		{"creds:m", "base URL carries credentials"},
		{"needskey:m", "environment variable MY_KEY is not set"},
		{"emptykey:m", "environment variable EMPTY is not set"},
		{"hdr:m", "header X-T: environment variable NOPE is not set"},
		{"openai-compatible:m@http//broken", `is not an http(s) URL`},
	}
	for _, c := range cases {
		_, err := llm.New(c.spec, eps, lookup, llm.Options{})
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("New(%q) err = %v, want %q", c.spec, err, c.err)
			continue
		}
		if strings.Contains(err.Error(), "sk-secret-value-1234") {
			t.Errorf("New(%q) error leaks a key: %v", c.spec, err)
		}
	}
	// Local compatible servers need no key.
	if _, err := llm.New("openai-compatible:m@http://localhost:8000/v1", nil, lookup, llm.Options{}); err != nil {
		t.Errorf("a keyless local server was refused: %v", err)
	}
	// A configured endpoint without key-env sends no auth.
	if _, err := llm.New("alpha:m", eps, lookup, llm.Options{}); err != nil {
		t.Errorf("alpha: %v", err)
	}
}

// The config file's loader refuses a dialect by its own list, at the
// key's line: it must be the list the wire speaks.
func TestConfigKnowsTheDialectsSpoken(t *testing.T) {
	spoken := []string{llm.DialectOpenAIResponses, llm.DialectOpenAIChat, llm.DialectAnthropic}
	if strings.Join(config.Dialects, ",") != strings.Join(spoken, ",") {
		t.Errorf("config.Dialects %q, the wire speaks %q", config.Dialects, spoken)
	}
}
