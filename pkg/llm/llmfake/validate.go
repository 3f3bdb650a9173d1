package llmfake

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
)

// Validation rules the real services apply, with their error texts
// (llm-providers.md §2.1–2.3, §2.6). A provider that breaks one of them
// gets the same 400 the real API would send.

var (
	// OpenAI function names: ^[a-zA-Z0-9_-]{1,64}$.
	openAIName = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	// Anthropic tool names: ^[a-zA-Z0-9_-]{1,128}$ (no dots).
	anthropicName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
)

func checkOpenAIName(field, name string) error {
	if !openAIName.MatchString(name) {
		return fmt.Errorf("Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", field)
	}
	if len(name) > 64 {
		return fmt.Errorf("Invalid '%s': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", field, len(name))
	}
	return nil
}

// checkOpenAIParameters is what OpenAI checks on function parameters even
// with strict off: "schema must have type 'object' and not have
// 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level".
func checkOpenAIParameters(fn string, schema json.RawMessage) error {
	if len(schema) == 0 {
		return nil // a function without parameters
	}
	var m map[string]any
	if json.Unmarshal(schema, &m) != nil {
		return fmt.Errorf("Invalid schema for function '%s': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"None\"'.", fn)
	}
	if m["type"] != "object" {
		got := "None"
		if t, ok := m["type"].(string); ok {
			got = t
		}
		return fmt.Errorf("Invalid schema for function '%s': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"%s\"'.", fn, got)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf", "enum", "not"} {
		if _, ok := m[k]; ok {
			return fmt.Errorf("Invalid schema for function '%s': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level.", fn)
		}
	}
	return nil
}

// checkAnthropicSchema: "input_schema does not support oneOf, allOf, or
// anyOf at the top level"; the type must be object.
func checkAnthropicSchema(i int, schema json.RawMessage) error {
	var m map[string]any
	if json.Unmarshal(schema, &m) != nil {
		return fmt.Errorf("tools.%d.custom.input_schema: Input should be a valid dictionary", i)
	}
	if m["type"] != "object" {
		return fmt.Errorf("tools.%d.custom.input_schema.type: Input should be 'object'", i)
	}
	for _, k := range []string{"oneOf", "anyOf", "allOf"} {
		if _, ok := m[k]; ok {
			return fmt.Errorf("tools.%d.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level", i)
		}
	}
	return nil
}

// strictViolation is the first rule of OpenAI's strict mode a schema
// breaks ("" when none): every object closed and all its properties
// required.
func strictViolation(schema json.RawMessage) string {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return "schema is not an object"
	}
	return strictNode(v, "()", 0)
}

func strictNode(v any, ctx string, depth int) string {
	m, ok := v.(map[string]any)
	if !ok || depth > 64 {
		return ""
	}
	props, hasProps := m["properties"].(map[string]any)
	if hasProps || m["type"] == "object" {
		if m["additionalProperties"] != false {
			return fmt.Sprintf("In context=%s, 'additionalProperties' is required to be supplied and to be false.", ctx)
		}
		var req []string
		if list, ok := m["required"].([]any); ok {
			for _, x := range list {
				if s, ok := x.(string); ok {
					req = append(req, s)
				}
			}
		}
		for name, sub := range props {
			if !slices.Contains(req, name) {
				return fmt.Sprintf("In context=%s, 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", ctx, name)
			}
			if msg := strictNode(sub, fmt.Sprintf("('properties', '%s')", name), depth+1); msg != "" {
				return msg
			}
		}
	}
	if items, ok := m["items"]; ok {
		if msg := strictNode(items, ctx+", 'items'", depth+1); msg != "" {
			return msg
		}
	}
	for _, k := range []string{"oneOf", "allOf", "not"} {
		if _, ok := m[k]; ok {
			return fmt.Sprintf("In context=%s, '%s' is not permitted.", ctx, k)
		}
	}
	return ""
}

// textOf reads message content: a string or a list of text parts.
func textOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	out := ""
	for _, p := range parts {
		out += p.Text
	}
	return out, true
}
