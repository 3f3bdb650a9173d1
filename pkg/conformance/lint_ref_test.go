package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/toolschema"
)

// lintListOf is a one-page tools/list answer holding tools (a JSON array).
func lintListOf(t testing.TB, tools string) *mcpclient.ListResult {
	t.Helper()
	res, err := json.Marshal(map[string]any{"tools": json.RawMessage(tools)})
	if err != nil {
		t.Fatalf("the fixture's tools are not JSON: %v", err)
	}
	return &mcpclient.ListResult{Pages: []mcpclient.Page{{Response: &mcpclient.Response{Result: res}}}}
}

// The lint reads a parameter through the local $refs it makes, as a model
// reading the schema would: description, type and enum come from what the
// reference names, the nearest first; a reference it cannot follow reads
// as it did before (the $ref alone says there is a shape) and never drops
// the tool.
func TestLintFollowsLocalRefs(t *testing.T) {
	chain := func(n int) string { // p → d0 → … → d(n-1), described at the end
		var defs []string
		for i := range n - 1 {
			defs = append(defs, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1))
		}
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string","description":"at the end"}`, n-1))
		return `{"$defs":{` + strings.Join(defs, ",") + `},"properties":{"p":{"$ref":"#/$defs/d0"}}}`
	}
	deep := `{"$defs":{"a":` + strings.Repeat(`{"b":`, toolschema.MaxPointerTokens) + `{"description":"deep"}` + strings.Repeat(`}`, toolschema.MaxPointerTokens) + `},` +
		`"properties":{"p":{"$ref":"#/$defs/a` + strings.Repeat("/b", toolschema.MaxPointerTokens) + `"}}}`
	for _, tc := range []struct {
		name, schema string
		want         lintParam // of property "p"; Name is filled in
	}{
		{"$defs", `{"$defs":{"id":{"type":"string","description":"Customer id"}},"properties":{"p":{"$ref":"#/$defs/id"}}}`,
			lintParam{Description: "Customer id", Explains: "Customer id", Typed: true}},
		{"definitions (draft-07, Pydantic v1)", `{"definitions":{"id":{"type":"string","description":"Customer id"}},"properties":{"p":{"$ref":"#/definitions/id"}}}`,
			lintParam{Description: "Customer id", Explains: "Customer id", Typed: true}},
		{"a chain of refs", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/definitions/c"}},"definitions":{"c":{"enum":["x","y"],"description":"a code"}},"properties":{"p":{"$ref":"#/$defs/a"}}}`,
			lintParam{Description: "a code", Explains: "a code", Typed: true, Enum: []string{"x", "y"}, EnumAt: "/inputSchema/definitions/c/enum"}},
		{"a chain as long as the bound", chain(toolschema.MaxHops), lintParam{Description: "at the end", Explains: "at the end", Typed: true}},
		{"a chain past the bound reads as unresolved", chain(toolschema.MaxHops + 1), lintParam{Typed: true}},
		{"a description beside the $ref wins", `{"$defs":{"s":{"enum":["A","B"],"description":"A is active, B is blocked"}},"properties":{"p":{"$ref":"#/$defs/s","description":"Account state"}}}`,
			lintParam{Description: "Account state", Explains: "Account state\nA is active, B is blocked", Typed: true, Enum: []string{"A", "B"}, EnumAt: "/inputSchema/$defs/s/enum"}},
		{"a blank description beside the $ref does not", `{"$defs":{"id":{"description":"Customer id"}},"properties":{"p":{"$ref":"#/$defs/id","description":"  "}}}`,
			lintParam{Description: "Customer id", Explains: "Customer id"}},
		{"an enum beside the $ref wins", `{"$defs":{"s":{"enum":["a","b","c"]}},"properties":{"p":{"$ref":"#/$defs/s","enum":["a","b"]}}}`,
			lintParam{Typed: true, Enum: []string{"a", "b"}, EnumAt: "/inputSchema/properties/p/enum"}},
		{"a ref to an empty schema says no shape", `{"$defs":{"any":{}},"properties":{"p":{"$ref":"#/$defs/any"}}}`, lintParam{}},
		{"a cycle", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"p":{"$ref":"#/$defs/a"}}}`, lintParam{Typed: true}},
		{"a cycle, described on the way", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a","description":"loops"}},"properties":{"p":{"$ref":"#/$defs/a"}}}`,
			lintParam{Description: "loops", Explains: "loops", Typed: true}},
		{"a property naming itself", `{"properties":{"p":{"$ref":"#/properties/p"}}}`, lintParam{Typed: true}},
		{"a missing target", `{"$defs":{},"properties":{"p":{"$ref":"#/$defs/nope"}}}`, lintParam{Typed: true}},
		{"another document", `{"properties":{"p":{"$ref":"https://schemas.example.com/customer-id.json"}}}`, lintParam{Typed: true}},
		{"another document's fragment", `{"$defs":{"id":{"description":"x"}},"properties":{"p":{"$ref":"other.json#/$defs/id"}}}`, lintParam{Typed: true}},
		{"an $anchor", `{"$defs":{"id":{"$anchor":"cid","description":"x"}},"properties":{"p":{"$ref":"#cid"}}}`, lintParam{Typed: true}},
		{"an escaped pointer", `{"$defs":{"a/b~c":{"description":"escaped"}},"properties":{"p":{"$ref":"#/$defs/a~1b~0c"}}}`,
			lintParam{Description: "escaped", Explains: "escaped"}},
		{"a percent-encoded pointer", `{"$defs":{"café id":{"description":"encoded"}},"properties":{"p":{"$ref":"#/$defs/caf%C3%A9%20id"}}}`,
			lintParam{Description: "encoded", Explains: "encoded"}},
		{"a percent-encoded escape", `{"$defs":{"a/b":{"description":"both"}},"properties":{"p":{"$ref":"#/$defs/a%7E1b"}}}`,
			lintParam{Description: "both", Explains: "both"}},
		{"a bad percent-encoding", `{"$defs":{"%zz":{"description":"x"}},"properties":{"p":{"$ref":"#/$defs/%zz"}}}`, lintParam{Typed: true}},
		{"a bad ~ escape", `{"$defs":{"a~2":{"description":"x"}},"properties":{"p":{"$ref":"#/$defs/a~2"}}}`, lintParam{Typed: true}},
		{"the root", `{"type":"object","description":"the tool's input","properties":{"p":{"$ref":"#"}}}`,
			lintParam{Description: "the tool's input", Explains: "the tool's input", Typed: true}},
		{"an array member", `{"$defs":[{"description":"first"}],"properties":{"p":{"$ref":"#/$defs/0"}}}`, lintParam{Description: "first", Explains: "first"}},
		{"an array index with a leading zero", `{"$defs":[{"description":"first"}],"properties":{"p":{"$ref":"#/$defs/00"}}}`, lintParam{Typed: true}},
		{"$defs not an object", `{"$defs":"nope","properties":{"p":{"$ref":"#/$defs/a"}}}`, lintParam{Typed: true}},
		{"a target that is not an object", `{"$defs":{"s":"text"},"properties":{"p":{"$ref":"#/$defs/s"}}}`, lintParam{Typed: true}},
		{"a boolean target", `{"$defs":{"t":true},"properties":{"p":{"$ref":"#/$defs/t"}}}`, lintParam{Typed: true}},
		{"a null target", `{"$defs":{"n":null},"properties":{"p":{"$ref":"#/$defs/n"}}}`, lintParam{Typed: true}},
		{"a target whose description is not a string", `{"$defs":{"d":{"description":5}},"properties":{"p":{"$ref":"#/$defs/d"}}}`, lintParam{Typed: true}},
		{"a $ref that is not a string", `{"properties":{"p":{"$ref":5,"description":"kept"}}}`, lintParam{Description: "kept", Explains: "kept", Typed: true}},
		{"an empty $ref, as before", `{"properties":{"p":{"$ref":""}}}`, lintParam{}},
		{"under a nested $id", `{"$defs":{"a":{"$id":"https://example.com/a","$ref":"#/$defs/b"},"b":{"description":"x"}},"properties":{"p":{"$ref":"#/$defs/a"}}}`,
			lintParam{Typed: true}},
		{"a pointer past the token bound", deep, lintParam{Typed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := lintTools(lintListOf(t, `[{"name":"t","description":"A tool.","inputSchema":`+tc.schema+`}]`))
			if len(ts) != 1 || len(ts[0].Params) != 1 {
				t.Fatalf("got %+v, want one tool with one parameter", ts)
			}
			got, want := ts[0].Params[0], tc.want
			want.Name = "p"
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
		})
	}
}

