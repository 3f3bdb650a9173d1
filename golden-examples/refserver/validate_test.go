package refserver

import (
	"strings"
	"testing"
)

func mustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// TestValidatorKeywords pins the validator the server uses on tool
// arguments, which the tests also use as their schema oracle.
func TestValidatorKeywords(t *testing.T) {
	sc, err := compileSchema([]byte(`{
	  "type": "object",
	  "$defs": {"id": {"type": "string", "pattern": "^C[0-9]{4}$"}},
	  "properties": {
	    "id": {"$ref": "#/$defs/id"},
	    "n": {"type": "integer", "minimum": 1, "maximum": 5},
	    "x": {"type": "number", "exclusiveMinimum": 0},
	    "e": {"enum": ["a", "b"]},
	    "c": {"const": {"k": [1, 2]}},
	    "mail": {"type": "string", "format": "email"},
	    "s": {"type": "string", "minLength": 2, "maxLength": 3},
	    "arr": {"type": "array", "items": {"type": "boolean"}, "maxItems": 2},
	    "one": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
	    "any": {"anyOf": [{"type": "string"}, {"type": "null"}]},
	    "not": {"not": {"type": "string"}},
	    "cond": {"if": {"type": "integer"}, "then": {"minimum": 10}, "else": {"type": "string"}},
	    "all": {"allOf": [{"minimum": 1}, {"maximum": 2}]}
	  },
	  "required": ["id"],
	  "additionalProperties": false
	}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		inst string
		ok   bool
		msg  string // substring of the error
	}{
		{`{"id":"C1234"}`, true, ""},
		{`{}`, false, `required property "id"`},
		{`{"id":"c1234"}`, false, "pattern"},
		{`{"id":7}`, false, "type string"},
		{`{"id":"C1234","n":3.0}`, true, ""},
		{`{"id":"C1234","n":2.5}`, false, "type integer"},
		{`{"id":"C1234","n":6}`, false, "<= 5"},
		{`{"id":"C1234","x":0}`, false, "> 0"},
		{`{"id":"C1234","e":"c"}`, false, "one of"},
		{`{"id":"C1234","c":{"k":[1,2.0]}}`, true, ""},
		{`{"id":"C1234","c":{"k":[2,1]}}`, false, "must equal"},
		{`{"id":"C1234","mail":"a@example.com"}`, true, ""},
		{`{"id":"C1234","mail":"not-an-email"}`, false, "email"},
		{`{"id":"C1234","s":"é"}`, false, "at least 2"},
		{`{"id":"C1234","s":"éèê"}`, true, ""},
		{`{"id":"C1234","arr":[true,1]}`, false, "/arr/1"},
		{`{"id":"C1234","arr":[true,true,false]}`, false, "at most 2"},
		{`{"id":"C1234","one":1.5}`, false, "exactly one"},
		{`{"id":"C1234","any":null}`, true, ""},
		{`{"id":"C1234","not":"s"}`, false, "not"},
		{`{"id":"C1234","cond":5}`, false, ">= 10"},
		{`{"id":"C1234","cond":"s"}`, true, ""},
		{`{"id":"C1234","cond":true}`, false, "type string"},
		{`{"id":"C1234","all":3}`, false, "<= 2"},
		{`{"id":"C1234","zzz":1}`, false, `unexpected property "zzz"`},
	}
	for _, c := range cases {
		err := sc.validate(mustDecode(t, c.inst))
		if c.ok && err != nil {
			t.Errorf("%s: unexpected error %v", c.inst, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("%s: error = %v, want one containing %q", c.inst, err, c.msg)
		}
	}
}

// TestValidatorRejectsRemoteRefs: network $refs are never followed (SCHEMA-2).
func TestValidatorRejectsRemoteRefs(t *testing.T) {
	for _, doc := range []string{
		`{"$ref": "https://example.com/schema.json"}`,
		`{"properties": {"a": {"$ref": "#/$defs/missing"}}}`,
		`{"pattern": "(?<=x)"}`,
	} {
		if _, err := compileSchema([]byte(doc)); err == nil {
			t.Errorf("compileSchema(%s) succeeded, want an error", doc)
		}
	}
}

// TestSpecSchemaOracle proves the oracle rejects what it must, using the
// official schema: a validator that accepted everything would pass every
// other test.
func TestSpecSchemaOracle(t *testing.T) {
	good := `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}`
	sc := specSchema(t)
	if err := sc.validateRef(mustDecode(t, good), "#/$defs/DiscoverResult"); err != nil {
		t.Fatalf("valid DiscoverResult rejected: %v", err)
	}
	bad := map[string]string{
		"DiscoverResult":                  `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"cacheScope":"public"}`,
		"ListToolsResult":                 `{"resultType":"complete","tools":[],"ttlMs":-1,"cacheScope":"public"}`,
		"ListPromptsResult":               `{"resultType":"complete","prompts":[],"ttlMs":1.5,"cacheScope":"public"}`,
		"ReadResourceResult":              `{"resultType":"complete","contents":[],"ttlMs":1,"cacheScope":"shared"}`,
		"CallToolResult":                  `{"resultType":"complete","content":[{"type":"bogus"}]}`,
		"Tool":                            `{"name":"x","inputSchema":{"type":"array"}}`,
		"CompleteResult":                  `{"resultType":"complete","completion":{"values":[` + strings.Repeat(`"a",`, 100) + `"a"]}}`,
		"UnsupportedProtocolVersionError": `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x","data":{"supported":[]}}}`,
		"JSONRPCErrorResponse":            `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`,
	}
	for def, inst := range bad {
		if err := sc.validateRef(mustDecode(t, inst), "#/$defs/"+def); err == nil {
			t.Errorf("invalid %s accepted: %s", def, inst)
		}
	}
}
