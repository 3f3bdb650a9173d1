package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ToolCounter is a provider whose API counts the tokens of a request
// without running the model.
type ToolCounter interface {
	// CountToolTokens asks the provider's counting endpoint what the
	// tools add to a request, as this provider's dialect sends them. It
	// returns ErrNoCountEndpoint when the endpoint has none.
	CountToolTokens(ctx context.Context, tools []Tool) (*ToolCount, error)
}

// ToolCount is a provider's own count of the tools' share of a request:
// one minimal fixed message counted with the tools and without them.
// The difference includes whatever the provider adds to a request that
// offers tools (Anthropic's tool-use system prompt), which is what the
// tools cost in every request.
type ToolCount struct {
	// Provider names the counting API: anthropic, openai or gemini.
	Provider string
	// Endpoint is the method and path counted at, e.g.
	// "POST /v1/messages/count_tokens" (no host, no query).
	Endpoint string
	// WithTools and WithoutTools are the provider's two counts; Tokens
	// is their difference, never negative.
	WithTools, WithoutTools, Tokens int
}

// ErrNoCountEndpoint: the endpoint's API has no token-counting endpoint
// mcp-eval knows (Chat Completions and its compatibles, other than
// Gemini's).
var ErrNoCountEndpoint = errors.New("the endpoint has no token-counting API")

// CountProbe is the fixed user message of both counts. Its own tokens
// cancel out; it is there because every counting API wants a message.
const CountProbe = "Hello."

// maxCountBytes bounds a counting reply: it is one small JSON object.
const maxCountBytes = 64 << 10

// Counting APIs, as ToolCount.Provider names them.
const (
	CountAnthropic = "anthropic"
	CountOpenAI    = "openai"
	CountGemini    = "gemini"
)

// countEndpoint is where and how a provider counts.
type countEndpoint struct {
	provider string
	to       target
	path     string
}

// countEndpoint finds the counting endpoint beside the dialect's path:
// Anthropic's POST /v1/messages/count_tokens, OpenAI Responses' POST
// /responses/input_tokens, and for Gemini's OpenAI-compatible endpoint
// (a base URL ending in /v1beta/openai) the native POST
// /v1beta/models/{model}:countTokens, which takes the key in
// x-goog-api-key rather than as a bearer token.
func (p *provider) countEndpoint() (*countEndpoint, error) {
	u, err := url.Parse(p.wire.url)
	if err != nil {
		return nil, fmt.Errorf("%s: the endpoint URL does not parse: %w", p.id, err)
	}
	headers := p.wire.headers
	var provider string
	switch {
	case p.wire.dialect == DialectAnthropic:
		provider = CountAnthropic
		u.Path += "/count_tokens"
	case p.wire.dialect == DialectOpenAIResponses:
		provider = CountOpenAI
		u.Path += "/input_tokens"
	case p.wire.dialect == DialectOpenAIChat && strings.HasSuffix(p.wire.basePath, "/v1beta/openai"):
		provider = CountGemini
		if p.wire.key == "" {
			return nil, fmt.Errorf("%s: Gemini's countTokens needs the API key, and the endpoint has none", p.id)
		}
		model := strings.TrimPrefix(p.model, "models/")
		u.Path = strings.TrimSuffix(p.wire.basePath, "/openai") + "/models/" + model + ":countTokens"
		u.RawPath = strings.TrimSuffix(p.wire.basePath, "/openai") + "/models/" + url.PathEscape(model) + ":countTokens"
		u.RawQuery = ""
		headers = map[string]string{}
		for k, v := range p.wire.headers {
			if !strings.EqualFold(k, "Authorization") {
				headers[k] = v
			}
		}
		headers["x-goog-api-key"] = p.wire.key
	default:
		return nil, ErrNoCountEndpoint
	}
	return &countEndpoint{provider: provider, path: u.EscapedPath(), to: target{url: u.String(), headers: headers, maxBytes: maxCountBytes}}, nil
}

