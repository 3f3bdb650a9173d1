package refserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The behaviour behind the mutants of the JSON-RPC, _meta, version,
// statelessness, error-code, result, caching and pagination rules (RPC-*,
// META-*, VER-*, STATE-*, ERR-*, RES-*, CACHE-*, PAGE-*). Each function is a
// no-op unless its rule is in Options.Break; the call sites are one line in
// the file the rule lives in.

// mutMemory is what the mutants remember across requests: exactly the
// state a correct server never keeps (STATE-1, META-3, VER-3).
type mutMemory struct {
	mu          sync.Mutex
	version     json.RawMessage // last _meta protocolVersion seen (STATE-1)
	caps        json.RawMessage // last _meta clientCapabilities seen (STATE-1)
	elicitation bool            // a request declared elicitation (META-3)
	rejected    bool            // the last version check failed (VER-3)
	cursorCalls int             // requests that carried a cursor (PAGE-3)
}

var mutMemories sync.Map // *Server → *mutMemory

func (s *Server) mutMem() *mutMemory {
	v, _ := mutMemories.LoadOrStore(s, &mutMemory{})
	return v.(*mutMemory)
}

// mutMeta edits a request's _meta before it is validated: META-1 accepts a
// missing clientCapabilities, META-2 rejects a missing clientInfo, STATE-1
// fills missing fields from the previous request.
func (s *Server) mutMeta(meta map[string]json.RawMessage) *Error {
	if s.opts.breaks("STATE-1") {
		m := s.mutMem()
		m.mu.Lock()
		for key, slot := range map[string]*json.RawMessage{metaProtocolVersion: &m.version, metaClientCapabilities: &m.caps} {
			if v, ok := meta[key]; ok {
				*slot = v
			} else if *slot != nil {
				meta[key] = *slot
			}
		}
		m.mu.Unlock()
	}
	if _, ok := meta[metaClientCapabilities]; !ok && s.opts.breaks("META-1") {
		meta[metaClientCapabilities] = json.RawMessage(`{}`)
	}
	if _, ok := meta[metaClientInfo]; !ok && s.opts.breaks("META-2") {
		return &Error{Code: CodeInvalidParams, Message: "Invalid params: _meta clientInfo is required", malformed: true}
	}
	return nil
}

// versionCheck is checkVersion with the VER-1, VER-2, VER-3 and ERR-4
// mutants.
func (s *Server) versionCheck(method, version string) *Error {
	err := checkVersion(version)
	if s.opts.breaks("VER-3") {
		m := s.mutMem()
		m.mu.Lock()
		rejectedBefore := m.rejected
		m.rejected = err != nil
		m.mu.Unlock()
		if err == nil && rejectedBefore {
			return &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: map[string]any{"supported": supportedVersions, "requested": version}}
		}
	}
	if err == nil {
		return nil
	}
	if method == "server/discover" && s.opts.breaks("VER-2") {
		return nil
	}
	if data, ok := err.Data.(map[string]any); ok {
		if s.opts.breaks("VER-1") {
			delete(data, "requested")
		}
		if s.opts.breaks("ERR-4") {
			data["supported"] = strings.Join(supportedVersions, ",")
		}
	}
	return err
}

// mutMethodNotFound is the ERR-3 mutant: -32000 for an unknown method.
func (s *Server) mutMethodNotFound(e *Error) *Error {
	if s.opts.breaks("ERR-3") {
		e.Code = -32000
	}
	return e
}

// mutRequestSide runs before a method: the RPC-4 mutant sends a ping
// request while answering tools/list.
func (s *Server) mutRequestSide(r *request) {
	if r.method == "tools/list" && s.opts.breaks("RPC-4") {
		_ = r.notify(Notification{ID: json.RawMessage(`"refserver-ping-1"`), Method: "ping"})
	}
}

// mutResponse edits a response: RPC-1 answers a string id of digits with a
// number, RPC-2 leaves the id out of errors.
func (s *Server) mutResponse(resp *Response) *Response {
	if s.opts.breaks("RPC-1") && len(resp.ID) > 2 && resp.ID[0] == '"' && integerLiteral().Match(resp.ID[1:len(resp.ID)-1]) {
		resp.ID = append(json.RawMessage(nil), resp.ID[1:len(resp.ID)-1]...)
	}
	if s.opts.breaks(MutantWrongID) && len(resp.ID) > 0 && string(resp.ID) != "null" {
		resp.ID = wrongID(resp.ID) // Mutant: breaks RPC-1 on every response.
	}
	if s.opts.breaks("RPC-2") && resp.Error != nil {
		resp.ID = nil
	}
	return resp
}

// mutNotificationAnswer is what the RPC-3 mutant sends back for a
// notification (nil: nothing, as it should be).
func (s *Server) mutNotificationAnswer() *Response {
	if !s.opts.breaks("RPC-3") {
		return nil
	}
	return &Response{Result: map[string]any{"resultType": "complete"}}
}

// errMutantExit ends a stdio session: the RPC-5 mutant dies on bad input.
var errMutantExit = errors.New("refserver: mutant RPC-5 gives up on invalid input")

