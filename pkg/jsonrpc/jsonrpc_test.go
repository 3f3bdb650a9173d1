package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestKinds(t *testing.T) {
	cases := map[string]Kind{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`:                        KindRequest,
		`{"jsonrpc":"2.0","method":"notifications/progress"}`:                   KindNotification,
		`{"jsonrpc":"2.0","id":"a","result":{}}`:                                KindResponse,
		`{"jsonrpc":"2.0","id":1,"result":null}`:                                KindResponse,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`:     KindResponse,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`: KindInvalid,
		`{"jsonrpc":"2.0","id":1}`:                                              KindInvalid,
	}
	for in, want := range cases {
		m, err := Decode([]byte(in))
		if err != nil {
			t.Fatalf("Decode(%s): %v", in, err)
		}
		if got := m.Kind(); got != want {
			t.Errorf("Kind(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{``, `[]`, `[{"jsonrpc":"2.0"}]`, `"x"`, `{"jsonrpc":`, "{\"a\":\"\xff\"}", `{"a":1} {"b":2}`, `Server started`,
		// A stray closing bracket after the object (json.Decoder.More
		// reads it as the end of an enclosing value).
		`{}}`, `{"jsonrpc":"2.0","id":1,"result":{}}]`, "{}}{\""} {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) accepted", in)
		}
	}
}

func TestIDsKeepTheirType(t *testing.T) {
	if SameID(json.RawMessage(`1`), json.RawMessage(`"1"`)) {
		t.Error("number 1 and string \"1\" are different ids (RPC-1)")
	}
	if !SameID(json.RawMessage(`"a\u0062"`), json.RawMessage(`"ab"`)) {
		t.Error("the same string written with an escape is the same id")
	}
	if IDKey(json.RawMessage(`7`)) == IDKey(json.RawMessage(`"7"`)) {
		t.Error("IDKey must keep strings and numbers apart")
	}
	if SameID(nil, json.RawMessage(`1`)) {
		t.Error("a missing id matches nothing")
	}
}

func TestClipKeepsRunes(t *testing.T) {
	if got := Clip("héllo", 2); got != "h…" {
		t.Errorf("Clip = %q", got)
	}
}