// CountToolTokens counts CountProbe with the tools and without them at the
// provider's counting endpoint, in two requests under Options' timeouts
// and retries.
func (p *provider) CountToolTokens(ctx context.Context, tools []Tool) (*ToolCount, error) {
	ce, err := p.countEndpoint()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	with, err := p.countOnce(ctx, ce, tools)
	if err != nil {
		return nil, err
	}
	without, err := p.countOnce(ctx, ce, nil)
	if err != nil {
		return nil, err
	}
	return &ToolCount{Provider: ce.provider, Endpoint: "POST " + ce.path, WithTools: with, WithoutTools: without, Tokens: max(with-without, 0)}, nil
}

func (p *provider) countOnce(ctx context.Context, ce *countEndpoint, tools []Tool) (int, error) {
	body, err := p.countBody(ce.provider, tools)
	if err != nil {
		return 0, fmt.Errorf("%s: building the count request: %w", p.id, err)
	}
	ex, err := p.postTo(ctx, ce.to, body)
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) {
			return 0, fmt.Errorf("%s: counting tokens: %w", p.id, err)
		}
		return 0, err
	}
	var r struct {
		InputTokens *int `json:"input_tokens"` // Anthropic, OpenAI
		TotalTokens *int `json:"totalTokens"`  // Gemini
	}
	if err := json.Unmarshal(ex.body, &r); err != nil {
		return 0, fmt.Errorf("%s: the count reply is not JSON: %s", p.id, bound(err.Error(), 200))
	}
	n := r.InputTokens
	if ce.provider == CountGemini {
		n = r.TotalTokens
	}
	if n == nil || *n < 0 {
		return 0, fmt.Errorf("%s: the count reply has no token count", p.id)
	}
	return *n, nil
}

// countAllowed are the request fields each counting endpoint accepts: the
// dialect's own request body is built and the rest dropped, so that the
// tools are counted exactly as the model would be sent them.
var countAllowed = map[string][]string{
	CountAnthropic: {"model", "messages", "system", "tools", "tool_choice"},
	CountOpenAI:    {"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "reasoning", "text", "truncation"},
}

func (p *provider) countBody(provider string, tools []Tool) ([]byte, error) {
	req := &Request{Messages: []Message{{Role: User, Text: CountProbe}}, Tools: tools}
	t := p.prepare(req)
	if provider == CountGemini {
		return geminiCountBody(p.model, t)
	}
	b, err := p.d.build(p, t)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	keep := map[string]json.RawMessage{}
	for _, k := range countAllowed[provider] {
		if v, ok := fields[k]; ok {
			keep[k] = v
		}
	}
	return json.Marshal(keep)
}

// geminiCountBody is a countTokens request: the generateContentRequest
// the OpenAI-compatible endpoint makes of a chat request, with the tools
// as function declarations (the Chat Completions names and converted
// schemas, the schema as parametersJsonSchema, which takes JSON Schema
// as it is).
func geminiCountBody(model string, t *turn) ([]byte, error) {
	type decl struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Schema      json.RawMessage `json:"parametersJsonSchema,omitempty"`
	}
	type part struct {
		Text string `json:"text"`
	}
	type content struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	type tool struct {
		FunctionDeclarations []decl `json:"functionDeclarations"`
	}
	type gcr struct {
		Model    string    `json:"model"`
		Contents []content `json:"contents"`
		Tools    []tool    `json:"tools,omitempty"`
	}
	r := gcr{Model: "models/" + strings.TrimPrefix(model, "models/"), Contents: []content{{Role: "user", Parts: []part{{Text: CountProbe}}}}}
	if len(t.tools.tools) > 0 {
		var ds []decl
		for _, w := range t.tools.tools {
			ds = append(ds, decl{Name: w.name, Description: w.description, Schema: w.schema})
		}
		r.Tools = []tool{{FunctionDeclarations: ds}}
	}
	return json.Marshal(map[string]gcr{"generateContentRequest": r})
}
