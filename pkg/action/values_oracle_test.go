package action

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// What an output value and a score output may be, as regexps: the oracle
// the loops of outputValue and scoreValue must agree with.
var (
	oracleOutput = regexp.MustCompile(`^[\x20-\x7E]{0,512}$`)
	oracleScore  = regexp.MustCompile(`^[0-9][0-9./%+-]{0,31}$|^-[0-9][0-9./%+-]{0,30}$`)
)

func TestOutputAndScoreLoopsAgreeWithTheirGrammar(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := "09./%+-a \n\r\x7f\x1f~é"
	cases := []string{"", "0", "-", "-0", "--0", "0-", "1/5", "0.97", "-0.5%", "5/5+", "a", " ", "\n",
		strings.Repeat("0", 32), strings.Repeat("0", 33), "-" + strings.Repeat("0", 31), "-" + strings.Repeat("0", 32),
		strings.Repeat("x", 512), strings.Repeat("x", 513), strings.Repeat("x", 511) + "\n"}
	for range 20000 {
		n := r.IntN(12)
		if r.IntN(10) == 0 {
			n = 28 + r.IntN(8)
		}
		if r.IntN(20) == 0 {
			n = 508 + r.IntN(8)
		}
		var b strings.Builder
		for range n {
			b.WriteString(string(alphabet[r.IntN(len(alphabet))]))
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got, want := outputValue(s), oracleOutput.MatchString(s); got != want {
			t.Errorf("outputValue(%q) = %v, the grammar says %v", s, got, want)
		}
		if got, want := scoreValue(s), oracleScore.MatchString(s); got != want {
			t.Errorf("scoreValue(%q) = %v, the grammar says %v", s, got, want)
		}
	}
}
