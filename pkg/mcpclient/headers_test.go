package mcpclient

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEncodeHeaderValueFollowsSpecExamples(t *testing.T) {
	// The table of streamable-http.mdx §Value Encoding.
	cases := map[string]string{
		"us-west1":           "us-west1",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
	}
	for in, want := range cases {
		if got := EncodeHeaderValue(in); got != want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", in, got, want)
		}
		if back, ok := DecodeHeaderValue(want); !ok || back != in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", want, back, ok, in)
		}
	}
	if _, ok := DecodeHeaderValue("=?base64?not base64!?="); ok {
		t.Error("invalid base64 inside the sentinel must not decode")
	}
}

func TestHeaderParamsValidatesTOOL6(t *testing.T) {
	valid := []string{
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`,
		`{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":["boolean","null"],"x-mcp-header":"B"}}}`,
		`{"type":"object","properties":{"outer":{"type":"object","properties":{"inner":{"type":"string","x-mcp-header":"Inner"}}}}}`,
		`{"type":"object","properties":{"q":{"type":"string"}}}`,
	}
	for _, s := range valid {
		if _, err := HeaderParams(json.RawMessage(s)); err != nil {
			t.Errorf("HeaderParams(%s) = %v, want valid", s, err)
		}
	}
	invalid := map[string]string{
		"empty":          `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		"not a token":    `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`,
		"crlf":           `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\r\nX-Evil: 1"}}}`,
		"duplicate":      `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Id"},"b":{"type":"string","x-mcp-header":"ID"}}}`,
		"number type":    `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		"object type":    `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`,
		"under items":    `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`,
		"under anyOf":    `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`,
		"under $defs":    `{"type":"object","$defs":{"r":{"type":"string","x-mcp-header":"A"}},"properties":{"a":{"$ref":"#/$defs/r"}}}`,
		"on the root":    `{"type":"object","x-mcp-header":"Root"}`,
		"not a string":   `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`,
		"no type at all": `{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`,
	}
	for name, s := range invalid {
		if _, err := HeaderParams(json.RawMessage(s)); err == nil {
			t.Errorf("%s: HeaderParams(%s) accepted an invalid declaration", name, s)
		}
	}
}

func TestParamHeadersEncodeArguments(t *testing.T) {
	hp, err := HeaderParams(json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"integer","x-mcp-header":"N"},
		"flag":{"type":"boolean","x-mcp-header":"Flag"},
		"opt":{"type":"string","x-mcp-header":"Opt"},
		"cfg":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := paramHeaders(hp, json.RawMessage(`{"region":"Zürich","n":42.0,"flag":false,"opt":null,"cfg":{"zone":"a"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Mcp-Param-Region": "=?base64?WsO8cmljaA==?=", "Mcp-Param-N": "42", "Mcp-Param-Flag": "false", "Mcp-Param-Zone": "a"}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if _, ok := h["Mcp-Param-Opt"]; ok {
		t.Error("a null argument must not produce a header (HDR-5)")
	}
	if _, err := paramHeaders(hp, json.RawMessage(`{"n":1.5}`)); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("a fractional value for an integer header should be refused, got %v", err)
	}
}
