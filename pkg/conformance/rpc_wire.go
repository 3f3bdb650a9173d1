package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// The wire layer of the RPC, META, VER, STATE and ERR checks: a request is
// built exactly as the client would send it, edited as a JSON value (drop a
// _meta field, change the id or the version), sent as bytes on either
// transport, and the answer is kept as the bytes the server wrote, so a
// check can judge members the typed client would have normalised away.

// wireTimeout bounds one raw exchange. On stdio it is how long the server
// may write nothing at all: a server that answers one request at a time
// may still be answering those sent before this one (a run sends many at
// once), and each line it writes restarts the count, up to wireBusyMost.
// (With tools/call taking 1.2 s each behind a server that answers in
// order, RPC-1 failed "no response within 10s" on a server that answered
// every request.)
const wireTimeout = 10 * time.Second

// wireBusyMost bounds a raw stdio exchange however busy the server is.
const wireBusyMost = 6 * wireTimeout

// wireSeq numbers the ids the wire layer chooses itself. It starts far above
// the client's own counter (which starts at 1), stays below 2^53 so that
// JavaScript servers read it exactly, and is unique per harness process.
var wireSeq atomic.Int64

func init() { wireSeq.Store(1 << 33) }

// wireNumberID returns a fresh integer id.
func wireNumberID() json.RawMessage { return jsonrpc.IntID(wireSeq.Add(1)) }

// wireStringID returns a fresh string id; digits makes it look like a number
// ("8589934593"), the case a server that coerces ids gets wrong.
func wireStringID(digits bool) json.RawMessage {
	n := wireSeq.Add(1)
	if digits {
		return jsonrpc.StringID(fmt.Sprint(n))
	}
	return jsonrpc.StringID(fmt.Sprintf("mcp-eval-%d", n))
}

// wire is one message as exact bytes: what the client would send, edited.
type wire struct {
	method string
	msg    map[string]any // the message decoded with UseNumber, edited in place
	header http.Header    // HTTP request headers; nil on stdio
}

// newWire builds method/params as c would send them.
func newWire(c *mcpclient.Client, method string, params any, opts ...mcpclient.CallOption) (*wire, error) {
	_, out, err := c.Build(method, params, opts...)
	if err != nil {
		return nil, err
	}
	var msg map[string]any
	dec := json.NewDecoder(bytes.NewReader(out.Body))
	dec.UseNumber()
	if err := dec.Decode(&msg); err != nil {
		return nil, fmt.Errorf("decoding the built %s request: %w", method, err)
	}
	w := &wire{method: method, msg: msg}
	if out.Header != nil {
		w.header = out.Header.Clone()
	}
	return w, nil
}

