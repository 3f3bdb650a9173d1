package golden

import (
	"math"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Golden files are untrusted: they come from a pull request. These bound
// what one file can make the loader do.
const (
	// maxDepth bounds the nesting of expect_args and inputs values.
	maxDepth = 32
	// maxNodes bounds the YAML nodes a file may expand to, aliases
	// included (a "billion laughs" file expands exponentially).
	maxNodes = 200_000
)

// pos is where n starts in file.
func pos(file string, n *yaml.Node) Position {
	return Position{File: file, Line: n.Line, Column: n.Column}
}

// deref follows aliases (bounded: an alias chain is short in any real
// file, and yaml.v3 rejects cycles).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// describe names a node's type for messages: "a list", "a number", ….
func describe(n *yaml.Node) string {
	n = deref(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return "a string"
	}
	return "an alias"
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// scalarText returns a string scalar's text. Only strings count (and
// unquoted dates, which are text to a tool): `id: 42` or `tags: [2026]`
// are errors that ask for quotes, as the JSON Schema editors use does.
func scalarText(n *yaml.Node) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	switch n.ShortTag() {
	case "!!str", "!!timestamp":
		return n.Value, true
	}
	return "", false
}

// rawText is a scalar's source text whatever its type, for messages.
func rawText(n *yaml.Node) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

// valueConv turns YAML values into the JSON data model (map[string]any,
// []any, string, int64, float64, bool, nil), within the node budget.
type valueConv struct {
	p     *parser
	nodes int
	// exhausted stops all conversion once the budget is spent, so that a
	// bomb yields one error, not thousands.
	exhausted bool
	// root is the value being converted, where a spent budget is
	// reported (deep inside an alias the position would mislead).
	root *yaml.Node
}

// convert returns n as JSON data; it reports a problem and returns false
// when n cannot be JSON (a non-string key, NaN, a binary blob, too deep).
func (c *valueConv) convert(n *yaml.Node, depth int) (any, bool) {
	if c.exhausted {
		return nil, false
	}
	if depth == 0 {
		c.root = n
	}
	c.nodes++
	if c.nodes > maxNodes {
		c.exhausted = true
		c.p.fail(c.root, "the file expands to more than 200000 YAML nodes", "aliases that repeat large values multiply; write the values out")
		return nil, false
	}
	if depth > maxDepth {
		c.p.fail(n, "value nested more than 32 levels deep", "flatten the value")
		return nil, false
	}
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := deref(n.Content[i]), n.Content[i+1]
			key, isText := scalarText(k)
			if !isText || k.ShortTag() == "!!merge" {
				c.p.fail(k, "mapping key must be a string, got "+describe(k), "quote the key; merge keys (<<) are not supported")
				ok = false
				continue
			}
			if _, dup := out[key]; dup {
				c.p.fail(k, strconv.Quote(key)+" appears twice in this mapping", "keep one")
				ok = false
				continue
			}
			val, vok := c.convert(v, depth+1)
			ok = ok && vok
			out[key] = val
		}
		return out, ok
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		ok := true
		for _, e := range n.Content {
			val, vok := c.convert(e, depth+1)
			ok = ok && vok
			out = append(out, val)
		}
		return out, ok
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	c.p.fail(n, "unsupported YAML value", "")
	return nil, false
}

func (c *valueConv) scalar(n *yaml.Node) (any, bool) {
	switch n.ShortTag() {
	case "!!null":
		return nil, true
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			c.p.fail(n, "not a boolean: "+strconv.Quote(n.Value), "write true or false")
			return nil, false
		}
		return b, true
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, true
		}
		fallthrough // beyond int64: keep it as a number, like JSON would
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			c.p.fail(n, "not a finite number: "+strconv.Quote(n.Value), "JSON has no NaN or infinity; quote it if it is text")
			return nil, false
		}
		return f, true
	case "!!str", "!!timestamp":
		// An unquoted date is text to the tool: keep what was written.
		return n.Value, true
	}
	c.p.fail(n, "unsupported YAML tag "+n.ShortTag(), "use plain strings, numbers, booleans, lists and mappings")
	return nil, false
}
