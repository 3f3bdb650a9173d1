package mcpclient

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
)

// EncodeHeaderValue applies streamable-http.mdx §Value Encoding: a value that
// is not safe as a plain header value (non-ASCII, control characters,
// leading or trailing whitespace) or that looks like the sentinel itself is
// sent as =?base64?…?=.
func EncodeHeaderValue(v string) string {
	if headerSafe(v) && !(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=")) {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

func headerSafe(v string) bool {
	if v != strings.Trim(v, " \t") {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

// DecodeHeaderValue reverses EncodeHeaderValue; ok is false for a sentinel
// whose base64 is invalid.
func DecodeHeaderValue(v string) (string, bool) {
	v = strings.Trim(v, " \t")
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil {
			return "", false
		}
		return string(b), true
	}
	return v, true
}

// HeaderParam is one x-mcp-header declaration of a tool's inputSchema.
type HeaderParam struct {
	Header string   // the X of Mcp-Param-X
	Path   []string // property names from the root of the arguments
	Type   string   // "string", "integer" or "boolean"
}

// rfc9110Token is the token grammar a header name must follow (TOOL-6).
var rfc9110Token = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// HeaderParams finds a tool's x-mcp-header declarations and checks them
// against every rule of TOOL-6 (streamable-http.mdx §Schema Extension). A
// non-nil error means the tool definition is invalid and a client MUST NOT
// use the tool; it names the first broken rule.
func HeaderParams(inputSchema json.RawMessage) ([]HeaderParam, error) {
	if len(bytes.TrimSpace(inputSchema)) == 0 {
		return nil, nil
	}
	// Most schemas declare nothing: without the key (or a \u escape that
	// could spell it) there is nothing to find, and a hostile 4 MiB schema
	// of 100,000 subschemas is not decoded into maps on every tools/list.
	if !bytes.Contains(inputSchema, []byte("x-mcp-header")) && !bytes.Contains(inputSchema, []byte(`\u`)) {
		return nil, nil
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(inputSchema))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("inputSchema is not JSON: %w", err)
	}
	var params []HeaderParam
	seen := map[string]string{}
	var walk func(node any, path []string, viaProps bool, where string) error
	walk = func(node any, path []string, viaProps bool, where string) error {
		switch n := node.(type) {
		case []any:
			for i, v := range n {
				if err := walk(v, path, false, fmt.Sprintf("%s/%d", where, i)); err != nil {
					return err
				}
			}
		case map[string]any:
			if raw, ok := n["x-mcp-header"]; ok {
				if !viaProps || len(path) == 0 {
					return fmt.Errorf("x-mcp-header at %s is not on a property reached only through \"properties\"", where)
				}
				name, ok := raw.(string)
				if !ok || name == "" {
					return fmt.Errorf("x-mcp-header of property %q is empty or not a string", strings.Join(path, "."))
				}
				if !rfc9110Token.MatchString(name) {
					return fmt.Errorf("x-mcp-header %q of property %q is not an RFC 9110 token", name, strings.Join(path, "."))
				}
				if prev, dup := seen[strings.ToLower(name)]; dup {
					return fmt.Errorf("x-mcp-header %q is declared twice (properties %q and %q; names are case-insensitive)", name, prev, strings.Join(path, "."))
				}
				typ, err := headerType(n["type"])
				if err != nil {
					return fmt.Errorf("x-mcp-header %q on property %q: %v", name, strings.Join(path, "."), err)
				}
				seen[strings.ToLower(name)] = strings.Join(path, ".")
				params = append(params, HeaderParam{Header: name, Path: append([]string(nil), path...), Type: typ})
			}
			keys := make([]string, 0, len(n))
			for k := range n {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				v := n[k]
				if k == "properties" {
					if props, ok := v.(map[string]any); ok {
						pkeys := make([]string, 0, len(props))
						for pk := range props {
							pkeys = append(pkeys, pk)
						}
						sort.Strings(pkeys)
						for _, pk := range pkeys {
							if err := walk(props[pk], append(path, pk), viaProps, where+"/properties/"+pk); err != nil {
								return err
							}
						}
						continue
					}
				}
				if k == "x-mcp-header" {
					continue
				}
				if err := walk(v, path, false, where+"/"+k); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true, "#"); err != nil {
		return nil, err
	}
	return params, nil
}

// headerType accepts "string", "integer" or "boolean", alone or with "null";
// "number" is excluded by the spec because its text form is ambiguous.
func headerType(t any) (string, error) {
	switch v := t.(type) {
	case string:
		if v == "string" || v == "integer" || v == "boolean" {
			return v, nil
		}
		return "", fmt.Errorf("type %q is not allowed (only string, integer or boolean)", v)
	case []any:
		var found string
		for _, e := range v {
			s, _ := e.(string)
			if s == "null" {
				continue
			}
			if found != "" || (s != "string" && s != "integer" && s != "boolean") {
				return "", fmt.Errorf("type %v is not one of string, integer or boolean", v)
			}
			found = s
		}
		if found != "" {
			return found, nil
		}
	}
	return "", fmt.Errorf("property has no type of string, integer or boolean")
}

// paramHeaders returns the Mcp-Param-* headers for a call with args.
func paramHeaders(params []HeaderParam, args json.RawMessage) (http.Header, error) {
	if len(params) == 0 {
		return nil, nil
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, nil
	}
	h := http.Header{}
	for _, p := range params {
		var v any = root
		for _, k := range p.Path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[k]
		}
		var s string
		switch x := v.(type) {
		case nil:
			continue // absent or null: no header (HDR-5)
		case string:
			s = x
		case bool:
			s = fmt.Sprint(x)
		case json.Number:
			if i, err := x.Int64(); err == nil {
				s = fmt.Sprint(i)
			} else if f, err := x.Float64(); err == nil && f == float64(int64(f)) {
				s = fmt.Sprint(int64(f))
			} else {
				return nil, fmt.Errorf("argument %q for header %s is not an integer: %s", strings.Join(p.Path, "."), p.Header, x)
			}
		default:
			return nil, fmt.Errorf("argument %q for header %s is not a %s", strings.Join(p.Path, "."), p.Header, p.Type)
		}
		h.Set(HeaderParamPrefix+p.Header, EncodeHeaderValue(s))
	}
	return h, nil
}
