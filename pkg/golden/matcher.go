package golden

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Matcher kinds, as written in arg_match.
const (
	MatchExact     = "exact"     // JSON equality: the default for ids and enums
	MatchSemantic  = "semantic"  // normalised, then lexical bands, then the judge
	MatchRegex     = "regex"     // regex:PATTERN, Go RE2 syntax, unanchored
	MatchTolerance = "tolerance" // tolerance:0.5 (absolute) or tolerance:2% (relative)
)

// MatcherSyntax lists the accepted arg_match forms, for error messages.
const MatcherSyntax = `exact, semantic, regex:PATTERN (e.g. regex:^C\d{4}$) or tolerance:N (absolute, e.g. tolerance:0.5) or tolerance:N% (relative, e.g. tolerance:2%)`

// maxPatternLen bounds a regex from a golden file; RE2 runs in linear time,
// but a huge pattern still costs memory to compile.
const maxPatternLen = 1024

// ParseMatcher reads one arg_match value. The error says what was wrong;
// the loader adds the position and MatcherSyntax.
func ParseMatcher(s string) (Matcher, error) {
	s = strings.TrimSpace(s)
	kind, arg, hasArg := strings.Cut(s, ":")
	switch kind {
	case MatchExact, MatchSemantic:
		if hasArg {
			return Matcher{}, fmt.Errorf("%s takes no argument, got %q", kind, s)
		}
		return Matcher{Kind: kind}, nil
	case MatchRegex:
		if arg == "" {
			return Matcher{}, fmt.Errorf("regex needs a pattern after the colon, got %q", s)
		}
		if len(arg) > maxPatternLen {
			return Matcher{}, fmt.Errorf("regex pattern is %d bytes, at most %d", len(arg), maxPatternLen)
		}
		if _, err := regexp.Compile(arg); err != nil {
			return Matcher{}, fmt.Errorf("regex %q does not compile: %v", arg, err)
		}
		return Matcher{Kind: MatchRegex, Pattern: arg}, nil
	case MatchTolerance:
		num, relative := strings.CutSuffix(strings.TrimSpace(arg), "%")
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if !hasArg || err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return Matcher{}, fmt.Errorf("tolerance needs a non-negative number after the colon, got %q", s)
		}
		if relative {
			f /= 100
		}
		return Matcher{Kind: MatchTolerance, Tolerance: f, Relative: relative}, nil
	}
	return Matcher{}, fmt.Errorf("unknown matcher %q", s)
}

// String writes the matcher back in arg_match syntax, so reports show the
// rule as the user wrote it.
func (m Matcher) String() string {
	switch m.Kind {
	case MatchRegex:
		return MatchRegex + ":" + m.Pattern
	case MatchTolerance:
		if m.Relative {
			// 12 digits undo the float noise of the /100 (0.1% is stored as
			// 0.001, and 0.001·100 is 0.10000000000000002).
			return MatchTolerance + ":" + strconv.FormatFloat(m.Tolerance*100, 'g', 12, 64) + "%"
		}
		return MatchTolerance + ":" + strconv.FormatFloat(m.Tolerance, 'g', -1, 64)
	case "":
		return MatchExact
	}
	return m.Kind
}
