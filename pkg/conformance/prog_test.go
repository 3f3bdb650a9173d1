package conformance

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestPROGMutants(t *testing.T) {
	for _, c := range progFamily.checks {
		if c.Level != "MUST" {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestPROGArgs(t *testing.T) {
	schema := json.RawMessage(`{
		"type": "object",
		"$defs": {"id": {"type": "string", "minLength": 3, "maxLength": 5}},
		"properties": {
			"n": {"type": "integer", "minimum": 2, "maximum": 20},
			"f": {"type": "number", "exclusiveMinimum": 0},
			"unit": {"type": "string", "enum": ["c", "f"]},
			"mode": {"type": "string", "default": "fast"},
			"to": {"type": "string", "format": "email"},
			"id": {"$ref": "#/$defs/id"},
			"tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
			"opt": {"type": ["null", "boolean"]},
			"nested": {"type": "object", "properties": {"x": {"const": 7}}, "required": ["x"]},
			"notRequired": {"type": "string"}
		},
		"required": ["n", "f", "unit", "mode", "to", "id", "tags", "opt", "nested"]
	}`)
	want := map[string]any{"n": int64(2), "f": 1.0, "unit": "c", "mode": "fast", "to": "user@example.com", "id": "examp", "tags": []any{"example"}, "opt": false, "nested": map[string]any{"x": 7.0}}
	if got := progArgs(schema, false); !reflect.DeepEqual(got, want) {
		t.Errorf("small:\n got %#v\nwant %#v", got, want)
	}
	if got := progArgs(schema, true)["n"]; got != int64(20) {
		t.Errorf("large n = %v, want 20", got)
	}
	if got := progArgs(json.RawMessage(`null`), false); len(got) != 0 {
		t.Errorf("no schema: %v", got)
	}
}
