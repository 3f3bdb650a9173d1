package mcpclient

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The tracestate grammar as regexps (W3C Trace Context §3.3.1), kept here
// as the oracle the loops of stateKey and stateValue must agree with.
var (
	oracleStateKey   = regexp.MustCompile(`^(?:[a-z0-9][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$`)
	oracleStateValue = regexp.MustCompile(`^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$`)
)

func TestTracestateLoopsAgreeWithTheGrammar(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := "az09_-*/@ ,=A\t~!" + "\x7f\x1f"
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	cases := []string{"", "a", "0", "A", "a@b", "a@0", "0@a", "@a", "a@", "a@b@c", "a ", " a", "a=b", "a,b",
		strings.Repeat("a", 256), strings.Repeat("a", 257), strings.Repeat("a", 241) + "@" + strings.Repeat("b", 14),
		strings.Repeat("a", 242) + "@b", "a@" + strings.Repeat("b", 15)}
	for range 20000 {
		n := r.IntN(20)
		if r.IntN(10) == 0 {
			n = 230 + r.IntN(40)
		}
		s := gen(n)
		if r.IntN(3) == 0 && n > 0 {
			s = strings.Map(func(c rune) rune {
				if r.IntN(4) == 0 {
					return c
				}
				return rune("abz09_-*/"[r.IntN(9)])
			}, s)
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		if got, want := stateKey(s), oracleStateKey.MatchString(s); got != want {
			t.Errorf("stateKey(%q) = %v, the grammar says %v", s, got, want)
		}
		if got, want := stateValue(s), oracleStateValue.MatchString(s); got != want {
			t.Errorf("stateValue(%q) = %v, the grammar says %v", s, got, want)
		}
	}
}
