package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// HashPrefix starts every hash in a report, naming the algorithm.
const HashPrefix = "sha256:"

// ToolSurface is what a model sees of one tool, as the server sent it.
// Producers fill it from their own tool type (mcpclient.ToolSurfaces);
// Annotations are the hints as raw JSON, so hints no client type knows
// still count.
type ToolSurface struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  json.RawMessage
}

// ToolSurfaceHash is the SHA-256 of what a model sees of a server's tools:
// each tool's name, description, input and output schema and annotations,
// as canonical JSON (CanonicalJSON) of an array sorted by name. Titles are
// left out (clients show them to people, not to models), as is anything the
// server adds that a model does not read. Two servers whose tools differ
// only in key order or whitespace hash alike.
func ToolSurfaceHash(tools []ToolSurface) string {
	type surface struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
		Annotations  json.RawMessage `json:"annotations,omitempty"`
	}
	items := make([][]byte, 0, len(tools))
	for _, t := range tools {
		s := surface{Name: t.Name, Description: t.Description, InputSchema: validOrNil(t.InputSchema), OutputSchema: validOrNil(t.OutputSchema), Annotations: validOrNil(t.Annotations)}
		b, err := CanonicalJSON(s)
		if err != nil {
			// Valid JSON that has no canonical form (a number beyond
			// float64, from a hostile server): its parts are hashed by
			// their bytes, as JSON strings, so the hash stays stable and
			// still changes when they do.
			s.InputSchema, s.OutputSchema, s.Annotations = asString(s.InputSchema), asString(s.OutputSchema), asString(s.Annotations)
			b, err = CanonicalJSON(s)
		}
		if err != nil {
			// Unreachable: names, descriptions and strings always have a
			// canonical form.
			panic(fmt.Sprintf("report: canonicalising tool %q: %v", t.Name, err))
		}
		items = append(items, b)
	}
	// Sorting the canonical bytes orders by name first (the first key) and
	// keeps duplicate names deterministic too.
	sort.Slice(items, func(i, j int) bool { return bytes.Compare(items[i], items[j]) < 0 })
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, b := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	return sha(buf.Bytes())
}

// asString is raw JSON as a JSON string of its bytes.
func asString(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	s, _ := json.Marshal(string(b))
	return s
}

// validOrNil keeps a schema only if it parses: a server sending broken JSON
// still gets a stable hash, with the broken part absent.
func validOrNil(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || string(b) == "null" || !json.Valid(b) {
		return nil
	}
	return b
}

// Hash is the SHA-256 of v's canonical JSON, as "sha256:<hex>": the hash of
// a golden case, a rubric or a golden set.
func Hash(v any) (string, error) {
	b, err := CanonicalJSON(v)
	if err != nil {
		return "", err
	}
	return sha(b), nil
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return HashPrefix + hex.EncodeToString(sum[:])
}

// CanonicalJSON encodes v so that equal data gives equal bytes: object keys
// sorted, no insignificant whitespace, no HTML escaping, and numbers in one
// form (integers without a fraction, others in Go's shortest round-trip
// form), so 1, 1.0 and 1e0 agree.
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	var buf bytes.Buffer
	if err := writeCanonical(&buf, tree); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeCanonical(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeCanonical(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case string:
		writeString(buf, x)
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("canonical JSON: number %s is out of range", x)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			buf.WriteString(strconv.FormatInt(int64(f), 10))
		} else {
			buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case nil:
		buf.WriteString("null")
	default:
		return fmt.Errorf("canonical JSON: unexpected %T", v)
	}
	return nil
}

// writeString escapes like encoding/json but leaves <, > and & alone: the
// bytes are hashed, not embedded in HTML.
func writeString(buf *bytes.Buffer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	buf.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
