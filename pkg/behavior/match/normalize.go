package match

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// tokens is a string reduced to what its meaning rests on: ident holds the
// identifier-like tokens (any digit, or an inner . / _ @ #), which must
// agree exactly; words holds every token after folding, alias expansion
// and stop-word removal, identifiers included.
type tokens struct {
	ident map[string]bool
	words map[string]bool
}

// tokenize follows llm-providers.md §5.2 ("v2"): split on spaces; trim the
// punctuation around each token; identifiers stay whole ("a.txt", "10",
// "Q3", "us-west1"); a two-letter US state code closing a place name
// becomes the state's name (so "WA" = "Washington", and
// "Portland, OR" keeps its "OR", not dropped as the stop word "or"); the rest is folded (NFKD, marks removed, lower case), split on
// inner punctuation, stop words dropped, and street-address abbreviations
// expanded.
func tokenize(s string) tokens {
	t := tokens{ident: map[string]bool{}, words: map[string]bool{}}
	fields := strings.Fields(s)
	for i, raw := range fields {
		tok := strings.TrimFunc(raw, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if tok == "" {
			continue
		}
		if isIdentifier(tok) {
			id := fold(tok)
			t.ident[id] = true
			t.words[id] = true
			continue
		}
		// A state code closes a place name: "Seattle, WA", "Portland OR",
		// "Springfield, IL 62701", and in lower case only after a comma
		// ("seattle, wa"). Elsewhere "IN" or "OR" in a shouted sentence, or
		// "in" and "or" anywhere, are words.
		afterComma := i > 0 && strings.HasSuffix(fields[i-1], ",")
		upper := strings.ToUpper(tok) == tok
		if name, ok := stateCodes[strings.ToUpper(tok)]; ok && (afterComma || (upper && i == len(fields)-1)) {
			for _, w := range strings.Fields(name) {
				t.words[w] = true
			}
			continue
		}
		folded := strings.NewReplacer("'", "", "’", "").Replace(fold(tok))
		for _, w := range strings.FieldsFunc(folded, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if stopWords[w] {
				continue
			}
			if long, ok := aliases[w]; ok {
				w = long
			}
			t.words[w] = true
		}
	}
	return t
}

// isIdentifier reports whether a trimmed token must match exactly: it has
// a digit ("10" ≠ "100", "2025" ≠ "2026") or inner punctuation that makes
// it a name ("a.txt" ≠ "b.txt", an email, a path).
func isIdentifier(tok string) bool {
	for _, r := range tok {
		if unicode.IsDigit(r) || strings.ContainsRune("./_@#", r) {
			return true
		}
	}
	return false
}

// fold lower-cases and strips diacritics: "São" → "sao".
func fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// stopWords carry no meaning in an argument value ("weather in Seattle" =
// "Seattle weather"). The list is short on purpose: "not", "new", "no"
// change meaning and stay.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "in": true, "on": true, "of": true, "for": true,
	"to": true, "at": true, "by": true, "and": true, "or": true, "with": true, "from": true,
}

// aliases are abbreviations with one reading in argument values.
var aliases = map[string]string{
	"st": "street", "mt": "mount", "ft": "fort", "ave": "avenue", "rd": "road", "blvd": "boulevard",
}

// stateCodes are the USPS codes of the US states and DC.
var stateCodes = map[string]string{
	"AL": "alabama", "AK": "alaska", "AZ": "arizona", "AR": "arkansas", "CA": "california",
	"CO": "colorado", "CT": "connecticut", "DE": "delaware", "DC": "district columbia", "FL": "florida",
	"GA": "georgia", "HI": "hawaii", "ID": "idaho", "IL": "illinois", "IN": "indiana", "IA": "iowa",
	"KS": "kansas", "KY": "kentucky", "LA": "louisiana", "ME": "maine", "MD": "maryland",
	"MA": "massachusetts", "MI": "michigan", "MN": "minnesota", "MS": "mississippi", "MO": "missouri",
	"MT": "montana", "NE": "nebraska", "NV": "nevada", "NH": "new hampshire", "NJ": "new jersey",
	"NM": "new mexico", "NY": "new york", "NC": "north carolina", "ND": "north dakota", "OH": "ohio",
	"OK": "oklahoma", "OR": "oregon", "PA": "pennsylvania", "RI": "rhode island", "SC": "south carolina",
	"SD": "south dakota", "TN": "tennessee", "TX": "texas", "UT": "utah", "VT": "vermont",
	"VA": "virginia", "WA": "washington", "WV": "west virginia", "WI": "wisconsin", "WY": "wyoming",
}
