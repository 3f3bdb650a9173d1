package conformance

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonpointer"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonschema"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// An argument synthesizer: from a tool's inputSchema it builds one argument
// object that satisfies the schema and, for CALL-3, one that breaks it. It
// handles the shapes a harness can fill without knowing the tool: type
// object/string/integer/number/boolean/array/null, enum, const, default,
// examples, required, local $ref, anyOf/oneOf (first branch that works),
// string length and format, simple patterns and numeric bounds. Every
// result is checked against the compiled schema; a tool it cannot satisfy
// is skipped, never called with a guess.

// callTarget is a tool the harness may call, with valid arguments.
type callTarget struct {
	tool  mcpclient.Tool
	args  map[string]any
	input *jsonschema.Schema
}

// maxCallTargets bounds how many tools one check calls.
const maxCallTargets = 4

// callTargets returns the tools MayCall allows whose valid arguments could
// be synthesized: tools the user named with --call-tool first, then those
// annotated readOnlyHint, each in the server's order.
func callTargets(p *check.Pass) []callTarget {
	var first, rest []callTarget
	for _, t := range p.Env.CallableTools() {
		input, err := schemaCompileTool(p.Env, t.InputSchema)
		if err != nil {
			continue
		}
		args, ok := callSynthArgs(t.InputSchema, input)
		if !ok {
			continue
		}
		ct := callTarget{tool: t, args: args, input: input}
		if p.Env.CallTools[t.Name] {
			first = append(first, ct)
		} else {
			rest = append(rest, ct)
		}
	}
	return append(first, rest...)
}

// callSkipNoTarget skips a check when callTargets is empty, saying why.
func callSkipNoTarget(p *check.Pass) {
	switch {
	case len(p.Env.Facts.Tools) == 0:
		p.Skipf("the server lists no tools")
	case len(p.Env.CallableTools()) == 0:
		callSkip(p, "no tool may be called")
	default:
		callSkip(p, "no callable tool has an inputSchema the harness can build arguments for")
	}
}

// callSkip skips with why. When some listed tool was not called because
// calling it needs permission, it says how --call-tool would help and
// records that cause; with every tool allowed it says only why, so no
// summary asks the user to allow tools that are allowed already.
func callSkip(p *check.Pass, why string) {
	if hint := uncalledHint(p.Env, "allow one"); hint != "" {
		p.SkipNeedsCall("%s; %s", why, hint)
		return
	}
	p.Skipf("%s", why)
}

// uncalledNamed is how many refused tools a skip names: enough to show
// what --call-tool takes, few enough that every skip of a server with
// hundreds of write tools stays one line.
const uncalledNamed = 3

// uncalledHint says which listed tools MayCall refused and how to allow
// one ("allow one", "allow an MRTR tool"), "" when it refused none. Skips
// are what a user reads to choose a --call-tool NAME, so they name the
// first few in the server's order; a count alone left the user to list
// the tools to find one. Only those few names are kept, not a copy of
// the refused tools (Env.Uncalled says why). The names are the server's:
// quoted, as every check quotes a tool's name, and clipped shorter than
// elsewhere: the terminal shows 300 bytes of a skip (render.Line), and
// the MRTR skip has used some 200 before the hint.
func uncalledHint(env check.Env, allow string) string {
	if env.Facts == nil {
		return ""
	}
	var named []string
	n := 0
	for _, t := range env.Facts.Tools {
		if env.MayCall(t) {
			continue
		}
		n++
		if len(named) < uncalledNamed {
			name := fmt.Sprintf("%q", jsonrpc.Clip(t.Name, 40))
			// Said, for whoever picks one to allow, when the server says
			// so; an unannotated one is presumed so too (the summary
			// says every allowed call is real), but a label on each
			// would push the skip past what the terminal shows.
			if a := t.Annotations; a != nil && a.DestructiveHint != nil && *a.DestructiveHint {
				name += " (destructive)"
			}
			named = append(named, name)
		}
	}
	if n == 0 {
		return ""
	}
	list := strings.Join(named, ", ")
	if n > len(named) {
		list += fmt.Sprintf(" and %d more", n-len(named))
	}
	return fmt.Sprintf("%s not annotated readOnlyHint: true, so not called: %s (%s with --call-tool NAME)", plural(n, "listed tool is", "listed tools are"), list, allow)
}

