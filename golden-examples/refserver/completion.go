package refserver

import (
	"context"
	"encoding/json"
	"strings"
)

// maxCompletionValues is the schema's CompleteResult maxItems (COMP-1).
const maxCompletionValues = 100

// complete answers completion/complete for the customer_id argument of the
// summarize_invoices prompt and of the customer invoices template. An
// unknown prompt or template is -32602 (COMP-2); an argument without
// completions gets an empty list.
func (s *Server) complete(_ context.Context, r *request) (map[string]any, *Error) {
	var p struct {
		Ref *struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument *struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"argument"`
	}
	if err := json.Unmarshal(r.params["ref"], &p.Ref); err != nil || p.Ref == nil {
		return nil, errorf(CodeInvalidParams, "Invalid params: ref must be a PromptReference or ResourceTemplateReference")
	}
	if err := json.Unmarshal(r.params["argument"], &p.Argument); err != nil || p.Argument == nil || p.Argument.Name == nil || p.Argument.Value == nil {
		return nil, errorf(CodeInvalidParams, "Invalid params: argument must have string name and value")
	}
	switch p.Ref.Type {
	case "ref/prompt":
		if p.Ref.Name != summarizePrompt && !s.opts.breaks("COMP-2") {
			// COMP-2's mutant answers an unknown prompt with an empty list.
			return nil, errorf(CodeInvalidParams, "Unknown prompt: %s", truncate(p.Ref.Name, 128))
		}
	case "ref/resource":
		if p.Ref.URI != customerURITemplate {
			return nil, errorf(CodeInvalidParams, "Unknown resource template: %s", truncate(p.Ref.URI, maxURILen))
		}
	default:
		return nil, errorf(CodeInvalidParams, `Invalid params: ref.type must be "ref/prompt" or "ref/resource"`)
	}
	values := []string{}
	total := 0
	if *p.Argument.Name == "customer_id" && len(*p.Argument.Value) <= 16 {
		prefix := strings.ToUpper(*p.Argument.Value)
		for _, id := range completionCustomers() {
			if strings.HasPrefix(id, prefix) {
				total++
				if len(values) < maxCompletionValues || s.opts.breaks("COMP-1") { // COMP-1's mutant has no cap
					values = append(values, id)
				}
			}
		}
	}
	if s.opts.breaks("COMP-3") {
		// The values at the top level, where no client looks for them.
		return map[string]any{"values": values, "total": total}, nil
	}
	return map[string]any{"completion": map[string]any{
		"values": values, "total": total, "hasMore": total > len(values),
	}}, nil
}
