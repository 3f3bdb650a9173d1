// Package match compares the arguments a model passed to a tool with a
// golden case's expected arguments, one argument at a time, by the rule
// the case's arg_match names:
//
//   - exact (the default): JSON equality; numbers by value (1 = 1.0),
//     objects by key, arrays in order. For ids, enums and anything typed.
//   - regex:PATTERN: the value (a string, or a number's JSON text) contains
//     a match of the Go RE2 pattern; write ^…$ to match it whole.
//   - tolerance:N / tolerance:N%: a number within N of the expected value,
//     or within N percent of it.
//   - semantic: free text, in tiers (llm-providers.md §5): equal as
//     written, then equal once normalised, then the lexical Score's bands
//     — Match at ≥ 0.95, NoMatch below 0.50, Uncertain between. Uncertain
//     is never a pass: the caller sends it to a judge model, or reports it
//     as uncertain when there is none.
//
// Quick start:
//
//	res := match.Args(step, call.Arguments) // step from golden.Case.Steps()
//	switch res.Verdict {
//	case match.Match: // every expected argument matched
//	case match.Uncertain: // res.Uncertain() lists what a judge must decide
//	case match.NoMatch: // res.Reasons() says why
//	}
//
// Arguments the case does not list are not checked: expect_args is what
// the case cares about, not the whole call.
package match

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
)

// Verdict is the outcome of a comparison.
type Verdict string

const (
	Match     Verdict = "match"
	NoMatch   Verdict = "no-match"
	Uncertain Verdict = "uncertain" // semantic only: for the judge, never a pass
)

// Tiers say what decided a Result.
const (
	TierExact      = "exact"      // equal as written, or exact JSON (in)equality
	TierNormalised = "normalised" // equal after case, diacritics, punctuation, stop words, aliases
	TierLexical    = "lexical"    // the lexical Score's band
	TierRegex      = "regex"
	TierTolerance  = "tolerance"
	TierMissing    = "missing" // the model did not pass the argument
	TierType       = "type"    // a value of the wrong JSON type
	TierJudge      = "judge"   // set by the caller when a judge resolved an Uncertain
)

// MaxArgumentsBytes bounds the arguments decoded for a comparison; model
// output is untrusted.
const MaxArgumentsBytes = 1 << 20

// Result is the comparison of one argument.
type Result struct {
	Arg string `json:"arg"`
	// Matcher is the rule as written in arg_match ("exact" by default).
	Matcher string  `json:"matcher"`
	Verdict Verdict `json:"verdict"`
	Tier    string  `json:"tier"`
	// Score is the lexical score of a semantic comparison; 1 for a match
	// and 0 for a mismatch otherwise.
	Score float64 `json:"score"`
	// Expected and Actual are the values compared (Actual is nil when the
	// argument was not passed), for a judge prompt or a report.
	Expected any `json:"expected"`
	Actual   any `json:"actual"`
	// Reason says why it is not a match ("" for a match). It quotes model
	// output, clipped: untrusted text.
	Reason string `json:"reason,omitempty"`
}

// ArgsResult is the comparison of one call's arguments.
type ArgsResult struct {
	// Verdict combines Results: NoMatch if any argument is NoMatch, else
	// Uncertain if any is Uncertain, else Match (also when nothing was
	// expected).
	Verdict Verdict `json:"verdict"`
	// Results has one entry per expected argument, by name.
	Results []Result `json:"results"`
	// Reason is set when the arguments as a whole could not be read (the
	// model's JSON did not parse, or is not an object).
	Reason string `json:"reason,omitempty"`
}

