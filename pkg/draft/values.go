package draft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonpointer"
)

// Bounds on what a server's schema can make the value maker do: a schema
// is untrusted input.
const (
	maxValueDepth = 8
	maxRefHops    = 16
	maxStringLen  = 200
)

// schemaDoc is a decoded inputSchema, kept for resolving local $refs.
type schemaDoc struct {
	root any
	// made counts the numbers made since reset, so that two numbers of
	// one call differ (a: 3, b: 4) and a prompt tells them apart.
	made int
}

func decodeSchema(raw json.RawMessage) (*schemaDoc, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &schemaDoc{root: map[string]any{"type": "object"}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return &schemaDoc{root: v}, nil
}

// resolve follows same-document $refs (#/…) and returns the schema object
// there, or nil when it is not an object (true, an external ref, a loop).
func (d *schemaDoc) resolve(s any) map[string]any {
	for hop := 0; hop < maxRefHops; hop++ {
		m, ok := s.(map[string]any)
		if !ok {
			return nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		target := d.pointer(ref)
		if target == nil {
			return nil
		}
		// Keywords beside $ref (a description, say) apply too: merge them
		// over the target, the target's own keywords winning on conflicts
		// only where the sibling says nothing.
		t, ok := target.(map[string]any)
		if !ok {
			return nil
		}
		merged := make(map[string]any, len(t)+len(m))
		for k, v := range t {
			merged[k] = v
		}
		for k, v := range m {
			if k != "$ref" {
				merged[k] = v
			}
		}
		if _, again := t["$ref"]; !again {
			return merged
		}
		merged["$ref"] = t["$ref"]
		s = merged
	}
	return nil
}

// pointer reads a "#/a/b" JSON pointer in the document.
func (d *schemaDoc) pointer(ref string) any {
	v, _ := jsonpointer.Get(d.root, ref)
	return v
}

// properties returns an object schema's properties (resolved) and its
// required names, in the schema's required order, then the others sorted.
func (d *schemaDoc) properties(s map[string]any) (props map[string]map[string]any, required, optional []string) {
	props = map[string]map[string]any{}
	raw, _ := s["properties"].(map[string]any)
	for name, ps := range raw {
		if r := d.resolve(ps); r != nil {
			props[name] = r
		} else {
			props[name] = map[string]any{}
		}
	}
	isReq := map[string]bool{}
	if list, ok := s["required"].([]any); ok {
		for _, r := range list {
			if name, ok := r.(string); ok && !isReq[name] {
				isReq[name] = true
				required = append(required, name)
				if _, has := props[name]; !has {
					props[name] = map[string]any{}
				}
			}
		}
	}
	for name := range props {
		if !isReq[name] {
			optional = append(optional, name)
		}
	}
	sort.Strings(optional)
	return props, required, optional
}

// unmade says why no schema-valid value could be made for a property: the
// draft says so rather than inventing one.
type unmade struct {
	Prop, Why string
}

// value makes a value for property name with schema s, or says why it
// cannot. The value is checked against the whole inputSchema by the
// caller; here only the obvious keywords are honoured.
func (d *schemaDoc) value(name string, s map[string]any, depth int) (any, *unmade) {
	if depth > maxValueDepth {
		return nil, &unmade{name, "nested too deeply"}
	}
	if s == nil {
		return nil, &unmade{name, "its schema is not an object"}
	}
	if v, ok := s["const"]; ok {
		return plain(v), nil
	}
	if list, ok := s["enum"].([]any); ok && len(list) > 0 {
		for _, v := range list {
			if v != nil {
				return plain(v), nil
			}
		}
		return nil, nil
	}
	if list, ok := s["examples"].([]any); ok && len(list) > 0 {
		return plain(list[0]), nil
	}
	if v, ok := s["default"]; ok && v != nil {
		return plain(v), nil
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := s[key].([]any); ok && len(list) > 0 {
			if b := d.resolve(list[0]); b != nil {
				merged := map[string]any{}
				for k, v := range s {
					if k != key {
						merged[k] = v
					}
				}
				for k, v := range b {
					merged[k] = v
				}
				return d.value(name, merged, depth+1)
			}
		}
	}
	switch schemaType(s) {
	case "string":
		return stringValue(name, s)
	case "integer", "number":
		d.made++
		return numberValue(s, schemaType(s) == "integer", float64(2+d.made)), nil
	case "boolean":
		return true, nil
	case "null":
		return nil, nil
	case "array":
		items := d.resolve(s["items"])
		if items == nil {
			items = map[string]any{"type": "string"}
		}
		n := 1
		if mi, ok := num(s["minItems"]); ok && mi > 1 {
			if b, _ := s["uniqueItems"].(bool); b {
				return nil, &unmade{name, fmt.Sprintf("minItems %v with uniqueItems", mi)}
			}
			n = int(min(mi, 20))
		}
		v, u := d.value(singular(name), items, depth+1)
		if u != nil {
			return nil, &unmade{name, "its items: " + u.Why}
		}
		out := make([]any, n)
		for i := range out {
			out[i] = v
		}
		return out, nil
	case "object":
		props, required, _ := d.properties(s)
		out := map[string]any{}
		for _, p := range required {
			v, u := d.value(p, props[p], depth+1)
			if u != nil {
				return nil, &unmade{name + "." + u.Prop, u.Why}
			}
			out[p] = v
		}
		return out, nil
	}
	return nil, &unmade{name, "its schema gives no type"}
}

// schemaType is the first non-null type of a schema, guessed from its
// keywords when it names none.
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if name, ok := x.(string); ok && name != "null" {
				return name
			}
		}
		return "null"
	}
	switch {
	case s["properties"] != nil || s["required"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	case s["pattern"] != nil || s["format"] != nil || s["minLength"] != nil || s["maxLength"] != nil:
		return "string"
	case s["minimum"] != nil || s["maximum"] != nil:
		return "number"
	}
	return ""
}