// mutBadInputHTTP is the HTTP side of the RPC-5 mutant: -32603 instead of
// -32700 / -32600.
func (s *Server) mutBadInputHTTP(resp *Response) *Response {
	if s.opts.breaks("RPC-5") {
		resp.Error = errorf(CodeInternalError, "Internal error")
	}
	return resp
}

// mutBadInputStdio is the stdio side of the RPC-5 mutant: the session ends
// (the example binary exits). It reports whether it did.
func (ss *stdioSession) mutBadInputStdio() bool {
	if !ss.srv.opts.breaks("RPC-5") {
		return false
	}
	ss.mu.Lock()
	if ss.writeErr == nil {
		ss.writeErr = errMutantExit
	}
	ss.mu.Unlock()
	ss.closeOnce.Do(func() { close(ss.broken) })
	return true
}

// mutLatin1 re-encodes UTF-8 text as Latin-1 (RPC-6 mutant): every
// character U+0080..U+00FF becomes one byte, which is not valid UTF-8.
func mutLatin1(b []byte) []byte {
	if utf8.Valid(b) && bytes.IndexFunc(b, func(r rune) bool { return r >= 0x80 }) < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1, r < 0x80:
			out = append(out, b[0])
		case r < 0x100:
			out = append(out, byte(r))
		default:
			out = append(out, '?')
		}
		b = b[n:]
	}
	return out
}

// mutOutput is the stdio side of the RPC-6 mutant.
func (s *Server) mutOutput(data []byte) []byte {
	if s.opts.breaks("RPC-6") {
		return mutLatin1(data)
	}
	return data
}

// mutWriter is the HTTP side of the RPC-6 mutant.
func (s *Server) mutWriter(w http.ResponseWriter) http.ResponseWriter {
	if s.opts.breaks("RPC-6") {
		return latin1Writer{w}
	}
	return w
}

type latin1Writer struct{ http.ResponseWriter }

func (l latin1Writer) Write(p []byte) (int, error) {
	if _, err := l.ResponseWriter.Write(mutLatin1(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (l latin1Writer) Unwrap() http.ResponseWriter { return l.ResponseWriter }

// mutToolsPage edits a tools/list page: RES-2 sends an unknown resultType,
// RES-4 a malformed _meta key, CACHE-3 a different cacheScope after the
// first page.
func (s *Server) mutToolsPage(result map[string]any, start int) map[string]any {
	if s.opts.breaks("RES-2") {
		result["resultType"] = "success"
	}
	if s.opts.breaks("RES-4") {
		result["_meta"] = map[string]any{"refserver:cached": true}
	}
	if s.opts.breaks("CACHE-3") && start > 0 {
		result["cacheScope"] = scopePrivate
	}
	return result
}

// mutUnknownTool is the ERR-1 mutant: an unreserved code in the MCP range.
func (s *Server) mutUnknownTool(e *Error) *Error {
	if s.opts.breaks("ERR-1") {
		e.Code = -32050
	}
	return e
}

// mutMissingResource is the ERR-2 mutant: the 2025-11-25 code.
func (s *Server) mutMissingResource(e *Error) *Error {
	if s.opts.breaks("ERR-2") {
		e.Code = -32002
	}
	return e
}

// mutReadResult is the CACHE-1 mutant: a negative ttlMs.
func (s *Server) mutReadResult(result map[string]any) map[string]any {
	if s.opts.breaks("CACHE-1") {
		result["ttlMs"] = -1
	}
	return result
}

// mutCursor edits where a cursor points: PAGE-3 moves every other request
// one item back, so the same cursor gives different pages.
func (s *Server) mutCursor(start int) int {
	if !s.opts.breaks("PAGE-3") {
		return start
	}
	m := s.mutMem()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cursorCalls++
	if m.cursorCalls%2 == 1 && start > 0 {
		return start - 1
	}
	return start
}

// mutElicitationDeclared is the META-3 mutant: once any request declared
// elicitation, later requests are taken to have declared it too.
func (s *Server) mutElicitationDeclared(declared bool) bool {
	if !s.opts.breaks("META-3") {
		return declared
	}
	m := s.mutMem()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.elicitation = m.elicitation || declared
	return m.elicitation
}

// mutMissingCapability is the META-4 mutant: -32021 without data.
func (s *Server) mutMissingCapability(e *Error) *Error {
	if s.opts.breaks("META-4") {
		e.Data = nil
	}
	return e
}

// mutInputRequired is the CACHE-2 mutant: caching hints on an interim
// result.
func (s *Server) mutInputRequired(result map[string]any) map[string]any {
	if s.opts.breaks("CACHE-2") {
		result["ttlMs"] = 0
		result["cacheScope"] = scopePrivate
	}
	return result
}

// MutantWrongID answers every request under an id that is not its own;
// it breaks RPC-1 on every exchange, the probe's first.
const MutantWrongID = "RPC-1.wrong-id"

// wrongID is another id of the same JSON type: a number plus 1000000, a
// string with a suffix.
func wrongID(id json.RawMessage) json.RawMessage {
	var n int64
	if json.Unmarshal(id, &n) == nil {
		return json.RawMessage(strconv.FormatInt(n+1000000, 10))
	}
	var str string
	if json.Unmarshal(id, &str) == nil {
		b, _ := json.Marshal(str + "-not-yours")
		return b
	}
	return json.RawMessage(`"not-yours"`)
}
