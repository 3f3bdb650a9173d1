package llmfake

import (
	"encoding/json"
	"net/http"
	"net/url"
)

// Wire dialects, named as in package llm.
const (
	Chat      = "openai-chat"
	Responses = "openai-responses"
	Messages  = "anthropic-messages"
	// Gemini is the native Gemini API, of which the fake serves only
	// models/{model}:countTokens.
	Gemini = "gemini"
)

// Request is one request the fake received, parsed the way the real API
// reads it, so tests can assert what was sent.
type Request struct {
	Dialect string
	Path    string
	Query   url.Values
	Header  http.Header
	Body    json.RawMessage
	// Params are the body's top-level fields.
	Params map[string]json.RawMessage

	Model      string
	System     string // system message, instructions or system
	Tools      []ToolDef
	ToolChoice json.RawMessage
	// Output is the structured-output schema asked for (response_format
	// json_schema, text.format, output_config.format), nil when none;
	// OutputStrict its strict flag where the dialect has one.
	Output       json.RawMessage
	OutputStrict bool
	// Messages is the transcript, dialect-neutral.
	Messages []Message

	// Count is true for a token-counting request (Anthropic's
	// /v1/messages/count_tokens, OpenAI's /responses/input_tokens,
	// Gemini's models/{model}:countTokens); Counted is the count
	// answered.
	Count   bool
	Counted int

	// Status is the HTTP status answered; Rejected is the validation
	// error when the fake refused the request as the real API would
	// (then no scripted reply was used).
	Status   int
	Rejected string
}

// ToolDef is a tool definition as sent.
type ToolDef struct {
	Name        string
	Description string
	Schema      json.RawMessage // parameters / input_schema
	Strict      *bool           // nil when not sent
}

// Message is one transcript entry: role user, assistant or tool.
type Message struct {
	Role    string
	Text    string
	Calls   []Call
	Results []Result
}

// Result is a tool result sent back to the model.
type Result struct {
	CallID  string
	Content string
	IsError bool
}

// Has reports whether the body has a top-level field.
func (r *Request) Has(param string) bool {
	_, ok := r.Params[param]
	return ok
}

// Number reads a numeric top-level field.
func (r *Request) Number(param string) (float64, bool) {
	raw, ok := r.Params[param]
	if !ok {
		return 0, false
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil {
		return 0, false
	}
	return f, true
}

// ToolNames are the names of the tools sent, in order.
func (r *Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Name
	}
	return out
}

// FindTool finds a sent tool by name.
func (r *Request) FindTool(name string) (ToolDef, bool) {
	for _, t := range r.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolDef{}, false
}

// LastUserText is the text of the last user message, for rule-based
// responders.
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" && r.Messages[i].Text != "" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// Results are all tool results in the transcript, in order.
func (r *Request) Results() []Result {
	var out []Result
	for _, m := range r.Messages {
		out = append(out, m.Results...)
	}
	return out
}