// Pydantic writes Optional[X] as a nullable wrapper, {"anyOf": [X,
// {"type": "null"}], "default": null}, with the field's description beside
// the anyOf and the model's or type's inside X. The lint reads X as the
// parameter (the nearest description still first), and enters nothing
// else: a union of two schemas or more, or a shape it cannot read for
// sure, stays the composition it is, typed and undescribed.
func TestLintReadsNullableWrappers(t *testing.T) {
	const address = `"Address":{"description":"A postal address","properties":{"street":{"title":"Street","type":"string"}},"required":["street"],"title":"Address","type":"object"}`
	nest := func(n int) string { // n wrappers around a described string
		return strings.Repeat(`{"anyOf":[{"type":"null"},`, n) + `{"type":"string","description":"inside"}` + strings.Repeat(`]}`, n)
	}
	for _, tc := range []struct {
		name, schema string
		want         lintParam // of property "p"; Name is filled in
	}{
		{"Optional[Address]", `{"$defs":{` + address + `},"properties":{"p":{"anyOf":[{"$ref":"#/$defs/Address"},{"type":"null"}],"default":null}}}`,
			lintParam{Description: "A postal address", Explains: "A postal address", Typed: true}},
		{"Optional[Address], draft-07 definitions", `{"definitions":{` + address + `},"properties":{"p":{"anyOf":[{"$ref":"#/definitions/Address"},{"type":"null"}]}}}`,
			lintParam{Description: "A postal address", Explains: "A postal address", Typed: true}},
		{"null first, as oneOf", `{"$defs":{` + address + `},"properties":{"p":{"oneOf":[{"type":"null"},{"$ref":"#/$defs/Address"}]}}}`,
			lintParam{Description: "A postal address", Explains: "A postal address", Typed: true}},
		{"Optional[str], described inside", `{"properties":{"p":{"anyOf":[{"type":"string","description":"ISO 8601 date"},{"type":"null"}],"default":null,"title":"P"}}}`,
			lintParam{Description: "ISO 8601 date", Explains: "ISO 8601 date", Typed: true}},
		{"Field(description=…) beside the anyOf wins", `{"$defs":{` + address + `},"properties":{"p":{"anyOf":[{"$ref":"#/$defs/Address"},{"type":"null"}],"default":null,"description":"Where to ship"}}}`,
			lintParam{Description: "Where to ship", Explains: "Where to ship\nA postal address", Typed: true}},
		{"Optional[Literal['A', 'B']]: the enum inside", `{"properties":{"p":{"anyOf":[{"enum":["A","B"],"type":"string"},{"type":"null"}],"default":null,"description":"A is active, B is blocked"}}}`,
			lintParam{Description: "A is active, B is blocked", Explains: "A is active, B is blocked", Typed: true, Enum: []string{"A", "B"}, EnumAt: "/inputSchema/properties/p/anyOf/0/enum"}},
		{"Optional[State]: the enum in $defs", `{"$defs":{"State":{"enum":[1,2],"title":"State","type":"integer"}},"properties":{"p":{"anyOf":[{"$ref":"#/$defs/State"},{"type":"null"}]}}}`,
			lintParam{Typed: true, Enum: []string{"1", "2"}, EnumAt: "/inputSchema/$defs/State/enum"}},
		{"a wrapper a $ref names", `{"$defs":{"OptId":{"anyOf":[{"type":"string","enum":["x1","x2"],"description":"an id"},{"type":"null"}]}},"properties":{"p":{"$ref":"#/$defs/OptId"}}}`,
			lintParam{Description: "an id", Explains: "an id", Typed: true, Enum: []string{"x1", "x2"}, EnumAt: "/inputSchema/$defs/OptId/anyOf/0/enum"}},
		{"a described null branch is still null", `{"properties":{"p":{"anyOf":[{"type":"null","description":"none"},{"type":"string","description":"a name"}]}}}`,
			lintParam{Description: "a name", Explains: "a name", Typed: true}},
		{"two null branches", `{"properties":{"p":{"anyOf":[{"type":"null"},{"type":"string","description":"a name"},{"type":"null"}]}}}`,
			lintParam{Description: "a name", Explains: "a name", Typed: true}},
		{"a const null branch (zod's nullable)", `{"properties":{"p":{"anyOf":[{"type":"string","description":"a name"},{"const":null}]}}}`,
			lintParam{Description: "a name", Explains: "a name", Typed: true}},
		{"an enum [null] branch", `{"properties":{"p":{"oneOf":[{"enum":[null]},{"type":"string","description":"a name"}]}}}`,
			lintParam{Description: "a name", Explains: "a name", Typed: true}},
		{"type [null] with const null", `{"properties":{"p":{"anyOf":[{"type":["null"],"const":null},{"type":"string","description":"a name"}]}}}`,
			lintParam{Description: "a name", Explains: "a name", Typed: true}},
		{"wrappers as deep as the bound", `{"properties":{"p":` + nest(toolschema.MaxHops) + `}}`, lintParam{Description: "inside", Explains: "inside", Typed: true}},
		{"wrappers past the bound", `{"properties":{"p":` + nest(toolschema.MaxHops+1) + `}}`, lintParam{Typed: true}},
		{"a wrapper around itself", `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"properties":{"p":{"$ref":"#/$defs/a"}}}`, lintParam{Typed: true}},
		{"a wrapper under its own $id", `{"$defs":{"a":{"$id":"https://example.com/a","anyOf":[{"$ref":"#/$defs/b"},{"type":"null"}]},"b":{"description":"x"}},"properties":{"p":{"$ref":"#/$defs/a"}}}`,
			lintParam{Typed: true}},
		{"type: [string, null] is one schema", `{"properties":{"p":{"type":["string","null"],"description":"a name"}}}`,
			lintParam{Description: "a name", Explains: "a name", Typed: true}},
		{"type: [string, null], undescribed, is typed", `{"properties":{"p":{"type":["string","null"]}}}`, lintParam{Typed: true}},

		// Not entered: the composition is read as it is.
		{"a union of two types", `{"properties":{"p":{"anyOf":[{"type":"string","description":"a name"},{"type":"integer","description":"an id"},{"type":"null"}]}}}`,
			lintParam{Typed: true}},
		{"a union of two refs", `{"$defs":{` + address + `,"Po":{"type":"string","description":"a PO box"}},"properties":{"p":{"oneOf":[{"$ref":"#/$defs/Address"},{"$ref":"#/$defs/Po"}]}}}`,
			lintParam{Typed: true}},
		{"allOf is not a wrapper", `{"$defs":{` + address + `},"properties":{"p":{"allOf":[{"$ref":"#/$defs/Address"}]}}}`, lintParam{Typed: true}},
		{"anyOf and oneOf both", `{"properties":{"p":{"anyOf":[{"type":"string","description":"a"},{"type":"null"}],"oneOf":[{"type":"string","description":"b"},{"type":"null"}]}}}`,
			lintParam{Typed: true}},
		{"a null branch with a $ref", `{"$defs":{"n":{"type":"null"}},"properties":{"p":{"anyOf":[{"type":"string","description":"a"},{"type":"null","$ref":"#/$defs/n"}]}}}`,
			lintParam{Typed: true}},
		{"a const branch that is not null", `{"properties":{"p":{"anyOf":[{"type":"string","description":"a"},{"const":0}]}}}`, lintParam{Typed: true}},
		{"an enum with null and more", `{"properties":{"p":{"anyOf":[{"type":"string","description":"a"},{"enum":[null,"x"]}]}}}`, lintParam{Typed: true}},
		{"type null with a const that is not", `{"properties":{"p":{"anyOf":[{"type":"string","description":"a"},{"type":"null","const":"x"}]}}}`, lintParam{Typed: true}},
		{"const null typed string", `{"properties":{"p":{"anyOf":[{"type":"string","description":"a"},{"type":"string","const":null}]}}}`, lintParam{Typed: true}},
		{"type [string, null] is not a null branch", `{"properties":{"p":{"anyOf":[{"type":"integer","description":"a"},{"type":["string","null"]}]}}}`, lintParam{Typed: true}},
		{"anyOf not an array", `{"properties":{"p":{"anyOf":{"type":"string","description":"a"}}}}`, lintParam{Typed: true}},
		{"anyOf null", `{"properties":{"p":{"anyOf":null}}}`, lintParam{Typed: true}},
		{"anyOf empty", `{"properties":{"p":{"anyOf":[]}}}`, lintParam{Typed: true}},
		{"only null", `{"properties":{"p":{"anyOf":[{"type":"null","description":"nothing"}]}}}`, lintParam{Typed: true}},
		{"a boolean branch", `{"properties":{"p":{"anyOf":[true,{"type":"null"}]}}}`, lintParam{Typed: true}},
		{"a text branch", `{"properties":{"p":{"anyOf":["text",{"type":"null"}]}}}`, lintParam{Typed: true}},
		{"a null branch literally null", `{"properties":{"p":{"anyOf":[null,{"type":"string","description":"a"}]}}}`, lintParam{Typed: true}},
		{"a branch whose description is not a string", `{"properties":{"p":{"anyOf":[{"description":5},{"type":"null"}]}}}`, lintParam{Typed: true}},
		{"a branch with an unfollowable $ref", `{"properties":{"p":{"anyOf":[{"$ref":"other.json#/a"},{"type":"null"}]}}}`, lintParam{Typed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := lintTools(lintListOf(t, `[{"name":"t","description":"A tool.","inputSchema":`+tc.schema+`}]`))
			if len(ts) != 1 || len(ts[0].Params) != 1 {
				t.Fatalf("got %+v, want one tool with one parameter", ts)
			}
			got, want := ts[0].Params[0], tc.want
			want.Name = "p"
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
				t.Errorf("got  %#v\nwant %#v", got, want)
			}
		})
	}
}

