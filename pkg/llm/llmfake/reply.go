package llmfake

import "time"

// Reply is one scripted answer: a success (text, tool calls) or an error
// status. The fake renders it in the wire format of the endpoint that was
// called, shaped like the real API's reply.
type Reply struct {
	// Status, when not 0 or 200, answers with that HTTP status and an
	// error body of the dialect's shape (429 rate_limit, 5xx server
	// error, 529 overloaded on Anthropic).
	Status     int
	RetryAfter string // Retry-After header value, e.g. "1"
	Message    string // error message; a default per status when empty

	// Text is the assistant's text (a judge's JSON verdict too).
	Text string
	// Calls are tool calls, in order.
	Calls []Call
	// Usage as the API reports it; zero means DefaultInputTokens and
	// DefaultOutputTokens.
	Usage Usage
	// Model is the served model id; "" serves ServedModel(requested).
	Model string
	// Truncated stops for the output limit (finish_reason length,
	// status incomplete, stop_reason max_tokens).
	Truncated bool
	// Thinking adds a reasoning item (Responses, with encrypted_content)
	// or a thinking block with a signature (Anthropic) that the next
	// request must echo.
	Thinking bool
	// RawBody, when set, is sent as is with Status (200 when 0): a
	// truncated or malformed reply, or a documented example body.
	RawBody string
	// Delay is added to Options.Latency for this reply.
	Delay time.Duration
}

// Call is a tool call as the model produced it.
type Call struct {
	ID   string // "" generates one (call_N, toolu_N)
	Name string // the name the model used: the provider-side name
	// Arguments is the raw argument text, possibly malformed JSON. On
	// Chat and Responses it is sent as the arguments string. Anthropic's
	// input is always an object: a valid object is sent as it is, and
	// anything else as a JSON string holding the text (the real API
	// cannot do this; it tests the client's robustness).
	Arguments string
}

// Usage is token accounting in the API's own terms, written to the
// dialect's fields: InputTokens is prompt_tokens (Chat), input_tokens
// (Responses, Anthropic — where it excludes cache reads and writes);
// CachedTokens is prompt_tokens_details.cached_tokens,
// input_tokens_details.cached_tokens or cache_read_input_tokens;
// CacheWriteTokens is Anthropic's cache_creation_input_tokens (OpenAI's
// cache_write_tokens is sent as 0: package llm does not read it);
// ReasoningTokens is completion_tokens_details.reasoning_tokens,
// output_tokens_details.reasoning_tokens or thinking_tokens; OutputTokens
// includes them.
type Usage struct {
	InputTokens, OutputTokens, CachedTokens, CacheWriteTokens, ReasoningTokens int
}

// Defaults for a Reply without Usage.
const (
	DefaultInputTokens  = 100
	DefaultOutputTokens = 10
)

// Text is a plain answer (no tool).
func Text(s string) Reply { return Reply{Text: s} }

// Tool is one tool call with raw arguments.
func Tool(name, args string) Reply { return Reply{Calls: []Call{{Name: name, Arguments: args}}} }

// Tools are several tool calls in one turn, in order.
func Tools(calls ...Call) Reply { return Reply{Calls: calls} }

// Verdict is a judge's structured answer: the JSON as the reply's text,
// which is how all three APIs return structured output.
func Verdict(json string) Reply { return Reply{Text: json} }

// Status is an error answer, e.g. Status(429).WithRetryAfter("1").
func Status(code int) Reply { return Reply{Status: code} }

// WithRetryAfter sets the Retry-After header.
func (r Reply) WithRetryAfter(v string) Reply { r.RetryAfter = v; return r }

// WithUsage sets the reported input and output tokens.
func (r Reply) WithUsage(in, out int) Reply {
	r.Usage.InputTokens, r.Usage.OutputTokens = in, out
	return r
}

// WithModel sets the served model id.
func (r Reply) WithModel(m string) Reply { r.Model = m; return r }

// ServedModel is the model id the fake serves for a requested name when
// the reply names none: like real providers resolving an alias to a dated
// version.
func ServedModel(requested string) string { return requested + "-2026-01-01" }
