package conformance

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
)

// The lint reads a parameter as a model reads it: a property that is only
// {"$ref": "#/$defs/customerId"} (what Pydantic and most generators emit)
// is described, typed and enumerated by what the reference names. So the
// lint follows references within the same inputSchema. A reference it
// cannot follow (another document, an $anchor, a missing target, a loop)
// is read as before: the $ref alone says the value has a shape, and the
// reference itself is SCHEMA-2's (unresolvable) or SCHEMA-3's (loop) to
// report, with evidence, as a MUST. Saying it again in a LINT finding
// would report one fault twice and change messages the gate and waivers
// match. For the same reason the lint reads through a nullable wrapper
// (Pydantic's Optional[X]) to the one schema it allows besides null.

const (
	// lintMaxRefHops bounds a chain of references and nullable wrappers
	// from one parameter; a schema from the server under test may chain
	// them without end.
	lintMaxRefHops = 16
	// lintMaxPointerTokens bounds the reference tokens of one pointer:
	// each token may decode one more container of the schema.
	lintMaxPointerTokens = 32
)

// lintNode is what the lint reads of one schema object: a property of
// inputSchema or a schema a $ref of one names.
type lintNode struct {
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	Type        json.RawMessage   `json:"type"`
	Const       json.RawMessage   `json:"const"`
	Format      string            `json:"format"`
	Ref         json.RawMessage   `json:"$ref"`
	ID          json.RawMessage   `json:"$id"`
	AnyOf       json.RawMessage   `json:"anyOf"`
	OneOf       json.RawMessage   `json:"oneOf"`
	AllOf       json.RawMessage   `json:"allOf"`
}

// shaped reports whether the node itself says the value's shape.
func (n lintNode) shaped() bool {
	return len(n.Type) > 0 || len(n.Enum) > 0 || len(n.Const) > 0 || n.Format != "" || len(n.AnyOf)+len(n.OneOf)+len(n.AllOf) > 0
}

// ref is the node's $ref when it is a non-empty string, and whether it has
// one at all: a $ref of another JSON type is still one the lint cannot
// follow (SCHEMA-1 reports it), and an empty or null one none, as the lint
// read them before it followed references.
func (n lintNode) ref() (ref string, has bool) {
	if len(n.Ref) == 0 || string(n.Ref) == "null" {
		return "", false
	}
	if json.Unmarshal(n.Ref, &ref) != nil {
		return "", true
	}
	return ref, ref != ""
}

// lintReadParam reads the property name of an inputSchema whose text is
// doc. ok is false when the property is not a schema object the lint
// reads: the tool is then left out, as it was before references were
// followed.
func lintReadParam(name string, raw json.RawMessage, doc *lintSchemaDoc) (lp lintParam, ok bool) {
	var n lintNode
	if json.Unmarshal(raw, &n) != nil { // a null property reads as {}, as it always did
		return lp, false
	}
	lp.Name = name
	at, root := "/inputSchema/properties/"+lintPtr(name), false
	// inID: n sits inside a schema with its own $id (a nullable wrapper
	// of one), so its "#/…" is relative to that schema too.
	inID := false
	seen := map[string]bool{}
	// A hop is a $ref followed or a nullable wrapper entered: both take
	// the reader one schema further, and a schema from the server may
	// nest or chain either without end.
	for hop := 0; ; hop++ {
		lp.take(n, at)
		ref, has := n.ref()
		if !has {
			key, i, branch, ok := n.nullable()
			if !ok || hop >= lintMaxRefHops {
				return lp, true
			}
			inID = inID || (len(n.ID) > 0 && !root)
			n, at, root = branch, at+"/"+key+"/"+strconv.Itoa(i), false
			continue
		}
		// Under a schema's own $id, "#/…" is relative to that schema,
		// not to inputSchema: not followed.
		nested := inID || (len(n.ID) > 0 && !root)
		var (
			ptr    string
			target json.RawMessage
			found  bool
			next   lintNode
		)
		if ref != "" && !nested && hop < lintMaxRefHops {
			ptr, target, found = doc.lookup(ref)
		}
		if !found || seen[ptr] || !lintObject(target) || json.Unmarshal(target, &next) != nil {
			lp.Typed = true
			return lp, true
		}
		seen[ptr] = true
		n, at, root, inID = next, "/inputSchema"+ptr, ptr == "", false
	}
}

// nullable returns the one branch of a nullable wrapper: an anyOf or
// oneOf of a single schema and {"type": "null"} branches, which is how
// Pydantic writes Optional[X] ({"anyOf": [{"$ref": "#/$defs/X"},
// {"type": "null"}]}). A model reads that branch as the parameter, so the
// lint does too. Any other composition is not entered: a union of two
// schemas or more is described, if at all, beside it (a description in
// one branch says what that branch is, not the parameter), and a shape
// the lint cannot read for sure (both keywords, a branch that is not an
// object) is left as the composition it is, still typed.
func (n lintNode) nullable() (key string, i int, branch lintNode, ok bool) {
	key, raw := "anyOf", n.AnyOf
	if len(n.OneOf) > 0 {
		if len(raw) > 0 {
			return "", 0, lintNode{}, false
		}
		key, raw = "oneOf", n.OneOf
	}
	raw = bytes.TrimSpace(raw)
	var bs []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &bs) != nil {
		return "", 0, lintNode{}, false
	}
	i = -1
	for j, b := range bs {
		var bn lintNode
		if !lintObject(b) || json.Unmarshal(b, &bn) != nil {
			return "", 0, lintNode{}, false
		}
		if bn.null() {
			continue
		}
		if i >= 0 {
			return "", 0, lintNode{}, false
		}
		i, branch = j, bn
	}
	return key, i, branch, i >= 0
}

