package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonpointer"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Locating a fault in a response. A finding caused by a value the server
// sent names it by an RFC 6901 pointer into the JSON-RPC response message
// and keeps the value; the response excerpt is centred on it, because an
// excerpt from the start of a long message (and a terminal line cut after
// it) stops before the fault.

const (
	// pointedExcerpt bounds the excerpt around a located value.
	pointedExcerpt = 600
	// valueClip bounds the value kept beside its pointer.
	valueClip = 200
)

// Pointer builds an RFC 6901 pointer from reference tokens: strings are
// member names (escaped), ints are array indexes.
func Pointer(tokens ...any) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		switch v := t.(type) {
		case int:
			b.WriteString(strconv.Itoa(v))
		case string:
			b.WriteString(jsonpointer.Escape(v))
		default:
			panic("check.Pointer: token is neither a string nor an int")
		}
	}
	return b.String()
}

// splitPointer returns a pointer's reference tokens, unescaped; ok is false
// when it is not a pointer ("" is the whole document: no tokens).
func splitPointer(ptr string) (tokens []string, ok bool) {
	if ptr == "" {
		return nil, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, t := range strings.Split(ptr[1:], "/") {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(t, "~0", ""), "~1", ""), "~") {
			return nil, false
		}
		tokens = append(tokens, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
	}
	return tokens, true
}

// Locate finds the value ptr names in doc: the byte range of its JSON text.
// ok is false when doc is not JSON there or ptr names nothing.
func Locate(doc []byte, ptr string) (start, end int, ok bool) {
	tokens, ok := splitPointer(ptr)
	if !ok {
		return 0, 0, false
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	for _, tok := range tokens {
		t, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		switch t {
		case json.Delim('{'):
			if !seekMember(dec, tok) {
				return 0, 0, false
			}
		case json.Delim('['):
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || (len(tok) > 1 && tok[0] == '0') || !seekIndex(dec, i) {
				return 0, 0, false
			}
		default:
			return 0, 0, false // a scalar has no members
		}
	}
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return 0, 0, false
	}
	end = int(dec.InputOffset())
	return end - len(raw), end, true
}

