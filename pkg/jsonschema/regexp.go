package jsonschema

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"

	lib "github.com/santhosh-tekuri/jsonschema/v6"
)

// JSON Schema patterns are ECMA-262 regular expressions; Go's regexp is
// RE2, which lacks lookaround and backreferences. A pattern RE2 cannot
// express is not an invalid schema: it is kept as an annotation (it
// matches everything) rather than reported as invalid or guessed at.
// Patterns that are malformed in any dialect (an unclosed group) are
// still errors.

// ecmaRegexp compiles a pattern the way the validator uses it.
func ecmaRegexp(pattern string) (lib.Regexp, error) {
	re, err := regexp.Compile(ecmaToRE2(pattern))
	if err == nil {
		return re, nil
	}
	var se *syntax.Error
	if errors.As(err, &se) && unsupportedInRE2(se) {
		return unassertedPattern(pattern), nil
	}
	return nil, err
}

// unsupportedInRE2 reports whether a parse error comes from ECMA-262
// syntax RE2 does not implement (lookaround, backreferences and other
// escapes), rather than from a malformed pattern.
func unsupportedInRE2(se *syntax.Error) bool {
	switch se.Code {
	case syntax.ErrInvalidPerlOp:
		return strings.HasPrefix(se.Expr, "(?=") || strings.HasPrefix(se.Expr, "(?!") ||
			strings.HasPrefix(se.Expr, "(?<=") || strings.HasPrefix(se.Expr, "(?<!")
	case syntax.ErrInvalidEscape:
		return true // \1 backreferences, \cX and the like
	}
	return false
}

// ecmaToRE2 rewrites the ECMA-262 escapes RE2 spells differently:
// \uXXXX and \u{X...} become \x{XXXX}.
func ecmaToRE2(p string) string {
	if !strings.Contains(p, `\u`) {
		return p
	}
	var sb strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			if p[i+1] == 'u' {
				if i+5 < len(p) && isHex(p[i+2:i+6]) {
					sb.WriteString(`\x{` + p[i+2:i+6] + `}`)
					i += 5
					continue
				}
				if i+2 < len(p) && p[i+2] == '{' {
					if end := strings.IndexByte(p[i+3:], '}'); end > 0 && isHex(p[i+3:i+3+end]) {
						sb.WriteString(`\x{` + p[i+3:i+3+end] + `}`)
						i += 3 + end
						continue
					}
				}
			}
			sb.WriteByte(p[i])
			sb.WriteByte(p[i+1])
			i++
			continue
		}
		sb.WriteByte(p[i])
	}
	return sb.String()
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// unassertedPattern is a pattern the harness cannot evaluate: it matches
// everything.
type unassertedPattern string

func (u unassertedPattern) String() string          { return string(u) }
func (u unassertedPattern) MatchString(string) bool { return true }
