package poison

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Character classes the rules look for.

// isTag reports a Unicode tag character (U+E0000–U+E007F): invisible in
// every font, and each one maps to an ASCII character a model can read.
func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// isBidiControl reports the embedding, override and isolate controls
// that reorder how text displays (the "Trojan Source" set,
// CVE-2021-42574). The plain marks LRM, RLM and ALM are left out: right-
// to-left text uses them legitimately; in a name they are flagged anyway.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

func isBidiMark(r rune) bool { return r == 0x200E || r == 0x200F || r == 0x061C }

// isJoiner reports ZWJ and ZWNJ, which emoji sequences and several scripts
// (Persian, the Indic scripts) need between two of their own characters.
func isJoiner(r rune) bool { return r == 0x200D || r == 0x200C }

// isInvisible reports characters that render as nothing (or as blank
// space that is not a space) and carry no meaning in a description.
func isInvisible(r rune) bool {
	switch {
	case r == 0x200B, r == 0x2060, r >= 0x2061 && r <= 0x2064, r == 0xFEFF, r == 0x180E, r == 0x00AD, r == 0x034F,
		r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x17B4, r == 0x17B5:
		return true
	case r >= 0xE0100 && r <= 0xE01EF: // variation selectors 17–256: no font uses them on text; they encode bytes
		return true
	case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7F, r >= 0x80 && r <= 0x9F:
		return true
	case unicode.Is(unicode.Cf, r):
		// Other format characters, except those a script needs in running
		// text (Arabic and Syriac number signs, Kaithi and others).
		return !(r >= 0x0600 && r <= 0x0605) && r != 0x06DD && r != 0x070F && r != 0x08E2 && r != 0x110BD && r != 0x110CD &&
			!isTag(r) && !isBidiControl(r) && !isBidiMark(r) && !isJoiner(r)
	}
	return false
}

// isVariationSelector reports VS1–VS16, which select a glyph style for
// the character before them: meaningful after an emoji or a CJK ideograph,
// meaningless after plain ASCII text (except a keycap: 1 U+FE0F U+20E3).
func isVariationSelector(r rune) bool { return r >= 0xFE00 && r <= 0xFE0F }

// chars applies the character rules to one string.
func chars(fs *findings, tool, where, s string) {
	rs := []rune(s)
	offs := make([]int, 0, len(rs))
	for i := range s {
		offs = append(offs, i)
	}
	var tagAt, invAt, bidiAt = -1, -1, -1
	var tagN int
	invCount := map[rune]int{}
	bidiCount := map[rune]int{}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		prev, next := rune(-1), rune(-1)
		if i > 0 {
			prev = rs[i-1]
		}
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case r == 0x1F3F4:
			// A subdivision flag (England, Scotland, Wales) is U+1F3F4,
			// tag characters, then U+E007F: legitimate, skip it whole.
			if n := flagSequence(rs[i+1:]); n > 0 {
				i += n
			}
		case isTag(r):
			tagN++
			if tagAt < 0 {
				tagAt = offs[i]
			}
		case isBidiControl(r), isBidiMark(r) && where == "name":
			bidiCount[r]++
			if bidiAt < 0 {
				bidiAt = offs[i]
			}
		case isJoiner(r):
			if !joinsScript(prev) || !joinsScript(next) {
				invCount[r]++
				if invAt < 0 {
					invAt = offs[i]
				}
			}
		case isVariationSelector(r):
			keycap := (prev >= '0' && prev <= '9' || prev == '#' || prev == '*') && next == 0x20E3
			if prev >= 0 && prev < 0x80 && !keycap {
				invCount[r]++
				if invAt < 0 {
					invAt = offs[i]
				}
			}
		case isInvisible(r):
			invCount[r]++
			if invAt < 0 {
				invAt = offs[i]
			}
		}
	}
	if tagAt >= 0 {
		hidden := decodeTags(s)
		detail := fmt.Sprintf("%d tag character(s)", tagN)
		if hidden != "" {
			detail += fmt.Sprintf(" spelling %q", clipText(hidden, 120))
		}
		fs.add(Finding{Rule: RuleTagChars, Tool: tool, Where: where, Excerpt: excerpt(s, tagAt, 0), Detail: detail})
	}
	if invAt >= 0 {
		fs.add(Finding{Rule: RuleInvisible, Tool: tool, Where: where, Excerpt: excerpt(s, invAt, 0), Detail: countDetail(invCount, "invisible or control character")})
	}
	if bidiAt >= 0 {
		fs.add(Finding{Rule: RuleBidi, Tool: tool, Where: where, Excerpt: excerpt(s, bidiAt, 0), Detail: countDetail(bidiCount, "bidirectional control")})
	}
}

// flagSequence returns the length of a well-formed tag sequence of a
// subdivision flag at the start of rs (tags U+E0020–U+E007E, then the
// cancel tag U+E007F), or 0.
func flagSequence(rs []rune) int {
	for i, r := range rs {
		switch {
		case i > 16:
			return 0
		case r == 0xE007F:
			if i == 0 {
				return 0
			}
			return i + 1
		case r < 0xE0020 || r > 0xE007E:
			return 0
		}
	}
	return 0
}

// joinsScript reports a character a joiner may legitimately sit next to:
// a non-ASCII letter, mark or symbol (emoji, Indic and Arabic letters).
func joinsScript(r rune) bool {
	return r >= 0x80 && (unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsSymbol(r) || r == 0xFE0F)
}

// decodeTags returns the ASCII spelt by the tag characters of s ("" when
// there are none): what a model may read and a person never sees.
func decodeTags(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0xE0020 && r <= 0xE007E {
			b.WriteByte(byte(r - 0xE0000))
			if b.Len() >= maxScanBytes {
				break
			}
		}
	}
	return b.String()
}

func countDetail(counts map[rune]int, what string) string {
	rs := make([]rune, 0, len(counts))
	total := 0
	for r, n := range counts {
		rs = append(rs, r)
		total += n
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	var parts []string
	for i, r := range rs {
		if i == 6 {
			parts = append(parts, "…")
			break
		}
		p := fmt.Sprintf("U+%04X", r)
		if counts[r] > 1 {
			p += fmt.Sprintf(" ×%d", counts[r])
		}
		parts = append(parts, p)
	}
	return fmt.Sprintf("%d %s(s): %s", total, what, strings.Join(parts, ", "))
}

// excerpt shows the text around byte offset at (and n bytes of match),
// with hidden characters made visible, bounded.
func excerpt(s string, at, n int) string {
	start := max(at-40, 0)
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	end := min(at+n+100, len(s))
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	out := visible(s[start:end], maxExcerpt)
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) && !strings.HasSuffix(out, "…") {
		out += "…"
	}
	return out
}

// visible renders untrusted text for a report: every character a reader
// could not see (tags, invisible and bidi controls, control characters)
// becomes <U+XXXX>, newlines and tabs become \n and \t, and the result is
// clipped to n bytes.
func visible(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= n {
			break
		}
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError:
			b.WriteString("<U+FFFD>")
		case isTag(r), isBidiControl(r), isBidiMark(r), isJoiner(r), isInvisible(r), isVariationSelector(r), !unicode.IsGraphic(r) && r != ' ':
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteRune(r)
		}
	}
	return clipText(b.String(), n)
}

// clipText bounds s to n bytes on a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
