// Package llm talks to language models over plain HTTP, in the three wire
// dialects that matter (OpenAI Responses, OpenAI Chat Completions and
// compatibles, Anthropic Messages), behind one neutral Provider interface.
// No SDK: ../shared/docs/llm-providers.md measured why.
//
// This file is the contract the rest of Layer 1 builds on; dialects,
// retries, schema conversion and name mapping live beside it.
//
// Quick start:
//
//	p, err := llm.New("openai:gpt-5-mini", cfg.Endpoints, os.LookupEnv, llm.Options{})
//	resp, err := p.Complete(ctx, &llm.Request{
//		Messages: []llm.Message{{Role: llm.User, Text: "What's the weather in Seattle?"}},
//		Tools:    tools, // MCP names and inputSchema as listed
//		Sampling: llm.Sampling{Temperature: &zero, Seed: &seed},
//	})
//	// resp.Message.Calls carry MCP names; resp.Sent and resp.Dropped say
//	// what of the sampling the model accepted; resp.ServedModel is the
//	// model that answered.
//
// Specs: openai:MODEL (Responses API), anthropic:MODEL (Messages API,
// anthropic-version pinned), openai-compatible:MODEL@BASE_URL (Chat
// Completions; the URL starts at the first "@http"), or ENDPOINT:MODEL for
// an endpoints: entry of mcp-eval.yaml (Azure's api-key and api-version,
// custom headers, another dialect). Keys come from environment variables
// only. Package llmfake is a scripted stand-in for all three APIs.
package llm

import (
	"context"
	"encoding/json"
	"time"
)

// Provider is one model at one endpoint.
type Provider interface {
	// ID names the model as configured, e.g. "openai:gpt-5-mini".
	ID() string
	// Complete sends one turn and returns the model's reply. It retries
	// 429 and 5xx with backoff within ctx's deadline.
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// Revision is what a provider's answers depend on besides its id and the
// request, for a result cache: "" for a model behind an API, whose id
// names it, and a version for a selector built into mcp-eval (the lexical
// baseline), whose answers change with mcp-eval's code. A wrapper
// forwards its provider's.
func Revision(p Provider) string {
	if r, ok := p.(interface{ Revision() string }); ok {
		return r.Revision()
	}
	return ""
}

// Role of a message in the neutral transcript.
type Role string

const (
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool"
)

// Request is one turn: the conversation so far and what the model may do.
type Request struct {
	System   string
	Messages []Message
	// Tools are MCP tools as the server listed them (MCP names); a
	// dialect maps names and converts schemas where a provider needs it.
	Tools []Tool
	// ToolChoice is "auto" (default), "none" or "required".
	ToolChoice string
	Sampling   Sampling
	// Output asks for JSON matching this schema (the judge); nil for tool
	// runs. The reply's JSON is in Response.Output. When the model's
	// answer is not valid JSON for the schema even after one repair turn,
	// Complete returns the Response (for its usage) together with an error
	// wrapping ErrInvalidOutput.
	Output json.RawMessage
}

// Tool is an MCP tool offered to the model.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Sampling are the determinism knobs as requested; Response.Sent says what
// was actually sent, since some models reject them.
type Sampling struct {
	Temperature     *float64 `json:"temperature,omitempty"`
	Seed            *int64   `json:"seed,omitempty"`
	MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
}

// Message is one entry of the neutral transcript.
type Message struct {
	Role    Role
	Text    string
	Calls   []ToolCall   // assistant
	Results []ToolResult // tool
	// Raw is the provider-native assistant turn, echoed back verbatim by
	// the same dialect (reasoning items, thinking blocks).
	Raw     json.RawMessage
	Dialect string
}

// ToolCall is a call the model asked for, with the MCP tool name.
type ToolCall struct {
	ID           string
	Name         string
	Arguments    json.RawMessage // nil when the model's JSON did not parse
	ArgumentsRaw string
	ParseError   string
}

// ToolResult answers a ToolCall.
type ToolResult struct {
	CallID  string
	Content string
	IsError bool
}

// Response is the model's reply and what it cost.
type Response struct {
	Message    Message
	StopReason string // end_turn | tool_use | max_tokens | refusal | other
	Usage      Usage
	// Sent is the sampling actually sent; Dropped lists what was left out
	// and why (a reasoning model that rejects temperature).
	Sent    Sampling
	Dropped []string
	// SchemaNotes are tool-schema conversions made for this provider (a
	// portability finding).
	SchemaNotes []string
	// ServedModel is the model id the provider says it served.
	ServedModel string
	Latency     time.Duration
	Attempts    int

	// Renamed maps MCP tool names to the names sent where the provider's
	// name rules forced a change (dots, length); calls come back already
	// mapped to MCP names. A renamed tool is a finding: it can change what
	// the model picks.
	Renamed map[string]string
	// Output is the JSON object the model answered when Request.Output
	// asked for one; OutputMode says how it was obtained: "json_schema"
	// (the provider's structured output) or "text-json" (JSON asked for
	// in the prompt, because the endpoint rejected structured output).
	Output     json.RawMessage
	OutputMode string
	// APIVersion is the anthropic-version header, or the api-version query
	// parameter of an Azure-style endpoint, that was sent ("" when none).
	APIVersion string
	// RequestID is the provider's request id (x-request-id, request-id)
	// of the last attempt, for support tickets.
	RequestID string
}

// Usage is normalised token accounting (providers count differently; each
// dialect documents its mapping).
type Usage struct {
	InputTokens       int `json:"inputTokens"`
	CachedInputTokens int `json:"cachedInputTokens"`
	CacheWriteTokens  int `json:"cacheWriteTokens"`
	OutputTokens      int `json:"outputTokens"`
	ReasoningTokens   int `json:"reasoningTokens"`
}