// plain turns json.Number into int64 or float64, recursively, so values
// compare and print as YAML numbers.
func plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	}
	return v
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// numberValue picks a small number inside the bounds: want unless the
// bounds say otherwise, moved onto multipleOf.
func numberValue(s map[string]any, integer bool, want float64) any {
	lo, hi := math.Inf(-1), math.Inf(1)
	if v, ok := num(s["minimum"]); ok {
		lo = v
	}
	if v, ok := num(s["exclusiveMinimum"]); ok {
		lo = math.Max(lo, v+exclusiveStep(integer, v))
	}
	if v, ok := num(s["maximum"]); ok {
		hi = v
	}
	if v, ok := num(s["exclusiveMaximum"]); ok {
		hi = math.Min(hi, v-exclusiveStep(integer, v))
	}
	x := want
	if x < lo {
		x = lo
	}
	if x > hi {
		x = hi
	}
	if m, ok := num(s["multipleOf"]); ok && m > 0 {
		x = math.Ceil(x/m) * m
		if x > hi {
			x = math.Floor(hi/m) * m
		}
	}
	if integer {
		x = math.Ceil(x)
		if x > hi {
			x = math.Floor(hi)
		}
		return int64(x)
	}
	if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
		return int64(x)
	}
	return x
}

func exclusiveStep(integer bool, v float64) float64 {
	if integer {
		return 1
	}
	return math.Max(math.Abs(v)*1e-3, 0.5)
}

// knownFormats are values valid for the formats every validator knows.
// Other formats have no value the draft can vouch for.
var knownFormats = map[string]string{
	"date":      "2026-01-15",
	"date-time": "2026-01-15T09:30:00Z",
	"time":      "09:30:00Z",
	"email":     "ada@example.com",
	"idn-email": "ada@example.com",
	"uri":       "https://example.com/",
	"url":       "https://example.com/",
	"iri":       "https://example.com/",
	"hostname":  "example.com",
	"ipv4":      "192.0.2.10",
	"ipv6":      "2001:db8::10",
	"uuid":      "3f2c8a9e-6b1d-4c7a-9e2f-1a2b3c4d5e6f",
	"duration":  "PT5M",
}

