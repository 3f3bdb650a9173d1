package llmfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// encryptedPrefix marks the reasoning content this fake issued; echoing
// anything else is refused like a tampered blob.
const encryptedPrefix = "gAAAAfake-"

// parseResponses reads and validates a Responses request.
func (s *Server) parseResponses(req *Request) error {
	p := req.Params
	if decode(p["model"], &req.Model) != nil || req.Model == "" {
		return errors.New("Missing required parameter: 'model'.")
	}
	if req.Has("seed") {
		return errors.New("Unknown parameter: 'seed'.") // Responses has no seed
	}
	if err := decode(p["instructions"], &req.System); err != nil {
		return errors.New("Invalid type for 'instructions': expected a string.")
	}
	store := true // the API's default
	if err := decode(p["store"], &store); err != nil {
		return errors.New("Invalid type for 'store': expected a boolean.")
	}
	if err := s.parseInput(req, p["input"], store); err != nil {
		return err
	}
	var tools []struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	}
	if err := decode(p["tools"], &tools); err != nil {
		return fmt.Errorf("Invalid type for 'tools': expected an array of objects (%v).", err)
	}
	for i, t := range tools {
		if t.Type != "function" {
			return fmt.Errorf("Invalid value: '%s'. Supported values are: 'function', 'file_search', 'web_search', 'computer_use_preview', 'mcp', 'custom'. (tools[%d].type)", t.Type, i)
		}
		if err := checkOpenAIName(fmt.Sprintf("tools[%d].name", i), t.Name); err != nil {
			return err
		}
		if err := checkOpenAIParameters(t.Name, t.Parameters); err != nil {
			return err
		}
		// Strict is the default here, but an omitted flag makes the API
		// normalise the schema into strict form (the reference's Functions
		// example sends required without additionalProperties and gets
		// strict: true back); only an explicit strict: true is checked.
		if t.Strict != nil && *t.Strict {
			if msg := strictViolation(t.Parameters); msg != "" {
				return fmt.Errorf("Invalid schema for function '%s': %s", t.Name, msg)
			}
		}
		req.Tools = append(req.Tools, ToolDef{Name: t.Name, Description: t.Description, Schema: t.Parameters, Strict: t.Strict})
	}
	req.ToolChoice = p["tool_choice"]
	if err := s.checkTemperature(req); err != nil {
		return err
	}
	if raw, ok := p["text"]; ok {
		var tx struct {
			Format struct {
				Type   string          `json:"type"`
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"format"`
		}
		if err := json.Unmarshal(raw, &tx); err != nil {
			return errors.New("Invalid type for 'text': expected an object.")
		}
		if tx.Format.Type == "json_schema" {
			if s.opts.NoStructuredOutput {
				return errors.New("Unsupported parameter: 'text.format' of type json_schema is not supported by this server.")
			}
			if tx.Format.Name == "" || len(tx.Format.Schema) == 0 {
				return errors.New("Missing required parameter: 'text.format.name'.")
			}
			if tx.Format.Strict {
				if msg := strictViolation(tx.Format.Schema); msg != "" {
					return fmt.Errorf("Invalid schema for response_format '%s': %s", tx.Format.Name, msg)
				}
			}
			req.Output, req.OutputStrict = tx.Format.Schema, tx.Format.Strict
		}
	}
	return nil
}

// parseInput reads input: a string or a list of items, where every
// function_call_output answers an earlier function_call and every
// function_call is answered.
func (s *Server) parseInput(req *Request, raw json.RawMessage, store bool) error {
	if len(raw) == 0 {
		return errors.New("Missing required parameter: 'input'.")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		req.Messages = append(req.Messages, Message{Role: "user", Text: text})
		return nil
	}
	var items []struct {
		Type             string          `json:"type"`
		ID               string          `json:"id"`
		Role             string          `json:"role"`
		Content          json.RawMessage `json:"content"`
		CallID           string          `json:"call_id"`
		Name             string          `json:"name"`
		Arguments        string          `json:"arguments"`
		Output           string          `json:"output"`
		EncryptedContent *string         `json:"encrypted_content"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return fmt.Errorf("Invalid type for 'input': expected a string or an array of input items (%v).", err)
	}
	calls := map[string]bool{}
	var unanswered []string
	for i, it := range items {
		switch it.Type {
		case "", "message":
			t, ok := textOf(it.Content)
			if !ok {
				return fmt.Errorf("Invalid type for 'input[%d].content': expected a string or an array of content parts.", i)
			}
			switch it.Role {
			case "user", "assistant":
				req.Messages = append(req.Messages, Message{Role: it.Role, Text: t})
			case "system", "developer":
				req.System += t
			default:
				return fmt.Errorf("Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'. (input[%d].role)", it.Role, i)
			}
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return fmt.Errorf("Missing required parameter: 'input[%d].call_id'.", i)
			}
			calls[it.CallID] = true
			unanswered = append(unanswered, it.CallID)
			c := Call{ID: it.CallID, Name: it.Name, Arguments: it.Arguments}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "assistant" {
				req.Messages[n-1].Calls = append(req.Messages[n-1].Calls, c)
			} else {
				req.Messages = append(req.Messages, Message{Role: "assistant", Calls: []Call{c}})
			}
		case "function_call_output":
			if !calls[it.CallID] {
				return fmt.Errorf("No tool call found for function call output with call_id %s.", it.CallID)
			}
			if k := indexOf(unanswered, it.CallID); k >= 0 {
				unanswered = append(unanswered[:k], unanswered[k+1:]...)
			}
			req.Messages = appendResult(req.Messages, Result{CallID: it.CallID, Content: it.Output})
		case "reasoning":
			if it.EncryptedContent == nil {
				if !store {
					return fmt.Errorf("Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", it.ID)
				}
			} else if !strings.HasPrefix(*it.EncryptedContent, encryptedPrefix) {
				return errors.New("The encrypted content for item " + it.ID + " could not be verified.")
			}
		default:
			return fmt.Errorf("Invalid value: '%s'. (input[%d].type)", it.Type, i)
		}
	}
	if len(unanswered) > 0 {
		return fmt.Errorf("No tool output found for function call %s.", unanswered[0])
	}
	return nil
}

