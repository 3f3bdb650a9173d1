package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonschema"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

func TestCALLMutants(t *testing.T) {
	for _, c := range callFamily.checks {
		if c.Level != check.Must {
			continue
		}
		t.Run(c.ID, func(t *testing.T) { assertMutant(t, c) })
	}
}

func TestCALLShouldMutants(t *testing.T) {
	featAssertShould(t, CALL5)
}

func compileFor(t *testing.T, schema string) callTarget {
	t.Helper()
	s, err := schemaCompileTool(check.Env{}, json.RawMessage(schema))
	if err != nil {
		t.Fatalf("compile %s: %v", schema, err)
	}
	return callTarget{tool: mcpclient.Tool{Name: "t", InputSchema: json.RawMessage(schema)}, input: s}
}

func TestSynthArgs(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object"}`,
		`{"type":"object","properties":{"location":{"type":"string","minLength":1,"maxLength":100}},"required":["location"],"additionalProperties":false}`,
		`{"type":"object","$defs":{"id":{"type":"string","pattern":"^C[0-9]{4}$"}},"properties":{"customer_id":{"$ref":"#/$defs/id"},"limit":{"type":"integer","minimum":1,"maximum":50}},"required":["customer_id","limit"]}`,
		`{"type":"object","properties":{"n":{"type":"integer","minimum":5,"maximum":20,"multipleOf":5}},"required":["n"]}`,
		`{"type":"object","properties":{"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}},"required":["x"]}`,
		`{"type":"object","properties":{"to":{"type":"string","format":"email"},"when":{"type":"string","format":"date-time"}},"required":["to","when"]}`,
		`{"type":"object","properties":{"units":{"enum":["celsius","fahrenheit"]},"flag":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"},"minItems":2}},"required":["units","flag","tags"]}`,
		`{"type":"object","properties":{"v":{"anyOf":[{"type":"null"},{"type":"string","pattern":"^[a-z]+-[0-9]{2,3}(x|y)?$"}]}},"required":["v"]}`,
		`{"type":"object","properties":{"nested":{"type":"object","properties":{"a":{"type":"string","const":"k"}},"required":["a"]}},"required":["nested"]}`,
		`{"type":"object","properties":{"code":{"type":"string","pattern":"\\d{3}-[A-Z]{2}","minLength":8}},"required":["code"]}`,
	} {
		ct := compileFor(t, schema)
		args, ok := callSynthArgs(ct.tool.InputSchema, ct.input)
		if !ok {
			t.Errorf("no arguments for %s", schema)
			continue
		}
		if err := ct.input.ValidateAny(args); err != nil {
			t.Errorf("%s: synthesized %v do not validate: %v", schema, args, err)
		}
	}
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"type":"string","pattern":"(?=x)"}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"type":"integer","minimum":5,"maximum":4}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"not":{}}},"required":["a"]}`,
	} {
		ct := compileFor(t, schema)
		if args, ok := callSynthArgs(ct.tool.InputSchema, ct.input); ok {
			t.Errorf("%s: got %v, want no arguments", schema, args)
		}
	}
}

func TestBreakArgs(t *testing.T) {
	ct := compileFor(t, `{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)
	ct.args, _ = callSynthArgs(ct.tool.InputSchema, ct.input)
	args, how, ok := callBreakArgs(ct)
	if !ok || len(args) != 0 || !strings.Contains(how, "required property \"location\"") {
		t.Errorf("breakArgs = %v, %q, %v", args, how, ok)
	}
	ct = compileFor(t, `{"type":"object","properties":{"n":{"type":"integer"},"q":{"type":"string"}}}`)
	ct.args, _ = callSynthArgs(ct.tool.InputSchema, ct.input)
	args, how, ok = callBreakArgs(ct)
	if !ok || ct.input.ValidateAny(args) == nil || !strings.Contains(how, `"n" set to "not a number"`) {
		t.Errorf("breakArgs = %v, %q, %v", args, how, ok)
	}
	ct = compileFor(t, `{"type":"object","properties":{"free":{}}}`)
	ct.args, _ = callSynthArgs(ct.tool.InputSchema, ct.input)
	if args, how, ok := callBreakArgs(ct); ok {
		t.Errorf("an unconstrained schema was broken: %v %q", args, how)
	}
}

func TestFromPattern(t *testing.T) {
	for _, pat := range []string{`^C[0-9]{4}$`, `^[A-Z]{2,3}-\d+$`, `^(foo|bar)baz?$`, `^\w+@\w+\.com$`, `[^a-z]{3}`, `^.{5}$`, `^v\d+\.\d+\.\d+$`} {
		s, ok := callFromPattern(pat)
		if !ok || !regexp.MustCompile(pat).MatchString(s) {
			t.Errorf("callFromPattern(%q) = %q, %v", pat, s, ok)
		}
	}
	if s, ok := callFromPattern(`(a{1000}){2}`); ok {
		t.Errorf("(a{1000}){2} built %d bytes", len(s))
	}
}

func TestCallBlockProblems(t *testing.T) {
	for raw, want := range map[string]int{
		`{"type":"text","text":"hi"}`:                                  0,
		`{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}`:    0,
		`{"type":"image","data":"not base64!","mimeType":"image/png"}`: 1,
		`{"type":"audio","data":"aGVsbG8="}`:                           1,
		`{"type":"markdown","text":"x"}`:                               1,
		`{"type":"resource","resource":{"uri":"a:b","blob":"%%"}}`:     1,
		`{"type":"resource_link","uri":"file:///a","name":"a"}`:        0,
		`{"type":"text"}`: 1,
	} {
		got, err := callBlockProblems(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want {
			t.Errorf("callBlockProblems(%s) = %q, want %d problems", raw, got, want)
		}
	}
}

// A run compiles each distinct tool schema once, however many checks and
// repetitions ask at the same moment; past the cache's bound a schema is
// still compiled, and the ones kept stay.
func TestSchemaCompileToolOncePerRun(t *testing.T) {
	env := check.Env{Memo: &check.Memo{}}
	raw := json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}}}`)
	got := make([]*jsonschema.Schema, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			s, err := schemaCompileTool(env, raw)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		})
	}
	wg.Wait()
	for _, s := range got[1:] {
		if s != got[0] {
			t.Fatal("two askers got two compiles of one schema")
		}
	}
	if again, _ := schemaCompileTool(check.Env{Memo: &check.Memo{}}, raw); again == got[0] {
		t.Error("another run reused this run's compile")
	}
	for i := range schemaCacheMax + 10 {
		if _, err := schemaCompileTool(env, json.RawMessage(fmt.Sprintf(`{"type":"object","title":"t%d"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	c := env.Memo.Do(schemaCacheKey{}, func() any { return nil }).(*schemaCache)
	if len(c.m) != schemaCacheMax {
		t.Errorf("the cache holds %d schemas, want its bound %d", len(c.m), schemaCacheMax)
	}
	if s, _ := schemaCompileTool(env, raw); s != got[0] {
		t.Error("a schema kept before the cache filled was compiled again")
	}
}
