package toolschema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A hundred parameters naming definitions decode $defs once: the pointer
// cache holds each member once, not a copy per lookup.
func TestRefsDecodeEachContainerOnce(t *testing.T) {
	var defs, props []string
	for i := range 100 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string","description":"def %d"}`, i, i))
		props = append(props, fmt.Sprintf(`"p%d":{"$ref":"#/$defs/d%d"}`, i, i))
	}
	raw := json.RawMessage(`{"$defs":{` + strings.Join(defs, ",") + `},"properties":{` + strings.Join(props, ",") + `}}`)
	doc := NewDoc(raw)
	for i := range 100 {
		if _, v, ok := doc.Lookup(fmt.Sprintf("#/$defs/d%d", i)); !ok || !strings.Contains(string(v), fmt.Sprintf(`"def %d"`, i)) {
			t.Fatalf("d%d: %s %v", i, v, ok)
		}
	}
	if len(doc.open) != 2 || len(doc.nodes) != 2+100 {
		t.Errorf("%d containers decoded, %d members kept; want 2 and 102", len(doc.open), len(doc.nodes))
	}
}

// The type and the bounds are read as the description is: the nearest
// node on the way wins, a list of types gives its first that is not
// "null", and a bound of the wrong JSON type is left out rather than
// making the whole property unreadable.
func TestParamTypeAndBounds(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name, schema, prop string
		want               Param
	}{
		{"Optional[int] with bounds inside", `{}`, `{"anyOf":[{"type":"integer","minimum":1,"maximum":9},{"type":"null"}],"description":"n"}`,
			Param{Description: "n", Explains: "n", Type: "integer", Min: f(1), Max: f(9), Typed: true}},
		{"a $ref to a pattern; the bound beside it wins", `{"$defs":{"Id":{"type":"string","pattern":"^T-[0-9]+$","maximum":3}}}`, `{"$ref":"#/$defs/Id","maximum":5}`,
			Param{Type: "string", Pattern: "^T-[0-9]+$", Max: f(5), Typed: true}},
		{"type [null, string]", `{}`, `{"type":["null","string"],"format":"email"}`, Param{Type: "string", Format: "email", Typed: true}},
		{"bounds of the wrong type", `{}`, `{"type":"number","minimum":"1","maximum":null,"pattern":7,"description":"d"}`,
			Param{Description: "d", Explains: "d", Type: "number", Typed: true}},
		{"an enum in a zod nullable", `{}`, `{"anyOf":[{"enum":["low","high"]},{"const":null}]}`,
			Param{Enum: []json.RawMessage{json.RawMessage(`"low"`), json.RawMessage(`"high"`)}, EnumAt: "/inputSchema/properties/p/anyOf/0/enum", Typed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := json.RawMessage(tc.schema)
			got, ok := NewDoc(root).Param("p", json.RawMessage(tc.prop))
			tc.want.Name = "p"
			if !ok || fmt.Sprintf("%+v", show(got)) != fmt.Sprintf("%+v", show(tc.want)) {
				t.Errorf("got  %+v (%v)\nwant %+v", show(got), ok, show(tc.want))
			}
		})
	}
}

// show makes a Param comparable as text: its pointers as values.
func show(p Param) string {
	num := func(f *float64) string {
		if f == nil {
			return "nil"
		}
		return fmt.Sprint(*f)
	}
	return fmt.Sprintf("%q %q %q %s@%q type=%q pat=%q fmt=%q min=%s max=%s typed=%v", p.Name, p.Description, p.Explains, p.Enum, p.EnumAt, p.Type, p.Pattern, p.Format, num(p.Min), num(p.Max), p.Typed)
}
