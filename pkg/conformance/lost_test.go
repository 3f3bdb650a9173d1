package conformance

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// A request is named by its method and what it is about, within the
// report's 200-character bound whatever the server named its tool (a name
// of control characters quotes to four times its length).
func TestLostNameStaysWithinTheReportsBound(t *testing.T) {
	body := func(params map[string]any) []byte {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		return b
	}
	for _, tc := range []struct {
		body []byte
		want string
	}{
		{body(map[string]any{"name": "add"}), `tools/call "add"`},
		{body(map[string]any{"uri": "file:///a"}), `tools/call "file:///a"`},
		{body(map[string]any{"name": strings.Repeat("\x01", 100)}), `tools/call "\x01`},
		{body(map[string]any{"uri": strings.Repeat("\x01", 300)}), `tools/call "\x01`},
		{[]byte("not json"), "a request that is not a JSON-RPC request"},
	} {
		got := lostName(tc.body)
		if !strings.HasPrefix(got, tc.want) || utf8.RuneCountInString(got) > 200 {
			t.Errorf("lostName(%.40q) = %q (%d characters), want %q… within 200", tc.body, got, utf8.RuneCountInString(got), tc.want)
		}
	}
}
