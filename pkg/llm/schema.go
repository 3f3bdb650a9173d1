package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonpointer"
)

// Schema conversion (llm-providers.md §2.7). MCP inputSchema is JSON
// Schema; OpenAI and Anthropic reject a tool whose schema root is not
// "type": "object" or carries anyOf/oneOf/allOf/enum/not — and one such
// tool fails the whole request, not just that tool. All three dialects
// here send non-strict tools, so one converter serves them: it rewrites
// the root into a plain object where that keeps the meaning (moving what
// a schema can no longer say into the description) and leaves nested
// schemas alone except for what a provider is known to reject. Only what
// cannot be carried over is reported, as a portability finding.

const (
	maxSchemaBytes = 1 << 20
	maxSchemaDepth = 64 // nesting walked; deeper subschemas pass unchanged
	maxRefHops     = 8  // a root $ref chain longer than this is a loop
)

// convertedSchema is one tool's schema as sent.
type convertedSchema struct {
	schema json.RawMessage
	// wrapped: the root was not an object schema, so it went out as
	// {"type":"object","properties":{"input":<root>}} and the model's
	// {"input": X} is unwrapped to X.
	wrapped bool
	notes   []string // what could not be converted
}

func emptyObjectSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

// convertSchema turns an MCP inputSchema into one every dialect accepts.
func convertSchema(raw json.RawMessage) convertedSchema {
	var out convertedSchema
	finish := func(root map[string]any) convertedSchema {
		b, err := json.Marshal(root)
		if err != nil { // unreachable: the tree came from JSON
			b = []byte(`{"type":"object","properties":{}}`)
			out.notes = append(out.notes, "schema could not be re-encoded; sent as an object without properties")
		}
		out.schema = b
		return out
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return finish(emptyObjectSchema())
	}
	if len(trimmed) > maxSchemaBytes {
		out.notes = append(out.notes, fmt.Sprintf("schema is %d bytes, over %d; sent as an object without properties", len(trimmed), maxSchemaBytes))
		return finish(emptyObjectSchema())
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		out.notes = append(out.notes, "schema is not JSON; sent as an object without properties")
		return finish(emptyObjectSchema())
	}
	switch t := v.(type) {
	case bool:
		if !t {
			out.notes = append(out.notes, "schema is false (accepts no arguments), which providers cannot express; sent as an object without properties")
		}
		return finish(emptyObjectSchema())
	case map[string]any:
		c := &converter{doc: t}
		root := c.root(t)
		out.notes = append(out.notes, c.notes...)
		out.wrapped = c.wrapped
		return finish(root)
	default:
		out.notes = append(out.notes, fmt.Sprintf("schema is %s, not a JSON Schema object; sent as an object without properties", jsonType(v)))
		return finish(emptyObjectSchema())
	}
}

type converter struct {
	doc     map[string]any // the original document, for $ref pointers
	notes   []string
	wrapped bool
	// work counts branch resolutions: branches that $ref the root can
	// fan out exponentially, so a hostile schema must hit a limit.
	work     int
	overWork bool
}

// maxConvertWork bounds branch resolutions per schema; real schemas
// need a handful.
const maxConvertWork = 256

func (c *converter) note(format string, args ...any) {
	c.notes = append(c.notes, fmt.Sprintf(format, args...))
}