// samples are free-text values by property name, so prompts read like
// requests a person would make.
var samples = []struct {
	words []string
	value string
}{
	{[]string{"location", "city", "place", "town"}, "Seattle, WA"},
	{[]string{"country"}, "Canada"},
	{[]string{"region"}, "us-west1"},
	{[]string{"query", "q", "search", "keyword", "keywords", "term", "terms", "topic"}, "solar panels"},
	{[]string{"subject", "title", "headline"}, "Quarterly report"},
	{[]string{"body", "message", "content", "text", "prompt", "note", "comment", "description", "input"}, "Hello from the mcp-eval draft"},
	{[]string{"name", "username", "user", "author", "person"}, "Ada Lovelace"},
	{[]string{"email", "to", "recipient", "from"}, "ada@example.com"},
	{[]string{"url", "uri", "link", "href", "website"}, "https://example.com/"},
	{[]string{"path", "file", "filename", "dir", "directory", "folder"}, "docs/README.md"},
	{[]string{"language", "lang", "locale"}, "en"},
	{[]string{"date", "day"}, "2026-01-15"},
	{[]string{"color", "colour"}, "blue"},
}

func stringValue(name string, s map[string]any) (any, *unmade) {
	if f, ok := s["format"].(string); ok && f != "" {
		v, known := knownFormats[f]
		if !known {
			return nil, &unmade{name, fmt.Sprintf("format %q has no value the draft can vouch for", clipText(f, 40))}
		}
		return fitLength(v, s), nil
	}
	example := describedExample(s)
	if p, ok := s["pattern"].(string); ok && p != "" {
		re, err := regexp.Compile(p)
		if err == nil && example != "" && re.MatchString(example) {
			return example, nil
		}
		// A value a person would write, when the pattern takes one: a
		// date pattern drafted "0000-00-00".
		for _, c := range plausible {
			if err == nil && re.MatchString(c) {
				return c, nil
			}
		}
		v, err := fromPattern(p)
		if err != nil {
			return nil, &unmade{name, fmt.Sprintf("pattern %q: %v", clipText(p, 80), err)}
		}
		return v, nil
	}
	v := "example"
	if example != "" {
		v = example
	} else if isIDName(name) {
		v = "abc-123"
	} else {
		lower := strings.ToLower(name)
		words := nameWords(name)
	find:
		for _, smp := range samples {
			for _, w := range smp.words {
				if lower == w || (len(words) > 0 && words[len(words)-1] == w) {
					v = smp.value
					break find
				}
			}
		}
	}
	return fitLength(v, s), nil
}

// plausible are values a person writes, tried against a pattern before a
// value is made from it: dates, times, codes, addresses.
var plausible = []string{"2026-03-14", "2026-03-14T09:30:00Z", "09:30", "user@example.com", "https://example.com", "ABC-123", "C1234", "+1-555-0100"}

// exampleIn finds the example a description gives: `e.g. "Seattle, WA"`,
// `for example us-west1`, `like C1234`.
var exampleIn = regexp.MustCompile(`(?i)\b(?:e\.g\.?|for example|for instance|such as|like)[:,]?\s+(?:"([^"]{1,80})"|'([^']{1,80})'|` + "`([^`]{1,80})`" + `|([A-Za-z0-9][\w./:@+-]{0,79}))`)

// exampleInParens is an example in parentheses, several words long:
// "(e.g. Team lunch)" is "Team lunch", not "Team".
var exampleInParens = regexp.MustCompile(`(?i)\((?:e\.g\.?|for example|such as)[:,]?\s+([^()"'` + "`" + `]{1,60}?)\s*\)`)

