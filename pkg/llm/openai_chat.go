package llm

import (
	"encoding/json"
	"errors"
	"strings"
)

// chatDialect is OpenAI Chat Completions (POST {base}/chat/completions),
// which every OpenAI-compatible server speaks: vLLM, Ollama, llama.cpp,
// LiteLLM, OpenRouter, Azure, Gemini's compatible endpoint.
//
// Usage mapping: InputTokens = prompt_tokens − prompt_tokens_details.
// cached_tokens; CachedInputTokens = cached_tokens; CacheWriteTokens = 0
// (OpenAI caches implicitly, without a write charge); OutputTokens =
// completion_tokens, which includes ReasoningTokens =
// completion_tokens_details.reasoning_tokens.
type chatDialect struct{}

type chatRequest struct {
	Model          string            `json:"model"`
	Messages       []json.RawMessage `json:"messages"`
	Tools          []chatTool        `json:"tools,omitempty"`
	ToolChoice     string            `json:"tool_choice,omitempty"`
	Temperature    *float64          `json:"temperature,omitempty"`
	Seed           *int64            `json:"seed,omitempty"`
	MaxTokens      int               `json:"max_tokens,omitempty"`
	MaxCompletion  int               `json:"max_completion_tokens,omitempty"`
	ResponseFormat *chatFormat       `json:"response_format,omitempty"`
}

type chatTool struct {
	Type     string       `json:"type"` // function
	Function chatFunction `json:"function"`
}

// chatFunction leaves strict unset: Chat Completions is non-strict by
// default (unlike Responses), and some compatible servers reject unknown
// fields.
type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type chatFormat struct {
	Type       string         `json:"type"` // json_schema
	JSONSchema chatJSONSchema `json:"json_schema"`
}

type chatJSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string in OpenAI's API; some compatible
		// servers (older Ollama) send the object itself.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

func (chatDialect) build(p *provider, t *turn) ([]byte, error) {
	r := chatRequest{Model: p.model, Temperature: t.sent.Temperature, Seed: t.sent.Seed}
	var enc encoder
	if t.sent.MaxOutputTokens > 0 {
		// OpenAI's reasoning models refuse max_tokens; other compatible
		// servers may not know max_completion_tokens.
		if t.capab.reasoning {
			r.MaxCompletion = t.sent.MaxOutputTokens
		} else {
			r.MaxTokens = t.sent.MaxOutputTokens
		}
	}
	if t.system != "" {
		r.Messages = append(r.Messages, enc.json(map[string]string{"role": "system", "content": t.system}))
	}
	for _, m := range t.messages {
		switch m.Role {
		case User:
			r.Messages = append(r.Messages, enc.json(map[string]string{"role": "user", "content": m.Text}))
		case Assistant:
			if m.Dialect == DialectOpenAIChat && len(m.Raw) > 0 {
				echo, err := echoChatMessage(m.Raw)
				if err != nil {
					return nil, err
				}
				r.Messages = append(r.Messages, echo)
				continue
			}
			msg := map[string]any{"role": "assistant", "content": m.Text}
			if len(m.Calls) > 0 {
				calls := make([]map[string]any, len(m.Calls))
				for i, c := range m.Calls {
					calls[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]string{
						"name": t.tools.names.provider(c.Name), "arguments": t.providerArgs(c)}}
				}
				msg["tool_calls"] = calls
				if m.Text == "" {
					msg["content"] = nil
				}
			}
			r.Messages = append(r.Messages, enc.json(msg))
		case ToolRole:
			for _, res := range m.Results {
				// Chat has no error flag on tool results; the text says it.
				r.Messages = append(r.Messages, enc.json(map[string]string{"role": "tool", "tool_call_id": res.CallID, "content": res.Content}))
			}
		default:
			return nil, errors.New("unknown message role " + string(m.Role))
		}
	}
	for _, tool := range t.tools.tools {
		r.Tools = append(r.Tools, chatTool{Type: "function", Function: chatFunction{Name: tool.name, Description: tool.description, Parameters: tool.schema}})
	}
	if len(r.Tools) > 0 {
		r.ToolChoice = t.req.ToolChoice // OpenAI rejects tool_choice without tools
	}
	if t.output == OutputJSONSchema {
		r.ResponseFormat = &chatFormat{Type: "json_schema", JSONSchema: chatJSONSchema{Name: "output", Schema: t.req.Output, Strict: strictOutputSchema(t.req.Output)}}
	}
	if enc.err != nil {
		return nil, enc.err
	}
	return json.Marshal(r)
}

