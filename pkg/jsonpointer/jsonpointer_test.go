package jsonpointer

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// RFC 6901 §5 and §6: the document and the pointers of its examples, as
// URI fragments.
func TestGetRFC6901Examples(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5, "k\"l": 6, " ": 7, "m~n": 8}`), &doc); err != nil {
		t.Fatal(err)
	}
	cases := map[string]any{
		"#":       doc,
		"#/foo":   []any{"bar", "baz"},
		"#/foo/0": "bar",
		"#/":      0.0,
		"#/a~1b":  1.0,
		"#/c%25d": 2.0,
		"#/e%5Ef": 3.0,
		"#/g%7Ch": 4.0,
		"#/i%5Cj": 5.0,
		"#/k%22l": 6.0,
		"#/%20":   7.0,
		"#/m~0n":  8.0,
	}
	for ref, want := range cases {
		got, ok := Get(doc, ref)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Get(%q) = %v, %v; want %v", ref, got, ok, want)
		}
	}
}

func TestGetRefusesWhatNamesNothing(t *testing.T) {
	var doc any
	_ = json.Unmarshal([]byte(`{"a": [1, 2], "~x": 1}`), &doc)
	for _, ref := range []string{
		"other.json#/a", "/a", "#anchor", "#/a/01", "#/a/-", "#/a/2", "#/a/x", "#/b", "#/~x", "#/a~2", "#/%zz",
		"#/" + strings.Repeat("a/", MaxTokens) + "a",
	} {
		if v, ok := Get(doc, ref); ok {
			t.Errorf("Get(%q) = %v, want nothing", ref, v)
		}
	}
}

func TestEscapeRoundTrips(t *testing.T) {
	for _, name := range []string{"a/b", "m~n", "~1", "~01", "plain"} {
		toks, ok := Tokens("#/" + Escape(name))
		if !ok || len(toks) != 1 || toks[0] != name {
			t.Errorf("%q: tokens %q, %v", name, toks, ok)
		}
	}
}
