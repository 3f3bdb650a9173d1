package poison

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonpointer"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// located is one string of a tool and where it is.
type located struct {
	where string
	text  string
}

// toolStrings returns every string of the tool object as the server sent
// it (Raw), keys included: a model reads property names, enum values and
// defaults as readily as the description, and _meta or unknown fields
// reach some hosts' prompts too. Top-level fields are named plainly
// (description), deeper ones by JSON pointer (inputSchema/properties/q).
func toolStrings(t mcpclient.Tool) []located {
	raw := t.Raw
	if len(raw) == 0 {
		raw, _ = json.Marshal(t)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		// Not JSON (a hand-built Tool): scan the typed fields.
		return []located{{"name", t.Name}, {"title", t.Title}, {"description", t.Description}}
	}
	var out []located
	walk(v, "", 0, &out)
	return out
}

func walk(v any, path string, depth int, out *[]located) {
	if depth > maxDepth || len(*out) >= maxStrings {
		return
	}
	switch x := v.(type) {
	case string:
		*out = append(*out, located{where: label(path), text: x})
	case []any:
		for i, e := range x {
			walk(e, path+"/"+strconv.Itoa(i), depth+1, out)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path + "/" + escapePointer(k)
			if len(*out) < maxStrings && needsKeyScan(k) {
				*out = append(*out, located{where: label(p) + " (key)", text: k})
			}
			walk(x[k], p, depth+1, out)
		}
	}
}

// needsKeyScan skips the keys every tool has, which cannot be poisoned.
func needsKeyScan(k string) bool {
	switch k {
	case "name", "title", "description", "inputSchema", "outputSchema", "annotations", "type", "properties",
		"required", "items", "enum", "default", "_meta", "additionalProperties", "readOnlyHint", "destructiveHint",
		"idempotentHint", "openWorldHint", "$schema", "icons", "format", "minimum", "maximum", "examples":
		return false
	}
	return true
}

// label turns a JSON pointer into a field name: "/description" is
// "description", deeper paths keep their slashes without the first.
func label(p string) string { return strings.TrimPrefix(p, "/") }

// escapePointer escapes a key as a JSON pointer token (RFC 6901).
func escapePointer(k string) string { return jsonpointer.Escape(k) }