// seekMember reads an object's members up to the one named name; the
// decoder is then before its value.
func seekMember(dec *json.Decoder, name string) bool {
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return false
		}
		if k == name {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// seekIndex reads an array's elements up to index i.
func seekIndex(dec *json.Decoder, i int) bool {
	for n := 0; dec.More(); n++ {
		if n == i {
			return true
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// At locates ptr in msg (the response message as the server wrote it) and
// returns a copy of ev with Pointer, Value and a Response excerpt centred
// on the value. A pointer that names nothing in msg keeps only Pointer: a
// check that points where nothing is has a bug, and the all-mutants test
// looks for such evidence. For a member that is missing, use Absent.
func At(ev *Evidence, msg []byte, ptr string) *Evidence {
	out := located(ev, ptr)
	if start, end, ok := Locate(msg, ptr); ok {
		out.Value = clipValue(msg[start:end])
		out.Response = centred(msg, start, end, pointedExcerpt)
	}
	return out
}

// Absent is At for a member the finding says is missing: Missing is set,
// and the excerpt centred on the object that lacks it, when that object
// exists and the member is indeed absent; otherwise only Pointer is kept
// (the same bug signal as At's).
func Absent(ev *Evidence, msg []byte, ptr string) *Evidence {
	out := located(ev, ptr)
	parent, member := splitLast(ptr)
	start, end, ok := Locate(msg, parent)
	if !ok || member == "" {
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(msg[start:end], &obj) != nil || obj == nil {
		return out
	}
	if _, has := obj[member]; !has {
		out.Missing = true
		out.Response = centred(msg, start, end, pointedExcerpt)
	}
	return out
}

func located(ev *Evidence, ptr string) *Evidence {
	out := Evidence{}
	if ev != nil {
		out = *ev
	}
	out.Pointer = ptr
	return &out
}

// splitLast splits off a pointer's last token, unescaped.
func splitLast(ptr string) (parent, last string) {
	i := strings.LastIndexByte(ptr, '/')
	if i < 0 {
		return "", ""
	}
	tokens, ok := splitPointer(ptr[i:])
	if !ok || len(tokens) != 1 {
		return "", ""
	}
	return ptr[:i], tokens[0]
}

// clipValue is a value's JSON text, compacted and clipped.
func clipValue(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	return jsonrpc.Clip(strings.ToValidUTF8(b.String(), "�"), valueClip)
}

// centred is at most n bytes of msg around [start, end), on rune
// boundaries, marked with "…" where it was cut. A value longer than n is
// shown from its start.
func centred(msg []byte, start, end, n int) string {
	a, b := 0, len(msg)
	if len(msg) > n {
		if end-start >= n {
			a, b = start, start+n
		} else {
			extra := n - (end - start)
			a = max(0, start-extra/2)
			b = min(len(msg), a+n)
			a = max(0, b-n)
		}
		for a > 0 && a < len(msg) && !utf8.RuneStart(msg[a]) {
			a++
		}
		for b < len(msg) && b > a && !utf8.RuneStart(msg[b]) {
			b--
		}
	}
	s := strings.ToValidUTF8(string(msg[a:b]), "�")
	if a > 0 {
		s = "…" + s
	}
	if b < len(msg) {
		s += "…"
	}
	return s
}

// ResponseMessage is the JSON-RPC response message of resp as the server
// wrote it when the transport kept it whole (an application/json body),
// else as the client decoded it (a line on stdio, an event of an SSE
// stream), re-encoded. Nil when no response came.
func ResponseMessage(resp *mcpclient.Response) []byte {
	if resp == nil || resp.Exchange == nil {
		return nil
	}
	ex := resp.Exchange
	if ex.HTTP != nil {
		body := bytes.TrimSpace(ex.HTTP.Body)
		if len(body) > 0 && body[0] == '{' && oneValue(body) {
			return body
		}
	}
	if ex.Response == nil {
		return nil
	}
	b, err := json.Marshal(ex.Response)
	if err != nil {
		return nil
	}
	return b
}

// oneValue reports whether b is exactly one JSON value.
func oneValue(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v json.RawMessage
	if dec.Decode(&v) != nil {
		return false
	}
	_, err := dec.Token()
	return errors.Is(err, io.EOF)
}

// FromResponseAt is FromResponse located at ptr in the response message.
func FromResponseAt(resp *mcpclient.Response, ptr string) *Evidence {
	if resp == nil {
		return nil
	}
	return At(FromResponse(resp), ResponseMessage(resp), ptr)
}

// FromResponseAbsent is FromResponse located at a member ptr names that
// the response lacks (Absent).
func FromResponseAbsent(resp *mcpclient.Response, ptr string) *Evidence {
	if resp == nil {
		return nil
	}
	return Absent(FromResponse(resp), ResponseMessage(resp), ptr)
}

// InResult turns a pointer into a result (as a schema validator reports
// it, "" for the result itself) into one into the response message.
func InResult(ptr string) string { return "/result" + ptr }

// Locating a fault in another message than the response: a notification
// or a request the server sent on the exchange (a log message at the wrong
// level, a progress token of the wrong type, a notification that should
// not have come). The pointer is into that message, which In names and
// Message shows; Response keeps the response excerpt as it was.

// MessageIn names a message for Evidence.In by its kind and method
// ("notification notifications/message", "request ping").
func MessageIn(m *jsonrpc.Message) string {
	if m == nil {
		return ""
	}
	if m.Method == "" {
		return m.Kind().String() // a response: its id tells which
	}
	return m.Kind().String() + " " + jsonrpc.Clip(strings.ToValidUTF8(m.Method, "�"), 80)
}

// messageBytes is m as JSON (re-encoded: the transports keep a message
// decoded); nil when m is nil.
func messageBytes(m *jsonrpc.Message) []byte {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// inMessage is ev located in m: In set, the response-side location
// cleared. Nil m keeps ev as it is.
func inMessage(ev *Evidence, m *jsonrpc.Message, ptr string) *Evidence {
	out := located(ev, ptr)
	out.In, out.Message = MessageIn(m), ""
	out.Value, out.Missing, out.OnStatus = "", false, false
	return out
}

// AtMessage is At for a value in m, a message the server sent other than
// the response: Pointer and Value are into m, In names it and Message is
// its excerpt centred on the value. As with At, a pointer that names
// nothing in m keeps no Value (the bug signal the all-mutants test looks
// for). "/method" points at a message that should not have been sent.
func AtMessage(ev *Evidence, m *jsonrpc.Message, ptr string) *Evidence {
	if m == nil {
		return ev
	}
	out := inMessage(ev, m, ptr)
	msg := messageBytes(m)
	if start, end, ok := Locate(msg, ptr); ok {
		out.Value = clipValue(msg[start:end])
		out.Message = centred(msg, start, end, pointedExcerpt)
	}
	return out
}

// AbsentMessage is Absent for a member m lacks. A member whose parents are
// missing too (a notification without params has no params._meta) is
// reported at the first member missing on the way, which is what the
// message lacks; a parent that is not an object keeps only Pointer.
func AbsentMessage(ev *Evidence, m *jsonrpc.Message, ptr string) *Evidence {
	if m == nil {
		return ev
	}
	out := inMessage(ev, m, ptr)
	msg := messageBytes(m)
	tokens, ok := splitPointer(ptr)
	if !ok || len(tokens) == 0 {
		return out
	}
	parent := ""
	for _, tok := range tokens {
		start, end, ok := Locate(msg, parent)
		if !ok {
			return out
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(msg[start:end], &obj) != nil || obj == nil {
			return out
		}
		if _, has := obj[tok]; !has {
			out.Pointer = parent + Pointer(tok)
			out.Missing = true
			out.Message = centred(msg, start, end, pointedExcerpt)
			return out
		}
		parent += Pointer(tok)
	}
	return out // the member is there: only Pointer, as Absent keeps it
}
