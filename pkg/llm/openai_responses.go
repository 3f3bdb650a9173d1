package llm

import (
	"encoding/json"
	"errors"
	"strings"
)

// responsesDialect is the OpenAI Responses API (POST {base}/responses),
// the default for api.openai.com: OpenAI's reasoning models refuse
// function tools on Chat Completions unless reasoning effort is none
// (llm-providers.md §2.1). Every call is stateless (store: false): the
// whole transcript is sent, with earlier output items echoed verbatim, so
// runs are reproducible and nothing is kept server-side.
//
// Usage mapping: InputTokens = input_tokens − input_tokens_details.
// cached_tokens; CachedInputTokens = cached_tokens; CacheWriteTokens = 0;
// OutputTokens = output_tokens, which includes ReasoningTokens =
// output_tokens_details.reasoning_tokens.
type responsesDialect struct{}

type responsesRequest struct {
	Model           string            `json:"model"`
	Instructions    string            `json:"instructions,omitempty"`
	Input           []json.RawMessage `json:"input"`
	Tools           []responsesTool   `json:"tools,omitempty"`
	ToolChoice      string            `json:"tool_choice,omitempty"`
	Temperature     *float64          `json:"temperature,omitempty"`
	MaxOutputTokens int               `json:"max_output_tokens,omitempty"`
	Store           bool              `json:"store"`
	Include         []string          `json:"include,omitempty"`
	Text            *responsesText    `json:"text,omitempty"`
}

// responsesTool always says strict: false. Responses defaults to strict
// and then rewrites an MCP schema (all fields required, no extra
// properties), "which can make previously optional fields mandatory"
// (llm-providers.md §2.2).
type responsesTool struct {
	Type        string          `json:"type"` // function
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

type responsesText struct {
	Format responsesFormat `json:"format"`
}

type responsesFormat struct {
	Type   string          `json:"type"` // json_schema
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

func (responsesDialect) build(p *provider, t *turn) ([]byte, error) {
	r := responsesRequest{Model: p.model, Instructions: t.system, Temperature: t.sent.Temperature, MaxOutputTokens: t.sent.MaxOutputTokens}
	var enc encoder
	if t.capab.reasoning {
		// Reasoning items come back encrypted and are echoed next turn.
		r.Include = []string{"reasoning.encrypted_content"}
	}
	for _, m := range t.messages {
		switch m.Role {
		case User:
			r.Input = append(r.Input, enc.json(map[string]string{"role": "user", "content": m.Text}))
		case Assistant:
			if m.Dialect == DialectOpenAIResponses && len(m.Raw) > 0 {
				var items []json.RawMessage
				if err := json.Unmarshal(m.Raw, &items); err != nil {
					return nil, errors.New("an assistant turn's raw output items do not parse: " + bound(err.Error(), 200))
				}
				for _, it := range items {
					// A reasoning item without its encrypted content can only
					// be resolved server-side, which store: false rules out.
					var head struct {
						Type      string  `json:"type"`
						Encrypted *string `json:"encrypted_content"`
					}
					if json.Unmarshal(it, &head) == nil && head.Type == "reasoning" && head.Encrypted == nil {
						continue
					}
					r.Input = append(r.Input, it)
				}
				continue
			}
			if m.Text != "" {
				r.Input = append(r.Input, enc.json(map[string]string{"role": "assistant", "content": m.Text}))
			}
			for _, c := range m.Calls {
				r.Input = append(r.Input, enc.json(map[string]string{"type": "function_call", "call_id": c.ID,
					"name": t.tools.names.provider(c.Name), "arguments": t.providerArgs(c)}))
			}
		case ToolRole:
			for _, res := range m.Results {
				r.Input = append(r.Input, enc.json(map[string]string{"type": "function_call_output", "call_id": res.CallID, "output": res.Content}))
			}
		default:
			return nil, errors.New("unknown message role " + string(m.Role))
		}
	}
	if r.Input == nil {
		r.Input = []json.RawMessage{}
	}
	for _, tool := range t.tools.tools {
		r.Tools = append(r.Tools, responsesTool{Type: "function", Name: tool.name, Description: tool.description, Parameters: tool.schema})
	}
	if len(r.Tools) > 0 {
		r.ToolChoice = t.req.ToolChoice
	}
	if t.output == OutputJSONSchema {
		r.Text = &responsesText{Format: responsesFormat{Type: "json_schema", Name: "output", Schema: t.req.Output, Strict: strictOutputSchema(t.req.Output)}}
	}
	if enc.err != nil {
		return nil, enc.err
	}
	return json.Marshal(r)
}

func (responsesDialect) parse(p *provider, t *turn, body []byte) (*Response, error) {
	var r struct {
		Model             string `json:"model"`
		Status            string `json:"status"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Output json.RawMessage `json:"output"`
		Usage  *struct {
			InputTokens        int `json:"input_tokens"`
			InputTokensDetails *struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputTokens        int `json:"output_tokens"`
			OutputTokensDetails *struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, errors.New("not a response object: " + bound(err.Error(), 200))
	}
	if r.Status == "failed" {
		msg := "the response failed"
		if r.Error != nil {
			msg += ": " + bound(r.Error.Code+" "+r.Error.Message, maxErrorExcerpt)
		}
		return nil, errors.New(p.redact(msg))
	}
	var items []struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Content   []struct {
			Type    string `json:"type"`
			Text    string `json:"text"`
			Refusal string `json:"refusal"`
		} `json:"content"`
	}
	if err := json.Unmarshal(r.Output, &items); err != nil {
		return nil, errors.New("the response's output is not a list of items: " + bound(err.Error(), 200))
	}
	resp := &Response{ServedModel: r.Model, StopReason: "end_turn"}
	resp.Message.Raw = r.Output
	var text strings.Builder
	refused := false
	for _, it := range items {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					refused = true
					text.WriteString(c.Refusal)
				}
			}
		case "function_call":
			if len(resp.Message.Calls) < maxToolCallsPerResponse {
				resp.Message.Calls = append(resp.Message.Calls, t.call(it.CallID, it.Name, it.Arguments))
			}
		}
	}
	resp.Message.Text = text.String()
	switch {
	case r.Status == "incomplete" && r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens":
		resp.StopReason = "max_tokens"
	case r.Status == "incomplete" && r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter", refused:
		resp.StopReason = "refusal"
	case r.Status == "incomplete":
		resp.StopReason = "other"
	case len(resp.Message.Calls) > 0:
		resp.StopReason = "tool_use"
	}
	if u := r.Usage; u != nil {
		cached := 0
		if u.InputTokensDetails != nil {
			cached = nonNeg(u.InputTokensDetails.CachedTokens)
		}
		resp.Usage = Usage{InputTokens: nonNeg(u.InputTokens - cached), CachedInputTokens: cached, OutputTokens: nonNeg(u.OutputTokens)}
		if u.OutputTokensDetails != nil {
			resp.Usage.ReasoningTokens = nonNeg(u.OutputTokensDetails.ReasoningTokens)
		}
	}
	return resp, nil
}
