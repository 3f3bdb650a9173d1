package llmfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// created is the fixed creation time of every reply, so bodies are
// reproducible (2026-01-01T00:00:00Z).
const created = 1767225600

// parseChat reads and validates a Chat Completions request.
func (s *Server) parseChat(req *Request) error {
	p := req.Params
	if decode(p["model"], &req.Model) != nil || req.Model == "" {
		return errors.New("you must provide a model parameter")
	}
	var msgs []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	if err := decode(p["messages"], &msgs); err != nil {
		return fmt.Errorf("Invalid type for 'messages': expected an array of objects (%v).", err)
	}
	if len(msgs) == 0 {
		return errors.New("[] is too short - 'messages'")
	}
	var pending []string // tool_call ids still to be answered
	unanswered := func() error {
		return fmt.Errorf("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(pending, ", "))
	}
	for i, m := range msgs {
		text, ok := textOf(m.Content)
		if !ok {
			return fmt.Errorf("Invalid type for 'messages[%d].content': expected one of a string or array of objects.", i)
		}
		if m.Role != "tool" && len(pending) > 0 {
			return unanswered()
		}
		switch m.Role {
		case "system", "developer":
			req.System += text
		case "user":
			req.Messages = append(req.Messages, Message{Role: "user", Text: text})
		case "assistant":
			am := Message{Role: "assistant", Text: text}
			for j, c := range m.ToolCalls {
				if c.Type != "function" {
					return fmt.Errorf("Invalid value: '%s'. Supported values are: 'function'. (messages[%d].tool_calls[%d].type)", c.Type, i, j)
				}
				am.Calls = append(am.Calls, Call{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
				pending = append(pending, c.ID)
			}
			req.Messages = append(req.Messages, am)
		case "tool":
			k := indexOf(pending, m.ToolCallID)
			if k < 0 {
				return errors.New("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			pending = append(pending[:k], pending[k+1:]...)
			req.Messages = appendResult(req.Messages, Result{CallID: m.ToolCallID, Content: text})
		default:
			return fmt.Errorf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'. (messages[%d].role)", m.Role, i)
		}
	}
	if len(pending) > 0 {
		return unanswered()
	}
	var tools []struct {
		Type     string `json:"type"`
		Function *struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      *bool           `json:"strict"`
		} `json:"function"`
	}
	if err := decode(p["tools"], &tools); err != nil {
		return fmt.Errorf("Invalid type for 'tools': expected an array of objects (%v).", err)
	}
	for i, t := range tools {
		if t.Type != "function" || t.Function == nil {
			return fmt.Errorf("Invalid value: '%s'. Supported values are: 'function' and 'custom'. (tools[%d].type)", t.Type, i)
		}
		if err := checkOpenAIName(fmt.Sprintf("tools[%d].function.name", i), t.Function.Name); err != nil {
			return err
		}
		if err := checkOpenAIParameters(t.Function.Name, t.Function.Parameters); err != nil {
			return err
		}
		if t.Function.Strict != nil && *t.Function.Strict {
			if msg := strictViolation(t.Function.Parameters); msg != "" {
				return fmt.Errorf("Invalid schema for function '%s': %s", t.Function.Name, msg)
			}
		}
		req.Tools = append(req.Tools, ToolDef{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters, Strict: t.Function.Strict})
	}
	req.ToolChoice = p["tool_choice"]
	if len(req.ToolChoice) > 0 && len(tools) == 0 {
		return errors.New("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.")
	}
	if err := s.checkTemperature(req); err != nil {
		return err
	}
	if req.Has("max_tokens") && s.rejectsTemperature(req.Model) {
		return errors.New("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
	}
	if raw, ok := p["response_format"]; ok {
		var f struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			return errors.New("Invalid type for 'response_format': expected an object.")
		}
		if s.opts.NoStructuredOutput && f.Type == "json_schema" {
			return errors.New("response_format of type json_schema is not supported by this server")
		}
		if f.Type == "json_schema" {
			if f.JSONSchema.Name == "" || len(f.JSONSchema.Schema) == 0 {
				return errors.New("Missing required parameter: 'response_format.json_schema.name'.")
			}
			if f.JSONSchema.Strict {
				if msg := strictViolation(f.JSONSchema.Schema); msg != "" {
					return fmt.Errorf("Invalid schema for response_format '%s': %s", f.JSONSchema.Name, msg)
				}
			}
			req.Output, req.OutputStrict = f.JSONSchema.Schema, f.JSONSchema.Strict
		}
	}
	return nil
}

// checkTemperature: reasoning models accept only the default temperature
// ("Unsupported value: 'temperature' does not support 0 with this model.
// Only the default (1) value is supported.").
func (s *Server) checkTemperature(req *Request) error {
	t, ok := req.Number("temperature")
	if !ok {
		if req.Has("temperature") {
			return errors.New("Invalid type for 'temperature': expected a decimal.")
		}
		return nil
	}
	if t < 0 || t > 2 {
		return fmt.Errorf("Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got %v instead.", t)
	}
	if t != 1 && s.rejectsTemperature(req.Model) {
		return fmt.Errorf("Unsupported value: 'temperature' does not support %v with this model. Only the default (1) value is supported.", t)
	}
	return nil
}

func (s *Server) chatReply(req *Request, r Reply) any {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
	if r.Text != "" {
		msg["content"] = r.Text
	}
	finish := "stop"
	if len(r.Calls) > 0 {
		var calls []any
		for _, c := range r.Calls {
			id := c.ID
			if id == "" {
				id = s.id("call_")
			}
			calls = append(calls, map[string]any{"id": id, "type": "function",
				"function": map[string]string{"name": c.Name, "arguments": rawArgs(c)}})
		}
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	if r.Truncated {
		finish = "length"
	}
	u := r.Usage
	return map[string]any{
		"id": s.id("chatcmpl-"), "object": "chat.completion", "created": created, "model": r.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage": map[string]any{
			"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": total(u),
			"prompt_tokens_details": map[string]int{"cached_tokens": u.CachedTokens, "audio_tokens": 0},
			"completion_tokens_details": map[string]int{"reasoning_tokens": u.ReasoningTokens, "audio_tokens": 0,
				"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
		},
		// No system_fingerprint: deprecated, and absent from the reference's
		// examples (testdata/apidocs/openai-chat).
		"service_tier": "default",
	}
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// appendResult adds a tool result to the transcript, grouping consecutive
// results into one tool message.
func appendResult(msgs []Message, r Result) []Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == "tool" {
		msgs[n-1].Results = append(msgs[n-1].Results, r)
		return msgs
	}
	return append(msgs, Message{Role: "tool", Results: []Result{r}})
}
