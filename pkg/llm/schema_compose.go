package llm

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Flattening a root allOf/anyOf/oneOf into one object schema
// (llm-providers.md §2.7 step 1): what the composition said and an object
// cannot is moved into the description, so the model still reads it.

// flattenComposition rewrites root allOf/anyOf/oneOf into one object.
func (c *converter) flattenComposition(s map[string]any, depth int) {
	if depth > maxRefHops {
		return
	}
	if branches, ok := s["allOf"].([]any); ok {
		delete(s, "allOf")
		c.mergeAllOf(s, branches, depth)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if branches, ok := s[key].([]any); ok {
			delete(s, key)
			c.mergeVariants(s, key, branches, depth)
		}
	}
}

// hasObjectBranch: a root composition can become one object only if some
// branch is an object shape (or all branches only list required names).
func (c *converter) hasObjectBranch(s map[string]any) bool {
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		branches, ok := s[key].([]any)
		if !ok || len(branches) == 0 || requiredOnly(branches) {
			continue
		}
		objects := 0
		for _, b := range branches {
			if t, ok := b.(bool); ok && t {
				objects++
				continue
			}
			m, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if ref, ok := m["$ref"].(string); ok {
				if target, ok := c.resolve(ref); ok {
					m = target
				}
			}
			if objectLike(m) {
				objects++
			}
		}
		if objects == 0 {
			return false
		}
	}
	return true
}

// branch resolves a composition branch to an object schema, or says why
// it is not one.
func (c *converter) branch(b any, depth int) (map[string]any, bool) {
	m, ok := b.(map[string]any)
	if !ok {
		return nil, false
	}
	if c.work++; c.work > maxConvertWork {
		if !c.overWork {
			c.overWork = true
			c.note("root composition needs more than %d steps to flatten (self-referencing branches?); the rest was dropped", maxConvertWork)
		}
		return nil, false
	}
	m = c.inlineRootRef(deepCopy(m).(map[string]any))
	c.flattenComposition(m, depth+1)
	return m, objectLike(m)
}

// mergeAllOf: every branch holds, so properties merge and required is the
// union; a property two branches define must satisfy both.
func (c *converter) mergeAllOf(s map[string]any, branches []any, depth int) {
	for i, b := range branches {
		if t, ok := b.(bool); ok && t {
			continue
		}
		m, ok := c.branch(b, depth)
		if !ok {
			if !c.overWork {
				c.note("root allOf branch %d %s is not an object schema; dropped", i+1, excerpt(b))
			}
			continue
		}
		mergeProperties(s, m, "allOf")
		s["required"] = union(requiredOf(s), requiredOf(m))
		if ap, ok := m["additionalProperties"]; ok && ap == false {
			s["additionalProperties"] = false
		}
		if d, ok := m["description"].(string); ok && d != "" {
			appendDescription(s, d)
		}
	}
}

// mergeVariants: anyOf/oneOf of object shapes become one object with the
// union of the properties and, as required, what every shape requires; the
// shapes are spelled out in the description so the model still sees them.
func (c *converter) mergeVariants(s map[string]any, key string, branches []any, depth int) {
	quantifier := "at least one"
	if key == "oneOf" {
		quantifier = "exactly one"
	}
	// Branches that only say which properties are required: the common
	// "give a or b" idiom.
	if requiredOnly(branches) {
		var groups []string
		for _, b := range branches {
			groups = append(groups, strings.Join(stringsOf(b.(map[string]any)["required"]), " and "))
		}
		appendDescription(s, fmt.Sprintf("Provide %s of: %s.", quantifier, strings.Join(groups, "; ")))
		return
	}
	var shapes []string
	var req []string
	first := true
	allClosed := true
	for i, b := range branches {
		m, ok := c.branch(b, depth)
		if !ok {
			if !c.overWork {
				c.note("root %s branch %d %s is not an object schema; dropped", key, i+1, excerpt(b))
			}
			continue
		}
		mergeProperties(s, m, "anyOf")
		r := requiredOf(m)
		if first {
			req, first = r, false
		} else {
			req = intersect(req, r)
		}
		if ap, ok := m["additionalProperties"]; !ok || ap != false {
			allClosed = false
		}
		shapes = append(shapes, shapeSummary(i+1, m))
	}
	if first {
		return // no object branch survived
	}
	s["required"] = union(requiredOf(s), req)
	if allClosed {
		s["additionalProperties"] = false
	}
	appendDescription(s, fmt.Sprintf("Arguments take %s of these shapes: %s.", quantifier, strings.Join(shapes, "; ")))
}

// mergeProperties adds m's properties to s; a property both define with
// different schemas gets both, under allOf or anyOf, so nothing is lost.
func mergeProperties(s, m map[string]any, combine string) {
	mp, _ := m["properties"].(map[string]any)
	if len(mp) == 0 {
		return
	}
	sp, _ := s["properties"].(map[string]any)
	if sp == nil {
		sp = map[string]any{}
		s["properties"] = sp
	}
	for _, name := range sortedKeys(mp) {
		v := mp[name]
		old, exists := sp[name]
		switch {
		case !exists:
			sp[name] = v
		case reflect.DeepEqual(old, v):
		default:
			if om, ok := old.(map[string]any); ok && len(om) == 1 {
				if list, ok := om[combine].([]any); ok {
					om[combine] = append(list, v)
					continue
				}
			}
			sp[name] = map[string]any{combine: []any{old, v}}
		}
	}
}

func shapeSummary(i int, m map[string]any) string {
	if r := requiredOf(m); len(r) > 0 {
		return fmt.Sprintf("(%d) with %s", i, strings.Join(r, ", "))
	}
	mp, _ := m["properties"].(map[string]any)
	if len(mp) == 0 {
		return fmt.Sprintf("(%d) with no arguments", i)
	}
	return fmt.Sprintf("(%d) with any of %s", i, strings.Join(sortedKeys(mp), ", "))
}

// objectLike: a schema that constrains an object (or nothing).
func objectLike(m map[string]any) bool {
	switch t := m["type"].(type) {
	case nil:
		for _, k := range []string{"enum", "const", "not", "items", "prefixItems", "pattern", "minimum", "maximum", "minLength", "maxLength"} {
			if _, ok := m[k]; ok {
				return false
			}
		}
		return true
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

func requiredOnly(branches []any) bool {
	if len(branches) == 0 {
		return false
	}
	for _, b := range branches {
		m, ok := b.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["required"]; !ok {
			return false
		}
		for k := range m {
			if k != "required" && k != "description" && k != "title" {
				return false
			}
		}
	}
	return true
}

func appendDescription(s map[string]any, text string) {
	if d, ok := s["description"].(string); ok && strings.TrimSpace(d) != "" {
		if strings.Contains(d, text) {
			return
		}
		s["description"] = strings.TrimRight(d, " ") + " " + text
		return
	}
	s["description"] = text
}

func requiredOf(m map[string]any) []string { return stringsOf(m["required"]) }

func stringsOf(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func union(a, b []string) []any {
	var out []any
	seen := map[string]bool{}
	for _, s := range append(slices.Clone(a), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if out == nil {
		return []any{}
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
