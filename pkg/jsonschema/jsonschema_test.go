package jsonschema

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/testenv"
)

func mustCompile(t *testing.T, doc string) *Schema {
	t.Helper()
	s, err := Compile([]byte(doc), Limits{})
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return s
}

func wantKind(t *testing.T, err error, k Kind) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", k)
	}
	e, ok := err.(*Error)
	if !ok || e.Kind != k {
		t.Fatalf("got %T %v, want kind %s", err, err, k)
	}
	return e
}

func TestValid2020WithDefsAndRef(t *testing.T) {
	s := mustCompile(t, `{
		"type": "object",
		"$defs": {"id": {"type": "string", "pattern": "^C[0-9]{4}$"}, "node": {"$anchor": "node", "type": "object", "properties": {"next": {"$ref": "#node"}}}},
		"properties": {"customer": {"$ref": "#/$defs/id"}, "tree": {"$ref": "#/$defs/node"}},
		"required": ["customer"],
		"additionalProperties": false
	}`)
	if s.Dialect() != Draft2020 {
		t.Errorf("dialect %q, want 2020-12 by default", s.Dialect())
	}
	if err := s.Validate([]byte(`{"customer": "C1234", "tree": {"next": {"next": {}}}}`)); err != nil {
		t.Errorf("valid instance rejected: %v", err)
	}
	err := s.Validate([]byte(`{"customer": "X1", "extra": 1}`))
	ve, ok := err.(*ValidationError)
	if !ok || len(ve.Problems) < 2 {
		t.Fatalf("invalid instance: got %v, want a ValidationError with two problems", err)
	}
	if !strings.Contains(ve.Error(), "/customer") {
		t.Errorf("problems %q do not name /customer", ve.Error())
	}
}

func TestInvalidSchema(t *testing.T) {
	_, err := Compile([]byte(`{"type": "object", "properties": {"a": {"type": "string", "minLength": -1}}}`), Limits{})
	e := wantKind(t, err, Invalid)
	if !strings.Contains(e.Detail, "minLength") {
		t.Errorf("detail %q does not name minLength", e.Detail)
	}
	wantKind(t, func() error { _, err := Compile([]byte(`{"type": "strng"}`), Limits{}); return err }(), Invalid)
	wantKind(t, func() error { _, err := Compile([]byte(`[1]`), Limits{}); return err }(), Invalid)
	wantKind(t, func() error { _, err := Compile([]byte(`{"a":`), Limits{}); return err }(), Invalid)
}

// A remote $ref is refused without any network attempt: the server behind
// it must see no request.
func TestRemoteRefIsNeverFetched(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type": "string"}`)
	}))
	defer srv.Close()
	for _, doc := range []string{
		`{"type": "object", "properties": {"a": {"$ref": "` + srv.URL + `/a.json"}}}`,
		`{"$id": "` + srv.URL + `/root.json", "type": "object", "properties": {"a": {"$ref": "other.json"}}}`,
		`{"type": "object", "properties": {"a": {"$ref": "file:///etc/passwd"}}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {"a": {"$ref": "relative.json#/x"}}}`,
	} {
		_, err := Compile([]byte(doc), Limits{})
		e := wantKind(t, err, External)
		if len(e.Refs) == 0 {
			t.Errorf("%s: no ref named", doc)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the schema server got %d requests, want none", n)
	}
}

// ECMA-262 patterns RE2 cannot express are annotations, not errors; a
// malformed pattern is still invalid.
func TestECMAPatterns(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"a":{"type":"string","pattern":"^(?!admin$)[a-z]+$"},"b":{"type":"string","pattern":"^(a)\\1$"},"c":{"type":"string","pattern":"^\\u00e9+$"}}}`)
	if err := s.Validate([]byte(`{"a":"root","b":"aa","c":"éé"}`)); err != nil {
		t.Errorf("valid instance: %v", err)
	}
	if err := s.Validate([]byte(`{"c":"x"}`)); err == nil {
		t.Error("\\u00e9 pattern not asserted")
	}
	_, err := Compile([]byte(`{"type":"string","pattern":"(("}`), Limits{})
	wantKind(t, err, Invalid)
}

func TestUnresolvableLocalRef(t *testing.T) {
	_, err := Compile([]byte(`{"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}`), Limits{})
	e := wantKind(t, err, Unresolvable)
	if !strings.Contains(e.Detail, "#/$defs/missing") {
		t.Errorf("detail %q does not name the ref", e.Detail)
	}
}

