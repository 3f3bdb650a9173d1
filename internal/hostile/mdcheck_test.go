package hostile

import "testing"

// The checker must catch what it exists to catch, or every assertion built
// on it is vacuous.
func TestMarkdownProblemsCatches(t *testing.T) {
	bad := map[string]string{
		"raw HTML":     "a <img src=x> b",
		"mention":      "ping @octocat",
		"broken row":   "| a | b |\n|---|---|\n| x | y | z |",
		"open row":     "| a | b |\n|---|---|\n| x ⏎",
		"bidi":         "abc\u202edef",
		"control":      "a\x1b[31mb",
		"escaped pipe": "| a | b |\n|---|---|\n| x \\|",
	}
	for name, md := range bad {
		if len(MarkdownProblems(md)) == 0 {
			t.Errorf("%s: %q passed", name, md)
		}
	}
	good := []string{
		"<!-- mcp-eval:ci -->\n### ok",
		"`<img src=x>` and \\<b\\> and @\u200doctocat and `@octocat`",
		"| a | b |\n|---|---|\n| `x\\|y` | \\| |",
		"<details><summary>All</summary>\n\n</details>\n<sub>[run](<https://x/y>)</sub>",
		"`` a`b `` and ``` `` ```",
	}
	for _, md := range good {
		if p := MarkdownProblems(md); len(p) > 0 {
			t.Errorf("%q flagged: %v", md, p)
		}
	}
}
