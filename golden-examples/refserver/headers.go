package refserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Streamable HTTP request metadata headers (streamable-http.mdx §Request Metadata).
const (
	headerProtocolVersion = "MCP-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerParamPrefix     = "Mcp-Param-"
	base64Prefix          = "=?base64?"
	base64Suffix          = "?="
)

func headerMismatch(format string, args ...any) *Error {
	// HDR-6: -32020 defines no data.
	return errorf(CodeHeaderMismatch, "Header mismatch: "+format, args...)
}

// singleHeader returns the one value of a header; net/http matches names
// case-insensitively (HDR-3). Repeating a metadata header is ambiguous, so
// it is rejected like a mismatch.
func singleHeader(h http.Header, name string) (value string, present bool, err *Error) {
	values := h.Values(name)
	switch len(values) {
	case 0:
		return "", false, nil
	case 1:
		return strings.Trim(values[0], " \t"), true, nil
	}
	return "", true, headerMismatch("%s header appears %d times", name, len(values))
}

// checkEarlyHeaders runs the header checks that need only the raw message:
// MCP-Protocol-Version presence (HDR-1) and Mcp-Method (HDR-3). They come
// before the envelope checks so that a legacy-style initialize, which has
// neither the headers nor _meta, is rejected by header validation (REM-2).
func checkEarlyHeaders(h http.Header, msg *Message) *Error {
	if _, ok, err := singleHeader(h, headerProtocolVersion); err != nil {
		return err
	} else if !ok {
		return headerMismatch("missing required %s header", headerProtocolVersion)
	}
	method, ok, err := singleHeader(h, headerMethod)
	if err != nil {
		return err
	}
	if !ok {
		return headerMismatch("missing required %s header", headerMethod)
	}
	if method != msg.Method { // values are case-sensitive
		return headerMismatch("%s header value '%s' does not match body value '%s'", headerMethod, truncate(method, 128), truncate(msg.Method, 128))
	}
	return nil
}

// checkRequestHeaders runs the checks that need the parsed request: the
// version header equals _meta protocolVersion (HDR-2), Mcp-Name mirrors
// params.name / params.uri (HDR-4), and Mcp-Param-* mirrors x-mcp-header
// arguments (HDR-5).
func (s *Server) checkRequestHeaders(h http.Header, r *request) *Error {
	version, _, _ := singleHeader(h, headerProtocolVersion)
	if version != r.meta.version {
		return headerMismatch("%s header value '%s' does not match body value '%s'", headerProtocolVersion, truncate(version, 64), truncate(r.meta.version, 64))
	}
	if err := s.versionCheck(r.method, r.meta.version); err != nil {
		return err
	}
	field := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}[r.method]
	if field == "" {
		return nil
	}
	raw, present, err := singleHeader(h, headerName)
	if err != nil {
		return err
	}
	if !present {
		return headerMismatch("missing required %s header for %s", headerName, r.method)
	}
	name, derr := decodeHeaderValue(raw)
	if derr != nil {
		return headerMismatch("%s header %v", headerName, derr)
	}
	bodyValue, ok, perr := r.stringParam(field)
	if perr != nil || !ok {
		return perr // a missing or non-string body value is the handler's -32602
	}
	if name != bodyValue {
		return headerMismatch("%s header value '%s' does not match body value '%s'", headerName, truncate(name, 128), truncate(bodyValue, 128))
	}
	if r.method == "tools/call" {
		if t, ok := s.toolByName[bodyValue]; ok {
			return checkParamHeaders(h, r, t)
		}
	}
	return nil
}

// checkParamHeaders enforces HDR-5 for each x-mcp-header property of the
// called tool: a value in the arguments needs a matching header; an absent
// or null value expects no header, so a header sent anyway disagrees with
// the body and is rejected too.
func checkParamHeaders(h http.Header, r *request, t *tool) *Error {
	if len(t.headers) == 0 {
		return nil
	}
	var args map[string]any
	if raw, ok := r.params["arguments"]; ok {
		v, _ := decodeJSON(raw)
		args, _ = v.(map[string]any)
	}
	for _, ph := range t.headers {
		name := headerParamPrefix + ph.header
		raw, present, err := singleHeader(h, name)
		if err != nil {
			return err
		}
		value, hasValue := lookupPath(args, ph.path)
		if !hasValue || value == nil {
			if present {
				return headerMismatch("%s header is present but arguments.%s is absent", name, strings.Join(ph.path, "."))
			}
			continue
		}
		if !present {
			return headerMismatch("missing required %s header for arguments.%s", name, strings.Join(ph.path, "."))
		}
		decoded, derr := decodeHeaderValue(raw)
		if derr != nil {
			return headerMismatch("%s header %v", name, derr)
		}
		if !headerMatches(decoded, value) {
			return headerMismatch("%s header value '%s' does not match body value '%s'", name, truncate(decoded, 128), truncate(compactJSON(value), 128))
		}
	}
	return nil
}

func lookupPath(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, key := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// headerMatches compares a decoded header value with the argument value by
// the argument's JSON type: strings exactly, integers numerically ("42.0"
// equals 42), booleans as lowercase true/false (streamable-http.mdx §Value
// Encoding).
func headerMatches(header string, value any) bool {
	switch v := value.(type) {
	case string:
		return header == v
	case bool:
		return header == strconv.FormatBool(v)
	case json.Number:
		want, err1 := v.Float64()
		got, err2 := strconv.ParseFloat(header, 64)
		return err1 == nil && err2 == nil && got == want
	}
	return false // objects and arrays cannot be mirrored into a header
}

// decodeHeaderValue checks a Mcp-Name / Mcp-Param-* value for characters
// outside visible ASCII, space and tab, and decodes the =?base64?…?= sentinel
// (case-sensitive markers) into UTF-8 text.
func decodeHeaderValue(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return "", fmt.Errorf("contains an invalid character (byte 0x%02x); non-ASCII values must use the %s…%s encoding", c, base64Prefix, base64Suffix)
		}
	}
	if len(v) < len(base64Prefix)+len(base64Suffix) || !strings.HasPrefix(v, base64Prefix) || !strings.HasSuffix(v, base64Suffix) {
		return v, nil
	}
	enc := v[len(base64Prefix) : len(v)-len(base64Suffix)]
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		// Be lenient about missing padding only; any other defect is invalid.
		if b, err = base64.RawStdEncoding.DecodeString(enc); err != nil {
			return "", fmt.Errorf("has invalid base64 inside %s…%s", base64Prefix, base64Suffix)
		}
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("decodes to invalid UTF-8")
	}
	return string(b), nil
}