// plural is "1 listed tool is", "3 listed tools are".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// callSynthArgs builds arguments that validate against the inputSchema.
func callSynthArgs(raw json.RawMessage, input *jsonschema.Schema) (map[string]any, bool) {
	root, err := schemaDecode(raw)
	if err != nil {
		return nil, false
	}
	sy := &callSynth{root: root}
	v, ok := sy.value(root, 0)
	args, isObj := v.(map[string]any)
	if !ok || !isObj {
		return nil, false
	}
	if input != nil && input.ValidateAny(args) != nil {
		return nil, false
	}
	return args, true
}

// callBreakArgs builds arguments that break the inputSchema and says how: a
// required property left out, or a property of the wrong type.
func callBreakArgs(ct callTarget) (map[string]any, string, bool) {
	root, err := schemaDecode(ct.tool.InputSchema)
	if err != nil {
		return nil, "", false
	}
	sy := &callSynth{root: root}
	obj, _ := sy.deref(root, 0).(map[string]any)
	var candidates []struct {
		args map[string]any
		how  string
	}
	for _, name := range callStrings(obj["required"]) {
		if _, ok := ct.args[name]; !ok {
			continue
		}
		args := callCloneArgs(ct.args)
		delete(args, name)
		candidates = append(candidates, struct {
			args map[string]any
			how  string
		}{args, fmt.Sprintf("without the required property %q", name)})
	}
	props, _ := obj["properties"].(map[string]any)
	for _, name := range callKeys(props) {
		prop, _ := sy.deref(props[name], 0).(map[string]any)
		wrong, ok := callWrongType(prop)
		if !ok {
			continue
		}
		args := callCloneArgs(ct.args)
		args[name] = wrong
		b, _ := json.Marshal(wrong)
		candidates = append(candidates, struct {
			args map[string]any
			how  string
		}{args, fmt.Sprintf("with %q set to %s (type %v)", name, b, prop["type"])})
	}
	for _, c := range candidates {
		if err := ct.input.ValidateAny(c.args); err != nil {
			if _, invalid := err.(*jsonschema.ValidationError); invalid {
				return c.args, c.how, true
			}
		}
	}
	return nil, "", false
}

// callWrongType is a value of another type than the property declares.
func callWrongType(prop map[string]any) (any, bool) {
	switch t := prop["type"].(type) {
	case string:
		switch t {
		case "string":
			return 12345, true
		case "integer", "number":
			return "not a number", true
		case "boolean":
			return "not a boolean", true
		case "object", "array":
			return 12345, true
		}
	}
	return nil, false
}

