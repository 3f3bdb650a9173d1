package render

import (
	"strings"
	"testing"
)

func TestMDCode(t *testing.T) {
	for in, want := range map[string]string{
		"get_weather":  "`get_weather`",
		"a`b":          "``a`b``",
		"`x":           "`` `x ``",
		"a|b":          "`a\\|b`",
		"two\nlines":   "`two⏎lines`",
		"":             "–",
		"  ":           "–",
		" padded ":     "`  padded  `",
		"``y``":        "``` ``y`` ```",
		"\u202eevil":   "`\uFFFDevil`",
		"<b>@me</b>":   "`<b>@me</b>`", // inert inside a code span
		"end\\":        "`end\\`",
		"x\x1b[31m":    "`x\uFFFD[31m`",
		"tab\there":    "`tab here`",
		"www.evil.com": "`www.evil.com`",
	} {
		if got := mdCode(in); got != want {
			t.Errorf("mdCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMDText(t *testing.T) {
	for in, want := range map[string]string{
		"plain words":           "plain words",
		"<script>":              `\<script\>`,
		"[x](http://e.com)":     `\[x\]\(http\:` + zwsp + `\/\/e\.com\)`,
		"@user #12":             "@" + zwj + "user #" + zwj + "12",
		"a|b":                   `a\|b`,
		"www.evil.com":          "www" + zwsp + `\.evil\.com`,
		"&#x202E;":              `\&#` + zwj + `x202E\;`,
		"*bold* _it_ ~~s~~ `c`": `\*bold\* \_it\_ \~\~s\~\~ \` + "`c\\`",
		"back\\slash":           `back\\slash`,
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q, want %q", in, got, want)
		}
	}
	long := mdText(strings.Repeat("é", 1000))
	if n := len([]rune(long)); n != mdMaxRunes+1 || !strings.HasSuffix(long, "…") {
		t.Errorf("a long value is %d runes, want %d with an ellipsis", n, mdMaxRunes+1)
	}
}
