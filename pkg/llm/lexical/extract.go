package lexical

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

// span is a piece of the prompt a value was taken from; a span fills at
// most one parameter.
type span struct{ start, end int }

// extractor fills one tool's parameters from one prompt.
type extractor struct {
	prompt string
	used   []span
}

func (x *extractor) free(s span) bool {
	for _, u := range x.used {
		if s.start < u.end && u.start < s.end {
			return false
		}
	}
	return true
}

// take returns the first free match of re, marking it used.
func (x *extractor) take(re *regexp.Regexp, group int) (string, bool) {
	for _, m := range re.FindAllStringSubmatchIndex(x.prompt, -1) {
		s := span{m[2*group], m[2*group+1]}
		if s.start >= 0 && x.free(s) {
			x.used = append(x.used, s)
			return x.prompt[s.start:s.end], true
		}
	}
	return "", false
}

// The patterns compile on first use: quotedRe alone (its {1,1000}
// repeats) costs milliseconds, which every mcp-eval start paid at init,
// Layer 0 only runs included.
var (
	emailRe  = lazyRE(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	quotedRe = lazyRE(`"([^"\n]{1,1000})"|“([^”\n]{1,1000})”|(?:^|[\s(\[{:,])'([^'\n]{1,1000})'(?:$|[\s)\]}.,;:!?])`)
	// numberRe finds free-standing numbers: not inside an id like C1234
	// or us-west1, not part of a word.
	numberRe = lazyRE(`(?:^|[^\pL\pN_.@-])(-?\d+(?:\.\d+)?)(?:$|[^\pL\pN_@-])`)
	// placeRe is a capitalised name after a preposition, with an optional
	// ", Region" part: "in Seattle, WA", "for Tokyo, Japan", "in São Paulo".
	placeRe = lazyRE(`\b(?:in|for|at|near|around|of)\s+(\p{Lu}[\pL'.-]*(?:\s+\p{Lu}[\pL'.-]*)*(?:,\s*\p{Lu}[\pL.-]*(?:\s+\p{Lu}[\pL.-]*)*)?)`)
	// exampleRe finds the example in a description: "e.g. us-west1".
	exampleRe = lazyRE(`(?i)\b(?:e\.g\.|eg|such as|like|for example)\s*[:,]?\s*["“']?([^\s"”',;)]+)`)
)

// lazyRE compiles pattern once, when first asked for.
func lazyRE(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// numberWords lets "count to ten" fill a number.
var numberWords = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
	"sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
}

var numberWordRe = lazyRE(`(?i)\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)\b`)

// upToWords before a number mark it as a bound ("up to 12", "at most 3"):
// preferred for a parameter such as a limit or a count's end.
var upToWords = []string{"to", "up to", "at most", "max", "maximum", "limit", "top", "first", "last", "until"}

// ExtractArgs fills the tool's parameters with what the prompt states
// plainly, deterministically, in this order:
//
//  1. enum values the prompt names as words ("fahrenheit", "overdue");
//  2. e-mail addresses, for format "email" parameters;
//  3. values matching a parameter's pattern (^C[0-9]{4}$ → "C1234"), or
//     shaped like the example in its description ("e.g. us-west1" →
//     letters-letters-digits → "eu-central1");
//  4. quoted strings: first to the parameter named just before the quote
//     (subject "Lunch"), then to the remaining required string
//     parameters in schema order;
//  5. numbers (digits or "one" … "twenty") within the parameter's
//     minimum and maximum, preferring one after "to", "up to", "at
//     most";
//  6. a capitalised place name after "in", "for", "at" for a required
//     string parameter about a city, location, place or address.
//
// What it cannot find it leaves out: the server then reports the missing
// argument, which is the baseline's honest failure.
func ExtractArgs(prompt string, tool llm.Tool) map[string]any {
	if r := []rune(prompt); len(r) > maxTextRunes {
		prompt = string(r[:maxTextRunes])
	}
	x := &extractor{prompt: prompt}
	props := properties(tool.InputSchema)
	out := map[string]any{}
	for _, p := range props { // 1
		if v, ok := x.enum(p); ok {
			out[p.Name] = v
		}
	}
	for _, p := range props { // 2
		if _, done := out[p.Name]; !done && p.Type == "string" && (p.Format == "email" || strings.Contains(strings.ToLower(p.Name), "email")) {
			if v, ok := x.take(emailRe(), 0); ok {
				out[p.Name] = v
			}
		}
	}
	for _, p := range props { // 3
		if _, done := out[p.Name]; !done && p.Type == "string" {
			if v, ok := x.shaped(p); ok {
				out[p.Name] = v
			}
		}
	}
	x.quoted(props, out)      // 4
	for _, p := range props { // 5
		if _, done := out[p.Name]; !done && (p.Type == "integer" || p.Type == "number") {
			if v, ok := x.number(p); ok {
				out[p.Name] = v
			}
		}
	}
	for _, p := range props { // 6
		if _, done := out[p.Name]; !done && p.Type == "string" && p.Required && placeLike(p) {
			if v, ok := x.take(placeRe(), 1); ok {
				out[p.Name] = strings.TrimRight(v, ".")
			}
		}
	}
	return out
}

func (x *extractor) enum(p property) (string, bool) {
	best, bestAt := "", -1
	var bestSpan span
	lower := strings.ToLower(x.prompt)
	for _, e := range p.Enum {
		if e == "" {
			continue
		}
		re, err := regexp.Compile(`(?i)(?:^|[^\pL\pN])(` + regexp.QuoteMeta(e) + `)(?:$|[^\pL\pN])`)
		if err != nil {
			continue
		}
		for _, m := range re.FindAllStringSubmatchIndex(lower, -1) {
			s := span{m[2], m[3]}
			if x.free(s) && (bestAt < 0 || s.start < bestAt) {
				best, bestAt, bestSpan = e, s.start, s
			}
			break
		}
	}
	if bestAt < 0 {
		return "", false
	}
	x.used = append(x.used, bestSpan)
	return best, true
}

// shaped finds a value by the parameter's pattern, or by the shape of the
// example in its description.
func (x *extractor) shaped(p property) (string, bool) {
	if p.Pattern != "" && len(p.Pattern) <= 512 {
		inner := strings.TrimSuffix(strings.TrimPrefix(p.Pattern, "^"), "$")
		if re, err := regexp.Compile(`(?:^|[^\pL\pN_-])(` + inner + `)(?:$|[^\pL\pN_-])`); err == nil {
			if v, ok := x.take(re, 1); ok {
				return v, true
			}
		}
	}
	m := exampleRe().FindStringSubmatch(p.Description)
	if m == nil || !strings.ContainsAny(m[1], "0123456789") {
		// Only examples with digits give a shape specific enough: "e.g.
		// Paris" would make every capitalised word a location.
		return "", false
	}
	re, err := regexp.Compile(`(?:^|[^\pL\pN_-])(` + shapeOf(strings.TrimRight(m[1], ".")) + `)(?:$|[^\pL\pN_-])`)
	if err != nil {
		return "", false
	}
	return x.take(re, 1)
}

// shapeOf turns an example into a pattern of its shape: runs of lower-case
// letters, upper-case letters and digits become classes, anything else
// stays literal ("us-west1" → [a-z]+-[a-z]+[0-9]+).
func shapeOf(example string) string {
	var b strings.Builder
	var prev string
	for _, r := range example {
		var class string
		switch {
		case unicode.IsLower(r):
			class = `\p{Ll}+`
		case unicode.IsUpper(r):
			class = `\p{Lu}+`
		case unicode.IsDigit(r):
			class = `[0-9]+`
		default:
			class = regexp.QuoteMeta(string(r))
			prev = ""
			b.WriteString(class)
			continue
		}
		if class != prev {
			b.WriteString(class)
		}
		prev = class
	}
	return b.String()
}

// quoted assigns quoted strings: to the parameter named right before the
// quote, then in order to the required string parameters still empty.
func (x *extractor) quoted(props []property, out map[string]any) {
	type quote struct {
		text string
		at   span
	}
	var quotes []quote
	for _, m := range quotedRe().FindAllStringSubmatchIndex(x.prompt, -1) {
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				s := span{m[2*g], m[2*g+1]}
				if x.free(s) {
					quotes = append(quotes, quote{x.prompt[s.start:s.end], s})
				}
				break
			}
		}
	}
	taken := make([]bool, len(quotes))
	for i, q := range quotes {
		before := strings.ToLower(lastWords(x.prompt[:q.at.start], 3))
		for _, p := range props {
			if _, done := out[p.Name]; done || p.Type != "string" {
				continue
			}
			if containsWord(before, strings.ToLower(p.Name)) {
				out[p.Name], taken[i] = q.text, true
				x.used = append(x.used, q.at)
				break
			}
		}
	}
	next := 0
	for _, p := range props {
		if _, done := out[p.Name]; done || p.Type != "string" || !p.Required || len(p.Enum) > 0 || p.Pattern != "" || p.Format != "" {
			continue
		}
		for next < len(quotes) && taken[next] {
			next++
		}
		if next == len(quotes) {
			return
		}
		out[p.Name], taken[next] = quotes[next].text, true
		x.used = append(x.used, quotes[next].at)
	}
}