func TestRefCycle(t *testing.T) {
	for _, doc := range []string{
		`{"$ref": "#"}`,
		`{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}`,
		`{"$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}]}}, "type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}}`,
	} {
		start := time.Now()
		_, err := Compile([]byte(doc), Limits{})
		e := wantKind(t, err, OverBounds)
		if !strings.Contains(e.Detail, "cycle") {
			t.Errorf("%s: detail %q does not say cycle", doc, e.Detail)
		}
		if time.Since(start) > time.Second {
			t.Errorf("%s: took %v", doc, time.Since(start))
		}
	}
	// Recursion that moves into the instance is fine.
	s := mustCompile(t, `{"type": "object", "properties": {"child": {"$ref": "#"}}}`)
	if err := s.Validate([]byte(`{"child": {"child": {}}}`)); err != nil {
		t.Errorf("recursive schema: %v", err)
	}
}

func TestTooDeep(t *testing.T) {
	for _, n := range []int{100, 100_000} {
		doc := strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{}` + strings.Repeat(`}}`, n)
		start := testenv.CPUTime()
		_, err := Compile([]byte(doc), Limits{MaxBytes: 8 << 20})
		e := wantKind(t, err, OverBounds)
		if !strings.Contains(e.Detail, "deep") {
			t.Errorf("depth %d: detail %q", n, e.Detail)
		}
		if d := testenv.CPUTime() - start; d > time.Second {
			t.Errorf("depth %d took %v", n, d)
		}
	}
	// Nesting through arrays and items counts too.
	doc := strings.Repeat(`{"items":`, 70) + `{}` + strings.Repeat(`}`, 70)
	wantKind(t, func() error { _, err := Compile([]byte(doc), Limits{}); return err }(), OverBounds)
}

func TestTooManySubschemas(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"type":"object","properties":{`)
	for i := 0; i < 100_000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"p%d":{}`, i)
	}
	sb.WriteString(`}}`)
	start := testenv.CPUTime()
	_, err := Compile([]byte(sb.String()), Limits{MaxBytes: 4 << 20})
	e := wantKind(t, err, OverBounds)
	if !strings.Contains(e.Detail, "subschemas") {
		t.Errorf("detail %q", e.Detail)
	}
	if d := testenv.CPUTime() - start; d > 2*time.Second {
		t.Errorf("took %v of CPU", d)
	}
	// And the byte bound alone.
	wantKind(t, func() error { _, err := Compile([]byte(sb.String()), Limits{}); return err }(), OverBounds)
}

// Shared definitions combined by anyOf double at every level: 2^40
// evaluations from 40 small subschemas.
func TestCompositionBlowUp(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&sb, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	sb.WriteString(`"d40":{"type":"string"}}}`)
	start := testenv.CPUTime()
	_, err := Compile([]byte(sb.String()), Limits{})
	e := wantKind(t, err, OverBounds)
	if !strings.Contains(e.Detail, "expand") {
		t.Errorf("detail %q", e.Detail)
	}
	if d := testenv.CPUTime() - start; d > time.Second {
		t.Errorf("took %v of CPU", d)
	}
	// Ten levels are fine.
	sb.Reset()
	sb.WriteString(`{"$defs":{`)
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&sb, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	sb.WriteString(`"d10":{"type":"string"}},"$ref":"#/$defs/d0"}`)
	mustCompile(t, sb.String())
}

func TestTimeBudget(t *testing.T) {
	// A schema within the counts whose compile is made slow by a tiny
	// budget: the caller gets OverBounds instead of waiting.
	var sb strings.Builder
	sb.WriteString(`{"type":"object","properties":{`)
	for i := 0; i < 4000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"p%d":{"type":"string","pattern":"^[a-z]{1,%d}$"}`, i, i%50+1)
	}
	sb.WriteString(`}}`)
	_, err := Compile([]byte(sb.String()), Limits{Timeout: time.Microsecond})
	e := wantKind(t, err, OverBounds)
	if !strings.Contains(e.Detail, "longer than") {
		t.Errorf("detail %q", e.Detail)
	}
}

