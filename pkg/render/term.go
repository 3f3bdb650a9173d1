package render

import "strings"

// TermLine makes text from the server safe for a terminal and a CI log:
// control characters (escape sequences, carriage returns, bidi overrides)
// become U+FFFD, and a leading "::" is percent-encoded, since a value
// printed at the start of a line (a tool name in probe's list) would
// otherwise be read by the GitHub runner as a workflow command.
func TermLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return '\uFFFD'
		}
		return r
	}, s)
	if t := strings.TrimLeft(s, " "); strings.HasPrefix(t, "::") {
		s = s[:len(s)-len(t)] + "%3A%3A" + t[2:]
	}
	return s
}

// TermText is TermLine for multi-line messages of our own (errors with a
// hint line, a stderr tail): newlines stay, everything else is
// neutralised.
func TermText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = TermLine(l)
	}
	return strings.Join(lines, "\n")
}
