package llmfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The token-counting endpoints: Anthropic's POST /v1/messages/count_tokens
// (a Messages request without max_tokens; answers {"input_tokens": N}),
// OpenAI's POST /v1/responses/input_tokens (a Responses request limited to
// the fields that shape the input; answers {"object":
// "response.input_tokens", "input_tokens": N}) and Gemini's POST
// /v1beta/models/{model}:countTokens (a generateContentRequest, the key in
// x-goog-api-key; answers {"totalTokens": N}). They use no scripted reply:
// Options.Count answers them when set, else Tokens does.

// ToolPreambleTokens stand for the system prompt Anthropic adds to a
// request that offers tools: counted with tools, not without.
const ToolPreambleTokens = 346

// responsesCountFields are the fields /responses/input_tokens accepts.
var responsesCountFields = map[string]bool{
	"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "reasoning": true, "text": true, "truncation": true,
	"conversation": true, "previous_response_id": true,
}

func (s *Server) serveCount(w http.ResponseWriter, req *Request) {
	var verr error
	switch req.Dialect {
	case Messages:
		verr = s.parseMessages(req)
	case Responses:
		for k := range req.Params {
			if !responsesCountFields[k] {
				verr = fmt.Errorf("Unknown parameter: '%s'.", k)
			}
		}
		if verr == nil {
			verr = s.parseResponses(req)
		}
	case Gemini:
		verr = parseGeminiCount(req)
	}
	if verr != nil {
		s.reject(w, req, http.StatusBadRequest, verr.Error())
		return
	}
	reply := Reply{}
	if s.opts.Count != nil {
		reply = s.opts.Count(req)
	}
	n := Tokens(req)
	s.mu.Lock()
	req.Status = http.StatusOK
	if reply.Status != 0 {
		req.Status = reply.Status
	}
	if req.Status == http.StatusOK && reply.RawBody == "" {
		req.Counted = n
	}
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	if s.writeScripted(w, req, reply) {
		return
	}
	var out any
	switch req.Dialect {
	case Messages:
		out = map[string]int{"input_tokens": n}
	case Responses:
		out = map[string]any{"object": "response.input_tokens", "input_tokens": n}
	case Gemini:
		out = map[string]any{"totalTokens": n, "promptTokensDetails": []map[string]any{{"modality": "TEXT", "tokenCount": n}}}
	}
	s.setRequestID(w, req)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// Tokens is the fake's count of a parsed request: a quarter of the bytes
// of its system text, messages and tool definitions, rounded up, plus 3
// for the turn; on Anthropic, ToolPreambleTokens more when tools are
// offered. Deterministic, so a test can compute what a count must be.
func Tokens(req *Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Text)
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	tokens := 3 + (n+3)/4
	if req.Dialect == Messages && len(req.Tools) > 0 {
		tokens += ToolPreambleTokens
	}
	return tokens
}

// parseGeminiCount reads a countTokens request with a
// generateContentRequest, as the native API validates it: known fields
// only, the model named as in the path, contents with text parts,
// function declarations with a valid name and at most one of parameters
// and parametersJsonSchema.
func parseGeminiCount(req *Request) error {
	i := strings.LastIndex(req.Path, "/models/")
	pathModel := strings.TrimSuffix(req.Path[i+len("/models/"):], ":countTokens")
	req.Model = pathModel
	for k := range req.Params {
		if k != "contents" && k != "generateContentRequest" {
			return fmt.Errorf("Invalid JSON payload received. Unknown name %q: Cannot find field.", k)
		}
	}
	raw, ok := req.Params["generateContentRequest"]
	if !ok {
		var contents []geminiContent
		if err := decode(req.Params["contents"], &contents); err != nil {
			return errors.New("Invalid JSON payload received. Invalid value at 'contents'")
		}
		return geminiMessages(req, contents)
	}
	if _, both := req.Params["contents"]; both {
		return errors.New("contents and generateContentRequest are mutually exclusive")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return errors.New("Invalid JSON payload received. Invalid value at 'generate_content_request'")
	}
	for k := range fields {
		switch k {
		case "model", "contents", "tools", "toolConfig", "systemInstruction", "generationConfig", "safetySettings", "cachedContent":
		default:
			return fmt.Errorf("Invalid JSON payload received. Unknown name %q at 'generate_content_request': Cannot find field.", k)
		}
	}
	var g struct {
		Model             string          `json:"model"`
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction"`
		Tools             []struct {
			FunctionDeclarations []struct {
				Name                 string          `json:"name"`
				Description          string          `json:"description"`
				Parameters           json.RawMessage `json:"parameters"`
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return fmt.Errorf("Invalid JSON payload received. %v", err)
	}
	if g.Model != "models/"+pathModel {
		return fmt.Errorf("generate_content_request.model: %q does not match the model of the URL, models/%s", g.Model, pathModel)
	}
	if g.SystemInstruction != nil {
		for _, p := range g.SystemInstruction.Parts {
			req.System += p.Text
		}
	}
	for _, t := range g.Tools {
		for j, d := range t.FunctionDeclarations {
			if !geminiName(d.Name) {
				return fmt.Errorf("* GenerateContentRequest.tools[0].function_declarations[%d].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.", j)
			}
			if len(d.Parameters) > 0 && len(d.ParametersJSONSchema) > 0 {
				return fmt.Errorf("* GenerateContentRequest.tools[0].function_declarations[%d]: parameters and parameters_json_schema are mutually exclusive", j)
			}
			schema := d.ParametersJSONSchema
			if len(schema) == 0 {
				schema = d.Parameters
			}
			req.Tools = append(req.Tools, ToolDef{Name: d.Name, Description: d.Description, Schema: schema})
		}
	}
	return geminiMessages(req, g.Contents)
}

type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text string `json:"text"`
	} `json:"parts"`
}

func geminiMessages(req *Request, contents []geminiContent) error {
	if len(contents) == 0 {
		return errors.New("* GenerateContentRequest.contents: contents is not specified")
	}
	for i, c := range contents {
		role := c.Role
		switch role {
		case "", "user":
			role = "user"
		case "model":
			role = "assistant"
		default:
			return fmt.Errorf("* GenerateContentRequest.contents[%d].role: Please use a valid role: user, model.", i)
		}
		if len(c.Parts) == 0 {
			return fmt.Errorf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", i)
		}
		m := Message{Role: role}
		for _, p := range c.Parts {
			m.Text += p.Text
		}
		req.Messages = append(req.Messages, m)
	}
	return nil
}

func geminiName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	if c := n[0]; !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return false
	}
	for _, c := range n {
		if !(c == '_' || c == '.' || c == ':' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
