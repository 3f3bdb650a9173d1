package lexical

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

// BM25 parameters: the usual ones (Robertson and Zaragoza's k1 = 1.2,
// b = 0.75). nameWeight counts a tool's name tokens this many times: a
// word of the name says more about a tool than one of its description.
const (
	k1         = 1.2
	b          = 0.75
	nameWeight = 2
)

// Ranked is a tool and its BM25 score for a prompt.
type Ranked struct {
	Tool  string  `json:"tool"`
	Score float64 `json:"score"`
	// Terms are the prompt's terms found in the tool's text, sorted: why
	// it scored.
	Terms []string `json:"terms"`
}

// Rank scores every tool against the prompt by BM25 over the tool's text:
// its name (weighted), description, and each parameter's name,
// description and enum values (local $refs followed). Highest first; ties
// by name, so the order is deterministic.
func Rank(prompt string, tools []llm.Tool) []Ranked {
	docs := make([][]string, len(tools))
	total := 0
	for i, t := range tools {
		docs[i] = toolTerms(t)
		total += len(docs[i])
	}
	avg := 1.0
	if len(tools) > 0 && total > 0 {
		avg = float64(total) / float64(len(tools))
	}
	df := map[string]int{}
	tfs := make([]map[string]int, len(docs))
	for i, d := range docs {
		tfs[i] = map[string]int{}
		for _, w := range d {
			tfs[i][w]++
		}
		for w := range tfs[i] {
			df[w]++
		}
	}
	query := unique(terms(prompt))
	n := float64(len(tools))
	out := make([]Ranked, len(tools))
	for i, t := range tools {
		r := Ranked{Tool: t.Name, Terms: []string{}}
		dl := float64(len(docs[i]))
		for _, q := range query {
			tf := float64(tfs[i][q])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[q])+0.5)/(float64(df[q])+0.5))
			r.Score += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avg))
			r.Terms = append(r.Terms, q)
		}
		sort.Strings(r.Terms)
		out[i] = r
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

// toolTerms is the text a tool is retrieved by.
func toolTerms(t llm.Tool) []string {
	var out []string
	name := terms(t.Name)
	for range nameWeight {
		out = append(out, name...)
	}
	out = append(out, terms(t.Description)...)
	for _, p := range properties(t.InputSchema) {
		out = append(out, terms(p.Name)...)
		out = append(out, terms(p.Description)...)
		for _, e := range p.Enum {
			out = append(out, terms(e)...)
		}
	}
	return out
}

// maxTextRunes bounds the text tokenized from a prompt or a tool (server
// descriptions are untrusted and can be long).
const maxTextRunes = 64 << 10

// terms splits text into search terms: words split at case changes and
// punctuation (get_weather → get, weather; searchInvoices → search,
// invoices), lower-cased, stop words dropped, lightly stemmed.
func terms(s string) []string {
	if r := []rune(s); len(r) > maxTextRunes {
		s = string(r[:maxTextRunes])
	}
	var out []string
	for _, w := range splitWords(s) {
		w = strings.ToLower(w)
		st := stem(w)
		if stopWords[w] || stopWords[st] || len(w) < 2 && !isDigits(w) {
			continue
		}
		out = append(out, st)
	}
	return out
}

// splitWords cuts at anything but letters and digits, and inside a word
// at a lower-to-upper change.
func splitWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

// stem strips the commonest English suffixes, the same way on both sides
// (invoices → invoice, matching → match, counted → count). It is crude on
// purpose: a baseline that anyone can predict by hand.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		return w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "es") && strings.ContainsAny(w[len(w)-3:len(w)-2], "sxz"):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

func isDigits(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

func unique(ws []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// stopWords are words that say nothing about which tool to call: function
// words, and the verbs of asking ("get", "tell", "give", "please").
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if then than so of in on at to for from by with
		about into over under as is are was were be been being do does did done have has had it its
		this that these those there here i me my we our you your he she they them their what which who
		whom whose when where why how can could would should will shall may might must not no yes
		any all some each every other more most very just also only too get gets got tell give
		please let s e g eg ie`) {
		m[w] = true
	}
	return m
}()