// What the lint read of a tool before it followed references it still
// reads: a tool with no inputSchema or a null one has no parameters, a
// null property is one with nothing said, and a tool whose schema is not
// one the lint reads is left out (TOOL-4's and SCHEMA-1's to report).
func TestLintReadsOddSchemasAsBefore(t *testing.T) {
	ts := lintTools(lintListOf(t, `[
	 {"name":"none","description":"No schema."},
	 {"name":"null","description":"A null schema.","inputSchema":null},
	 {"name":"nullprop","description":"A null property.","inputSchema":{"properties":{"x":null}}},
	 {"name":"text","description":"A text schema.","inputSchema":"text"},
	 {"name":"boolprop","description":"A boolean property.","inputSchema":{"properties":{"x":true}}},
	 {"name":"numdesc","description":"A number for a description.","inputSchema":{"properties":{"x":{"description":5}}}}
	]`))
	var got []string
	for _, tl := range ts {
		got = append(got, fmt.Sprintf("%s:%d", tl.Name, len(tl.Params)))
	}
	if s := strings.Join(got, " "); s != "none:0 null:0 nullprop:1" {
		t.Errorf("tools read: %s, want none:0 null:0 nullprop:1", s)
	}
}

// No schema shape makes the lint panic.
func FuzzLintTools(f *testing.F) {
	for _, s := range []string{
		`{"$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"p":{"$ref":"#/$defs/a"}}}`,
		`{"$defs":[1,{"$ref":"#/$defs/1"}],"properties":{"p":{"$ref":"#/$defs/1/$ref"}}}`,
		`{"properties":{"p":{"$ref":"#/properties/p/$ref/0"}}}`,
		`{"properties":{"p":{"$ref":"#//"}}}`,
		`{"properties":{"p":{"$ref":"#%"}}}`,
		`{"definitions":{"":{"description":"empty name"}},"properties":{"p":{"$ref":"#/definitions/"}}}`,
		`{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}},"properties":{"p":{"oneOf":[{"type":"null"},{"$ref":"#/$defs/a"}]}}}`,
		`{"properties":{"p":{"anyOf":[{"anyOf":[{"enum":[1]},{"type":"null"}]},{"type":["null"]}],"oneOf":{}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		if !json.Valid([]byte(schema)) {
			return
		}
		lintTools(lintListOf(t, `[{"name":"t","inputSchema":`+schema+`}]`))
	})
}

// Through the checks: a parameter described, typed or explained by what
// its $ref names is no finding; one whose $ref cannot be followed is
// judged by what it says itself, as before; LINT-4's evidence points at
// the enum where it is, in $defs.
func TestLintChecksFollowRefs(t *testing.T) {
	tools := `[
	 {"name":"search_accounts","description":"Search the accounts of a customer by state and region.",
	  "inputSchema":{"type":"object","required":["customer_id","q","blob"],
	   "$defs":{"customerId":{"type":"string","description":"Customer id: C and four digits"},
	            "state":{"type":"string","enum":["A","B"],"description":"A is active, B is blocked"},
	            "tier":{"type":"integer","enum":[1,2,3]},
	            "q":{"type":"string"},
	            "any":{}},
	   "properties":{
	    "customer_id":{"$ref":"#/$defs/customerId"},
	    "state":{"$ref":"#/$defs/state","description":"Only accounts in this state"},
	    "tier":{"$ref":"#/$defs/tier","description":"Support tier"},
	    "q":{"$ref":"#/$defs/q"},
	    "blob":{"$ref":"#/$defs/any"},
	    "region":{"$ref":"https://schemas.example.com/region.json"}}}}
	]`
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	_, res := runChecks(t, serveHTTP(t, relisting{next: srv.Handler(), tools: tools}), 1, "LINT")
	text := func(id string) string {
		return strings.Join(append([]string{res[id].Outcome.Message}, res[id].Outcome.Details...), "\n")
	}
	for _, c := range []struct{ id, want string }{
		{"LINT-2", `tool "search_accounts": 3 of 6 parameters have no description: "blob", "q", "region"`},
		{"LINT-3", `tool "search_accounts": required parameter "blob" has no description and no type, enum or format says what shape of value it takes`},
		{"LINT-3", `tool "search_accounts": required parameter "q" has no description and its name says nothing of the value`},
		{"LINT-4", `tool "search_accounts": parameter "tier" has enum values a model cannot read ("1", "2", "3") and its description does not explain "1", "2", "3"`},
	} {
		if res[c.id].Verdict != check.Warned || !strings.Contains(text(c.id), c.want) {
			t.Errorf("%s: %s, want a warning saying %q:\n%s", c.id, res[c.id].Verdict, c.want, text(c.id))
		}
	}
	if s := text("LINT-3"); strings.Contains(s, "customer_id") || strings.Contains(s, "region") {
		t.Errorf("LINT-3 flagged a parameter its $ref describes, or one whose $ref it cannot follow:\n%s", s)
	}
	if s := text("LINT-4"); strings.Contains(s, `"state"`) {
		t.Errorf("LINT-4 flagged an enum its definition's description explains:\n%s", s)
	}
	if ev := res["LINT-4"].Outcome.Evidence; len(ev) == 0 || ev[0].Pointer != "/result/tools/0/inputSchema/$defs/tier/enum" || ev[0].Value == "" {
		t.Errorf("LINT-4's evidence: %+v, want the enum in $defs", ev)
	}
}

// Through the checks, on a tool as a Python server built on Pydantic lists
// it: an Optional field described by its model or inside its one branch is
// no finding; a real union and an array-typed nullable are typed (no
// LINT-3) but still need their own description (LINT-2); LINT-4's
// evidence points at the enum inside the wrapper.
func TestLintChecksReadNullableWrappers(t *testing.T) {
	tools := `[
	 {"name":"create_order","description":"Create an order for a customer and ship it to an address.",
	  "inputSchema":{"type":"object","title":"create_orderArguments","required":["recipient","tag"],
	   "$defs":{"Address":{"description":"A postal address","properties":{"street":{"title":"Street","type":"string"}},"required":["street"],"title":"Address","type":"object"}},
	   "properties":{
	    "shipping_address":{"anyOf":[{"$ref":"#/$defs/Address"},{"type":"null"}],"default":null},
	    "note":{"anyOf":[{"type":"string","description":"Free text for the courier"},{"type":"null"}],"default":null,"title":"Note"},
	    "priority":{"anyOf":[{"enum":["P1","P2"],"type":"string"},{"type":"null"}],"default":null,"description":"Delivery priority"},
	    "recipient":{"anyOf":[{"type":"string","description":"a name"},{"type":"integer","description":"a customer number"}],"title":"Recipient"},
	    "tag":{"type":["string","null"],"title":"Tag"}}}}
	]`
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	_, res := runChecks(t, serveHTTP(t, relisting{next: srv.Handler(), tools: tools}), 1, "LINT")
	text := func(id string) string {
		return strings.Join(append([]string{res[id].Outcome.Message}, res[id].Outcome.Details...), "\n")
	}
	for _, c := range []struct{ id, want string }{
		{"LINT-2", `tool "create_order": 2 of 5 parameters have no description: "recipient", "tag"`},
		{"LINT-4", `tool "create_order": parameter "priority" has enum values a model cannot read ("P1", "P2") and its description does not explain "P1", "P2"`},
	} {
		if res[c.id].Verdict != check.Warned || !strings.Contains(text(c.id), c.want) {
			t.Errorf("%s: %s, want a warning saying %q:\n%s", c.id, res[c.id].Verdict, c.want, text(c.id))
		}
	}
	if res["LINT-3"].Verdict != check.Passed {
		t.Errorf("LINT-3: %s, want passed (a union and a type array are typed):\n%s", res["LINT-3"].Verdict, text("LINT-3"))
	}
	if ev := res["LINT-4"].Outcome.Evidence; len(ev) == 0 || ev[0].Pointer != "/result/tools/0/inputSchema/properties/priority/anyOf/0/enum" || ev[0].Value == "" {
		t.Errorf("LINT-4's evidence: %+v, want the enum inside the anyOf", ev)
	}
}
