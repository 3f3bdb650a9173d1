package check

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// excerptByMarshal is how evidence showed a response before
// messageExcerpt: the oracle.
func excerptByMarshal(m *jsonrpc.Message, n int) string {
	b, _ := json.Marshal(m)
	return excerpt(b, n)
}

func excerptCorpus() []*jsonrpc.Message {
	tool := `{"name":"t<&>","description":"a \"quoted\" \\ back\u2028slash` + "\u2029 é 😀" + `","inputSchema":{"type":"object"}}`
	big := `{"tools":[` + strings.Repeat(tool+",", 200) + tool + `]}`
	spaced := "{ \"tools\" :\n\t[ " + strings.Repeat(`"x y" , `, 400) + `"z" ] }`
	mostlySpace := `{"a":` + strings.Repeat(" ", 5000) + `1}`
	errObj := &jsonrpc.Error{Code: -32602, Message: "bad <params>"}
	return []*jsonrpc.Message{
		{JSONRPC: "2.0", ID: json.RawMessage(`7`), Result: json.RawMessage(big)},
		{JSONRPC: "2.0", ID: json.RawMessage(`"s<1>"`), Result: json.RawMessage(spaced)},
		{JSONRPC: "2.0", ID: json.RawMessage(`7`), Result: json.RawMessage(mostlySpace)},
		{JSONRPC: "2.0", ID: json.RawMessage(`7`), Result: json.RawMessage(mostlySpace), Error: errObj},
		{JSONRPC: "2.0", ID: json.RawMessage(`7`), Result: json.RawMessage(big), Error: errObj},
		{Result: json.RawMessage(big)},
		{JSONRPC: "2.0", Method: "x", Params: json.RawMessage(`{"p":"<"}`), Result: json.RawMessage(big)},
		{JSONRPC: "2.0", ID: json.RawMessage(`7`), Result: json.RawMessage(`{"small":true}`)},
		{JSONRPC: "2.0", ID: json.RawMessage(`7`), Error: errObj},
	}
}

// TestMessageExcerptIsMarshalsExcerpt: the excerpt of a response is the
// same whether the whole message is marshalled or only as much of a large
// result as the excerpt shows.
func TestMessageExcerptIsMarshalsExcerpt(t *testing.T) {
	for i, m := range excerptCorpus() {
		for _, n := range []int{0, 1, 40, 400, 600, 2000} {
			if got, want := messageExcerpt(m, n), excerptByMarshal(m, n); got != want {
				t.Errorf("message %d, n %d:\n got %q\nwant %q", i, n, got, want)
			}
		}
	}
}

func FuzzMessageExcerpt(f *testing.F) {
	// Small results with small n take the short way as often as large
	// ones: the fuzzer works fast on them.
	for _, r := range []string{`{"a":"<b>","c":[1, 2 ,3]}`, "[\"\\u2028\u2028\", \"\\\\\\\"\" ,\t{}]", `"x"`, `{ "t" : "é😀&" }`} {
		for _, n := range []int{0, 3, 7, 20} {
			f.Add([]byte(r), n)
		}
	}
	f.Fuzz(func(t *testing.T, result []byte, n int) {
		if !json.Valid(result) || n < 0 || n > 1<<16 {
			return
		}
		m := &jsonrpc.Message{JSONRPC: "2.0", ID: json.RawMessage(`1`), Result: result}
		if got, want := messageExcerpt(m, n), excerptByMarshal(m, n); got != want {
			t.Errorf("n %d, result %q:\n got %q\nwant %q", n, result, got, want)
		}
	})
}
