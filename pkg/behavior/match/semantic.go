package match

import (
	"fmt"
	"sort"
	"unicode"
)

// The bands of the lexical score (llm-providers.md §5.2): at or above
// MatchAt only reorderings, case, diacritics, punctuation, stop words,
// known abbreviations and single typos remain, and the 42 labelled pairs
// show no false accept; below NoMatchBelow the pairs are near misses
// ("San Jose" / "San Juan") or acronyms and synonyms only a judge can
// recover. Between them lies "a qualifier was added or dropped" —
// "Seattle" vs "Seattle, WA" and "Seattle" vs "Seattle, Oregon" — which no
// lexical method can decide: Uncertain, for the judge.
const (
	MatchAt      = 0.95
	NoMatchBelow = 0.50
)

// Score is the offline lexical similarity of two argument values in [0, 1]
// ("v2" of llm-providers.md §5.2):
//
//  1. identifier guard: the identifier-like tokens (with a digit, or an
//     inner . / _ @ #) of both sides must be the same set, else 0
//     ("10 items" / "100 items", "a.txt" / "b.txt", "Q3 2025" / "Q3 2026");
//  2. tokens are matched exactly, then greedily with one edit allowed for
//     words of 5 letters or more and two for 9 or more (never for
//     identifiers), so "colour" = "color" but "Austria" ≠ "Australia";
//  3. all tokens matched: 1.0, minus 0.03 per fuzzy pair; one side a
//     subset of the other (a qualifier added or dropped): 0.90 − 0.05 per
//     extra token beyond the first; otherwise 0.8 × Dice overlap.
//
// It is symmetric and deterministic.
func Score(a, b string) float64 {
	ta, tb := tokenize(a), tokenize(b)
	if !sameSet(ta.ident, tb.ident) {
		return 0
	}
	if len(ta.words) == 0 || len(tb.words) == 0 {
		// Nothing but stop words and punctuation on a side: only the
		// folded text can tell.
		if len(ta.words) == 0 && len(tb.words) == 0 && fold(trimAll(a)) == fold(trimAll(b)) {
			return 1
		}
		return 0
	}
	exact, fuzzy := pair(ta.words, tb.words)
	matched := exact + fuzzy
	extraA, extraB := len(ta.words)-matched, len(tb.words)-matched
	var s float64
	switch {
	case extraA == 0 && extraB == 0:
		s = 1 - 0.03*float64(fuzzy)
	case extraA == 0 || extraB == 0:
		s = 0.90 - 0.05*float64(max(extraA, extraB)-1) - 0.03*float64(fuzzy)
	default:
		s = 0.8 * 2 * float64(matched) / float64(len(ta.words)+len(tb.words))
	}
	return min(max(s, 0), 1)
}

// Band turns a score into a verdict by the thresholds above.
func Band(score float64) Verdict {
	switch {
	case score >= MatchAt:
		return Match
	case score < NoMatchBelow:
		return NoMatch
	}
	return Uncertain
}

// Bounds on fuzzy matching, which is quadratic: past them only exact
// tokens count (a miss, never a false accept).
const (
	maxFuzzyPairs = 10_000 // unmatched tokens of a × unmatched tokens of b
	maxFuzzyWord  = 64     // bytes of a word that may differ by a typo
)

// pair counts exact and fuzzy token matches. Fuzzy pairing is greedy in
// sorted order, each token of a taking the closest free token of b (ties
// by order), so the result does not depend on map iteration.
func pair(a, b map[string]bool) (exact, fuzzy int) {
	var restA, restB []string
	for w := range a {
		if b[w] {
			exact++
		} else {
			restA = append(restA, w)
		}
	}
	for w := range b {
		if !a[w] {
			restB = append(restB, w)
		}
	}
	if len(restA)*len(restB) > maxFuzzyPairs {
		// Long texts (an email body): exact tokens only, so that a model's
		// megabyte of output cannot make the comparison quadratic.
		return exact, 0
	}
	sort.Strings(restA)
	sort.Strings(restB)
	used := make([]bool, len(restB))
	for _, x := range restA {
		best, bestD := -1, 0
		for j, y := range restB {
			if used[j] {
				continue
			}
			allowed := editsAllowed(x, y)
			if allowed == 0 {
				continue
			}
			if d := osa(x, y, allowed); d <= allowed && (best < 0 || d < bestD) {
				best, bestD = j, d
			}
		}
		if best >= 0 {
			used[best] = true
			fuzzy++
		}
	}
	return exact, fuzzy
}

// editsAllowed is how many typos two words may differ by: none for short
// words or anything with a digit, one from 5 letters, two from 9 (the
// shorter word decides, so a long word cannot absorb a short one).
func editsAllowed(x, y string) int {
	n := min(len([]rune(x)), len([]rune(y)))
	if max(len(x), len(y)) > maxFuzzyWord {
		return 0
	}
	for _, r := range x + y {
		if unicode.IsDigit(r) {
			return 0
		}
	}
	switch {
	case n >= 9:
		return 2
	case n >= 5:
		return 1
	}
	return 0
}

// osa is the optimal-string-alignment distance (Levenshtein plus adjacent
// transpositions: "recieve" → "receive" is one edit), stopping early once
// every path exceeds limit.
func osa(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func trimAll(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, r)
		}
	}
	return string(out)
}

// semantic compares two strings: equal as written, equal once normalised,
// or by the lexical score's band.
func semantic(expected, actual string) (Verdict, string, float64, string) {
	if expected == actual {
		return Match, TierExact, 1, ""
	}
	s := Score(expected, actual)
	v := Band(s)
	tier := TierLexical
	if s == 1 {
		tier = TierNormalised
	}
	var reason string
	switch v {
	case NoMatch:
		reason = fmt.Sprintf("expected %s, got %s: no lexical match (score %.2f < %.2f); only a judge could still recognise an acronym or synonym", quote(expected), quote(actual), s, NoMatchBelow)
	case Uncertain:
		reason = fmt.Sprintf("expected %s, got %s: uncertain (lexical score %.2f, between %.2f and %.2f), typically a qualifier added or dropped; needs a judge", quote(expected), quote(actual), s, NoMatchBelow, MatchAt)
	}
	return v, tier, s, reason
}