// id is the request id (nil for a notification).
func (w *wire) id() json.RawMessage {
	v, ok := w.msg["id"]
	if !ok {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// setID replaces the id with a raw JSON value.
func (w *wire) setID(id json.RawMessage) { w.msg["id"] = json.RawMessage(id) }

// params returns params, creating it when absent.
func (w *wire) params() map[string]any {
	p, ok := w.msg["params"].(map[string]any)
	if !ok {
		p = map[string]any{}
		w.msg["params"] = p
	}
	return p
}

// meta returns params._meta, creating it when absent.
func (w *wire) meta() map[string]any {
	p := w.params()
	m, ok := p["_meta"].(map[string]any)
	if !ok {
		m = map[string]any{}
		p["_meta"] = m
	}
	return m
}

// setVersion puts v in both _meta and (on HTTP) MCP-Protocol-Version, so
// that a version test does not also trigger a header mismatch (AMB-11).
func (w *wire) setVersion(v string) {
	w.meta()[mcpclient.MetaProtocolVersion] = v
	if w.header != nil {
		w.header.Set(mcpclient.HeaderProtocolVersion, v)
	}
}

// setCaps replaces the declared client capabilities.
func (w *wire) setCaps(caps json.RawMessage) { w.meta()[mcpclient.MetaClientCapabilities] = caps }

// bytes encodes the message.
func (w *wire) bytes() []byte {
	b, _ := json.Marshal(w.msg)
	return b
}

// reply is what came back for one wire exchange.
type reply struct {
	transport string
	sent      []byte
	header    http.Header // sent headers (HTTP)
	// status is the HTTP status (0 on stdio).
	status int
	// raw is the response message for the request as the server wrote it;
	// nil when none came.
	raw []byte
	// fields are raw's members; nil when raw is not a JSON object.
	fields map[string]json.RawMessage
	http   *transport.RawResponse
	// waited says how long a reply with no response waited, for
	// describe ("" for wireTimeout).
	waited string
}

// has reports whether the response has the member.
func (r *reply) has(member string) bool {
	_, ok := r.fields[member]
	return ok
}

// rpcError decodes the error member leniently; ok is false when there is no
// error object with an integer code.
func (r *reply) rpcError() (e *jsonrpc.Error, ok bool) {
	raw, present := r.fields["error"]
	if !present {
		return nil, false
	}
	var v jsonrpc.Error
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	return &v, true
}

// code is the error code, or 0 when the reply is not an error.
func (r *reply) code() int64 {
	if e, ok := r.rpcError(); ok {
		return e.Code
	}
	return 0
}

// result is the result member (nil when absent).
func (r *reply) result() json.RawMessage { return r.fields["result"] }

// describe says in a few words what came back, for messages.
func (r *reply) describe() string {
	switch {
	case r.raw == nil && r.status != 0:
		return fmt.Sprintf("HTTP %d with no JSON-RPC response", r.status)
	case r.raw == nil && r.waited != "":
		return "no response " + r.waited
	case r.raw == nil:
		return fmt.Sprintf("no response within %s", wireTimeout)
	case r.fields == nil:
		s := "a body that is not a JSON-RPC message: " + jsonrpc.Clip(strings.ToValidUTF8(string(r.raw), "�"), 80)
		if r.status != 0 {
			s += fmt.Sprintf(" (HTTP %d)", r.status)
		}
		return s
	}
	var s string
	if e, ok := r.rpcError(); ok {
		s = fmt.Sprintf("error %d (%s)", e.Code, jsonrpc.CodeName(e.Code))
	} else if r.has("error") {
		s = "an error object without an integer code"
	} else if r.has("result") {
		s = "a result"
	} else {
		s = "a response with neither result nor error"
	}
	if r.status != 0 {
		s += fmt.Sprintf(" with HTTP %d", r.status)
	}
	return s
}

// evidence is the exchange as report evidence.
func (r *reply) evidence() *check.Evidence {
	if r.transport == "http" && r.http != nil {
		return check.FromRaw(r.sent, r.header, r.http)
	}
	ev := &check.Evidence{Transport: r.transport, Request: clipBytes(r.sent, 400)}
	if r.raw != nil {
		ev.Response = clipBytes(r.raw, 600)
	}
	return ev
}

func clipBytes(b []byte, n int) string {
	return jsonrpc.Clip(strings.ToValidUTF8(string(b), "�"), n)
}

// sendWire sends w on tr (the shared transport or a Fresh client's) and
// waits for the response carrying its id.
func sendWire(ctx context.Context, tr transport.Transport, w *wire) (*reply, error) {
	return sendBytes(ctx, tr, w.bytes(), w.header, w.id(), w.method)
}

// sendBytes sends body as one message. id is the request id the response
// must carry (nil when the body has none a server could read: then the
// first response without an id, or with id null, is taken as the answer).
func sendBytes(ctx context.Context, tr transport.Transport, body []byte, header http.Header, id json.RawMessage, method string) (*reply, error) {
	switch t := tr.(type) {
	case *transport.HTTPTransport:
		ctx, cancel := context.WithTimeout(ctx, wireTimeout)
		defer cancel()
		return httpWire(ctx, t, body, header, id)
	case *transport.StdioTransport:
		ctx, cancel := context.WithTimeout(ctx, wireBusyMost)
		defer cancel()
		return stdioWire(ctx, t, body, id, method)
	}
	return nil, fmt.Errorf("unsupported transport %T", tr)
}

// httpHeader is the baseline header of a POST plus h.
func httpHeader(h http.Header) http.Header {
	out := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	for k, vs := range h {
		out[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	return out
}

func httpWire(ctx context.Context, t *transport.HTTPTransport, body []byte, header http.Header, id json.RawMessage) (*reply, error) {
	h := httpHeader(header)
	rr, err := t.Do(ctx, &transport.RawRequest{Body: body, Header: h, StopAtID: id})
	if rr == nil {
		if isTimeout(err) {
			return &reply{transport: "http", sent: body, header: h}, nil // no answer in time
		}
		return nil, err
	}
	r := &reply{transport: "http", sent: body, header: h, status: rr.Status, http: rr}
	r.pickHTTP(&rr.HTTPInfo, id)
	if err != nil && r.raw == nil {
		return r, err
	}
	return r, nil
}

// pickHTTP takes the response to id from an HTTP body: the body itself,
// or the event of a stream that answers id (the last exact answer, else
// the first loose one).
func (r *reply) pickHTTP(h *transport.HTTPInfo, id json.RawMessage) {
	if !h.SSE {
		if len(bytes.TrimSpace(h.Body)) > 0 {
			r.setRaw(h.Body)
		}
		return
	}
	var candidate []byte
	for _, ev := range h.Events {
		data := []byte(ev.Data)
		if len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		switch answers(data, id) {
		case answerExact:
			candidate = data
		case answerLoose, answerNoID:
			if candidate == nil {
				candidate = data
			}
		}
	}
	if candidate != nil {
		r.setRaw(candidate)
	}
}

// replyOfHTTP is a client response on HTTP as a reply, with the bytes the
// server wrote, so that a wire-level rule can judge a request every check
// shares (Pass.Do). Nil on stdio, whose exchange keeps only the decoded
// message, and when no HTTP answer came.
func replyOfHTTP(resp *mcpclient.Response) *reply {
	if resp == nil || resp.Exchange == nil || resp.Exchange.HTTP == nil {
		return nil
	}
	h := resp.Exchange.HTTP
	r := &reply{transport: "http", sent: resp.Sent, header: httpHeader(resp.SentHeader), status: h.Status, http: &transport.RawResponse{HTTPInfo: *h}}
	r.pickHTTP(h, resp.ID)
	if r.raw == nil {
		return nil
	}
	return r
}

func (r *reply) setRaw(raw []byte) {
	r.raw = append([]byte(nil), bytes.TrimSpace(raw)...)
	if f, ok := rawFields(r.raw); ok {
		r.fields = f
	}
}

// rawFields is json.Unmarshal of a JSON object into a map of raw members,
// whose values are slices of b instead of copies: a reply keeps its bytes
// already, and a copy of its result doubled what a run holds (a tools/list
// of 1,000 tools is kept by every variant a check sends). ok is false
// where Unmarshal would fail; a JSON null is ok with no map, as there.
func rawFields(b []byte) (map[string]json.RawMessage, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	switch i := jsonSpace(b, 0); b[i] {
	case 'n':
		return nil, true
	case '{':
		f := map[string]json.RawMessage{}
		jsonMembers(b, func(key string, value []byte) { f[key] = value[:len(value):len(value)] })
		return f, true
	}
	return nil, false
}

// answer says how a message relates to the request id a check waits for.
type answer int

const (
	answerNone  answer = iota // not a response, or a response to another id
	answerExact               // a response with the same id of the same JSON type
	answerLoose               // the same id value of another JSON type ("7" for 7)
	answerNoID                // a response without id, or with id null
)

// answers classifies raw against id. A message with a method is never a
// response; a message with result or error (or neither, but an id and no
// method) is. raw that is not a JSON object answers nothing.
func answers(raw []byte, id json.RawMessage) answer {
	if !json.Valid(raw) {
		return answerNone
	}
	return answersValid(raw, id)
}

// answersIn is answers for a line a stdio tap delivered: one the transport
// decoded as a message is valid JSON already, and its top-level members
// are all that is read (a 370 KB page of tools costs one pass over its
// bytes instead of a decode for every exchange waiting while it comes).
func answersIn(in transport.Inbound, id json.RawMessage) answer {
	// The transport trims more than JSON's white space (\v, \f, U+0085,
	// U+00A0) before it decodes: only a line that is one object between
	// JSON white space is valid as it stands.
	b := in.Raw
	i, j := jsonSpace(b, 0), len(b)
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\n' || b[j-1] == '\r') {
		j--
	}
	if in.Msg == nil || i >= j || b[i] != '{' || b[j-1] != '}' {
		return answers(in.Raw, id)
	}
	return answersValid(in.Raw, id)
}

// answersValid is answers for raw that is valid JSON, reading its members
// as json.Unmarshal into a map would (exact keys, the last of a key wins).
func answersValid(raw []byte, id json.RawMessage) answer {
	var m answerMembers
	jsonMembers(raw, func(key string, value []byte) {
		switch key {
		case "method":
			m.method = true
		case "id":
			m.id, m.got = true, value
		case "result":
			m.result = true
		case "error":
			m.error = true
		}
	})
	return m.answers(id)
}

// answerMembers is what answers reads of a message: which of its members
// are there, and its id.
type answerMembers struct {
	method, id, result, error bool
	got                       json.RawMessage
}

func (m answerMembers) answers(id json.RawMessage) answer {
	if m.method {
		return answerNone
	}
	if !m.id || string(bytes.TrimSpace(m.got)) == "null" {
		if m.error || m.result {
			return answerNoID
		}
		return answerNone
	}
	if id == nil {
		return answerNone
	}
	if jsonrpc.SameID(m.got, id) {
		return answerExact
	}
	if idText(m.got) == idText(id) {
		return answerLoose
	}
	return answerNone
}

// jsonMembers calls f with the key (unescaped) and the value's bytes of
// every member of b, in order, when b is a JSON object; it calls nothing
// for another JSON value. b must be valid JSON: nested values are skipped
// by counting brackets outside strings, in one pass without recursion.
func jsonMembers(b []byte, f func(key string, value []byte)) {
	i := jsonSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i++
	for {
		i = jsonSpace(b, i)
		if i >= len(b) || b[i] == '}' {
			return
		}
		if b[i] == ',' {
			i++
			continue
		}
		ks := i
		i = jsonString(b, i)
		key := b[ks:i]
		i = jsonSpace(b, i)
		if i < len(b) && b[i] == ':' {
			i++
		}
		i = jsonSpace(b, i)
		vs := i
		i = jsonValue(b, i)
		f(jsonKey(key), b[vs:i])
	}
}

// jsonSpace skips JSON white space from i.
func jsonSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonString returns the index after the string that begins at i.
func jsonString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// jsonValue returns the index after the value that begins at i.
func jsonValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return jsonString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = jsonString(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && jsonSpace(b, j) == j {
		j++
	}
	return j
}

// jsonKey is a member's key without its quotes, unescaped (and invalid
// UTF-8 replaced), as json.Unmarshal gives it.
func jsonKey(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 && len(quoted) >= 2 && utf8.Valid(quoted) {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	_ = json.Unmarshal(quoted, &s)
	return s
}

// idText is an id's value without its JSON type: "7" and 7 both give 7.
func idText(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(id))
}

// noIDGrace is how long an exchange keeps waiting for a response with the
// right id after one without an id came (which may answer another message).
const noIDGrace = 300 * time.Millisecond

// stdioWire sends one line and waits for its answer. A request is
// registered with the transport (RoundTrip) so that a correct answer is not
// reported as a stray line; the raw line comes from a tap, so an answer with
// the wrong id type, or with both result and error, is seen at once instead
// of waiting for a deadline.
func stdioWire(ctx context.Context, t *transport.StdioTransport, body []byte, id json.RawMessage, method string) (*reply, error) {
	tap, stop := t.Tap(1024)
	defer stop()
	r := &reply{transport: "stdio", sent: body}
	rtCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	if id != nil {
		go func() {
			_, err := t.RoundTrip(rtCtx, &transport.Outgoing{Body: body, ID: id, Method: method, Raw: true})
			done <- err
		}()
	} else if err := t.WriteLine(ctx, body); err != nil {
		return r, err
	}
	var candidate []byte
	var graceC <-chan time.Time
	// quiet fires once the server has written nothing for wireTimeout
	// (wireTimeout's comment); ctx bounds the whole wait.
	start := time.Now()
	quiet := time.NewTimer(wireTimeout)
	defer quiet.Stop()
	for {
		select {
		case <-quiet.C:
			if candidate != nil {
				r.setRaw(candidate)
			} else if time.Since(start) > wireTimeout+time.Second {
				r.waited = fmt.Sprintf("within %s, the last %s of it with no line from the server", time.Since(start).Round(time.Second), wireTimeout)
			}
			if id != nil {
				cancel()
				<-done
			}
			return r, nil
		case in := <-tap:
			quiet.Reset(wireTimeout)
			switch answersIn(in, id) {
			case answerExact, answerLoose:
				// The transport delivers a well-formed answer to RoundTrip
				// by itself; one with the wrong id type or with both result
				// and error it never will, so stop waiting either way.
				r.setRaw(in.Raw)
				cancel()
				<-done
				return r, nil
			case answerNoID:
				if id == nil {
					r.setRaw(in.Raw)
					return r, nil
				}
				if candidate == nil {
					candidate = in.Raw
					graceC = time.After(noIDGrace)
				}
			}
		case <-graceC:
			r.setRaw(candidate)
			cancel()
			<-done
			return r, nil
		case err := <-done:
			// RoundTrip ended without the tap seeing the answer: the
			// process died or the deadline passed. Lines still buffered in
			// the tap are looked at once more.
			for {
				select {
				case in := <-tap:
					if a := answersIn(in, id); a == answerExact || a == answerLoose {
						r.setRaw(in.Raw)
						return r, nil
					}
				default:
					if candidate != nil {
						r.setRaw(candidate)
						return r, nil
					}
					switch {
					case err == nil:
						err = errors.New("the transport delivered a response the tap did not see")
					case isTimeout(err) || ctx.Err() != nil:
						return r, nil // no answer in time: raw stays nil
					}
					return r, err
				}
			}
		case <-ctx.Done():
			if candidate != nil {
				r.setRaw(candidate)
				return r, nil
			}
			if time.Since(start) > wireTimeout+time.Second {
				r.waited = fmt.Sprintf("within %s, while the server answered others", time.Since(start).Round(time.Second))
			}
			if id == nil {
				return r, nil // nothing came: for a message without id that may be right
			}
			cancel()
			<-done
			return r, nil
		}
	}
}

// passTally counts what a check verified, to report it as one line with
// the first evidence (a pass under a worse verdict adds nothing).
type passTally struct {
	n  int
	ev *check.Evidence
}

func (t *passTally) add(ev *check.Evidence) {
	if t.n == 0 {
		t.ev = ev
	}
	t.n++
}

func (t *passTally) report(p *check.Pass, format string, args ...any) {
	if t.n > 0 {
		p.Passf(t.ev, format, args...)
	}
}

// isTimeout reports whether err is a transport deadline.
func isTimeout(err error) bool { return transport.KindOf(err) == transport.KindTimeout }
