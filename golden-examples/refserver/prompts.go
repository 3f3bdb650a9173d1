package refserver

import (
	"context"
	"encoding/json"
	"fmt"
)

const summarizePrompt = "summarize_invoices"

var promptList = []any{
	map[string]any{
		"name":        summarizePrompt,
		"title":       "Summarize invoices",
		"description": "Ask the model to summarize one customer's invoices.",
		"arguments": []any{
			map[string]any{"name": "customer_id", "title": "Customer id", "description": "Customer id such as C1234", "required": true},
		},
	},
}

// listPrompts answers prompts/list (PROMPT-1).
func (s *Server) listPrompts(_ context.Context, r *request) (map[string]any, *Error) {
	prompts := s.promptList()
	start, end, next, err := s.page(r, "prompts", len(prompts))
	if err != nil {
		return nil, err
	}
	return pagedResult("prompts", prompts[start:end], next), nil
}

// getPrompt answers prompts/get. Unknown prompts and missing or invalid
// arguments are -32602 (PROMPT-2). The result is not cacheable (CACHE-4).
func (s *Server) getPrompt(_ context.Context, r *request) (map[string]any, *Error) {
	name, present, err := r.stringParam("name")
	if err != nil {
		return nil, err
	}
	if !present {
		return nil, errorf(CodeInvalidParams, "Invalid params: name is required")
	}
	if it, ok := s.promptItem(name); ok {
		return s.getItemPrompt(it, r)
	}
	if name != summarizePrompt {
		return nil, s.mutUnknownPrompt(&Error{Code: CodeInvalidParams, Message: "Unknown prompt: " + truncate(name, 128), Data: map[string]any{"name": truncate(name, 128)}})
	}
	var args map[string]string
	if raw, ok := r.params["arguments"]; ok {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, errorf(CodeInvalidParams, "Invalid params: arguments must be an object of strings")
		}
	}
	customer, ok := args["customer_id"]
	if !ok {
		return nil, errorf(CodeInvalidParams, "Invalid params: missing required argument customer_id")
	}
	if !customerIDPattern().MatchString(customer) {
		return nil, errorf(CodeInvalidParams, "Invalid params: customer_id must look like C1234, got %q", truncate(customer, 64))
	}
	uri := customerURIPrefix + customer
	_, data, _ := resourceText(uri)
	return s.mutPromptResult(map[string]any{
		"description": "Summarize the invoices of customer " + customer,
		"messages": []any{
			map[string]any{"role": "user", "content": textContent(fmt.Sprintf(
				"Summarize the invoices of customer %s: how many are paid, open and overdue, and how much is outstanding. Their invoices follow.", customer))},
			map[string]any{"role": "user", "content": map[string]any{
				"type":     "resource",
				"resource": map[string]any{"uri": uri, "mimeType": "application/json", "text": data},
			}},
		},
	}), nil
}
