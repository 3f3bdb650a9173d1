// Package jsonpointer reads same-document references: a URI fragment
// holding a JSON pointer ("#", "#/$defs/a~1b", "#/definitions/caf%C3%A9"),
// as every $ref of a tool's schema is. RFC 6901: percent-decoding first
// (§6, pointers in fragments), then "~1" and "~0"; "~" escapes nothing
// else, and an array index is decimal without leading zeros (§4).
//
// The schemas come from the server under test: a pointer's tokens are
// bounded (MaxTokens), and nothing here follows another document or an
// $anchor name.
package jsonpointer

import (
	"net/url"
	"strconv"
	"strings"
)

// MaxTokens bounds the reference tokens of one pointer: each may open
// one more container of the document.
const MaxTokens = 32

// Tokens are the decoded reference tokens of ref, a fragment ("#" names
// the whole document: no tokens). ok is false for anything else: another
// document, an $anchor name, a bad escape, more than MaxTokens tokens.
func Tokens(ref string) (toks []string, ok bool) {
	frag, isFrag := strings.CutPrefix(ref, "#")
	if !isFrag {
		return nil, false
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		return nil, false
	}
	if frag == "" {
		return nil, true
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, false // an $anchor name
	}
	raw := strings.Split(frag[1:], "/")
	if len(raw) > MaxTokens {
		return nil, false
	}
	toks = make([]string, len(raw))
	for i, t := range raw {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(t, "~0", ""), "~1", ""), "~") {
			return nil, false
		}
		toks[i] = unescaper.Replace(t)
	}
	return toks, true
}

// Get is the value ref names in root, a document decoded by
// encoding/json (maps, slices and scalars).
func Get(root any, ref string) (any, bool) {
	toks, ok := Tokens(ref)
	if !ok {
		return nil, false
	}
	cur := root
	for _, tok := range toks {
		switch c := cur.(type) {
		case map[string]any:
			if cur, ok = c[tok]; !ok {
				return nil, false
			}
		case []any:
			i, ok := Index(tok)
			if !ok || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Index reads an array index token: decimal digits, no leading zero
// ("01" and "-" name nothing).
func Index(tok string) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	for _, r := range tok {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil
}

// Escape makes a member name a reference token.
func Escape(name string) string { return escaper.Replace(name) }

// Built once: a Replacer builds its tables on first use (6.7 KB and 2.7 µs
// for these two), which every key of every tool paid when each caller
// built its own (a poison scan of 1,000 tools allocated 113 MB, 16 MB
// with one; BenchmarkScan1000Tools).
var (
	escaper   = strings.NewReplacer("~", "~0", "/", "~1")
	unescaper = strings.NewReplacer("~1", "/", "~0", "~")
)
