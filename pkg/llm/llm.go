// Package llm talks to language models over plain HTTP, in the three wire
// dialects that matter (OpenAI Responses, OpenAI Chat Completions and
// compatibles, Anthropic Messages), behind one neutral Provider interface.
// No SDK: ../shared/docs/llm-providers.md measured why.
//
// This file is the contract the rest of Layer 1 builds on; dialects,
// retries, schema conversion and name mapping live beside it.
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
	// runs.
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
