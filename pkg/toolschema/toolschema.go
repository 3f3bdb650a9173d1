// Package toolschema reads a tool's inputSchema the way a model reads it:
// each parameter's description, type, enum and bounds, through the local
// $refs and nullable wrappers that schema generators emit (Pydantic's
// {"$ref": "#/$defs/X"} and Optional[X], zod's nullable). The Layer 0 lint
// and the Layer 1 lexical baseline both read parameters here, so what one
// calls a described parameter the other reads as described.
//
// A reference that cannot be followed (another document, an $anchor, a
// missing target, a loop) is read as the $ref alone: it says the value
// has a shape. Whether the reference itself is broken is for schema
// validation to say, not for a reader.
package toolschema

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonpointer"
)

const (
	// MaxHops bounds a chain of references and nullable wrappers from one
	// parameter; a schema from the server under test may chain them
	// without end.
	MaxHops = 16
	// MaxPointerTokens bounds the reference tokens of one pointer: each
	// token may decode one more container of the schema.
	MaxPointerTokens = jsonpointer.MaxTokens
)

// Param is what a reader takes from one property of an inputSchema. Where
// the chain from the property to the schema it finally names says a thing
// twice, the nearest node wins: a description or enum beside a $ref
// refines the schema it names (JSON Schema 2020-12 applies both), and it
// is the one the author wrote for this parameter.
type Param struct {
	Name string
	// Description is the nearest non-blank one.
	Description string
	// Explains is every non-blank description on the way, nearest first,
	// one a line: a definition may explain its codes while the property
	// says what it is for.
	Explains string
	// Enum is the nearest enum's members, as JSON; EnumAt is where it
	// is, a pointer into the tool object.
	Enum   []json.RawMessage
	EnumAt string
	// Type is the nearest type; of a list of types, the first that is
	// not "null".
	Type            string
	Pattern, Format string
	Min, Max        *float64
	// Typed: the schema says the value's shape (type, enum, const,
	// format or a composition), or it makes a $ref that cannot be
	// followed.
	Typed bool
}

// EnumText is the enum's members as text: a string as itself, any other
// value as its JSON.
func (p Param) EnumText() []string {
	var out []string
	for _, e := range p.Enum {
		var s string
		if json.Unmarshal(e, &s) != nil {
			s = string(e)
		}
		out = append(out, s)
	}
	return out
}

// node is what is read of one schema object on the way.
type node struct {
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	Type        json.RawMessage   `json:"type"`
	Const       json.RawMessage   `json:"const"`
	Format      string            `json:"format"`
	// Read when they are what they should be and ignored otherwise: a
	// reader that gave up on a property for an odd bound would lose its
	// description too.
	Pattern json.RawMessage `json:"pattern"`
	Minimum json.RawMessage `json:"minimum"`
	Maximum json.RawMessage `json:"maximum"`
	Ref     json.RawMessage `json:"$ref"`
	ID      json.RawMessage `json:"$id"`
	AnyOf   json.RawMessage `json:"anyOf"`
	OneOf   json.RawMessage `json:"oneOf"`
	AllOf   json.RawMessage `json:"allOf"`
}

// shaped reports whether the node itself says the value's shape.
func (n node) shaped() bool {
	return len(n.Type) > 0 || len(n.Enum) > 0 || len(n.Const) > 0 || n.Format != "" || len(n.AnyOf)+len(n.OneOf)+len(n.AllOf) > 0
}

// ref is the node's $ref when it is a non-empty string, and whether it has
// one at all: a $ref of another JSON type is still one that cannot be
// followed, and an empty or null one none.
func (n node) ref() (ref string, has bool) {
	if len(n.Ref) == 0 || string(n.Ref) == "null" {
		return "", false
	}
	if json.Unmarshal(n.Ref, &ref) != nil {
		return "", true
	}
	return ref, ref != ""
}

// types is the node's type as a list; ok is false when it is neither a
// string nor a list of strings.
func (n node) types() (ts []string, ok bool) {
	if len(n.Type) == 0 {
		return nil, true
	}
	var t string
	if json.Unmarshal(n.Type, &t) == nil {
		return []string{t}, true
	}
	return ts, json.Unmarshal(n.Type, &ts) == nil
}

// Doc is one inputSchema, for reading its parameters. It decodes a
// container (object or array) the first time a pointer passes through it
// and keeps its members by pointer, so a tool whose hundred parameters
// each name a definition decodes $defs once, not a hundred times; the
// work is bounded by the schema's size times MaxPointerTokens.
type Doc struct {
	root  json.RawMessage
	nodes map[string]json.RawMessage // escaped JSON pointer → value
	open  map[string]bool            // containers already decoded
}

// NewDoc reads the inputSchema whose text is root.
func NewDoc(root json.RawMessage) *Doc { return &Doc{root: root} }

