package pipeline

import (
	"slices"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	cases := map[string][]string{
		`node server.js --stdio`:          {"node", "server.js", "--stdio"},
		`  python  -m   srv `:             {"python", "-m", "srv"},
		`sh -c "echo \"hi\" >&2; exit 1"`: {"sh", "-c", `echo "hi" >&2; exit 1`},
		`run 'a b' c\ d "$HOME"`:          {"run", "a b", "c d", "$HOME"},
		`x '' ""`:                         {"x", "", ""},
		`path/with\\backslash "it's"`:     {"path/with\\backslash", "it's"},
	}
	for in, want := range cases {
		got, err := SplitCommand(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("SplitCommand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "   ", `a "b`, `a 'b`} {
		if _, err := SplitCommand(bad); err == nil {
			t.Errorf("SplitCommand(%q) should fail", bad)
		}
	}
}
