package llm

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestConvertSchema(t *testing.T) {
	const empty = `{"type":"object","properties":{}}`
	cases := []struct {
		name    string
		in      string
		want    string
		notes   []string
		wrapped bool
	}{
		{name: "absent", in: ``, want: empty},
		{name: "null", in: `null`, want: empty},
		{name: "true", in: `true`, want: empty},
		{name: "empty object", in: `{}`, want: empty},
		{name: "false", in: `false`, want: empty,
			notes: []string{"schema is false (accepts no arguments), which providers cannot express; sent as an object without properties"}},
		{name: "not JSON", in: `{"type":`, want: empty,
			notes: []string{"schema is not JSON; sent as an object without properties"}},
		{name: "an array", in: `[1,2]`, want: empty,
			notes: []string{"schema is an array, not a JSON Schema object; sent as an object without properties"}},
		{name: "properties without type", in: `{"properties":{"a":{"type":"string"}}}`,
			want: `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{name: "already fine", in: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`,
			want: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`},
		{name: "nullable object root", in: `{"type":["object","null"],"properties":{}}`, want: empty},
		{name: "meta keywords stripped, a property named $id kept",
			in:   `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","type":"object","properties":{"$id":{"type":"string","$comment":"why"}}}`,
			want: `{"type":"object","properties":{"$id":{"type":"string"}}}`},
		{name: "arrays without items get items",
			in:   `{"type":"object","properties":{"tags":{"type":"array"},"maybe":{"type":["array","null"]},"tuple":{"type":"array","prefixItems":[{"type":"string"}]}}}`,
			want: `{"type":"object","properties":{"tags":{"type":"array","items":{}},"maybe":{"type":["array","null"],"items":{}},"tuple":{"type":"array","prefixItems":[{"type":"string"}]}}}`},
		{name: "anyOf of required lists becomes a sentence",
			in:   `{"type":"object","properties":{"a":{},"b":{}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`,
			want: `{"type":"object","properties":{"a":{},"b":{}},"description":"Provide at least one of: a; b."}`},
		{name: "oneOf of required lists keeps the description",
			in:   `{"type":"object","description":"Move a file.","properties":{"a":{},"b":{},"c":{}},"oneOf":[{"required":["a","b"]},{"required":["c"]}]}`,
			want: `{"type":"object","properties":{"a":{},"b":{},"c":{}},"description":"Move a file. Provide exactly one of: a and b; c."}`},
		{name: "allOf merges properties and required",
			in:   `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}]}`,
			want: `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`},
		{name: "allOf keeps both definitions of one property",
			in:   `{"allOf":[{"properties":{"a":{"type":"string"}}},{"properties":{"a":{"maxLength":3}}},true]}`,
			want: `{"type":"object","properties":{"a":{"allOf":[{"type":"string"},{"maxLength":3}]}},"required":[]}`},
		{name: "oneOf of objects becomes their union",
			in: `{"description":"Find a user.","oneOf":[
				{"type":"object","properties":{"id":{"type":"integer"},"v":{"type":"string"}},"required":["id","v"]},
				{"type":"object","properties":{"email":{"type":"string"},"v":{"type":"string"}},"required":["email","v"],"additionalProperties":false}]}`,
			want: `{"type":"object","properties":{"id":{"type":"integer"},"email":{"type":"string"},"v":{"type":"string"}},"required":["v"],
				"description":"Find a user. Arguments take exactly one of these shapes: (1) with id, v; (2) with email, v."}`},
		{name: "anyOf variants disagreeing on a property keep both",
			in:   `{"anyOf":[{"properties":{"a":{"type":"string"}}},{"properties":{"a":{"type":"integer"}}},{"properties":{"a":{"type":"boolean"}},"required":["a"]}]}`,
			want: `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"boolean"}]}},"required":[],"description":"Arguments take at least one of these shapes: (1) with any of a; (2) with any of a; (3) with a."}`},
		{name: "anyOf with a scalar branch drops it and says so",
			in:    `{"anyOf":[{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},{"type":"string"}]}`,
			want:  `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"description":"Arguments take at least one of these shapes: (1) with q."}`,
			notes: []string{`root anyOf branch 2 {"type":"string"} is not an object schema; dropped`}},
		{name: "root $ref is inlined, nested refs stay",
			in:   `{"$ref":"#/$defs/Args","$defs":{"Args":{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}}},"N":{"type":"integer"}}}`,
			want: `{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}},"$defs":{"Args":{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}}},"N":{"type":"integer"}}}`},
		{name: "allOf branch by $ref",
			in:   `{"allOf":[{"$ref":"#/definitions/Base"},{"properties":{"x":{"type":"number"}}}],"definitions":{"Base":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}}`,
			want: `{"type":"object","properties":{"id":{"type":"string"},"x":{"type":"number"}},"required":["id"],"definitions":{"Base":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}}`},
		{name: "remote root $ref is never fetched",
			in: `{"$ref":"https://example.com/schema.json"}`, want: empty,
			notes: []string{`root $ref "https://example.com/schema.json" is not a reference inside the schema; dropped`}},
		{name: "root $ref loop",
			in:    `{"$ref":"#/$defs/A","$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}}}`,
			want:  `{"type":"object","properties":{},"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}}}`,
			notes: []string{"root $ref chain is longer than 8 hops (a loop?); dropped"}},
		{name: "root enum cannot be said",
			in:    `{"type":"object","properties":{"a":{"type":"integer"}},"enum":[{"a":1}]}`,
			want:  `{"type":"object","properties":{"a":{"type":"integer"}}}`,
			notes: []string{`root enum [{"a":1}] dropped: providers reject it at the root and an object schema cannot say it`}},
		{name: "string root is wrapped", in: `{"type":"string","minLength":1}`,
			want: `{"type":"object","properties":{"input":{"type":"string","minLength":1}},"required":["input"]}`, wrapped: true},
		{name: "union of scalars is wrapped", in: `{"anyOf":[{"type":"string"},{"type":"number"}]}`,
			want: `{"type":"object","properties":{"input":{"anyOf":[{"type":"string"},{"type":"number"}]}},"required":["input"]}`, wrapped: true},
		{name: "wrapped root keeps its definitions at the root",
			in:      `{"type":"array","items":{"$ref":"#/$defs/I"},"$defs":{"I":{"type":"string"}}}`,
			want:    `{"type":"object","properties":{"input":{"type":"array","items":{"$ref":"#/$defs/I"}}},"required":["input"],"$defs":{"I":{"type":"string"}}}`,
			wrapped: true},
		{name: "big integers survive", in: `{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`,
			want: `{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := convertSchema(json.RawMessage(c.in))
			if !sameJSON(got.schema, []byte(c.want)) {
				t.Errorf("schema =\n  %s\nwant\n  %s", got.schema, c.want)
			}
			if !reflect.DeepEqual(got.notes, c.notes) {
				t.Errorf("notes = %q, want %q", got.notes, c.notes)
			}
			if got.wrapped != c.wrapped {
				t.Errorf("wrapped = %v, want %v", got.wrapped, c.wrapped)
			}
			// Converting again changes nothing: the output is already
			// what every provider takes.
			again := convertSchema(got.schema)
			if !sameJSON(again.schema, got.schema) || len(again.notes) != 0 || again.wrapped {
				t.Errorf("not idempotent: %s → %s (notes %q, wrapped %v)", got.schema, again.schema, again.notes, again.wrapped)
			}
		})
	}
}

func TestConvertSchemaBounds(t *testing.T) {
	huge := `{"type":"object","description":"` + strings.Repeat("x", maxSchemaBytes) + `"}`
	got := convertSchema(json.RawMessage(huge))
	if len(got.notes) != 1 || !strings.Contains(got.notes[0], "over 1048576") || string(got.schema) != `{"properties":{},"type":"object"}` {
		t.Errorf("huge schema: %q %s", got.notes, got.schema)
	}
	// Branches that reference themselves fan out exponentially; the work
	// limit stops them with one note.
	selfRef := `{"allOf":[{"$ref":"#/$defs/A"}],"$defs":{"A":{"allOf":[{"$ref":"#/$defs/A"},{"$ref":"#/$defs/A"},{"$ref":"#/$defs/A"}]}}}`
	got = convertSchema(json.RawMessage(selfRef))
	if len(got.notes) != 1 || !strings.Contains(got.notes[0], "more than 256 steps") {
		t.Errorf("self-referencing allOf: notes %q", got.notes)
	}
	// Numbers pass through as written, not through float64.
	big := convertSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`))
	if !strings.Contains(string(big.schema), "9007199254740993") {
		t.Errorf("big integer changed: %s", big.schema)
	}
	// Deep nesting must neither crash nor hang.
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 500) + `{"type":"array"}` + strings.Repeat(`}}`, 500)
	got = convertSchema(json.RawMessage(deep))
	if !json.Valid(got.schema) || len(got.notes) != 0 {
		t.Errorf("deep schema: %q", got.notes)
	}
}

func FuzzConvertSchema(f *testing.F) {
	for _, s := range []string{`{}`, `{"anyOf":[{"required":["a"]}]}`, `{"$ref":"#"}`, `{"oneOf":[{"type":"object"},{"$ref":"#/x"}]}`, `{"type":"string"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := convertSchema(json.RawMessage(in))
		var m map[string]any
		if err := json.Unmarshal(got.schema, &m); err != nil {
			t.Fatalf("output is not an object: %s", got.schema)
		}
		if m["type"] != "object" {
			t.Fatalf("root type %v", m["type"])
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf", "enum", "not", "$ref"} {
			if _, ok := m[k]; ok {
				t.Fatalf("root keeps %s: %s", k, got.schema)
			}
		}
		again := convertSchema(got.schema)
		if !sameJSON(again.schema, got.schema) || len(again.notes) != 0 || again.wrapped {
			t.Fatalf("not idempotent: %s → %s (notes %q)", got.schema, again.schema, again.notes)
		}
	})
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
