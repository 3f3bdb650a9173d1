package conformance

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestRPCMutants(t *testing.T) {
	for _, c := range rpcFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestAnswers(t *testing.T) {
	id := json.RawMessage(`"42"`)
	cases := []struct {
		line string
		want answer
	}{
		{`{"jsonrpc":"2.0","id":"42","result":{}}`, answerExact},
		{`{"jsonrpc":"2.0","id":42,"result":{}}`, answerLoose},
		{`{"jsonrpc":"2.0","id":"42","result":{},"error":{"code":1,"message":"x"}}`, answerExact},
		{`{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}`, answerNoID},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, answerNoID},
		{`{"jsonrpc":"2.0","id":"43","result":{}}`, answerNone},
		{`{"jsonrpc":"2.0","id":"42","method":"ping"}`, answerNone},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, answerNone},
		{`not json`, answerNone},
	}
	for _, c := range cases {
		if got := answers([]byte(c.line), id); got != c.want {
			t.Errorf("answers(%s) = %d, want %d", c.line, got, c.want)
		}
	}
}

func TestRPCEnvelope(t *testing.T) {
	sent := json.RawMessage(`"8589934600"`)
	mk := func(raw string) *reply {
		r := &reply{transport: "stdio"}
		r.setRaw([]byte(raw))
		return r
	}
	cases := []struct {
		raw  string
		want string // substring of the one problem, "" for none
	}{
		{`{"jsonrpc":"2.0","id":"8589934600","result":{}}`, ""},
		{`{"jsonrpc":"2.0","id":8589934600,"result":{}}`, "same JSON type"},
		{`{"id":"8589934600","result":{}}`, `no "jsonrpc"`},
		{`{"jsonrpc":"1.0","id":"8589934600","result":{}}`, `"jsonrpc" is "1.0"`},
		{`{"jsonrpc":"2.0","id":"8589934600","result":{},"error":{"code":1,"message":"x"}}`, "both result and error"},
		{`{"jsonrpc":"2.0","id":"8589934600"}`, "neither result nor error"},
		{`{"jsonrpc":"2.0","result":{}}`, "no id"},
	}
	for _, c := range cases {
		got := rpcEnvelope(mk(c.raw), sent)
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: unexpected problems %q", c.raw, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: problems %q, want one containing %q", c.raw, got, c.want)
		}
	}
	if got := rpcEnvelope(&reply{transport: "stdio"}, sent); len(got) != 1 || !strings.Contains(got[0], "no response") {
		t.Errorf("no reply: %q", got)
	}
}

func TestRPCErrorShape(t *testing.T) {
	for raw, n := range map[string]int{
		`{"code":-32601,"message":"Method not found"}`:   0,
		`{"code":-32601.0,"message":"x","data":{"a":1}}`: 0,
		`{"code":"-32601","message":"x"}`:                1,
		`{"code":-32601.5,"message":"x"}`:                1,
		`{"message":"x"}`:                                1,
		`{"code":-32601,"message":7}`:                    1,
		`"boom"`:                                         1,
	} {
		if got := rpcErrorShape(json.RawMessage(raw)); len(got) != n {
			t.Errorf("rpcErrorShape(%s) = %q, want %d problems", raw, got, n)
		}
	}
}

func TestRPCBadUTF8(t *testing.T) {
	if got := rpcBadUTF8([]byte("ab\xfccd")); got != 2 {
		t.Fatalf("rpcBadUTF8 = %d, want 2", got)
	}
	if got := rpcBadUTF8([]byte("ünï")); got != -1 {
		t.Fatalf("rpcBadUTF8(valid) = %d, want -1", got)
	}
}

// rawFields is json.Unmarshal into map[string]json.RawMessage without the
// copies: the same answer on every input, values aliasing the input.
func TestRawFieldsIsUnmarshal(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}`,
		`{ "a" : [1, 2] , "b":"x\"y", "a": {"dup": true} }`,
		`{}`, `null`, `[]`, `"s"`, `1`, ``, `{`, `{"a":}`, `{"a":1}x`, `{"a":1}{"b":2}`, `{"a":1,}`,
		"{\"\\u00e9\\ud800\":\"bad surrogate key\"}", "{\"k\xff\":1}",
	} {
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal([]byte(in), &want)
		got, ok := rawFields([]byte(in))
		if ok != (wantErr == nil) {
			t.Errorf("%q: ok %v, Unmarshal error %v", in, ok, wantErr)
			continue
		}
		if len(got) != len(want) || (got == nil) != (want == nil) {
			t.Errorf("%q: got %v, want %v", in, got, want)
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Errorf("%q: member %q is %s, want %s", in, k, got[k], v)
			}
		}
	}
	b := []byte(`{"result":{"x":1}}`)
	f, _ := rawFields(b)
	if &f["result"][0] != &b[10] {
		t.Error("the value is a copy, not a slice of the input")
	}
}
