package conformance

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
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

// answersByMap reads a message's members as answers did first, by
// json.Unmarshal into a map: the oracle for answers and answersIn, which
// read them with json.Valid and jsonMembers.
func answersByMap(raw []byte, id json.RawMessage) answer {
	var f map[string]json.RawMessage
	if json.Unmarshal(raw, &f) != nil {
		return answerNone
	}
	var m answerMembers
	_, m.method = f["method"]
	m.got, m.id = f["id"]
	_, m.result = f["result"]
	_, m.error = f["error"]
	return m.answers(id)
}

var answersCorpus = []string{
	`{"jsonrpc":"2.0","id":"42","result":{}}`,
	`{"jsonrpc":"2.0","id":42,"result":{"tools":[{"name":"a\"}","description":"{[\\"}]"}]}}`,
	` { "jsonrpc" : "2.0" , "id" : 42 , "result" : [ 1 , { "x" : "]" } ] } `,
	`{"jsonrpc":"2.0","\u0069d":"42","result":{}}`,
	`{"jsonrpc":"2.0","ID":"42","result":{}}`,
	`{"jsonrpc":"2.0","id":"42","Method":"ping"}`,
	`{"jsonrpc":"2.0","id":"41","id":"42","result":1}`,
	`{"jsonrpc":"2.0","id":"42","id":"41","result":1}`,
	`{"jsonrpc":"2.0","id":null,"result":null}`,
	`{"jsonrpc":"2.0","id":  null ,"error":{"code":-32700,"message":"x"}}`,
	`{"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":"42"}`,
	`{"jsonrpc":"2.0","id":4.2e1,"result":true}`,
	`{"jsonrpc":"2.0","id":"42","method":null}`,
	`{"jsonrpc":"2.0","id":["42"],"result":{}}`,
	`{"jsonrpc":"2.0","id":{"a":"42"},"result":{}}`,
	`{"jsonrpc":"2.0","id":true,"result":false}`,
	`{"a":"\\","id":"42","result":0}`,
	`{}`, `[]`, `null`, `"42"`, `42`, `not json`, `{"id":"42",}`, `{"id":"42"`, ``,
	// The transport's decode trims these; JSON does not allow them.
	"{\"jsonrpc\":\"2.0\",\"id\":\"42\",\"result\":{}}\v",
	"\f{\"jsonrpc\":\"2.0\",\"id\":\"42\",\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":\"42\",\"result\":{}}\u00a0",
	"{\"jsonrpc\":\"2.0\",\"id\":\"42\",\"result\":{}}\u0085",
}

// TestAnswersAgreesWithTheMap: answers, and answersIn for every line the
// transport decodes as a message, classify each line as the map-based
// oracle does, for ids of each JSON type.
func TestAnswersAgreesWithTheMap(t *testing.T) {
	for _, id := range []json.RawMessage{json.RawMessage(`"42"`), json.RawMessage(`42`), json.RawMessage(`41`), json.RawMessage(`true`), nil} {
		for _, line := range answersCorpus {
			want := answersByMap([]byte(line), id)
			if got := answers([]byte(line), id); got != want {
				t.Errorf("answers(%s, %s) = %d, the map says %d", line, id, got, want)
			}
			in := transport.Inbound{Raw: []byte(line)}
			in.Msg, in.Err = jsonrpc.Decode(in.Raw)
			if got := answersIn(in, id); got != want {
				t.Errorf("answersIn(%s, %s) (decoded: %v) = %d, the map says %d", line, id, in.Err == nil, got, want)
			}
		}
	}
}

func FuzzAnswers(f *testing.F) {
	for _, line := range answersCorpus {
		f.Add([]byte(line), []byte(`"42"`))
		f.Add([]byte(line), []byte(`42`))
	}
	f.Fuzz(func(t *testing.T, line, id []byte) {
		if !json.Valid(id) {
			return
		}
		want := answersByMap(line, id)
		if got := answers(line, id); got != want {
			t.Errorf("answers(%q, %s) = %d, the map says %d", line, id, got, want)
		}
		in := transport.Inbound{Raw: line}
		if m, err := jsonrpc.Decode(line); err == nil {
			in.Msg = m
		}
		if got := answersIn(in, id); got != want {
			t.Errorf("answersIn(%q, %s) = %d, the map says %d", line, id, got, want)
		}
	})
}

// TestSchemaEntryNamesAgreesWithTheMap: reading a list entry's key with
// jsonMembers gives what decoding the entry into a map gave, for valid
// JSON entries of every shape.
func TestSchemaEntryNamesAgreesWithTheMap(t *testing.T) {
	byMap := func(raw json.RawMessage, key string) string {
		var m map[string]json.RawMessage
		var s string
		if json.Unmarshal(raw, &m) == nil {
			_ = json.Unmarshal(m[key], &s)
		}
		return s
	}
	items := []string{
		`{"name":"a","inputSchema":{"type":"object","properties":{"name":{"const":"b"}}}}`,
		`{"inputSchema":{"name":"inner"},"name":"outer"}`,
		`{"name":"a","name":"b"}`,
		`{"\u006eame":"escaped key"}`,
		`{"Name":"case"}`,
		`{"name":"esc\"aped\u00e9"}`,
		`{"name":7}`, `{"name":null}`, `{"name":{"x":1}}`, `{}`, `[]`, `"name"`, `null`, `7`,
		` { "name" : "spaced" } `,
	}
	var raws []json.RawMessage
	var want []string
	for _, it := range items {
		if !json.Valid([]byte(it)) {
			t.Fatalf("corpus entry %s is not valid JSON", it)
		}
		raws = append(raws, json.RawMessage(it))
		want = append(want, byMap(json.RawMessage(it), "name"))
	}
	got := schemaEntryNames(raws, "name")
	for i := range items {
		if got[i] != want[i] {
			t.Errorf("%s: %q, the map says %q", items[i], got[i], want[i])
		}
	}
}