// Args compares a call's arguments with a step's expected ones. actual is
// the call's JSON object as the model sent it; nil (its JSON did not
// parse) fails every expected argument, and with nothing expected it is a
// Match.
func Args(step golden.Step, actual json.RawMessage) ArgsResult {
	names := make([]string, 0, len(step.Args))
	for k := range step.Args {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ArgsResult{Verdict: Match, Results: []Result{}}
	}
	got, reason := decodeObject(actual)
	out := ArgsResult{Results: make([]Result, 0, len(names)), Reason: reason}
	for _, name := range names {
		m := step.ArgMatch[name]
		var r Result
		if reason != "" {
			r = Result{Verdict: NoMatch, Tier: TierType, Expected: step.Args[name], Reason: reason}
		} else if v, ok := got[name]; !ok {
			r = Result{Verdict: NoMatch, Tier: TierMissing, Expected: step.Args[name],
				Reason: fmt.Sprintf("not passed (expected %s)", show(step.Args[name]))}
		} else {
			r = Value(m, step.Args[name], v)
		}
		r.Arg, r.Matcher = name, m.String()
		out.Results = append(out.Results, r)
	}
	out.Verdict = Combine(out.Results)
	return out
}

// decodeObject reads the model's arguments, numbers kept exact.
func decodeObject(raw json.RawMessage) (map[string]any, string) {
	if raw == nil {
		return nil, "the arguments were not valid JSON"
	}
	if len(raw) > MaxArgumentsBytes {
		return nil, fmt.Sprintf("the arguments are %d bytes, more than the %d compared", len(raw), MaxArgumentsBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "the arguments were not valid JSON"
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, "the arguments are not a JSON object"
	}
	return obj, ""
}

// Combine is the verdict of several results: NoMatch beats Uncertain
// beats Match; no results is a Match.
func Combine(results []Result) Verdict {
	v := Match
	for _, r := range results {
		switch r.Verdict {
		case NoMatch:
			return NoMatch
		case Uncertain:
			v = Uncertain
		}
	}
	return v
}

// Uncertain returns the results a judge must decide.
func (a ArgsResult) Uncertain() []Result {
	var out []Result
	for _, r := range a.Results {
		if r.Verdict == Uncertain {
			out = append(out, r)
		}
	}
	return out
}

// Reasons returns "arg: reason" for every result that is not a match.
func (a ArgsResult) Reasons() []string {
	var out []string
	for _, r := range a.Results {
		if r.Verdict != Match {
			out = append(out, r.Arg+": "+r.Reason)
		}
	}
	return out
}

// Value compares one expected value with what the model passed (decoded
// JSON: numbers as json.Number or float64). The zero Matcher is exact.
func Value(m golden.Matcher, expected, actual any) Result {
	r := Result{Matcher: m.String(), Expected: expected, Actual: actual}
	switch m.Kind {
	case golden.MatchSemantic:
		r.Verdict, r.Tier, r.Score, r.Reason = semanticValue(expected, actual)
	case golden.MatchRegex:
		r.Tier = TierRegex
		s, ok := text(actual)
		re, err := regexp.Compile(m.Pattern)
		switch {
		case err != nil: // the loader compiled it; only a hand-built Matcher gets here
			r.Reason = fmt.Sprintf("regex %q does not compile: %v", m.Pattern, err)
		case !ok:
			r.Tier, r.Reason = TierType, fmt.Sprintf("expected text matching %s, got %s", m.Pattern, show(actual))
		case re.MatchString(s):
			r.Verdict, r.Score = Match, 1
		default:
			r.Reason = fmt.Sprintf("%s does not match %s", show(actual), m.Pattern)
		}
	case golden.MatchTolerance:
		r.Tier = TierTolerance
		e, eok := float(expected)
		a, aok := float(actual)
		tol := m.Tolerance
		if m.Relative {
			tol *= math.Abs(e)
		}
		switch {
		case !eok || !aok:
			r.Tier, r.Reason = TierType, fmt.Sprintf("expected a number within %s of %s, got %s", m.String()[len("tolerance:"):], show(expected), show(actual))
		case math.Abs(a-e) <= tol*(1+1e-12)+1e-12: // float noise must not fail 0.1+0.2 vs 0.3
			r.Verdict, r.Score = Match, 1
		default:
			r.Reason = fmt.Sprintf("expected %s ± %s, got %s (off by %s)", show(expected), strconv.FormatFloat(tol, 'g', 6, 64), show(actual), strconv.FormatFloat(math.Abs(a-e), 'g', 6, 64))
		}
	default:
		r.Tier = TierExact
		if equal(expected, actual) {
			r.Verdict, r.Score = Match, 1
		} else {
			r.Reason = fmt.Sprintf("expected %s, got %s", show(expected), show(actual))
		}
	}
	if r.Verdict == "" {
		r.Verdict = NoMatch
	}
	return r
}

// semanticValue compares text; lists element by element and objects key
// by key (the worst element decides, the lowest score is kept); anything
// else exactly.
func semanticValue(expected, actual any) (Verdict, string, float64, string) {
	switch e := expected.(type) {
	case string:
		a, ok := text(actual)
		if !ok {
			return NoMatch, TierType, 0, fmt.Sprintf("expected text like %s, got %s", quote(e), show(actual))
		}
		return semantic(e, a)
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(e) {
			return NoMatch, TierType, 0, fmt.Sprintf("expected a list of %d, got %s", len(e), show(actual))
		}
		parts := make([]Result, len(e))
		for i := range e {
			parts[i].Verdict, parts[i].Tier, parts[i].Score, parts[i].Reason = semanticValue(e[i], a[i])
			if parts[i].Reason != "" {
				parts[i].Reason = fmt.Sprintf("item %d: %s", i, parts[i].Reason)
			}
		}
		return worst(parts)
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return NoMatch, TierType, 0, fmt.Sprintf("expected an object, got %s", show(actual))
		}
		keys := make([]string, 0, len(e))
		for k := range e {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]Result, 0, len(keys))
		for _, k := range keys {
			var p Result
			if v, ok := a[k]; ok {
				p.Verdict, p.Tier, p.Score, p.Reason = semanticValue(e[k], v)
			} else {
				p.Verdict, p.Tier, p.Reason = NoMatch, TierMissing, "not passed"
			}
			if p.Reason != "" {
				p.Reason = k + ": " + p.Reason
			}
			parts = append(parts, p)
		}
		return worst(parts)
	}
	if equal(expected, actual) {
		return Match, TierExact, 1, ""
	}
	return NoMatch, TierExact, 0, fmt.Sprintf("expected %s, got %s", show(expected), show(actual))
}