func callCloneArgs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func callStrings(v any) []string {
	arr, _ := v.([]any)
	var out []string
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func callKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// callSynth builds values for (sub)schemas of one document.
type callSynth struct{ root any }

const callMaxSynthDepth = 12

// deref follows local $ref chains ("#", "#/...").
func (sy *callSynth) deref(node any, depth int) any {
	for i := 0; i < 8; i++ {
		obj, ok := node.(map[string]any)
		if !ok {
			return node
		}
		ref, ok := obj["$ref"].(string)
		if !ok {
			return node
		}
		target, ok := sy.resolve(ref)
		if !ok {
			return nil
		}
		// Sibling keywords of $ref (2020-12) are kept when the target
		// adds nothing for them.
		if t, ok := target.(map[string]any); ok && len(obj) > 1 {
			merged := map[string]any{}
			for k, v := range t {
				merged[k] = v
			}
			for k, v := range obj {
				if k != "$ref" {
					if _, has := merged[k]; !has {
						merged[k] = v
					}
				}
			}
			target = merged
		}
		node = target
	}
	return node
}

func (sy *callSynth) resolve(ref string) (any, bool) { return jsonpointer.Get(sy.root, ref) }

// value synthesizes one value for a schema.
func (sy *callSynth) value(node any, depth int) (any, bool) {
	if depth > callMaxSynthDepth {
		return nil, false
	}
	node = sy.deref(node, depth)
	switch n := node.(type) {
	case bool:
		return "example", n
	case map[string]any:
		return sy.object(n, depth)
	}
	return nil, false
}

func (sy *callSynth) object(s map[string]any, depth int) (any, bool) {
	if c, ok := s["const"]; ok {
		return c, true
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0], true
	}
	if d, ok := s["default"]; ok {
		return d, true
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		return ex[0], true
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[kw].([]any); ok {
			for _, b := range branches {
				if v, ok := sy.value(b, depth+1); ok {
					return v, true
				}
			}
			return nil, false
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) == 1 {
		return sy.value(all[0], depth+1)
	}
	typ := callSchemaType(s)
	switch typ {
	case "object":
		return sy.objectValue(s, depth)
	case "string":
		return callStringValue(s)
	case "integer":
		return callNumberValue(s, true)
	case "number":
		return callNumberValue(s, false)
	case "boolean":
		return false, true
	case "array":
		n := 0
		if f, ok := callNumberOf(s["minItems"]); ok {
			n = int(f)
		}
		if n > 8 {
			return nil, false
		}
		items := make([]any, 0, n)
		for i := 0; i < n; i++ {
			v, ok := sy.value(s["items"], depth+1)
			if !ok {
				return nil, false
			}
			items = append(items, v)
		}
		return items, true
	case "null":
		return nil, true
	}
	return nil, false
}

// callSchemaType is the one type to build: the declared type (the first
// non-null of a list), or "object" when only properties say so.
func callSchemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if str, ok := e.(string); ok && str != "null" {
				return str
			}
		}
		return "null"
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	if _, ok := s["required"]; ok {
		return "object"
	}
	return ""
}

func (sy *callSynth) objectValue(s map[string]any, depth int) (any, bool) {
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	for _, name := range callStrings(s["required"]) {
		sub, ok := props[name]
		if !ok {
			sub = true
			if ap, has := s["additionalProperties"]; has {
				sub = ap
			}
		}
		v, ok := sy.value(sub, depth+1)
		if !ok {
			return nil, false
		}
		out[name] = v
	}
	if f, ok := callNumberOf(s["minProperties"]); ok {
		for _, name := range callKeys(props) {
			if len(out) >= int(f) {
				break
			}
			if _, done := out[name]; done {
				continue
			}
			if v, ok := sy.value(props[name], depth+1); ok {
				out[name] = v
			}
		}
	}
	return out, true
}

// callFormatValues are valid examples of the common string formats.
var callFormatValues = map[string]string{
	"email":         "user@example.com",
	"idn-email":     "user@example.com",
	"uri":           "https://example.com/",
	"url":           "https://example.com/",
	"iri":           "https://example.com/",
	"uri-reference": "https://example.com/",
	"date":          "2025-01-15",
	"date-time":     "2025-01-15T12:00:00Z",
	"time":          "12:00:00Z",
	"duration":      "P1D",
	"uuid":          "123e4567-e89b-42d3-a456-426614174000",
	"hostname":      "example.com",
	"idn-hostname":  "example.com",
	"ipv4":          "192.0.2.1",
	"ipv6":          "2001:db8::1",
}

