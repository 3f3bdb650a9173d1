package jsonschema

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonpointer"
)

// jsonDepth scans raw JSON for its deepest nesting of arrays and objects
// without decoding it, and stops once max is exceeded, so a 100k-deep
// document costs nothing. ok is false when the nesting exceeds max.
func jsonDepth(doc []byte, max int) (int, bool) {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range doc {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > max {
					return max, false
				}
			}
		case '}', ']':
			depth--
		}
	}
	return deepest, true
}

// Keywords whose values are subschemas, by shape (2020-12, 2019-09 and
// draft-07 together; a keyword of another dialect is harmless to count).
var (
	schemaMapKeywords   = []string{"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
	schemaArrayKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaKeywords      = []string{"additionalItems", "additionalProperties", "contains", "contentSchema", "else", "if", "not", "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties"}
	// inPlace keywords apply their subschemas to the same instance location:
	// a loop through them alone never ends.
	inPlaceArrays = []string{"allOf", "anyOf", "oneOf"}
	inPlaceSingle = []string{"else", "if", "not", "then"}
)

// walker counts subschemas and their depth before anything is compiled, and
// collects what the $ref cycle check needs.
type walker struct {
	lim     Limits
	count   int
	nodes   map[string]map[string]any // JSON pointer → schema object
	anchors map[string]string         // $anchor → JSON pointer
	nested  bool                      // a subschema has its own $id
	kids    map[string][]string       // JSON pointer → its subschemas' pointers
}

func (w *walker) walk(v any, ptr string, depth int) error {
	obj, isObj := v.(map[string]any)
	if !isObj {
		if _, isBool := v.(bool); isBool {
			w.count++
		}
		return nil // not a schema: the metaschema check reports it
	}
	w.count++
	if w.count > w.lim.MaxSubschemas {
		return &Error{Kind: OverBounds, Detail: fmt.Sprintf("more than %d subschemas", w.lim.MaxSubschemas)}
	}
	if depth > w.lim.MaxDepth {
		return &Error{Kind: OverBounds, Detail: fmt.Sprintf("subschemas nest deeper than %d levels (at %s)", w.lim.MaxDepth, clip(displayPtr(ptr), 120))}
	}
	w.nodes[ptr] = obj
	if a, ok := obj["$anchor"].(string); ok {
		w.anchors[a] = ptr
	}
	if _, ok := obj["$id"]; ok && ptr != "" {
		w.nested = true
	}
	if _, ok := obj["id"]; ok && ptr != "" {
		// draft-04 ids; "id" may also be a property name, so this is only
		// a reason to skip the static cycle check.
		w.nested = true
	}
	for _, kw := range schemaMapKeywords {
		m, ok := obj[kw].(map[string]any)
		if !ok {
			continue
		}
		for _, k := range sortedKeys(m) {
			if err := w.child(m[k], ptr, ptr+"/"+escape(kw)+"/"+escape(k), depth+1); err != nil {
				return err
			}
		}
	}
	if deps, ok := obj["dependencies"].(map[string]any); ok {
		for _, k := range sortedKeys(deps) {
			if err := w.child(deps[k], ptr, ptr+"/dependencies/"+escape(k), depth+1); err != nil {
				return err
			}
		}
	}
	for _, kw := range schemaArrayKeywords {
		arr, ok := obj[kw].([]any)
		if !ok {
			continue
		}
		for i, sub := range arr {
			if err := w.child(sub, ptr, fmt.Sprintf("%s/%s/%d", ptr, kw, i), depth+1); err != nil {
				return err
			}
		}
	}
	switch items := obj["items"].(type) {
	case []any:
		for i, sub := range items {
			if err := w.child(sub, ptr, fmt.Sprintf("%s/items/%d", ptr, i), depth+1); err != nil {
				return err
			}
		}
	case map[string]any, bool:
		if err := w.child(items, ptr, ptr+"/items", depth+1); err != nil {
			return err
		}
	}
	for _, kw := range schemaKeywords {
		if sub, ok := obj[kw]; ok {
			if err := w.child(sub, ptr, ptr+"/"+kw, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// expansion estimates how many subschema evaluations one instance
// location can cost: the size of the schema tree with every local $ref
// inlined (a loop through the instance counts once). Composition keywords
// over shared definitions make it grow exponentially (basic/index.mdx
// §Composition-Keyword Resource Use); it stops counting past limit.
func (w *walker) expansion(limit int) int {
	memo := map[string]int{}
	active := map[string]bool{}
	var cost func(ptr string) int
	cost = func(ptr string) int {
		if c, ok := memo[ptr]; ok {
			return c
		}
		if active[ptr] {
			return 1
		}
		active[ptr] = true
		total := 1
		add := func(c int) {
			total += c
			if total > limit {
				total = limit + 1
			}
		}
		for _, k := range w.kids[ptr] {
			if w.nodes[k] == nil {
				add(1) // a boolean schema
				continue
			}
			add(cost(k))
		}
		if r, ok := w.nodes[ptr]["$ref"].(string); ok && !w.nested {
			if target, ok := w.resolve(r); ok {
				add(cost(target))
			}
		}
		active[ptr] = false
		memo[ptr] = total
		return total
	}
	return cost("")
}

// child walks a subschema of the schema at parent.
func (w *walker) child(v any, parent, ptr string, depth int) error {
	w.kids[parent] = append(w.kids[parent], ptr)
	return w.walk(v, ptr, depth)
}

// refCycle finds a loop of $ref and in-place applicators (allOf, anyOf,
// oneOf, not, if/then/else) that returns to a schema without moving into
// the instance: evaluating it never ends. It returns the loop as pointers,
// or nil. Documents with nested $id are left to the validator's own cycle
// detection, since their refs resolve against other bases.
func (w *walker) refCycle() []string {
	if w.nested {
		return nil
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(ptr string) bool
	visit = func(ptr string) bool {
		color[ptr] = grey
		stack = append(stack, ptr)
		for _, next := range w.edges(ptr) {
			switch color[next] {
			case grey:
				i := len(stack) - 1
				for i > 0 && stack[i] != next {
					i--
				}
				for _, p := range stack[i:] {
					found = append(found, displayPtr(p))
				}
				found = append(found, displayPtr(next))
				return true
			case white:
				if visit(next) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[ptr] = black
		return false
	}
	ptrs := make([]string, 0, len(w.nodes))
	for p := range w.nodes {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	for _, p := range ptrs {
		if color[p] == white && visit(p) {
			return found
		}
	}
	return nil
}

// edges are the schemas applied to the same instance location as ptr.
func (w *walker) edges(ptr string) []string {
	obj := w.nodes[ptr]
	var out []string
	if r, ok := obj["$ref"].(string); ok {
		if target, ok := w.resolve(r); ok {
			out = append(out, target)
		}
	}
	for _, kw := range inPlaceArrays {
		if arr, ok := obj[kw].([]any); ok {
			for i := range arr {
				if p := fmt.Sprintf("%s/%s/%d", ptr, kw, i); w.nodes[p] != nil {
					out = append(out, p)
				}
			}
		}
	}
	for _, kw := range inPlaceSingle {
		if p := ptr + "/" + kw; w.nodes[p] != nil {
			out = append(out, p)
		}
	}
	return out
}

// resolve maps a same-document $ref to the pointer of a walked schema.
func (w *walker) resolve(ref string) (string, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return "", false
	}
	if frag == "" {
		return "", w.nodes[""] != nil
	}
	if !strings.HasPrefix(frag, "/") {
		p, ok := w.anchors[frag]
		return p, ok
	}
	dec, err := url.PathUnescape(frag)
	if err != nil {
		return "", false
	}
	// Re-escape each token the way walk built the pointers.
	toks := strings.Split(dec[1:], "/")
	var sb strings.Builder
	for _, t := range toks {
		t = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		sb.WriteByte('/')
		sb.WriteString(escape(t))
	}
	p := sb.String()
	_, ok = w.nodes[p]
	return p, ok
}

func escape(tok string) string { return jsonpointer.Escape(tok) }

func displayPtr(p string) string { return "#" + p }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