// null reports a branch that admits only null, with annotations at most:
// {"type": "null"}, {"type": ["null"]}, {"const": null} or {"enum":
// [null]} (zod and some generators write the last two), or several of
// them agreeing. A branch that also names or composes a schema is read as
// one more schema, which makes the wrapper a union.
func (n lintNode) null() bool {
	if _, hasRef := n.ref(); hasRef || len(n.AnyOf)+len(n.OneOf)+len(n.AllOf) > 0 {
		return false
	}
	var types []string
	var t string
	switch {
	case len(n.Type) == 0:
	case json.Unmarshal(n.Type, &t) == nil:
		types = []string{t}
	case json.Unmarshal(n.Type, &types) != nil:
		return false
	}
	typeNull := len(types) > 0
	for _, t := range types {
		typeNull = typeNull && t == "null"
	}
	constNull := string(bytes.TrimSpace(n.Const)) == "null"
	enumNull := len(n.Enum) > 0
	for _, e := range n.Enum {
		enumNull = enumNull && string(bytes.TrimSpace(e)) == "null"
	}
	return (typeNull || constNull || enumNull) &&
		(len(n.Type) == 0 || typeNull) && (len(n.Const) == 0 || constNull) && (len(n.Enum) == 0 || enumNull)
}

// take adds what node n at (a pointer into the tool) says to what the
// nodes before it in the chain said. The nearest node wins: a description
// or enum beside a $ref refines the schema it names (JSON Schema 2020-12
// applies both), and it is the one the author wrote for this parameter.
func (lp *lintParam) take(n lintNode, at string) {
	if strings.TrimSpace(n.Description) != "" {
		if strings.TrimSpace(lp.Description) == "" {
			lp.Description = n.Description
		}
		// LINT-4 reads every description on the way: the definition
		// may explain its codes while the property says what it is for.
		if lp.Explains != "" {
			lp.Explains += "\n"
		}
		lp.Explains += n.Description
	}
	if lp.Enum == nil && len(n.Enum) > 0 {
		lp.EnumAt = at + "/enum"
		for _, e := range n.Enum {
			var s string
			if json.Unmarshal(e, &s) != nil {
				s = string(e)
			}
			lp.Enum = append(lp.Enum, s)
		}
	}
	if n.shaped() {
		lp.Typed = true
	}
}

// lintObject reports whether raw is a JSON object (a null would decode as
// an empty one).
func lintObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// lintSchemaDoc resolves same-document references in one inputSchema. It
// decodes a container (object or array) the first time a pointer passes
// through it and keeps its members by pointer, so a tool whose hundred
// parameters each name a definition decodes $defs once, not a hundred
// times; the work is bounded by the schema's size times
// lintMaxPointerTokens.
type lintSchemaDoc struct {
	root  json.RawMessage
	nodes map[string]json.RawMessage // escaped JSON pointer → value
	open  map[string]bool            // containers already decoded
}

// lookup resolves ref, a URI fragment holding a JSON pointer ("#",
// "#/$defs/a~1b", "#/definitions/caf%C3%A9"), to the value it names and
// the canonical (escaped) pointer to it. Percent-decoding comes first, as
// RFC 6901 §6 has it for pointers in fragments; then "~1" and "~0".
func (d *lintSchemaDoc) lookup(ref string) (ptr string, v json.RawMessage, ok bool) {
	frag, isFrag := strings.CutPrefix(ref, "#")
	if !isFrag {
		return "", nil, false // another document: never fetched
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return "", nil, false
	}
	if frag == "" {
		return "", d.root, true
	}
	if !strings.HasPrefix(frag, "/") {
		return "", nil, false // an $anchor name
	}
	toks := strings.Split(frag[1:], "/")
	if len(toks) > lintMaxPointerTokens {
		return "", nil, false
	}
	cur := d.root
	for _, tok := range toks {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(tok, "~0", ""), "~1", ""), "~") {
			return "", nil, false // "~" escapes only "0" and "1"
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if !d.open[ptr] {
			d.decode(ptr, cur)
		}
		next := ptr + "/" + lintPtr(tok)
		if cur, ok = d.nodes[next]; !ok {
			return "", nil, false
		}
		ptr = next
	}
	return ptr, cur, true
}

// decode keeps the members of the container at ptr; a scalar has none.
// Array members are kept under their index in decimal, so "01" or "-"
// names nothing (RFC 6901 §4).
func (d *lintSchemaDoc) decode(ptr string, v json.RawMessage) {
	if d.open == nil {
		d.open, d.nodes = map[string]bool{}, map[string]json.RawMessage{}
	}
	d.open[ptr] = true
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return
	}
	switch v[0] {
	case '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(v, &m) == nil {
			for k, x := range m {
				d.nodes[ptr+"/"+lintPtr(k)] = x
			}
		}
	case '[':
		var a []json.RawMessage
		if json.Unmarshal(v, &a) == nil {
			for i, x := range a {
				d.nodes[ptr+"/"+strconv.Itoa(i)] = x
			}
		}
	}
}
