package render

import (
	"html"
	"strings"
	"unicode/utf8"
)

// Markdown safety. Everything a server or a model wrote (tool names, case
// ids taken from golden files, messages, model names) reaches a PR comment
// only through mdText or mdCode, which guarantee:
//
//   - no raw HTML, no links, no images: every ASCII punctuation character
//     is backslash-escaped (CommonMark §2.4 makes each one literal), so
//     <, [, ], (, ), !, & and ` never start anything;
//   - no @mentions and no #123 references: GitHub finds those in the
//     rendered text, after Markdown, so escaping does not stop them; a
//     zero-width joiner after @ and # does;
//   - no bare autolinks: a zero-width space breaks "://" and "www.";
//   - no broken tables: | is escaped (GFM lets \| stand in a cell, even in
//     a code span), and newlines, control and bidi characters are replaced
//     as in Line.
const (
	zwj  = "\u200d"
	zwsp = "\u200b"
)

// mdMaxRunes cuts a single untrusted value, so one hostile string cannot
// eat the comment's size budget.
const mdMaxRunes = 500

// mdText makes untrusted text safe as Markdown prose or a table cell.
func mdText(s string) string {
	s = breakAutolinks(clip(oneLine(s), mdMaxRunes))
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '@' || r == '#':
			b.WriteRune(r)
			b.WriteString(zwj)
		case r < 0x80 && isASCIIPunct(byte(r)):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode puts an untrusted identifier in a code span: shown verbatim (no
// Markdown, no mentions, no autolinks inside code), with | escaped for
// tables. An empty value is shown as a dash.
func mdCode(s string) string {
	s = clip(oneLine(s), mdMaxRunes)
	if strings.TrimSpace(s) == "" {
		return "–"
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	// The fence must be longer than any run of backticks inside.
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || (strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ")) {
		// CommonMark strips one space on each side when both are there;
		// padding keeps a leading or trailing backtick apart from the fence.
		s = " " + s + " "
	}
	return fence + s + fence
}

// oneLine replaces what Line replaces (line breaks, control, bidi and tag
// characters) without Line's 300-byte cut: Markdown values are clipped by
// rune count instead, after this.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r':
			return '⏎'
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '\uFFFD'
		case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f:
			return '\uFFFD'
		case r >= 0xe0000 && r <= 0xe007f:
			return '\uFFFD'
		}
		return r
	}, s)
}

func isASCIIPunct(c byte) bool {
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~')
}

func longestRun(s string, c byte) int {
	best, cur := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			cur++
			best = max(best, cur)
		} else {
			cur = 0
		}
	}
	return best
}

// breakAutolinks puts a zero-width space into "://" and "www." so neither
// GFM nor GitHub's own pass turns untrusted text into a link.
func breakAutolinks(s string) string {
	s = strings.ReplaceAll(s, "://", ":"+zwsp+"//")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i+4 <= len(s) && strings.EqualFold(s[i:i+4], "www.") {
			b.WriteString(s[i : i+3])
			b.WriteString(zwsp)
			b.WriteByte('.')
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// clip cuts s to n runes with an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

// summaryText makes untrusted text safe inside <summary>: a raw HTML line,
// where Markdown escapes would show as backslashes, so HTML escaping, with
// mentions and autolinks broken as mdText breaks them.
func summaryText(s string) string {
	s = breakAutolinks(clip(oneLine(s), 120))
	s = html.EscapeString(s)
	return strings.NewReplacer("@", "@"+zwj, "#", "#"+zwj).Replace(s)
}

// mdID is an identifier in a table cell that must not wrap (case ids,
// check ids, attack categories): a browser breaks a code span after any
// hyphen when a column is squeezed, so hyphens become non-breaking ones
// (U+2011), which look the same. Needs attention and the golden file keep
// the id as written, for searching.
func mdID(s string) string {
	return mdCode(strings.ReplaceAll(s, "-", "\u2011"))
}