// Param reads the property name, whose schema is raw. ok is false when
// the property is not a schema object (a null property reads as one that
// says nothing).
func (d *Doc) Param(name string, raw json.RawMessage) (p Param, ok bool) {
	var n node
	if json.Unmarshal(raw, &n) != nil {
		return p, false
	}
	p.Name = name
	at, root := "/inputSchema/properties/"+jsonpointer.Escape(name), false
	// inID: n sits inside a schema with its own $id (a nullable wrapper
	// of one), so its "#/…" is relative to that schema too.
	inID := false
	seen := map[string]bool{}
	// A hop is a $ref followed or a nullable wrapper entered: both take
	// the reader one schema further, and either may nest or chain
	// without end.
	for hop := 0; ; hop++ {
		p.take(n, at)
		ref, has := n.ref()
		if !has {
			key, i, branch, ok := n.nullable()
			if !ok || hop >= MaxHops {
				return p, true
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
			next   node
		)
		if ref != "" && !nested && hop < MaxHops {
			ptr, target, found = d.Lookup(ref)
		}
		if !found || seen[ptr] || !isObject(target) || json.Unmarshal(target, &next) != nil {
			p.Typed = true
			return p, true
		}
		seen[ptr] = true
		n, at, root, inID = next, "/inputSchema"+ptr, ptr == "", false
	}
}

// nullable returns the one branch of a nullable wrapper: an anyOf or
// oneOf of a single schema and branches that admit only null, which is
// how Pydantic writes Optional[X] ({"anyOf": [{"$ref": "#/$defs/X"},
// {"type": "null"}]}). A model reads that branch as the parameter. Any
// other composition is not entered: a union of two schemas or more is
// described, if at all, beside it (a description in one branch says what
// that branch is, not the parameter), and a shape that cannot be read for
// sure (both keywords, a branch that is not an object) is left as the
// composition it is, still typed.
func (n node) nullable() (key string, i int, branch node, ok bool) {
	key, raw := "anyOf", n.AnyOf
	if len(n.OneOf) > 0 {
		if len(raw) > 0 {
			return "", 0, node{}, false
		}
		key, raw = "oneOf", n.OneOf
	}
	raw = bytes.TrimSpace(raw)
	var bs []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &bs) != nil {
		return "", 0, node{}, false
	}
	i = -1
	for j, b := range bs {
		var bn node
		if !isObject(b) || json.Unmarshal(b, &bn) != nil {
			return "", 0, node{}, false
		}
		if bn.null() {
			continue
		}
		if i >= 0 {
			return "", 0, node{}, false
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
func (n node) null() bool {
	if _, hasRef := n.ref(); hasRef || len(n.AnyOf)+len(n.OneOf)+len(n.AllOf) > 0 {
		return false
	}
	types, ok := n.types()
	if !ok {
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
// nodes before it in the chain said; the nearest node wins.
func (p *Param) take(n node, at string) {
	if strings.TrimSpace(n.Description) != "" {
		if strings.TrimSpace(p.Description) == "" {
			p.Description = n.Description
		}
		if p.Explains != "" {
			p.Explains += "\n"
		}
		p.Explains += n.Description
	}
	if p.Enum == nil && len(n.Enum) > 0 {
		p.Enum, p.EnumAt = n.Enum, at+"/enum"
	}
	if p.Type == "" {
		if ts, _ := n.types(); len(ts) > 0 {
			for _, t := range ts {
				if t != "null" {
					p.Type = t
					break
				}
			}
		}
	}
	if p.Pattern == "" {
		_ = json.Unmarshal(n.Pattern, &p.Pattern)
	}
	if p.Format == "" {
		p.Format = n.Format
	}
	if p.Min == nil {
		p.Min = number(n.Minimum)
	}
	if p.Max == nil {
		p.Max = number(n.Maximum)
	}
	if n.shaped() {
		p.Typed = true
	}
}

// number is raw when it is a JSON number.
func number(raw json.RawMessage) *float64 {
	var f float64
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" || json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return &f
}

// isObject reports whether raw is a JSON object (a null would decode as
// an empty one).
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// Lookup resolves ref, a URI fragment holding a JSON pointer ("#",
// "#/$defs/a~1b", "#/definitions/caf%C3%A9"), to the value it names and
// the canonical (escaped) pointer to it. Percent-decoding comes first, as
// RFC 6901 §6 has it for pointers in fragments; then "~1" and "~0".
// Another document or an $anchor name is never looked up.
func (d *Doc) Lookup(ref string) (ptr string, v json.RawMessage, ok bool) {
	toks, ok := jsonpointer.Tokens(ref)
	if !ok {
		return "", nil, false
	}
	cur := d.root
	for _, tok := range toks {
		if !d.open[ptr] {
			d.decode(ptr, cur)
		}
		next := ptr + "/" + jsonpointer.Escape(tok)
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
func (d *Doc) decode(ptr string, v json.RawMessage) {
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
				d.nodes[ptr+"/"+jsonpointer.Escape(k)] = x
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
