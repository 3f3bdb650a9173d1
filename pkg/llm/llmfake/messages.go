package llmfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// signaturePrefix marks the thinking signatures this fake issued.
const signaturePrefix = "sig_fake_"

// parseMessages reads and validates an Anthropic Messages request.
func (s *Server) parseMessages(req *Request) error {
	p := req.Params
	if decode(p["model"], &req.Model) != nil || req.Model == "" {
		return errors.New("model: Field required")
	}
	var maxTokens int
	switch {
	case req.Count:
		// count_tokens takes a Messages request without max_tokens.
		if req.Has("max_tokens") {
			return errors.New("max_tokens: Extra inputs are not permitted")
		}
	case !req.Has("max_tokens"):
		return errors.New("max_tokens: Field required")
	default:
		if err := decode(p["max_tokens"], &maxTokens); err != nil || maxTokens < 1 {
			return errors.New("max_tokens: Input should be greater than or equal to 1")
		}
	}
	// anthropic-version 2026-10-21 removed the sampling parameters
	// (llm-providers.md §2.3): "rejects temperature, top_p, top_k with 400
	// even at default values".
	if req.Header.Get("anthropic-version") >= "2026-10-21" {
		for _, k := range []string{"temperature", "top_p", "top_k"} {
			if req.Has(k) {
				return fmt.Errorf("%s: Extra inputs are not permitted", k)
			}
		}
	}
	if req.Has("seed") {
		return errors.New("seed: Extra inputs are not permitted")
	}
	if raw, ok := p["system"]; ok {
		t, ok := textOf(raw)
		if !ok {
			return errors.New("system: Input should be a valid string or list of text blocks")
		}
		req.System = t
	}
	if err := s.parseAnthropicMessages(req, p["messages"]); err != nil {
		return err
	}
	var tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
		Strict      *bool           `json:"strict"`
	}
	if err := decode(p["tools"], &tools); err != nil {
		return fmt.Errorf("tools: Input should be a valid list (%v)", err)
	}
	for i, t := range tools {
		if !anthropicName.MatchString(t.Name) {
			return fmt.Errorf("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", i)
		}
		if len(t.InputSchema) == 0 {
			return fmt.Errorf("tools.%d.custom.input_schema: Field required", i)
		}
		if err := checkAnthropicSchema(i, t.InputSchema); err != nil {
			return err
		}
		req.Tools = append(req.Tools, ToolDef{Name: t.Name, Description: t.Description, Schema: t.InputSchema, Strict: t.Strict})
	}
	req.ToolChoice = p["tool_choice"]
	if len(req.ToolChoice) > 0 {
		var c struct {
			Type string `json:"type"`
		}
		json.Unmarshal(req.ToolChoice, &c)
		switch c.Type {
		case "auto", "any", "tool", "none":
		default:
			return fmt.Errorf("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
		}
	}
	if raw, ok := p["output_config"]; ok {
		var oc struct {
			Format *struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		}
		if err := json.Unmarshal(raw, &oc); err != nil {
			return errors.New("output_config: Input should be a valid dictionary")
		}
		if oc.Format != nil {
			if s.opts.NoStructuredOutput {
				return errors.New("output_config.format: Extra inputs are not permitted")
			}
			if oc.Format.Type != "json_schema" || len(oc.Format.Schema) == 0 {
				return errors.New("output_config.format.schema: Field required")
			}
			req.Output = oc.Format.Schema
		}
	}
	return nil
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Signature string          `json:"signature"`
}

