package refserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// schema is a compiled JSON Schema (draft 2020-12) document. It implements
// the subset of keywords the server's own tool schemas and the MCP schema.json
// use: type, enum, const, properties, required, additionalProperties, items,
// minItems, maxItems, minLength, maxLength, pattern, format ("email" is
// asserted, other formats are annotations), minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, allOf, anyOf, oneOf, not,
// if/then/else, $ref and $defs. Unknown keywords are ignored, as 2020-12
// prescribes for annotations.
//
// $ref resolves only same-document JSON pointers ("#", "#/$defs/x"); any
// other reference makes compilation fail rather than being fetched (SCHEMA-2).
// Evaluation depth is bounded (SCHEMA-3).
type schema struct {
	root     any
	patterns map[string]*regexp.Regexp
}

const maxSchemaDepth = 64

// compileSchema parses a schema document and pre-compiles its patterns so
// that validation never mutates shared state (safe for concurrent use).
func compileSchema(doc []byte) (*schema, error) {
	root, err := decodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	sc := &schema{root: root, patterns: map[string]*regexp.Regexp{}}
	if err := sc.prepare(root, 0); err != nil {
		return nil, err
	}
	return sc, nil
}

// decodeJSON decodes one JSON value keeping numbers exact (json.Number).
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

// prepare walks the document, compiling patterns and checking refs.
func (sc *schema) prepare(node any, depth int) error {
	if depth > 4*maxSchemaDepth {
		return errors.New("schema: nested too deeply")
	}
	switch n := node.(type) {
	case map[string]any:
		if p, ok := n["pattern"].(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				return fmt.Errorf("schema: pattern %q: %w", p, err)
			}
			sc.patterns[p] = re
		}
		if ref, ok := n["$ref"].(string); ok {
			if _, err := sc.resolve(ref); err != nil {
				return err
			}
		}
		for _, v := range n {
			if err := sc.prepare(v, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, v := range n {
			if err := sc.prepare(v, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolve follows a same-document JSON pointer reference.
func (sc *schema) resolve(ref string) (any, error) {
	if ref != "#" && !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("schema: unsupported $ref %q: only same-document JSON pointers are resolved", ref)
	}
	node := sc.root
	if ref == "#" {
		return node, nil
	}
	for _, tok := range strings.Split(ref[2:], "/") {
		tok, err := url.PathUnescape(tok)
		if err != nil {
			return nil, fmt.Errorf("schema: bad $ref %q", ref)
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, fmt.Errorf("schema: unresolvable $ref %q", ref)
			}
			node = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil, fmt.Errorf("schema: unresolvable $ref %q", ref)
			}
			node = n[i]
		default:
			return nil, fmt.Errorf("schema: unresolvable $ref %q", ref)
		}
	}
	return node, nil
}

// validationError says where an instance broke which rule.
type validationError struct {
	Path string // JSON pointer into the instance; "" is the root
	Msg  string
}

func (e *validationError) Error() string {
	if e.Path == "" {
		return "value " + e.Msg
	}
	return e.Path + " " + e.Msg
}

// validate checks an instance (decoded with decodeJSON or encoding/json)
// against the document root.
func (sc *schema) validate(inst any) error { return sc.check(inst, sc.root, "", 0) }

// validateRef checks an instance against a sub-schema such as "#/$defs/Tool".
func (sc *schema) validateRef(inst any, ref string) error {
	target, err := sc.resolve(ref)
	if err != nil {
		return err
	}
	return sc.check(inst, target, "", 0)
}

func (sc *schema) check(inst, node any, path string, depth int) error {
	fail := func(format string, args ...any) error {
		return &validationError{Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	if depth > maxSchemaDepth {
		return fail("exceeds the maximum schema evaluation depth")
	}
	m, ok := node.(map[string]any)
	if !ok {
		if b, isBool := node.(bool); isBool {
			if !b {
				return fail("is not allowed here")
			}
			return nil
		}
		return fail("has an invalid schema")
	}
	if ref, ok := m["$ref"].(string); ok {
		target, err := sc.resolve(ref)
		if err != nil {
			return err
		}
		if err := sc.check(inst, target, path, depth+1); err != nil {
			return err
		}
	}
	if t, ok := m["type"]; ok && !typeMatches(inst, t) {
		return fail("must be of type %s, got %s", describeType(t), jsonType(inst))
	}
	if enum, ok := m["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return jsonEqual(inst, e) }) {
		return fail("must be one of %s, got %s", compactJSON(enum), compactJSON(inst))
	}
	if c, ok := m["const"]; ok && !jsonEqual(inst, c) {
		return fail("must equal %s, got %s", compactJSON(c), compactJSON(inst))
	}
	switch v := inst.(type) {
	case string:
		n := utf8.RuneCountInString(v)
		if lim, ok := number(m["minLength"]); ok && float64(n) < lim {
			return fail("must be at least %v characters long", lim)
		}
		if lim, ok := number(m["maxLength"]); ok && float64(n) > lim {
			return fail("must be at most %v characters long", lim)
		}
		if p, ok := m["pattern"].(string); ok && !sc.patterns[p].MatchString(v) {
			return fail("must match the pattern %s, got %q", p, truncate(v, 64))
		}
		if f, _ := m["format"].(string); f == "email" && !emailPattern().MatchString(v) {
			return fail("must be an email address, got %q", truncate(v, 64))
		}
	case map[string]any:
		if err := sc.checkObject(v, m, path, depth); err != nil {
			return err
		}
	case []any:
		if lim, ok := number(m["minItems"]); ok && float64(len(v)) < lim {
			return fail("must have at least %v items", lim)
		}
		if lim, ok := number(m["maxItems"]); ok && float64(len(v)) > lim {
			return fail("must have at most %v items", lim)
		}
		if items, ok := m["items"]; ok {
			for i, item := range v {
				if err := sc.check(item, items, path+"/"+strconv.Itoa(i), depth+1); err != nil {
					return err
				}
			}
		}
	default:
		if x, isNum := number(inst); isNum {
			if lim, ok := number(m["minimum"]); ok && x < lim {
				return fail("must be >= %v, got %v", lim, x)
			}
			if lim, ok := number(m["maximum"]); ok && x > lim {
				return fail("must be <= %v, got %v", lim, x)
			}
			if lim, ok := number(m["exclusiveMinimum"]); ok && x <= lim {
				return fail("must be > %v, got %v", lim, x)
			}
			if lim, ok := number(m["exclusiveMaximum"]); ok && x >= lim {
				return fail("must be < %v, got %v", lim, x)
			}
		}
	}
	return sc.checkComposition(inst, m, path, depth)
}

func (sc *schema) checkObject(v, m map[string]any, path string, depth int) error {
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				if _, present := v[name]; !present {
					return &validationError{Path: path, Msg: fmt.Sprintf("is missing the required property %q", name)}
				}
			}
		}
	}
	props, _ := m["properties"].(map[string]any)
	for _, key := range sortedKeys(v) {
		child := path + "/" + escapePointer(key)
		if ps, ok := props[key]; ok {
			if err := sc.check(v[key], ps, child, depth+1); err != nil {
				return err
			}
			continue
		}
		switch ap := m["additionalProperties"].(type) {
		case bool:
			if !ap {
				allowed := sortedKeys(props)
				return &validationError{Path: path, Msg: fmt.Sprintf("has the unexpected property %q (allowed: %s)", key, strings.Join(allowed, ", "))}
			}
		case map[string]any:
			if err := sc.check(v[key], ap, child, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (sc *schema) checkComposition(inst any, m map[string]any, path string, depth int) error {
	if all, ok := m["allOf"].([]any); ok {
		for _, sub := range all {
			if err := sc.check(inst, sub, path, depth+1); err != nil {
				return err
			}
		}
	}
	if anyOf, ok := m["anyOf"].([]any); ok {
		var first error
		matched := false
		for _, sub := range anyOf {
			err := sc.check(inst, sub, path, depth+1)
			if err == nil {
				matched = true
				break
			}
			if first == nil {
				first = err
			}
		}
		if !matched {
			return &validationError{Path: path, Msg: fmt.Sprintf("matches none of the anyOf alternatives (first: %v)", first)}
		}
	}
	if oneOf, ok := m["oneOf"].([]any); ok {
		n := 0
		for _, sub := range oneOf {
			if sc.check(inst, sub, path, depth+1) == nil {
				n++
			}
		}
		if n != 1 {
			return &validationError{Path: path, Msg: fmt.Sprintf("must match exactly one oneOf alternative, matched %d", n)}
		}
	}
	if not, ok := m["not"]; ok && sc.check(inst, not, path, depth+1) == nil {
		return &validationError{Path: path, Msg: "must not match the \"not\" schema"}
	}
	if cond, ok := m["if"]; ok {
		branch := "else"
		if sc.check(inst, cond, path, depth+1) == nil {
			branch = "then"
		}
		if sub, ok := m[branch]; ok {
			return sc.check(inst, sub, path, depth+1)
		}
	}
	return nil
}

// emailPattern is a deliberately simple address check (local@domain.tld):
// enough to reject obvious garbage without pretending to implement RFC 5322.
var emailPattern = lazyRegexp(`^[^@\s"<>()\[\],;:]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$`)

func typeMatches(inst, t any) bool {
	switch t := t.(type) {
	case string:
		return isType(inst, t)
	case []any:
		return slices.ContainsFunc(t, func(x any) bool { s, _ := x.(string); return isType(inst, s) })
	}
	return true
}

func isType(inst any, t string) bool {
	switch t {
	case "null":
		return inst == nil
	case "boolean":
		_, ok := inst.(bool)
		return ok
	case "string":
		_, ok := inst.(string)
		return ok
	case "object":
		_, ok := inst.(map[string]any)
		return ok
	case "array":
		_, ok := inst.([]any)
		return ok
	case "number":
		_, ok := number(inst)
		return ok
	case "integer":
		x, ok := number(inst)
		return ok && !math.IsInf(x, 0) && x == math.Trunc(x)
	}
	return false
}

func jsonType(inst any) string {
	switch inst.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	if x, ok := number(inst); ok {
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", inst)
}

func describeType(t any) string {
	if s, ok := t.(string); ok {
		return s
	}
	return compactJSON(t)
}

// number converts the numeric representations encoding/json produces.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// jsonEqual compares two decoded JSON values, numbers by value (1 == 1.0).
func jsonEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, jsonEqual)
	default:
		return a == b
	}
}

func compactJSON(v any) string {
	b, err := marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return truncate(string(b), 120)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// lazyRegexp compiles expr when first asked: a conformance run starts the
// server tens of times, and compiling the package's patterns at start-up
// (knownLocation's Unicode classes most) was about 7% of a start's CPU.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
