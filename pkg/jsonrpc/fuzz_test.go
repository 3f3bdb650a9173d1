package jsonrpc

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecode feeds the decoder what a hostile server could put on one stdout
// line or in one HTTP body. It must never panic, and what it accepts must
// survive an encode/decode round trip unchanged in kind and id, because the
// transports match responses to requests by exactly those two things.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":{"a":[1,2]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"id":2}`,
		`{"jsonrpc":"2.0","id":1e999,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1e30,"message":""}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\",\"result\":{}}",
		strings.Repeat("[", 20000),
		`{"a":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`,
		"{\"a\":\"\xff\"}",
		"Server started on stdio",
		`{} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if trimmed := bytes.TrimSpace(data); utf8.Valid(trimmed) && len(trimmed) > 0 && trimmed[0] == '{' {
			// The quick path must accept and fill exactly what the
			// Decoder does.
			ref, refErr := decodeStream(trimmed)
			if (err == nil) != (refErr == nil) || !reflect.DeepEqual(m, ref) {
				t.Fatalf("Decode(%q) = %+v, %v; the Decoder gives %+v, %v", data, m, err, ref, refErr)
			}
		}
		if err != nil {
			if m != nil {
				t.Fatalf("Decode returned a message and an error %v", err)
			}
			return
		}
		if !utf8.Valid(data) {
			t.Fatalf("Decode accepted invalid UTF-8: %q", data)
		}
		kind := m.Kind()
		_ = kind.String()
		if m.Error != nil {
			_ = m.Error.Error()
			_ = CodeName(m.Error.Code)
		}
		if len(m.ID) > 0 {
			if !SameID(m.ID, m.ID) {
				t.Fatalf("SameID(%s, itself) = false", m.ID)
			}
			_ = IDKey(m.ID)
		}
		b, err := m.Encode()
		if err != nil {
			t.Fatalf("a decoded message does not encode: %v (%q)", err, data)
		}
		m2, err := Decode(b)
		if err != nil {
			t.Fatalf("re-decoding %q: %v", b, err)
		}
		if m2.Kind() != kind {
			t.Fatalf("kind changed on a round trip: %s → %s (%q → %q)", kind, m2.Kind(), data, b)
		}
		if len(m.ID) > 0 && IDKey(m.ID) != IDKey(m2.ID) {
			t.Fatalf("id changed on a round trip: %s → %s", m.ID, m2.ID)
		}
	})
}
