package lexical

import (
	"bytes"
	"encoding/json"
	"strings"
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
// in that order), following a local $ref ("#/$defs/x", "#/definitions/x")
// one level. A schema that does not parse has no parameters.
func properties(schema json.RawMessage) []property {
	var root struct {
		Properties  json.RawMessage            `json:"properties"`
		Required    []string                   `json:"required"`
		Defs        map[string]json.RawMessage `json:"$defs"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if json.Unmarshal(schema, &root) != nil || len(root.Properties) == 0 {
		return nil
	}
	names := orderedKeys(root.Properties)
	var bodies map[string]json.RawMessage
	if json.Unmarshal(root.Properties, &bodies) != nil {
		return nil
	}
	required := map[string]bool{}
	for _, r := range root.Required {
		required[r] = true
	}
	var out []property
	for _, name := range names {
		if len(out) == maxProperties {
			break
		}
		p := property{Name: name, Required: required[name]}
		p.read(bodies[name])
		if ref := p.ref(bodies[name]); ref != "" {
			var target json.RawMessage
			switch {
			case strings.HasPrefix(ref, "#/$defs/"):
				target = root.Defs[strings.TrimPrefix(ref, "#/$defs/")]
			case strings.HasPrefix(ref, "#/definitions/"):
				target = root.Definitions[strings.TrimPrefix(ref, "#/definitions/")]
			}
			var base property
			base.read(target)
			p.inherit(base)
		}
		out = append(out, p)
	}
	return out
}

// schemaFields are the keywords the baseline uses.
type schemaFields struct {
	Ref         string   `json:"$ref"`
	Type        any      `json:"type"`
	Description string   `json:"description"`
	Enum        []any    `json:"enum"`
	Pattern     string   `json:"pattern"`
	Format      string   `json:"format"`
	Minimum     *float64 `json:"minimum"`
	Maximum     *float64 `json:"maximum"`
}

func (p *property) read(raw json.RawMessage) {
	var f schemaFields
	if json.Unmarshal(raw, &f) != nil {
		return
	}
	switch t := f.Type.(type) {
	case string:
		p.Type = t
	case []any: // ["string", "null"]: the first non-null type
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				p.Type = s
				break
			}
		}
	}
	p.Description, p.Pattern, p.Format, p.Min, p.Max = f.Description, f.Pattern, f.Format, f.Minimum, f.Maximum
	for i, e := range f.Enum {
		if i == maxEnum {
			break
		}
		if s, ok := e.(string); ok {
			p.Enum = append(p.Enum, s)
		}
	}
	if len(p.Enum) > 0 && p.Type == "" {
		p.Type = "string"
	}
}

func (p *property) ref(raw json.RawMessage) string {
	var f schemaFields
	_ = json.Unmarshal(raw, &f)
	return f.Ref
}

// inherit fills what the property left unsaid from its $ref target; the
// property's own keywords win (JSON Schema 2020-12 applies both, and the
// description beside the $ref is the more specific one).
func (p *property) inherit(base property) {
	if p.Type == "" {
		p.Type = base.Type
	}
	if p.Description == "" {
		p.Description = base.Description
	} else if base.Description != "" {
		p.Description += ". " + base.Description
	}
	if len(p.Enum) == 0 {
		p.Enum = base.Enum
	}
	if p.Pattern == "" {
		p.Pattern = base.Pattern
	}
	if p.Format == "" {
		p.Format = base.Format
	}
	if p.Min == nil {
		p.Min = base.Min
	}
	if p.Max == nil {
		p.Max = base.Max
	}
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
