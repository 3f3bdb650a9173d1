package hostile

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MarkdownProblems checks a Markdown body mcp-eval rendered (PR comment or
// job summary) for what hostile server text could do to it, and returns one
// line per problem found:
//
//   - raw HTML: a "<" outside a code span and not escaped that does not open
//     one of the renderer's own tags (details, summary, sub, and the marker
//     comment on the first line);
//   - a live @mention: "@" followed by a name character outside a code span;
//   - a broken table: a row whose count of cell separators differs from its
//     table's header, or a row cut short of its closing "|";
//   - bidi overrides, control characters or invalid UTF-8 anywhere.
//
// It is a checker for tests, deliberately stricter than GitHub: it does not
// try to render Markdown, only to show that nothing untrusted got loose.
func MarkdownProblems(md string) []string {
	var out []string
	add := func(line int, f string, a ...any) {
		if len(out) < 20 {
			out = append(out, fmt.Sprintf("line %d: ", line+1)+fmt.Sprintf(f, a...))
		}
	}
	if !utf8.ValidString(md) {
		add(0, "invalid UTF-8")
	}
	lines := strings.Split(md, "\n")
	header := -1 // cell separators of the current table's header row
	for i, l := range lines {
		for _, r := range l {
			if (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				add(i, "control or bidi character U+%04X", r)
			}
		}
		code, text := splitCode(l)
		_ = code
		for j := 0; j < len(text); j++ {
			switch text[j] {
			case '<':
				if !allowedTag(text[j:], i == 0) {
					add(i, "raw HTML %q", clipStr(text[j:], 40))
				}
			case '@':
				if j+1 < len(text) && isNameByte(text[j+1]) {
					add(i, "live @mention %q", clipStr(text[j:], 40))
				}
			}
		}
		if strings.HasPrefix(l, "|") {
			n := cellSeparators(l)
			if !strings.HasSuffix(strings.TrimRight(l, " "), "|") || strings.HasSuffix(strings.TrimRight(l, " "), `\|`) {
				add(i, "table row not closed: %q", clipStr(l, 80))
			}
			if header < 0 {
				header = n
			} else if n != header {
				add(i, "table row with %d separators, header has %d: %q", n, header, clipStr(l, 80))
			}
		} else {
			header = -1
		}
	}
	return out
}

// splitCode separates a line's code spans from the rest, following
// CommonMark: a run of n backticks opens a span that the next run of
// exactly n closes; a backslash outside code escapes the next character
// (the escaped character is dropped from text, since it is literal).
func splitCode(l string) (code, text string) {
	var c, t strings.Builder
	for i := 0; i < len(l); {
		switch {
		case l[i] == '\\' && i+1 < len(l):
			t.WriteByte(' ') // keep positions readable; the character is literal
			i += 2
		case l[i] == '`':
			n := run(l, i, '`')
			end := closing(l, i+n, n)
			if end < 0 {
				t.WriteString(l[i : i+n])
				i += n
				continue
			}
			c.WriteString(l[i+n : end])
			i = end + n
		default:
			t.WriteByte(l[i])
			i++
		}
	}
	return c.String(), t.String()
}

func run(s string, i int, b byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == b {
		n++
	}
	return n
}

// closing finds a run of exactly n backticks at or after i.
func closing(s string, i, n int) int {
	for i < len(s) {
		if s[i] == '`' {
			m := run(s, i, '`')
			if m == n {
				return i
			}
			i += m
			continue
		}
		i++
	}
	return -1
}

// cellSeparators counts the "|" GFM splits a row on: every one not escaped
// with a backslash, inside code spans too (GFM splits cells first).
func cellSeparators(l string) int {
	n := 0
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

var ownTags = []string{"<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>"}

func allowedTag(s string, firstLine bool) bool {
	for _, t := range ownTags {
		if strings.HasPrefix(s, t) {
			return true
		}
	}
	// The sticky comment's marker, and the link syntax <https://…> the
	// renderer uses for the run URL.
	if firstLine && strings.HasPrefix(s, "<!-- mcp-eval") {
		return true
	}
	return strings.HasPrefix(s, "<http://") || strings.HasPrefix(s, "<https://")
}

func isNameByte(b byte) bool {
	return b == '_' || b == '-' || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

func clipStr(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
