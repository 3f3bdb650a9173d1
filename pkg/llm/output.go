package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonschema"
)

// Structured output (llm-providers.md §8.2a): the judge asks for JSON
// matching a schema. Chat sends response_format json_schema, Responses
// text.format, Anthropic output_config.format; endpoints without it get the
// schema in the system prompt. Either way the answer is checked here, since
// a compatible server may accept the parameter and ignore it.

// strictOutputSchema reports whether OpenAI's strict mode accepts schema
// as it is: every object closed (additionalProperties: false) and listing
// all its properties as required. A schema that is not is sent with
// strict: false rather than refused.
func strictOutputSchema(schema json.RawMessage) bool {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return false
	}
	return strictNode(v, 0)
}

func strictNode(v any, depth int) bool {
	if depth > maxSchemaDepth {
		return false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return true
	}
	for _, k := range []string{"oneOf", "allOf", "not", "if"} {
		if _, ok := m[k]; ok {
			return false // not in OpenAI's strict subset
		}
	}
	props, hasProps := m["properties"].(map[string]any)
	if hasProps || m["type"] == "object" {
		if m["additionalProperties"] != false {
			return false
		}
		req := stringsOf(m["required"])
		for name, sub := range props {
			if !slices.Contains(req, name) || !strictNode(sub, depth+1) {
				return false
			}
		}
	}
	var subs []any
	if items, ok := m["items"]; ok {
		subs = append(subs, items)
	}
	for _, k := range []string{"$defs", "definitions"} {
		if defs, ok := m[k].(map[string]any); ok {
			for _, d := range defs {
				subs = append(subs, d)
			}
		}
	}
	if list, ok := m["anyOf"].([]any); ok {
		subs = append(subs, list...)
	}
	for _, sub := range subs {
		if !strictNode(sub, depth+1) {
			return false
		}
	}
	return true
}

// extractOutput finds the JSON value in a model's answer and checks it
// against the schema. Models wrap JSON in code fences or a sentence even
// when told not to; the outermost {…} is taken.
func extractOutput(text string, schema json.RawMessage) (json.RawMessage, error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return nil, errors.New("the reply is empty")
	}
	if !json.Valid([]byte(s)) {
		if body, ok := fenced(s); ok {
			s = body
		}
	}
	if !json.Valid([]byte(s)) {
		i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
		if i < 0 || j <= i {
			return nil, errors.New("the reply contains no JSON object")
		}
		s = s[i : j+1]
		if !json.Valid([]byte(s)) {
			return nil, errors.New("the reply's JSON does not parse")
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil, fmt.Errorf("the reply's JSON does not parse: %v", err)
	}
	out := json.RawMessage(buf.Bytes())
	sch, err := jsonschema.Compile(schema, jsonschema.Limits{})
	if err != nil {
		return out, nil // the caller's schema is not checkable; the JSON parses
	}
	if err := sch.Validate(out); err != nil {
		return nil, fmt.Errorf("the reply's JSON does not match the schema: %v", err)
	}
	return out, nil
}

// fenced returns the body of the first ``` code fence in s.
func fenced(s string) (string, bool) {
	i := strings.Index(s, "```")
	if i < 0 {
		return "", false
	}
	rest := s[i+3:]
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
		rest = rest[nl+1:] // drop the info string ("json")
	}
	j := strings.Index(rest, "```")
	if j < 0 {
		return "", false
	}
	return strings.TrimSpace(rest[:j]), true
}
