package llm

import (
	"encoding/json"
	"errors"
	"strings"
)

// anthropicDialect is the Anthropic Messages API (POST {base}/v1/messages)
// with a pinned anthropic-version header (AnthropicVersion unless the
// endpoint sets api-version).
//
// Usage mapping: InputTokens = input_tokens, which already excludes cache
// reads and writes; CachedInputTokens = cache_read_input_tokens;
// CacheWriteTokens = cache_creation_input_tokens; OutputTokens =
// output_tokens, which includes thinking; ReasoningTokens =
// output_tokens_details.thinking_tokens where the API reports it.
type anthropicDialect struct{}

type anthropicRequest struct {
	Model        string             `json:"model"`
	MaxTokens    int                `json:"max_tokens"`
	System       string             `json:"system,omitempty"`
	Messages     []anthropicMessage `json:"messages"`
	Tools        []anthropicTool    `json:"tools,omitempty"`
	ToolChoice   *anthropicChoice   `json:"tool_choice,omitempty"`
	Temperature  *float64           `json:"temperature,omitempty"`
	OutputConfig *anthropicOutput   `json:"output_config,omitempty"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anthropicChoice struct {
	Type string `json:"type"` // auto | any | none
}

type anthropicOutput struct {
	Format anthropicFormat `json:"format"`
}

type anthropicFormat struct {
	Type   string          `json:"type"` // json_schema
	Schema json.RawMessage `json:"schema"`
}

func (anthropicDialect) build(p *provider, t *turn) ([]byte, error) {
	r := anthropicRequest{Model: p.model, MaxTokens: t.sent.MaxOutputTokens, System: t.system, Temperature: t.sent.Temperature}
	var enc encoder
	// Blocks of consecutive user-side entries (tool results, then text)
	// go into one user message: the API wants every tool_result in the
	// message right after the tool_use.
	var pending []json.RawMessage
	flush := func() {
		if len(pending) > 0 {
			r.Messages = append(r.Messages, anthropicMessage{Role: "user", Content: enc.json(pending)})
			pending = nil
		}
	}
	for _, m := range t.messages {
		switch m.Role {
		case User:
			if strings.TrimSpace(m.Text) != "" { // empty text blocks are rejected
				pending = append(pending, enc.json(map[string]string{"type": "text", "text": m.Text}))
			}
		case ToolRole:
			for _, res := range m.Results {
				b := map[string]any{"type": "tool_result", "tool_use_id": res.CallID, "content": res.Content}
				if res.IsError {
					b["is_error"] = true
				}
				pending = append(pending, enc.json(b))
			}
		case Assistant:
			flush()
			if m.Dialect == DialectAnthropic && len(m.Raw) > 0 {
				// Verbatim: thinking blocks must come back with their
				// signatures.
				r.Messages = append(r.Messages, anthropicMessage{Role: "assistant", Content: m.Raw})
				continue
			}
			var blocks []json.RawMessage
			if strings.TrimSpace(m.Text) != "" {
				blocks = append(blocks, enc.json(map[string]string{"type": "text", "text": m.Text}))
			}
			for _, c := range m.Calls {
				input := json.RawMessage(t.providerArgs(c))
				if !json.Valid(input) || !strings.HasPrefix(strings.TrimSpace(string(input)), "{") {
					input = json.RawMessage(`{}`) // tool_use input must be an object
				}
				blocks = append(blocks, enc.json(map[string]any{"type": "tool_use", "id": c.ID, "name": t.tools.names.provider(c.Name), "input": input}))
			}
			if len(blocks) > 0 { // an empty assistant turn is rejected
				r.Messages = append(r.Messages, anthropicMessage{Role: "assistant", Content: enc.json(blocks)})
			}
		default:
			return nil, errors.New("unknown message role " + string(m.Role))
		}
	}
	flush()
	if r.Messages == nil {
		r.Messages = []anthropicMessage{}
	}
	for _, tool := range t.tools.tools {
		r.Tools = append(r.Tools, anthropicTool{Name: tool.name, Description: tool.description, InputSchema: tool.schema})
	}
	if len(r.Tools) > 0 && t.req.ToolChoice != "" {
		typ := t.req.ToolChoice
		if typ == "required" {
			typ = "any"
		}
		r.ToolChoice = &anthropicChoice{Type: typ}
	}
	if t.output == OutputJSONSchema {
		r.OutputConfig = &anthropicOutput{Format: anthropicFormat{Type: "json_schema", Schema: t.req.Output}}
	}
	if enc.err != nil {
		return nil, enc.err
	}
	return json.Marshal(r)
}

func (anthropicDialect) parse(p *provider, t *turn, body []byte) (*Response, error) {
	var r struct {
		Type       string          `json:"type"`
		Model      string          `json:"model"`
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
		Usage      *struct {
			InputTokens              int `json:"input_tokens"`
			OutputTokens             int `json:"output_tokens"`
			CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int `json:"cache_read_input_tokens"`
			OutputTokensDetails      *struct {
				ThinkingTokens int `json:"thinking_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errors.New("not a message: " + bound(err.Error(), 200))
	}
	var blocks []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(r.Content, &blocks); err != nil {
		return nil, errors.New("the message's content is not a list of blocks: " + bound(err.Error(), 200))
	}
	resp := &Response{ServedModel: r.Model}
	resp.Message.Raw = r.Content
	var text strings.Builder
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			if len(resp.Message.Calls) == maxToolCallsPerResponse {
				continue
			}
			// input is an object on this API; anything else is passed
			// on as the raw text so the parse error is recorded.
			args := string(b.Input)
			var s string
			if json.Unmarshal(b.Input, &s) == nil {
				args = s
			}
			resp.Message.Calls = append(resp.Message.Calls, t.call(b.ID, b.Name, args))
		}
	}
	resp.Message.Text = text.String()
	switch r.StopReason {
	case "end_turn", "stop_sequence":
		resp.StopReason = "end_turn"
	case "tool_use":
		resp.StopReason = "tool_use"
	case "max_tokens", "model_context_window_exceeded":
		resp.StopReason = "max_tokens"
	case "refusal":
		resp.StopReason = "refusal"
	default:
		resp.StopReason = "other"
	}
	if u := r.Usage; u != nil {
		resp.Usage = Usage{
			InputTokens:       nonNeg(u.InputTokens),
			CachedInputTokens: nonNeg(u.CacheReadInputTokens),
			CacheWriteTokens:  nonNeg(u.CacheCreationInputTokens),
			OutputTokens:      nonNeg(u.OutputTokens),
		}
		if u.OutputTokensDetails != nil {
			resp.Usage.ReasoningTokens = nonNeg(u.OutputTokensDetails.ThinkingTokens)
		}
	}
	return resp, nil
}
