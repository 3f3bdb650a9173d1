// Package jsonrpc holds the JSON-RPC 2.0 message shape MCP uses, kept close to
// the bytes: ids, params, results and error data stay json.RawMessage so that a
// conformance check can see exactly what the server sent (a string id stays a
// string, RPC-1) instead of what a typed decoder made of it.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Version is the only value the "jsonrpc" member may take.
const Version = "2.0"

// Error codes. The first five are JSON-RPC 2.0's; the last three are the ones
// MCP 2026-07-28 defines in its reserved range (basic/index.mdx §Error Codes).
const (
	CodeParseError                      = -32700
	CodeInvalidRequest                  = -32600
	CodeMethodNotFound                  = -32601
	CodeInvalidParams                   = -32602
	CodeInternalError                   = -32603
	CodeHeaderMismatch                  = -32020
	CodeMissingRequiredClientCapability = -32021
	CodeUnsupportedProtocolVersion      = -32022
)

// Message is any JSON-RPC message. Which of request, notification, response or
// error response it is follows from which members are present; see Kind.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Kind classifies a message by its members.
type Kind int

const (
	KindInvalid Kind = iota
	KindRequest
	KindNotification
	KindResponse
)

func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	case KindResponse:
		return "response"
	}
	return "invalid"
}

// Kind reports what m is. A message with both result and error, or with a
// method and a result, is invalid.
func (m *Message) Kind() Kind {
	hasID := len(m.ID) > 0
	switch {
	case m.Method != "" && m.Result == nil && m.Error == nil:
		if hasID {
			return KindRequest
		}
		return KindNotification
	case m.Method == "" && (m.Result != nil) != (m.Error != nil):
		return KindResponse
	}
	return KindInvalid
}

// Error is a JSON-RPC error object. It is also a Go error so that a client can
// return a server's error as is.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("server returned JSON-RPC error %d: %s", e.Code, Clip(e.Message, 200))
}

// CodeName names the codes MCP and JSON-RPC define, for messages and reports.
func CodeName(code int64) string {
	switch code {
	case CodeParseError:
		return "Parse error"
	case CodeInvalidRequest:
		return "Invalid Request"
	case CodeMethodNotFound:
		return "Method not found"
	case CodeInvalidParams:
		return "Invalid params"
	case CodeInternalError:
		return "Internal error"
	case CodeHeaderMismatch:
		return "HeaderMismatch"
	case CodeMissingRequiredClientCapability:
		return "MissingRequiredClientCapability"
	case CodeUnsupportedProtocolVersion:
		return "UnsupportedProtocolVersion"
	}
	return "unknown code"
}

// ErrNotObject means the bytes were JSON but not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

// Decode parses one JSON-RPC message. It rejects what is not a JSON object and
// invalid UTF-8 (RPC-6) but is otherwise lenient: judging whether the members
// are right is the conformance layer's job, not the decoder's.
func Decode(data []byte) (*Message, error) {
	data = bytes.TrimSpace(data)
	if !utf8.Valid(data) {
		return nil, errors.New("message is not valid UTF-8")
	}
	if len(data) == 0 || data[0] != '{' {
		if json.Valid(data) {
			return nil, ErrNotObject
		}
		return nil, fmt.Errorf("invalid JSON: %s", Clip(string(data), 80))
	}
	// A well-formed message, nearly every one, is read without the copy a
	// Decoder makes of its input (a 370 KB tools/list page, thirty times a
	// run); the Decoder says what is wrong with the others. Both accept
	// exactly one object followed by nothing but space, and fill a Message
	// alike (it holds no interface, so UseNumber changes nothing).
	var m Message
	if json.Unmarshal(data, &m) == nil {
		return &m, nil
	}
	return decodeStream(data)
}

// decodeStream decodes data, a JSON object, with a Decoder, whose errors
// say where a message went wrong.
func decodeStream(data []byte) (*Message, error) {
	var m Message
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("invalid JSON-RPC message: %w", err)
	}
	// Anything but space after the object is trailing data. dec.More
	// would miss a stray '}' or ']', which it takes for the end of an
	// enclosing value: "{}}" would pass for "{}".
	if rest := data[dec.InputOffset():]; len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("trailing data after the JSON object")
	}
	return &m, nil
}

// NewRequest builds a request; params is marshalled as is.
func NewRequest(id json.RawMessage, method string, params any) (*Message, error) {
	m := &Message{JSONRPC: Version, ID: id, Method: method}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encoding params of %s: %w", method, err)
		}
		m.Params = b
	}
	return m, nil
}

// Encode marshals m on one line, as both transports need it. Without
// json.Marshal's HTML escaping, which rewrote the raw values it carries:
// an id {"&":[]} the server sent went back as {"\u0026":[]}, another id
// by the bytes (IDKey; FuzzDecode found it).
func (m *Message) Encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// IntID and StringID make request ids of either JSON type.
func IntID(n int64) json.RawMessage { return json.RawMessage(fmt.Sprintf("%d", n)) }

func StringID(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// SameID reports whether two raw ids are the same JSON value of the same type
// (RPC-1: a string id must come back a string). Whitespace is ignored.
func SameID(a, b json.RawMessage) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if bytes.Equal(a, b) {
		return true
	}
	// A string may be written with different escapes; a number may not.
	if a[0] == '"' && b[0] == '"' {
		var sa, sb string
		return json.Unmarshal(a, &sa) == nil && json.Unmarshal(b, &sb) == nil && sa == sb
	}
	return false
}

// IDKey is a map key for an id that keeps strings and numbers apart.
func IDKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) > 0 && id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "s:" + s
		}
	}
	return "n:" + string(id)
}

// Clip shortens s to at most n bytes on a rune boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
