package lexical

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/toolschema"
)

// property is what the baseline reads of one inputSchema property.
type property struct {
	Name        string
	Type        string // "string", "integer", "number", "boolean", … ("" when not given)
	Description string
	Enum        []string
	Pattern     string
	Format      string
	Required    bool
	Min, Max    *float64
}

// maxProperties and maxEnum bound what is read of a schema from the
// server under test.
const (
	maxProperties = 256
	maxEnum       = 256
)

// properties lists a tool's top-level parameters in the order the schema
// declares them (the order matters: quoted strings fill string parameters
// in that order), each read as a model reads it (package toolschema:
// through local $refs and nullable wrappers). A schema that does not parse
// has no parameters.
func properties(schema json.RawMessage) []property {
	var root struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(schema, &root) != nil || len(root.Properties) == 0 {
		return nil
	}
	names := orderedKeys(root.Properties)
	var bodies map[string]json.RawMessage
	if json.Unmarshal(root.Properties, &bodies) != nil {
		return nil
	}
	doc := toolschema.NewDoc(schema)
	var out []property
	for _, name := range names {
		if len(out) == maxProperties {
			break
		}
		sp, _ := doc.Param(name, bodies[name])
		p := property{Name: name, Required: slices.Contains(root.Required, name), Type: sp.Type,
			// Every description on the way: the one beside a $ref says
			// what the parameter is for, the definition's what it is.
			Description: strings.ReplaceAll(sp.Explains, "\n", ". "),
			Pattern:     sp.Pattern, Format: sp.Format, Min: sp.Min, Max: sp.Max}
		for _, e := range sp.Enum {
			if len(p.Enum) == maxEnum {
				break
			}
			var s string
			if json.Unmarshal(e, &s) == nil {
				p.Enum = append(p.Enum, s)
			}
		}
		if len(p.Enum) > 0 && p.Type == "" {
			p.Type = "string"
		}
		out = append(out, p)
	}
	return out
}

// orderedKeys returns an object's keys in document order, which
// map decoding loses.
func orderedKeys(obj json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, ok := t.(string)
		if !ok {
			return keys
		}
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}