// parseAnthropicMessages checks the pairing rule: every tool_use block
// is answered by a tool_result in the very next message, and every
// tool_result answers a tool_use of the message before.
func (s *Server) parseAnthropicMessages(req *Request, raw json.RawMessage) error {
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if len(raw) == 0 {
		return errors.New("messages: Field required")
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return errors.New("messages: Input should be a valid list")
	}
	if len(msgs) == 0 {
		return errors.New("messages: at least one message is required")
	}
	var prevUses []string
	for i, m := range msgs {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		var blocks []anthropicBlock
		var str string
		if json.Unmarshal(m.Content, &str) == nil {
			if str == "" {
				return errors.New("messages: text content blocks must be non-empty")
			}
			t := str
			blocks = []anthropicBlock{{Type: "text", Text: &t}}
		} else if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return fmt.Errorf("messages.%d.content: Input should be a valid list", i)
		}
		if len(blocks) == 0 && i < len(msgs)-1 {
			return fmt.Errorf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		nm := Message{Role: m.Role}
		var uses []string
		answered := map[string]bool{}
		for j, b := range blocks {
			switch b.Type {
			case "text":
				if b.Text == nil || *b.Text == "" {
					return errors.New("messages: text content blocks must be non-empty")
				}
				nm.Text += *b.Text
			case "tool_use":
				if m.Role != "assistant" {
					return fmt.Errorf("messages.%d.content.%d: tool_use blocks are only allowed in assistant messages", i, j)
				}
				if len(b.Input) == 0 || b.Input[0] != '{' {
					return fmt.Errorf("messages.%d.content.%d.tool_use.input: Input should be a valid dictionary", i, j)
				}
				uses = append(uses, b.ID)
				nm.Calls = append(nm.Calls, Call{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
			case "tool_result":
				if m.Role != "user" {
					return fmt.Errorf("messages.%d.content.%d: tool_result blocks are only allowed in user messages", i, j)
				}
				if indexOf(prevUses, b.ToolUseID) < 0 {
					return fmt.Errorf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
				}
				answered[b.ToolUseID] = true
				content, ok := textOf(b.Content)
				if !ok {
					return fmt.Errorf("messages.%d.content.%d.tool_result.content: Input should be a valid string or list", i, j)
				}
				nm.Results = append(nm.Results, Result{CallID: b.ToolUseID, Content: content, IsError: b.IsError})
			case "thinking":
				if !strings.HasPrefix(b.Signature, signaturePrefix) {
					return fmt.Errorf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
			default:
				return fmt.Errorf("messages.%d.content.%d.type: Input tag '%s' found using 'type' does not match any of the expected tags", i, j, b.Type)
			}
		}
		var missing []string
		for _, id := range prevUses {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
		}
		prevUses = uses
		// The neutral view splits a user message into its tool results
		// and its text, as the other dialects send them.
		if len(nm.Results) > 0 {
			req.Messages = append(req.Messages, Message{Role: "tool", Results: nm.Results})
			nm.Results = nil
			if nm.Text == "" {
				continue
			}
		}
		req.Messages = append(req.Messages, nm)
	}
	if len(prevUses) > 0 && msgs[len(msgs)-1].Role == "assistant" {
		// A transcript ending in tool_use asks the model to continue its
		// own turn, which the API refuses.
		return fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(msgs)-1, strings.Join(prevUses, ", "))
	}
	return nil
}

func (s *Server) messagesReply(req *Request, r Reply) any {
	content := []any{}
	if r.Thinking {
		content = append(content, map[string]any{"type": "thinking", "thinking": "The user wants a tool.", "signature": s.id(signaturePrefix)})
	}
	if r.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	stop := "end_turn"
	for _, c := range r.Calls {
		id := c.ID
		if id == "" {
			id = s.id("toolu_")
		}
		var input any = json.RawMessage(rawArgs(c))
		if !objectJSON(rawArgs(c)) {
			input = c.Arguments // not an object: sent as a string (see Call)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": input})
		stop = "tool_use"
	}
	if r.Truncated {
		stop = "max_tokens"
	}
	u := r.Usage
	usage := map[string]any{
		"input_tokens": u.InputTokens, "cache_creation_input_tokens": u.CacheWriteTokens,
		"cache_read_input_tokens": u.CachedTokens, "output_tokens": u.OutputTokens, "service_tier": "standard",
	}
	if u.ReasoningTokens > 0 {
		usage["output_tokens_details"] = map[string]int{"thinking_tokens": u.ReasoningTokens}
	}
	return map[string]any{
		"id": s.id("msg_"), "type": "message", "role": "assistant", "model": r.Model, "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": usage,
	}
}