// root normalises the root schema.
func (c *converter) root(s map[string]any) map[string]any {
	s = c.inlineRootRef(s)
	walk(s, 0)
	if !objectLike(s) || !c.hasObjectBranch(s) {
		// A string, an array, a union of scalars: no object schema can
		// say it, but a property can.
		return c.wrap(s)
	}
	c.flattenComposition(s, 0)
	for _, k := range []string{"allOf", "anyOf", "oneOf", "$ref"} {
		if v, ok := s[k]; ok { // not a list (or a $ref not a string): invalid
			delete(s, k)
			c.note("root %s %s is malformed; dropped", k, excerpt(v))
		}
	}
	for _, k := range []string{"not", "enum", "const"} {
		if v, ok := s[k]; ok {
			delete(s, k)
			c.note("root %s %s dropped: providers reject it at the root and an object schema cannot say it", k, excerpt(v))
		}
	}
	switch t := s["type"].(type) {
	case nil:
		s["type"] = "object"
	case string:
		if t != "object" {
			return c.wrap(s)
		}
	case []any:
		// ["object","null"]: arguments are never null, so the object
		// alone keeps the meaning.
		if !slices.Contains(t, any("object")) {
			return c.wrap(s)
		}
		s["type"] = "object"
	default:
		c.note("root type %s is not a JSON Schema type; sent as object", excerpt(t))
		s["type"] = "object"
	}
	if _, ok := s["properties"]; !ok {
		s["properties"] = map[string]any{}
	}
	return s
}

// wrap carries a non-object root as the single property "input".
func (c *converter) wrap(s map[string]any) map[string]any {
	c.wrapped = true
	w := map[string]any{"type": "object", "properties": map[string]any{"input": s}, "required": []any{"input"}}
	// Definitions stay at the root, where "#/$defs/…" pointers look.
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := s[k]; ok {
			w[k] = d
			delete(s, k)
		}
	}
	return w
}

// inlineRootRef replaces a root {"$ref": …} by its target: providers look
// for "type": "object" on the root itself.
func (c *converter) inlineRootRef(s map[string]any) map[string]any {
	for hop := 0; hop < maxRefHops; hop++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		delete(s, "$ref")
		target, ok := c.resolve(ref)
		if !ok {
			c.note("root $ref %q is not a reference inside the schema; dropped", bound(ref, 200))
			return s
		}
		merged := deepCopy(target).(map[string]any)
		for k, v := range s { // the siblings of $ref refine the target
			merged[k] = v
		}
		s = merged
	}
	if _, loops := s["$ref"]; loops {
		delete(s, "$ref")
		c.note("root $ref chain is longer than %d hops (a loop?); dropped", maxRefHops)
	}
	return s
}

// resolve follows a same-document JSON pointer ("#", "#/$defs/X").
// Remote references are never fetched.
func (c *converter) resolve(ref string) (map[string]any, bool) {
	v, ok := jsonpointer.Get(c.doc, ref)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// walk fixes nested schemas for what providers reject everywhere: meta
// keywords some APIs refuse ($schema, $id, $comment, $anchor) and arrays
// without items (Azure: "array schema missing items"). Only schema
// positions are visited, so a property named "$id" survives.
func walk(s map[string]any, depth int) {
	if depth > maxSchemaDepth {
		return
	}
	for _, k := range []string{"$schema", "$id", "$comment", "$anchor"} {
		delete(s, k)
	}
	if isArrayType(s["type"]) {
		_, hasItems := s["items"]
		_, hasPrefix := s["prefixItems"]
		if !hasItems && !hasPrefix {
			s["items"] = map[string]any{}
		}
	}
	for _, k := range []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"} {
		if m, ok := s[k].(map[string]any); ok {
			for _, sub := range m {
				if sm, ok := sub.(map[string]any); ok {
					walk(sm, depth+1)
				}
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "additionalItems", "contains", "propertyNames", "not", "if", "then", "else"} {
		if sm, ok := s[k].(map[string]any); ok {
			walk(sm, depth+1)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"} {
		if list, ok := s[k].([]any); ok {
			for _, sub := range list {
				if sm, ok := sub.(map[string]any); ok {
					walk(sm, depth+1)
				}
			}
		}
	}
}

func isArrayType(t any) bool {
	switch t := t.(type) {
	case string:
		return t == "array"
	case []any:
		return slices.Contains(t, any("array"))
	}
	return false
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}

// excerpt is a short JSON rendering of v for a note.
func excerpt(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonType(v)
	}
	return bound(string(b), 80)
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