func (chatDialect) parse(p *provider, t *turn, body []byte) (*Response, error) {
	var r struct {
		Model   string `json:"model"`
		Choices []struct {
			Message      json.RawMessage `json:"message"`
			FinishReason string          `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			PromptTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
			CompletionTokensDetails *struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errors.New("not a chat completion: " + bound(err.Error(), 200))
	}
	if len(r.Choices) == 0 || len(r.Choices[0].Message) == 0 {
		return nil, errors.New("the chat completion has no choices")
	}
	var msg struct {
		Content   json.RawMessage `json:"content"`
		Refusal   *string         `json:"refusal"`
		ToolCalls []chatToolCall  `json:"tool_calls"`
	}
	if err := json.Unmarshal(r.Choices[0].Message, &msg); err != nil {
		return nil, errors.New("the chat completion's message does not parse: " + bound(err.Error(), 200))
	}
	resp := &Response{ServedModel: r.Model}
	resp.Message.Raw = r.Choices[0].Message
	resp.Message.Text = chatContent(msg.Content)
	for i, c := range msg.ToolCalls {
		if i == maxToolCallsPerResponse {
			break
		}
		args := string(c.Function.Arguments)
		var s string
		if json.Unmarshal(c.Function.Arguments, &s) == nil {
			args = s
		}
		resp.Message.Calls = append(resp.Message.Calls, t.call(c.ID, c.Function.Name, args))
	}
	switch r.Choices[0].FinishReason {
	case "stop":
		resp.StopReason = "end_turn"
	case "tool_calls", "function_call":
		resp.StopReason = "tool_use"
	case "length":
		resp.StopReason = "max_tokens"
	case "content_filter":
		resp.StopReason = "refusal"
	default:
		resp.StopReason = "other"
	}
	if len(resp.Message.Calls) > 0 && resp.StopReason != "max_tokens" {
		resp.StopReason = "tool_use" // some servers say "stop" with tool calls
	}
	if msg.Refusal != nil && *msg.Refusal != "" {
		resp.StopReason = "refusal"
		if resp.Message.Text == "" {
			resp.Message.Text = *msg.Refusal
		}
	}
	if u := r.Usage; u != nil {
		cached := 0
		if u.PromptTokensDetails != nil {
			cached = nonNeg(u.PromptTokensDetails.CachedTokens)
		}
		resp.Usage = Usage{
			InputTokens:       nonNeg(u.PromptTokens - cached),
			CachedInputTokens: cached,
			OutputTokens:      nonNeg(u.CompletionTokens),
		}
		if u.CompletionTokensDetails != nil {
			resp.Usage.ReasoningTokens = nonNeg(u.CompletionTokensDetails.ReasoningTokens)
		}
	}
	return resp, nil
}

// responseOnly are fields of a returned message that are not part of an
// input message; they are dropped when empty, everything else is echoed
// as received (Gemini's extra_content.google.thought_signature must come
// back, llm-providers.md §2.4).
var responseOnly = []string{"annotations", "refusal", "audio", "function_call", "reasoning_content"}

func echoChatMessage(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("an assistant turn's raw message does not parse: " + bound(err.Error(), 200))
	}
	changed := false
	for _, k := range responseOnly {
		if v, ok := m[k]; ok && emptyJSON(v) {
			delete(m, k)
			changed = true
		}
	}
	if !changed {
		return raw, nil
	}
	return json.Marshal(m)
}

func emptyJSON(v json.RawMessage) bool {
	switch strings.TrimSpace(string(v)) {
	case "null", "[]", "{}", `""`:
		return true
	}
	return false
}

// chatContent reads message content: a string, null, or (some servers) an
// array of {"type":"text","text":…} parts.
func chatContent(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" || p.Type == "output_text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// encoder marshals request parts, keeping the first error (a caller's
// ToolCall.Arguments that is not JSON), so builders stay linear.
type encoder struct{ err error }

func (e *encoder) json(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil && e.err == nil {
		e.err = err
	}
	return b
}
