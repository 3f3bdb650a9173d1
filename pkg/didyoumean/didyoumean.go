// Package didyoumean finds the known name a mistyped one was most likely
// meant to be: a golden file's key, a fault, a tool the server lists. It
// imports nothing of this module, so any layer can use it.
package didyoumean

import (
	"strings"
	"unicode/utf8"
)

// maxDistance is the largest edit distance still taken for a typo: two
// edits cover a transposition (send_emial) or a letter dropped and
// another doubled; three already turn most short names into others.
const maxDistance = 2

// Nearest returns the name of known that got most likely misspells, and
// false when none is near: within maxDistance edits, ignoring case, and
// closer than got's own length (else any two short names would match).
// Of equally near names the first wins, so the caller's order decides.
//
// The known names may come from a server: a name whose length alone puts
// it out of reach is not compared, so a hostile megabyte-long name costs
// a length check, not a quadratic distance.
func Nearest(got string, known []string) (string, bool) {
	n := utf8.RuneCountInString(got)
	lower := strings.ToLower(got)
	best, bestD, found := "", maxDistance+1, false
	for _, k := range known {
		// A rune is at most 4 bytes: this bounds the work before the
		// runes are counted.
		if len(k) > 4*(n+maxDistance) {
			continue
		}
		m := utf8.RuneCountInString(k)
		if m > n+maxDistance || m < n-maxDistance {
			continue
		}
		if d := Distance(lower, strings.ToLower(k)); d < bestD && d < n {
			best, bestD, found = k, d, true
		}
	}
	return best, found
}

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