func (s *Server) responsesReply(req *Request, r Reply) any {
	output := []any{}
	if r.Thinking {
		id := s.id("rs_")
		output = append(output, map[string]any{"id": id, "type": "reasoning", "summary": []any{}, "encrypted_content": encryptedPrefix + id})
	}
	if r.Text != "" {
		output = append(output, map[string]any{"id": s.id("msg_"), "type": "message", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "annotations": []any{}, "logprobs": []any{}, "text": r.Text}}})
	}
	for _, c := range r.Calls {
		id := c.ID
		if id == "" {
			id = s.id("call_")
		}
		output = append(output, map[string]any{"id": s.id("fc_"), "type": "function_call", "status": "completed",
			"arguments": rawArgs(c), "call_id": id, "name": c.Name})
	}
	status, incomplete := "completed", any(nil)
	if r.Truncated {
		status, incomplete = "incomplete", map[string]string{"reason": "max_output_tokens"}
	}
	// The tools come back as the API holds them: strict filled in (true
	// when omitted) and a description, null when none was sent.
	tools := []any{}
	for _, t := range req.Tools {
		strict := t.Strict == nil || *t.Strict
		var desc any
		if t.Description != "" {
			desc = t.Description
		}
		tools = append(tools, map[string]any{"type": "function", "name": t.Name, "description": desc, "parameters": t.Schema, "strict": strict})
	}
	choice := json.RawMessage(`"auto"`)
	if len(req.ToolChoice) > 0 {
		choice = req.ToolChoice
	}
	temp := 1.0
	if t, ok := req.Number("temperature"); ok {
		temp = t
	}
	var maxOut any
	if n, ok := req.Number("max_output_tokens"); ok {
		maxOut = int(n)
	}
	var instructions any
	if req.System != "" {
		instructions = req.System
	}
	u := r.Usage
	return map[string]any{
		"id": s.id("resp_"), "object": "response", "created_at": created, "status": status, "background": false,
		"completed_at": created + 1, "max_output_tokens": maxOut,
		"error": nil, "incomplete_details": incomplete, "instructions": instructions, "model": r.Model,
		"output": output, "parallel_tool_calls": true, "previous_response_id": nil,
		"reasoning": map[string]any{"effort": nil, "summary": nil}, "store": false, "temperature": temp,
		"text": map[string]any{"format": map[string]string{"type": "text"}}, "tool_choice": choice, "tools": tools,
		"top_p": 1.0, "truncation": "disabled", "user": nil, "metadata": map[string]any{},
		"usage": map[string]any{
			"input_tokens": u.InputTokens, "input_tokens_details": map[string]int{"cached_tokens": u.CachedTokens, "cache_write_tokens": 0},
			"output_tokens": u.OutputTokens, "output_tokens_details": map[string]int{"reasoning_tokens": u.ReasoningTokens},
			"total_tokens": total(u),
		},
	}
}
