package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// decode is jsonrpc.Decode plus the one thing the decoder lets through that
// a harness must not: duplicate object keys. Parsers disagree on which of
// two "id" (or "tools") members wins, so a server sending them could show
// the harness one message and a client another; the message is ambiguous
// and treated as malformed.
func decode(b []byte) (*jsonrpc.Message, error) {
	m, err := jsonrpc.Decode(b)
	if err != nil {
		return nil, err
	}
	if key, dup := duplicateKey(b); dup {
		return nil, fmt.Errorf("ambiguous JSON: the key %q appears twice in one object", jsonrpc.Clip(sanitize(key), 60))
	}
	return m, nil
}

// duplicateKey reports the first key that appears twice in one object of
// b, which must be valid JSON. One pass, no recursion: the nesting depth of
// b cannot grow the Go stack. It allocates next to nothing: every line of
// the run passes here, a 370 KB tools/list page with some 20,000 keys.
func duplicateKey(b []byte) (string, bool) {
	type frame struct {
		obj       bool
		expectKey bool
		// from: where this object's keys begin in seen, while there are
		// few; then keys holds them as a set.
		from int
		keys map[string]struct{}
	}
	var stack []frame
	// seen holds the keys of the open objects, innermost last (slices of
	// b but for escaped keys): an object's end drops its keys.
	var seen [][]byte
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{':
			stack = append(stack, frame{obj: true, expectKey: true, from: len(seen)})
		case '[':
			stack = append(stack, frame{from: len(seen)})
		case '}', ']':
			if n := len(stack); n > 0 {
				seen = seen[:stack[n-1].from]
				stack = stack[:n-1]
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].expectKey = true
			}
		case ':':
			if n := len(stack); n > 0 {
				stack[n-1].expectKey = false
			}
		case '"':
			end, escaped := stringEnd(b, i)
			if end <= i {
				// A string b ends inside (b is not the valid JSON the
				// caller promised): no key to read.
				return "", false
			}
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].expectKey {
				key := b[i+1 : end]
				if escaped {
					k := string(key)
					_ = json.Unmarshal(b[i:end+1], &k)
					key = []byte(k)
				}
				f := &stack[n-1]
				if f.keys == nil {
					// Most objects have a handful of keys: a scan beats a
					// map allocation per object.
					for _, k := range seen[f.from:] {
						if bytes.Equal(k, key) {
							return string(key), true
						}
					}
					seen = append(seen, key)
					if len(seen)-f.from > 16 {
						f.keys = map[string]struct{}{}
						for _, k := range seen[f.from:] {
							f.keys[string(k)] = struct{}{}
						}
					}
				} else {
					if _, dup := f.keys[string(key)]; dup {
						return string(key), true
					}
					f.keys[string(key)] = struct{}{}
				}
			}
			i = end
		}
	}
	return "", false
}

// stringEnd returns the index of the quote that closes the string opening
// at b[start], and whether it holds escapes.
func stringEnd(b []byte, start int) (int, bool) {
	escaped := false
	for j := start + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped
		}
	}
	return len(b) - 1, escaped
}

// envelopeID reads the top-level "id" of bytes that did not decode as a
// JSON-RPC message (invalid UTF-8, nesting beyond the decoder's limit, a
// line cut at the size limit), when the rest of the envelope says it is
// meant as a response: a "jsonrpc", "result" or "error" member next to the
// id. Only then can a broken answer be pinned on the request it answers,
// which then fails at once instead of waiting for its deadline. The token
// reader skips values at any depth without recursion.
func envelopeID(b []byte) (json.RawMessage, bool) {
	// Noise lines (a banner, a log line, a flood of them) are turned away
	// before a decoder is allocated for them.
	if t := bytes.TrimLeft(b, " \t"); len(t) == 0 || t[0] != '{' || !bytes.Contains(b, []byte(`"id"`)) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	rpc := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		switch key {
		case "id":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, false
			}
			id = raw
		case "jsonrpc", "result", "error":
			rpc = true
			if id != nil {
				return id, true // the value may be what is broken: never read it
			}
			fallthrough
		default:
			if skipValue(dec) != nil {
				return nil, false
			}
		}
		if id != nil && rpc {
			return id, true
		}
	}
	return nil, false
}

var errNotValue = errors.New("not a value")

// skipValue consumes one JSON value from dec, however deep.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
			if depth < 0 {
				return errNotValue
			}
		}
		if depth == 0 {
			return nil
		}
	}
}