func TestDraft07Declared(t *testing.T) {
	s := mustCompile(t, `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "definitions": {"n": {"type": "integer"}}, "properties": {"n": {"$ref": "#/definitions/n"}}, "items": [{"type": "string"}]}`)
	if s.Dialect() != Draft7 {
		t.Errorf("dialect %q, want draft-07", s.Dialect())
	}
	if err := s.Validate([]byte(`{"n": 1.5}`)); err == nil {
		t.Error("1.5 accepted as an integer")
	}
	// format is an annotation, in draft-07 too.
	s = mustCompile(t, `{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "format": "email"}`)
	if err := s.Validate([]byte(`"not an email"`)); err != nil {
		t.Errorf("format asserted: %v", err)
	}
	// A draft-07 schema judged by draft-07's metaschema: exclusiveMinimum
	// as a boolean is draft-04 and invalid in draft-07.
	_, err := Compile([]byte(`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "number", "minimum": 0, "exclusiveMinimum": true}`), Limits{})
	wantKind(t, err, Invalid)
	// "https" and no trailing "#" name the same dialect.
	if s := mustCompile(t, `{"$schema": "https://json-schema.org/draft-07/schema", "type": "object"}`); s.Dialect() != Draft7 {
		t.Errorf("dialect %q", s.Dialect())
	}
}

func TestUnknownDialect(t *testing.T) {
	for _, d := range []string{"https://example.com/my-dialect", "http://json-schema.org/draft-03/schema#", "not a uri"} {
		_, err := Compile([]byte(`{"$schema": "`+d+`", "type": "object"}`), Limits{})
		e := wantKind(t, err, DialectUnsupported)
		if len(e.Refs) != 1 || e.Refs[0] != d {
			t.Errorf("%s: refs %q", d, e.Refs)
		}
	}
	wantKind(t, func() error { _, err := Compile([]byte(`{"$schema": 7}`), Limits{}); return err }(), Invalid)
}

func TestInstanceBounds(t *testing.T) {
	s, err := Compile([]byte(`{"type":"array"}`), Limits{MaxInstanceBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantKind(t, s.Validate([]byte(`[1,2,3,4,5,6,7,8]`)), OverBounds)
	wantKind(t, s.Validate([]byte(`[1,`)), Invalid)
}

func TestJSONDepth(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want int
	}{{`{}`, 1}, {`[[["]]]]]"]]]`, 3}, {`{"a":"\"{{{","b":[{}]}`, 3}, {`1`, 0}} {
		if got, ok := jsonDepth([]byte(c.doc), 10); !ok || got != c.want {
			t.Errorf("jsonDepth(%s) = %d, %v; want %d", c.doc, got, ok, c.want)
		}
	}
	if _, ok := jsonDepth([]byte(strings.Repeat("[", 20)), 10); ok {
		t.Error("20 levels within a limit of 10")
	}
}

func TestMCPOracle(t *testing.T) {
	tool, err := MCP("Tool")
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.Validate([]byte(`{"name": "x", "inputSchema": {"type": "object"}}`)); err != nil {
		t.Errorf("valid tool: %v", err)
	}
	if err := tool.Validate([]byte(`{"name": "x", "inputSchema": {"type": "string"}}`)); err == nil {
		t.Error("inputSchema of type string accepted")
	}
	cb, err := MCP("ContentBlock")
	if err != nil {
		t.Fatal(err)
	}
	if err := cb.Validate([]byte(`{"type": "text"}`)); err == nil {
		t.Error("text block without text accepted")
	}
	if _, err := MCP("NoSuchDefinition"); err == nil {
		t.Error("unknown definition compiled")
	}
}