// number picks a number for p: in range, preferring one after "up to".
func (x *extractor) number(p property) (any, bool) {
	type cand struct {
		value float64
		at    span
		upTo  bool
	}
	var cands []cand
	for _, m := range numberRe().FindAllStringSubmatchIndex(x.prompt, -1) {
		s := span{m[2], m[3]}
		if f, err := strconv.ParseFloat(x.prompt[s.start:s.end], 64); err == nil && x.free(s) {
			cands = append(cands, cand{value: f, at: s})
		}
	}
	for _, m := range numberWordRe().FindAllStringIndex(x.prompt, -1) {
		s := span{m[0], m[1]}
		if x.free(s) {
			cands = append(cands, cand{value: float64(numberWords[strings.ToLower(x.prompt[s.start:s.end])]), at: s})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].at.start < cands[j].at.start })
	best := -1
	for i, c := range cands {
		if p.Min != nil && c.value < *p.Min || p.Max != nil && c.value > *p.Max {
			continue
		}
		if p.Type == "integer" && c.value != float64(int64(c.value)) {
			continue
		}
		before := strings.ToLower(lastWords(x.prompt[:c.at.start], 2))
		for _, w := range upToWords {
			if before == w || strings.HasSuffix(before, " "+w) {
				cands[i].upTo = true
			}
		}
		if best < 0 || cands[i].upTo && !cands[best].upTo {
			best = i
		}
	}
	if best < 0 {
		return nil, false
	}
	c := cands[best]
	x.used = append(x.used, c.at)
	if p.Type == "integer" {
		return int64(c.value), true
	}
	return c.value, true
}

// placeLike reports whether a parameter holds a place name.
func placeLike(p property) bool {
	text := strings.ToLower(p.Name + " " + p.Description)
	for _, w := range []string{"city", "location", "place", "address", "town", "country"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// lastWords returns the last n words of s, space-joined.
func lastWords(s string, n int) string {
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(f) > n {
		f = f[len(f)-n:]
	}
	return strings.Join(f, " ")
}

func containsWord(text, word string) bool {
	for _, w := range strings.Fields(text) {
		if w == word {
			return true
		}
	}
	return false
}