// worst picks the deciding part of a composite semantic comparison.
func worst(parts []Result) (Verdict, string, float64, string) {
	if len(parts) == 0 {
		return Match, TierExact, 1, ""
	}
	w := parts[0]
	rank := map[Verdict]int{Match: 0, Uncertain: 1, NoMatch: 2}
	for _, p := range parts[1:] {
		if rank[p.Verdict] > rank[w.Verdict] || (p.Verdict == w.Verdict && p.Score < w.Score) {
			w = p
		}
	}
	return w.Verdict, w.Tier, w.Score, w.Reason
}

// text is a value as text for regex and semantic: strings as they are,
// numbers and booleans as their JSON; objects, lists and null are not
// text.
func text(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	}
	if r, ok := rat(v); ok {
		return ratString(r), true
	}
	return "", false
}

// equal is JSON equality, numbers compared exactly by value.
func equal(a, b any) bool {
	if ra, ok := rat(a); ok {
		rb, ok := rat(b)
		return ok && ra.Cmp(rb) == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string, bool:
		return a == b
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

// rat reads any JSON number form exactly: a float64 through its shortest
// decimal, so 0.1 from YAML equals 0.1 from a model.
func rat(v any) (*big.Rat, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	case int:
		s = strconv.Itoa(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case int32:
		s = strconv.FormatInt(int64(x), 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	default:
		return nil, false
	}
	if len(s) > 400 { // a number that long is an attack on big.Rat, not an argument
		return nil, false
	}
	if strings.ContainsAny(s, "eE") {
		// big.Rat would expand "1e999999999" digit by digit: go through
		// float64, whose exponent is bounded.
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func float(v any) (float64, bool) {
	r, ok := rat(v)
	if !ok {
		return 0, false
	}
	f, _ := r.Float64()
	return f, !math.IsInf(f, 0)
}

// show renders a value for a message: JSON, clipped (model output is
// untrusted and can be long).
func show(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return clip(string(b))
}

func quote(s string) string { return clip(strconv.Quote(s)) }

func clip(s string) string {
	const n = 80
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
