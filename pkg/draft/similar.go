package draft

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// stopwords carry no meaning for telling two tools apart.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "for": true, "in": true, "on": true, "and": true,
	"or": true, "is": true, "are": true, "be": true, "by": true, "with": true, "from": true, "as": true, "at": true,
	"it": true, "its": true, "this": true, "that": true, "these": true, "those": true, "if": true, "when": true,
	"can": true, "will": true, "you": true, "your": true, "use": true, "used": true, "using": true, "tool": true,
	"returns": true, "return": true, "given": true, "any": true, "all": true, "not": true, "no": true, "only": true,
	"e": true, "g": true, "eg": true, "i": true, "me": true, "my": true, "we": true, "our": true, "so": true,
}

// words are a text's lower-case words without stopwords, with a crude
// plural fold so "invoice" and "invoices" agree.
func words(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if stopwords[f] || len(f) < 2 {
			continue
		}
		if len(f) > 3 && strings.HasSuffix(f, "s") && !strings.HasSuffix(f, "ss") {
			f = f[:len(f)-1]
		}
		out = append(out, f)
	}
	return out
}

// Similarity is the cosine of two texts' word counts: 1 for the same
// words, 0 for none in common. Deterministic, so two runs of golden init
// pick the same pairs.
func Similarity(a, b string) float64 {
	ca, cb := counts(words(a)), counts(words(b))
	var dot, na, nb float64
	for w, x := range ca {
		na += x * x
		dot += x * cb[w]
	}
	for _, y := range cb {
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func counts(ws []string) map[string]float64 {
	m := map[string]float64{}
	for _, w := range ws {
		m[w]++
	}
	return m
}

// Pair is two tools and the similarity of their descriptions.
type Pair struct {
	A, B  string
	Score float64
}

// SimilarPairs returns every pair of tools by descending similarity of
// name words + description (ties by names), at most limit.
func SimilarPairs(tools []Tool, limit int) []Pair {
	var out []Pair
	for i := range tools {
		for j := i + 1; j < len(tools); j++ {
			s := Similarity(toolText(tools[i]), toolText(tools[j]))
			out = append(out, Pair{A: tools[i].Name, B: tools[j].Name, Score: s})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		if out[i].A != out[j].A {
			return out[i].A < out[j].A
		}
		return out[i].B < out[j].B
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func toolText(t Tool) string {
	return strings.Join(nameWords(t.Name), " ") + " " + t.Title + " " + t.Description
}
