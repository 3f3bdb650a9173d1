package draft

import "testing"

// A semantic value is mentioned by a whole content word of it: not by a
// part of another word, nor by a stopword.
func TestMentionsAWordOf(t *testing.T) {
	for _, c := range []struct {
		prompt, value string
		want          bool
	}{
		{"do i need an umbrella in seattle today?", "Seattle, WA", true},
		{"is it raining where i live?", "Seattle, WA", false},
		{"show any open orders", "NY", false},
		{"list the open invoices", "invoice", true},
		{"list the orders for me", "the roadmap", false},
		{"what about 42?", "42", true},
		{"show me everything", "all", false},
		{"show me all of it", "all", true},
	} {
		if got := mentionsAWordOf(c.prompt, c.value); got != c.want {
			t.Errorf("mentionsAWordOf(%q, %q) = %v, want %v", c.prompt, c.value, got, c.want)
		}
	}
}