func describedExample(s map[string]any) string {
	desc, _ := s["description"].(string)
	if m := exampleInParens.FindStringSubmatch(desc); m != nil {
		first, _, _ := strings.Cut(m[1], ",") // "(e.g. us-west1, eu-west2)": the first
		first, _, _ = strings.Cut(first, ";")
		return strings.TrimSpace(strings.TrimRight(first, ".,;:"))
	}
	m := exampleIn.FindStringSubmatch(desc)
	if m == nil {
		return ""
	}
	for _, g := range m[1:] {
		if g != "" {
			return strings.TrimRight(g, ".,;:")
		}
	}
	return ""
}

// fitLength pads or cuts v to minLength/maxLength (in characters).
func fitLength(v string, s map[string]any) string {
	r := []rune(v)
	if mx, ok := num(s["maxLength"]); ok && float64(len(r)) > mx && mx >= 0 {
		r = r[:int(mx)]
	}
	if mn, ok := num(s["minLength"]); ok && float64(len(r)) < mn {
		for float64(len(r)) < mn && len(r) < maxStringLen {
			r = append(r, 'x')
		}
	}
	return string(r)
}

// isIDName says whether a property names an identifier, matched exactly.
func isIDName(name string) bool {
	words := nameWords(name)
	if len(words) == 0 {
		return false
	}
	switch words[len(words)-1] {
	case "id", "ids", "uuid", "key", "code", "sku", "slug", "ref", "number", "no":
		return true
	}
	return false
}

// nameWords splits snake_case, kebab-case and camelCase into lower-case
// words.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
			prevLower = false
			continue
		case r >= 'A' && r <= 'Z' && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
	}
	flush()
	return words
}

func singular(name string) string {
	if s, ok := strings.CutSuffix(name, "s"); ok && len(s) > 1 {
		return s
	}
	return name
}

// fromPattern makes a short string the pattern accepts: the first branch
// of every alternation, the minimum of every repetition (one for +), the
// first letter or digit of every class. The result is checked against the
// schema afterwards, so a pattern this reads wrongly is caught there.
func fromPattern(p string) (string, error) {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return "", fmt.Errorf("not a pattern the draft can read (%v)", err)
	}
	var sb strings.Builder
	if err := gen(&sb, re, 0); err != nil {
		return "", err
	}
	if sb.Len() > maxStringLen {
		return "", fmt.Errorf("the shortest value is over %d characters", maxStringLen)
	}
	return sb.String(), nil
}

func gen(sb *strings.Builder, re *syntax.Regexp, depth int) error {
	if depth > 50 || sb.Len() > maxStringLen {
		return fmt.Errorf("too complex for the draft")
	}
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			sb.WriteRune(r)
		}
	case syntax.OpCharClass:
		r, ok := pickRune(re.Rune)
		if !ok {
			return fmt.Errorf("an empty character class")
		}
		sb.WriteRune(r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		sb.WriteRune('a')
	case syntax.OpCapture:
		return gen(sb, re.Sub[0], depth+1)
	case syntax.OpStar, syntax.OpQuest:
	case syntax.OpPlus:
		return gen(sb, re.Sub[0], depth+1)
	case syntax.OpRepeat:
		for i := 0; i < re.Min; i++ {
			if err := gen(sb, re.Sub[0], depth+1); err != nil {
				return err
			}
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if err := gen(sb, s, depth+1); err != nil {
				return err
			}
		}
	case syntax.OpAlternate:
		return gen(sb, re.Sub[0], depth+1)
	default:
		return fmt.Errorf("uses %v, which the draft does not read", re.Op)
	}
	return nil
}

// pickRune prefers a letter or digit from a class's ranges.
func pickRune(ranges []rune) (rune, bool) {
	if len(ranges) < 2 {
		return 0, false
	}
	for _, pref := range [][2]rune{{'A', 'Z'}, {'a', 'z'}, {'0', '9'}} {
		for i := 0; i+1 < len(ranges); i += 2 {
			lo, hi := ranges[i], ranges[i+1]
			if lo <= pref[1] && hi >= pref[0] {
				return max(lo, pref[0]), true
			}
		}
	}
	return ranges[0], true
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
