package conformance

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestRESMutants(t *testing.T) {
	for _, c := range resFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

// RES-3 is a SHOULD: its mutant (no serverInfo) warns.
func TestRES3Mutant(t *testing.T) {
	stateAssert(t, RES3, nil, check.Passed, check.Warned)
}

// RES-5 (info) passes on the reference server, which uses only the
// reserved keys the spec defines.
func TestRES5(t *testing.T) {
	if r := stateRun(t, refTarget(t, "http"), 1, nil, "RES-5")["RES-5"]; r.Verdict != check.Passed {
		t.Fatalf("%s: %s", r.Verdict, r.Outcome.Message)
	}
}

func TestResMetaKey(t *testing.T) {
	valid := []string{"progressToken", "io.modelcontextprotocol/serverInfo", "com.example/", "com.example/a.b-c_d", "x", "", "a/b", "my-app.io/key", "traceparent"}
	invalid := []string{"refserver:cached", "com.example/-x", "com.example/x-", "-com/x", "com..example/x", "1com/x", "com.example/a b", "a/b/c", "com.example-/x"}
	for _, k := range valid {
		if !resMetaKey.MatchString(k) {
			t.Errorf("%q should be a valid _meta key", k)
		}
	}
	for _, k := range invalid {
		if resMetaKey.MatchString(k) {
			t.Errorf("%q should not be a valid _meta key", k)
		}
	}
}

func TestResReserved(t *testing.T) {
	for key, want := range map[string]bool{
		"io.modelcontextprotocol/serverInfo": true,
		"dev.mcp/x":                          true,
		"com.example/x":                      false,
		"mcp/x":                              false,
		"progressToken":                      false,
	} {
		if _, _, got := resReserved(key); got != want {
			t.Errorf("resReserved(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestResMetaKeys(t *testing.T) {
	doc := `{"_meta":{"a/x":1,"b":2},"tools":[{"name":"t","_meta":{"c":3},"inputSchema":{"properties":{"_meta":{"type":"object"}}}}],"content":[{"type":"text","_meta":{"d":4}}]}`
	var v any
	_ = json.Unmarshal([]byte(doc), &v)
	var got []string
	resMetaKeys(v, "r", func(where, key string) { got = append(got, where+" "+key) })
	want := []string{"r a/x", "r b", "r.content[0] d", "r.tools[0] c"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("resMetaKeys = %q, want %q", got, want)
	}
}

// Only what cannot hold a member named _meta is passed over: the name
// with any of its letters escaped still counts.
func TestResMayHoldMeta(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"name":"t","description":"no metadata"}`:     false,
		`{"name":"t","description":"\u003ctag\u003e"}`: false,
		`{"name":"t","_meta":{"a":1}}`:                 true,
		`{"name":"t","\u005fmeta":{"a":1}}`:            true,
		`{"name":"t","_m\u0065ta":{"a":1}}`:            true,
		`{"name":"t","\u005Fmeta":{"a":1}}`:            true,
		`{"name":"t","_met\u0061":{"a":1}}`:            true,
		`{"name":"t","_\u006Deta":{"a":1}}`:            true,
		`{"name":"t","d":"\u00`:                        false,
	} {
		if got := resMayHoldMeta([]byte(raw)); got != want {
			t.Errorf("resMayHoldMeta(%s) = %v, want %v", raw, got, want)
		}
		// Whatever it says, it never passes over a _meta key that a
		// decode finds.
		var v any
		if json.Unmarshal([]byte(raw), &v) == nil {
			found := false
			resMetaKeys(v, "r", func(string, string) { found = true })
			if found && !resMayHoldMeta([]byte(raw)) {
				t.Errorf("%s holds a _meta key the filter passes over", raw)
			}
		}
	}
}
