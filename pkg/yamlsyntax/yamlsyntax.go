// Package yamlsyntax places a gopkg.in/yaml.v3 syntax error on the line a
// user must fix. yaml.v3 names the line of its context mark when the error
// has one ("while parsing a block mapping") and counts that mark from 0 for
// parser errors, so it names the line before the construct that holds the
// error, which may be far above the error itself (go-yaml/yaml#205). It
// does not expose the marks, so the line is found by parsing again.
package yamlsyntax

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Bounds on the re-parses Locate makes. Each parses a prefix of the file,
// so the work is the sum of their sizes. A fault is usually found by the
// first or second (see Locate); many are needed only when the fault is far
// above where the parser noticed it (an unterminated quote or bracket near
// the end of a long file). The bytes bound keeps that case within a few
// parses of the whole file, which the caller has just made once: a golden
// file may hold 4 MiB, and yaml.v3 builds nodes at a few MB/s.
const (
	maxParses         = 64
	parseBytesPerFile = 2
	parseBytesFloor   = 1 << 20
)

var where = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// Problem is a yaml.v3 syntax error's text without its "yaml: line N: "
// prefix, for callers that print their own line.
func Problem(err error) string {
	return where.ReplaceAllString(err.Error(), "")
}

// Locate returns the 1-based line of src a user must fix for err, the
// error yaml.v3 returned decoding src. ok is false when src parses as YAML:
// err then came from mapping the nodes onto a type and carries its own
// lines.
//
// The line is the one after the longest prefix of whole lines that parses.
// Whether a prefix parses is not monotone in its length (a correct flow
// sequence over several lines fails when cut inside it), so it is the
// longest one, found by cutting from the end. The end is where the parser
// stopped reading when it failed: it cannot have seen a fault beyond the
// bytes it read, and any prefix holding those bytes fails the same way, so
// the scan starts a few lines below the fault instead of at the end of the
// file. The scan never answers a blank or comment line: adding one to a
// prefix does not change whether it parses, and it is not what to fix.
func Locate(src []byte, err error) (line int, ok bool) {
	if bytes.HasPrefix(src, []byte{0xfe, 0xff}) || bytes.HasPrefix(src, []byte{0xff, 0xfe}) {
		// UTF-16: cutting at '\n' bytes splits characters.
		return reported(err), !parses(bytes.NewReader(src))
	}
	lr := &lineReader{src: src}
	if parses(lr) {
		return 0, false
	}
	starts := lineStarts(src)
	hi := lineOf(starts, lr.off-1) // the last line the parser read, 1-based
	budget := parseBytesFloor + parseBytesPerFile*len(src)
	parsesN, parsed := 0, 0
	for k := hi - 1; k >= 0; k-- {
		if k > 0 && blank(src, starts, k) {
			continue
		}
		end := prefixEnd(src, starts, k)
		if parsesN == maxParses || parsed+end > budget {
			return fallback(src, starts, err), true
		}
		parsesN++
		parsed += end
		if parses(bytes.NewReader(src[:end])) {
			return nextContent(src, starts, k), true
		}
	}
	// Unreachable: the empty prefix parses.
	return reported(err), true
}

// fallback is yaml.v3's own line when the scan ran out of budget. yaml.v3
// counts from 0 for parser errors and from 1 for scanner errors; the line
// it names can be the one to fix only if the file cut after it fails, so a
// prefix that parses through it means the fault starts on the next line
// (for an unclosed bracket, the line that opens it).
func fallback(src []byte, starts []int, err error) int {
	r := reported(err)
	if r == 0 {
		// yaml.v3 omits the line when both marks are on the first.
		return 1
	}
	if r >= len(starts) || !parses(bytes.NewReader(src[:prefixEnd(src, starts, r)])) {
		return min(r, len(starts))
	}
	return r + 1
}

// reported is the line in err's text, 0 if none.
func reported(err error) int {
	m := where.FindStringSubmatch(err.Error())
	if m == nil || m[1] == "" {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// parses reports whether the first document of r parses: the callers
// decode the first and report a later one as a document too many.
func parses(r io.Reader) bool {
	var n yaml.Node
	err := yaml.NewDecoder(r).Decode(&n)
	return err == nil || errors.Is(err, io.EOF)
}

// lineReader hands the parser one line per Read, so that off, after the
// parser fails, tells how many lines it needed to see the fault.
type lineReader struct {
	src []byte
	off int
}

func (r *lineReader) Read(p []byte) (int, error) {
	if r.off >= len(r.src) {
		return 0, io.EOF
	}
	rest := r.src[r.off:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i+1]
	}
	n := copy(p, rest)
	r.off += n
	return n, nil
}

// lineStarts returns the offset of each line's first byte; line k (1-based)
// is src[starts[k-1]:starts[k]], the last one running to the end.
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i, b := range src {
		if b == '\n' && i+1 < len(src) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineOf is the 1-based line holding byte off.
func lineOf(starts []int, off int) int {
	k := 1
	for k < len(starts) && starts[k] <= off {
		k++
	}
	return k
}

// prefixEnd is the length of the first k lines, newline included.
func prefixEnd(src []byte, starts []int, k int) int {
	if k >= len(starts) {
		return len(src)
	}
	return starts[k]
}

// blank reports whether line k holds only spaces or a comment. A tab may
// be the fault itself (yaml.v3 rejects one before a comment at the start
// of a line), so a line with one is not blank.
func blank(src []byte, starts []int, k int) bool {
	l := strings.TrimLeft(string(src[starts[k-1]:prefixEnd(src, starts, k)]), " ")
	return strings.TrimRight(l, "\r\n") == "" || l[0] == '#'
}

// nextContent is the first line after k that is not blank, or k+1.
func nextContent(src []byte, starts []int, k int) int {
	for j := k + 1; j <= len(starts); j++ {
		if !blank(src, starts, j) {
			return j
		}
	}
	return min(k+1, len(starts))
}