func callStringValue(s map[string]any) (any, bool) {
	minLen, maxLen := 0, -1
	if f, ok := callNumberOf(s["minLength"]); ok {
		minLen = int(f)
	}
	if f, ok := callNumberOf(s["maxLength"]); ok {
		maxLen = int(f)
	}
	if minLen > 1000 {
		return nil, false
	}
	fits := func(v string) bool {
		n := utf8.RuneCountInString(v)
		return n >= minLen && (maxLen < 0 || n <= maxLen)
	}
	var re *regexp.Regexp
	if pat, ok := s["pattern"].(string); ok {
		var err error
		if re, err = regexp.Compile(pat); err != nil {
			return nil, false // not RE2: an ECMA-262 feature the harness cannot build for
		}
	}
	matches := func(v string) bool { return re == nil || re.MatchString(v) }
	var candidates []string
	if f, ok := s["format"].(string); ok {
		if v, known := callFormatValues[f]; known {
			candidates = append(candidates, v)
		}
	}
	if re != nil {
		if v, ok := callFromPattern(re.String()); ok {
			candidates = append(candidates, v)
			if n := utf8.RuneCountInString(v); n < minLen {
				candidates = append(candidates, v+strings.Repeat("x", minLen-n))
			}
		}
	}
	base := "example"
	if minLen > len(base) {
		base += strings.Repeat("x", minLen-len(base))
	}
	if maxLen >= 0 && len(base) > maxLen {
		base = base[:maxLen]
	}
	candidates = append(candidates, base)
	for _, c := range candidates {
		if fits(c) && matches(c) {
			return c, true
		}
	}
	return nil, false
}

func callNumberValue(s map[string]any, integer bool) (any, bool) {
	lo, hi := math.Inf(-1), math.Inf(1)
	if f, ok := callNumberOf(s["minimum"]); ok {
		lo = f
	}
	if f, ok := callNumberOf(s["maximum"]); ok {
		hi = f
	}
	if f, ok := callNumberOf(s["exclusiveMinimum"]); ok {
		if integer {
			lo = math.Max(lo, math.Floor(f)+1)
		} else {
			lo = math.Max(lo, f+1e-6)
		}
	}
	if f, ok := callNumberOf(s["exclusiveMaximum"]); ok {
		if integer {
			hi = math.Min(hi, math.Ceil(f)-1)
		} else {
			hi = math.Min(hi, f-1e-6)
		}
	}
	v := math.Max(lo, math.Min(1, hi))
	if integer {
		v = math.Ceil(v)
	}
	if m, ok := callNumberOf(s["multipleOf"]); ok && m > 0 {
		v = math.Ceil(v/m) * m
	}
	if v < lo || v > hi || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil, false
	}
	if integer {
		if math.Abs(v) > 1<<53 {
			return nil, false
		}
		return int64(v), true
	}
	return v, true
}

func callNumberOf(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// callFromPattern builds a string that a simple regular expression matches:
// literals, classes, repetitions at their minimum, the first alternative.
func callFromPattern(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var sb strings.Builder
	if !callBuildRegexp(re.Simplify(), &sb, 0) || sb.Len() > 1000 {
		return "", false
	}
	s := sb.String()
	if ok, _ := regexp.MatchString(pattern, s); !ok {
		return "", false
	}
	return s, true
}

func callBuildRegexp(re *syntax.Regexp, sb *strings.Builder, depth int) bool {
	if depth > 50 {
		return false
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			sb.WriteRune(r)
		}
	case syntax.OpCharClass:
		r, ok := callPickRune(re.Rune)
		if !ok {
			return false
		}
		sb.WriteRune(r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		sb.WriteByte('a')
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpEmptyMatch:
	case syntax.OpCapture:
		return callBuildRegexp(re.Sub[0], sb, depth+1)
	case syntax.OpStar, syntax.OpQuest:
	case syntax.OpPlus:
		return callBuildRegexp(re.Sub[0], sb, depth+1)
	case syntax.OpRepeat:
		if re.Min > 100 {
			return false
		}
		for i := 0; i < re.Min; i++ {
			if !callBuildRegexp(re.Sub[0], sb, depth+1) {
				return false
			}
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !callBuildRegexp(sub, sb, depth+1) {
				return false
			}
		}
	case syntax.OpAlternate:
		return callBuildRegexp(re.Sub[0], sb, depth+1)
	default:
		return false
	}
	return true
}

// callPickRune chooses a readable rune of a character class (pairs lo, hi).
func callPickRune(ranges []rune) (rune, bool) {
	for _, want := range []rune{'a', 'x', '0', '1', 'A', 'X', '-', '_'} {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= want && want <= ranges[i+1] {
				return want, true
			}
		}
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && r < ranges[i]+256; r++ {
			if r > ' ' && r != 0x7f && utf8.ValidRune(r) {
				return r, true
			}
		}
	}
	return 0, false
}
