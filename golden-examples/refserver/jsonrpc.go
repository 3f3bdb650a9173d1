package refserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// JSON-RPC and MCP error codes. ERR-1/ERR-3: only the standard JSON-RPC codes
// and the three codes MCP 2026-07-28 defines are used; never -32000..-32019,
// never -32002 (ERR-2).
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

// Error is a JSON-RPC error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`

	// malformed marks a -32602 caused by a malformed request envelope
	// (missing params/_meta fields). META-1 pins those to HTTP 400, while
	// other -32602 errors (unknown tool, bad cursor) have no defined status.
	malformed bool
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

func errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Message is one decoded JSON-RPC message received from the client: a request
// (ID set) or a notification (ID nil).
type Message struct {
	// ID is the request id exactly as sent, so that responses and
	// subscription ids keep its JSON type (RPC-1, SUB-2). Nil for notifications.
	ID     json.RawMessage
	Method string
	// Params is the raw "params" member; nil when absent.
	Params json.RawMessage
}

// IsNotification reports whether the message has no id (RPC-3: it gets no response).
func (m *Message) IsNotification() bool { return m.ID == nil }

// Response is one JSON-RPC response: exactly one of Result and Error is set (RPC-1).
type Response struct {
	// ID is nil only when the request id could not be read (RPC-2).
	ID     json.RawMessage
	Result map[string]any
	Error  *Error
}

// MarshalJSON writes the response; the id member is omitted rather than null
// when unknown, because the schema's RequestId does not admit null (AMB-15).
func (r *Response) MarshalJSON() ([]byte, error) {
	type wire struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		// any, not a map: omitempty would drop an empty result map
		// (a legacy ping's {}), and a non-nil interface is kept.
		Result any    `json:"result,omitempty"`
		Error  *Error `json:"error,omitempty"`
	}
	w := wire{JSONRPC: "2.0", ID: r.ID, Error: r.Error}
	if r.Error == nil {
		result := r.Result
		if result == nil {
			result = map[string]any{}
		}
		w.Result = result
	}
	return marshal(w)
}

// Notification is a server-to-client JSON-RPC notification.
type Notification struct {
	Method string
	Params map[string]any
	// ID is never set by a correct server: only the RPC-4 mutant sets it,
	// which turns the message into a (forbidden) server-to-client request.
	ID json.RawMessage
}

// MarshalJSON writes the notification with its jsonrpc member.
func (n Notification) MarshalJSON() ([]byte, error) {
	return marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method"`
		Params  map[string]any  `json:"params,omitempty"`
	}{"2.0", n.ID, n.Method, n.Params})
}

// Notifier delivers a notification that belongs to the request being handled
// (progress, log message, subscription event). It returns an error when the
// request's stream is gone or the request was cancelled; the handler should
// then stop.
type Notifier func(Notification) error

func errorResponse(id json.RawMessage, e *Error) *Response { return &Response{ID: id, Error: e} }

// marshal encodes v as compact JSON without HTML escaping. encoding/json never
// emits raw newlines (it escapes U+2028/2029 too), which is what keeps every
// stdio message on one line (STDIO-1).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

var integerLiteral = lazyRegexp(`^-?(0|[1-9][0-9]*)$`)

// ParseMessage decodes one JSON-RPC message. On failure it returns the error
// response to send: -32700 for bytes that are not JSON (RPC-5, RPC-6: invalid
// UTF-8 counts), -32600 for JSON that is not a single valid request or
// notification object. That response carries the id when it could be read.
func ParseMessage(data []byte) (*Message, *Response) {
	if !utf8.Valid(data) || !json.Valid(data) {
		return nil, errorResponse(nil, errorf(CodeParseError, "Parse error: the message is not valid UTF-8 JSON"))
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		// AMB-21: batches and bare values are not a single JSON-RPC message.
		return nil, errorResponse(nil, errorf(CodeInvalidRequest, "Invalid Request: the message must be a single JSON-RPC object (batches are not supported)"))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, errorResponse(nil, errorf(CodeInvalidRequest, "Invalid Request: %v", err))
	}
	msg := &Message{}
	if raw, ok := fields["id"]; ok {
		id, ok := canonicalID(raw)
		if !ok {
			// MCP ids are strings or integers; null and fractions are not
			// readable ids, so the error goes out without one (RPC-2).
			return nil, errorResponse(nil, errorf(CodeInvalidRequest, "Invalid Request: id must be a string or an integer"))
		}
		msg.ID = id
	}
	invalid := func(format string, args ...any) (*Message, *Response) {
		return nil, errorResponse(msg.ID, errorf(CodeInvalidRequest, "Invalid Request: "+format, args...))
	}
	var version string
	if err := json.Unmarshal(fields["jsonrpc"], &version); err != nil || version != "2.0" {
		return invalid(`jsonrpc must be "2.0"`)
	}
	rawMethod, ok := fields["method"]
	if !ok {
		if _, isResult := fields["result"]; isResult {
			return invalid("clients must not send JSON-RPC responses to this server")
		}
		if _, isError := fields["error"]; isError {
			return invalid("clients must not send JSON-RPC responses to this server")
		}
		return invalid("method is required")
	}
	if err := json.Unmarshal(rawMethod, &msg.Method); err != nil || msg.Method == "" {
		return invalid("method must be a non-empty string")
	}
	if raw, ok := fields["params"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		msg.Params = raw
	}
	return msg, nil
}

// canonicalID validates a raw id and returns it in compact form. Integers must
// be plain literals so that 1 and 1.0 can never name two different requests.
func canonicalID(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		out, err := marshal(s)
		return out, err == nil
	default:
		if !integerLiteral().Match(raw) {
			return nil, false
		}
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			return nil, false
		}
		return append(json.RawMessage(nil), raw...), true
	}
}
