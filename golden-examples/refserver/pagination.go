package refserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// cursorKey authenticates cursors. It is deliberately fixed rather than
// secret: a cursor is only a position in a public list, so forging one gains
// nothing, while a fixed key keeps cursors valid across restarts and replicas
// (PAGE-3 stability, STATE-2). The MAC exists so that a bogus cursor is
// detected and rejected with -32602 (PAGE-2) instead of silently read as 0.
var cursorKey = []byte("mcp-eval refserver cursor v1")

// maxCursorLen bounds what is read from the client.
const maxCursorLen = 256

// encodeCursor returns the opaque cursor for offset in the named list. It
// never returns "" — an empty cursor is a valid cursor to clients (PAGE-1),
// so issuing one would be ambiguous with "no cursor".
func encodeCursor(list string, offset int) string {
	payload := list + ":" + strconv.Itoa(offset)
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + cursorMAC(payload)
}

func cursorMAC(payload string) string {
	m := hmac.New(sha256.New, cursorKey)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:12])
}

// decodeCursor returns the offset a cursor points to in a list of n items.
// Anything this server did not issue for this list — including "" — is
// -32602 (PAGE-2).
func decodeCursor(list, cursor string, n int) (int, *Error) {
	bad := func(why string) (int, *Error) {
		return 0, &Error{Code: CodeInvalidParams, Message: "Invalid params: invalid cursor (" + why + ")", Data: map[string]any{"cursor": truncate(cursor, 64)}}
	}
	if cursor == "" {
		return bad("empty cursor; omit the field to start from the beginning")
	}
	if len(cursor) > maxCursorLen {
		return bad("too long")
	}
	enc, mac, ok := strings.Cut(cursor, ".")
	if !ok {
		return bad("not issued by this server")
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || !hmac.Equal([]byte(mac), []byte(cursorMAC(string(raw)))) {
		return bad("not issued by this server")
	}
	name, off, _ := strings.Cut(string(raw), ":")
	offset, err := strconv.Atoi(off)
	if name != list || err != nil || offset <= 0 || offset >= n {
		return bad(fmt.Sprintf("not a %s cursor for the current list", list))
	}
	return offset, nil
}

// page selects the page of a list of n items named by the request's cursor
// and returns its bounds and the nextCursor ("" when it is the last page).
func (s *Server) page(r *request, list string, n int) (start, end int, next string, err *Error) {
	cursor, present, err := r.stringParam("cursor")
	if err != nil {
		return 0, 0, "", err
	}
	if present {
		if start, err = decodeCursor(list, cursor, n); err != nil && !s.opts.breaks("PAGE-2") {
			return 0, 0, "", err
		}
		start = s.mutCursor(start)
	}
	end = min(start+s.opts.PageSize, n)
	if end < n {
		next = encodeCursor(list, end)
	}
	return start, end, next, nil
}

// pagedResult builds a cacheable list result. Every page has the same
// cacheScope (CACHE-3).
func pagedResult(key string, items []any, next string) map[string]any {
	result := cacheable(map[string]any{key: items}, listTTLMs, scopePublic)
	if next != "" {
		result["nextCursor"] = next
	}
	return result
}

// truncate shortens client-supplied text echoed in errors, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
