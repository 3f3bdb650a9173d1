package match

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
)

func mustMatcher(t *testing.T, s string) golden.Matcher {
	t.Helper()
	m, err := golden.ParseMatcher(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func decode(t *testing.T, s string) any {
	t.Helper()
	obj, reason := decodeObject(json.RawMessage(`{"v":` + s + `}`))
	if reason != "" {
		t.Fatalf("%s: %s", s, reason)
	}
	return obj["v"]
}

func TestValue(t *testing.T) {
	for _, c := range []struct {
		matcher  string
		expected any // as the golden loader produces it
		actual   string
		want     Verdict
		tier     string
	}{
		// exact: JSON equality, numbers by value
		{"exact", "celsius", `"celsius"`, Match, TierExact},
		{"exact", "celsius", `"Celsius"`, NoMatch, TierExact},
		{"exact", int64(3), `3`, Match, TierExact},
		{"exact", int64(3), `3.0`, Match, TierExact},
		{"exact", int64(3), `3e0`, Match, TierExact},
		{"exact", int64(3), `"3"`, NoMatch, TierExact},
		{"exact", 0.1, `0.1`, Match, TierExact},
		{"exact", 0.3, `0.30000000000000004`, NoMatch, TierExact},
		{"exact", int64(9007199254740993), `9007199254740993`, Match, TierExact},
		{"exact", int64(9007199254740993), `9007199254740992`, NoMatch, TierExact},
		{"exact", true, `true`, Match, TierExact},
		{"exact", nil, `null`, Match, TierExact},
		{"exact", []any{"a", int64(1)}, `["a",1]`, Match, TierExact},
		{"exact", []any{"a", int64(1)}, `[1,"a"]`, NoMatch, TierExact},
		{"exact", map[string]any{"k": "v"}, `{"k":"v"}`, Match, TierExact},
		{"exact", map[string]any{"k": "v"}, `{"k":"v","x":1}`, NoMatch, TierExact},
		{"exact", int64(1), `1e999999999`, NoMatch, TierExact}, // no big.Rat blow-up
		// regex: unanchored RE2 on the text
		{`regex:^C\d{4}$`, "C1234", `"C0042"`, Match, TierRegex},
		{`regex:^C\d{4}$`, "C1234", `"C42"`, NoMatch, TierRegex},
		{`regex:^C\d{4}$`, "C1234", `"xC1234"`, NoMatch, TierRegex},
		{`regex:\d{4}`, "C1234", `"xC1234y"`, Match, TierRegex},
		{`regex:^\d+$`, "12", `12`, Match, TierRegex},
		{`regex:^\d+$`, "12", `{"a":1}`, NoMatch, TierType},
		// tolerance: absolute and relative
		{"tolerance:0.5", 21.0, `21.5`, Match, TierTolerance},
		{"tolerance:0.5", 21.0, `20.4`, NoMatch, TierTolerance},
		{"tolerance:1", int64(10), `9`, Match, TierTolerance},
		{"tolerance:0", 0.3, `0.30000000000000004`, Match, TierTolerance},
		{"tolerance:2%", 100.0, `102`, Match, TierTolerance},
		{"tolerance:2%", 100.0, `97.9`, NoMatch, TierTolerance},
		{"tolerance:1", int64(10), `"10"`, NoMatch, TierType},
		// semantic: tiers
		{"semantic", "Seattle, WA", `"Seattle, WA"`, Match, TierExact},
		{"semantic", "Seattle, WA", `"Seattle, Washington"`, Match, TierNormalised},
		{"semantic", "recieve email", `"receive email"`, Match, TierLexical},
		{"semantic", "Seattle", `"Seattle, WA"`, Uncertain, TierLexical},
		{"semantic", "Seattle", `"Seattle, Oregon"`, Uncertain, TierLexical},
		{"semantic", "Seattle, WA", `"Seattle, Oregon"`, NoMatch, TierLexical},
		{"semantic", "10", `10`, Match, TierExact},
		{"semantic", "Seattle", `["Seattle"]`, NoMatch, TierType},
		{"semantic", []any{"Oslo", "Madrid"}, `["oslo","Madrid, Spain"]`, Uncertain, TierLexical},
		{"semantic", []any{"Oslo", "Madrid"}, `["Oslo"]`, NoMatch, TierType},
		{"semantic", map[string]any{"city": "Paris"}, `{"city":"paris","x":1}`, Match, TierNormalised},
		{"semantic", map[string]any{"city": "Paris"}, `{"town":"paris"}`, NoMatch, TierMissing},
	} {
		m := mustMatcher(t, c.matcher)
		r := Value(m, c.expected, decode(t, c.actual))
		if r.Verdict != c.want || r.Tier != c.tier {
			t.Errorf("%s %v vs %s: %s/%s (%s), want %s/%s", c.matcher, c.expected, c.actual, r.Verdict, r.Tier, r.Reason, c.want, c.tier)
		}
		if (r.Verdict == Match) != (r.Reason == "") {
			t.Errorf("%s %v vs %s: reason %q with verdict %s", c.matcher, c.expected, c.actual, r.Reason, r.Verdict)
		}
		if r.Matcher != c.matcher {
			t.Errorf("matcher shown as %q, want %q", r.Matcher, c.matcher)
		}
	}
}

func TestValueScoresAndReasons(t *testing.T) {
	r := Value(golden.Matcher{Kind: golden.MatchSemantic}, "Seattle", "Seattle, WA")
	if r.Score != 0.9 || !strings.Contains(r.Reason, "uncertain (lexical score 0.90, between 0.50 and 0.95)") {
		t.Errorf("%+v", r)
	}
	r = Value(golden.Matcher{Kind: golden.MatchSemantic}, "NYC", "New York City")
	if r.Score != 0 || !strings.Contains(r.Reason, "no lexical match (score 0.00 < 0.50)") {
		t.Errorf("%+v", r)
	}
	r = Value(golden.Matcher{Kind: golden.MatchTolerance, Tolerance: 0.5}, 21.0, json.Number("22"))
	if r.Reason != "expected 21 ± 0.5, got 22 (off by 1)" {
		t.Errorf("%q", r.Reason)
	}
	r = Value(golden.Matcher{}, "x", strings.Repeat("y", 500))
	if len([]rune(r.Reason)) > 120 || !strings.HasSuffix(r.Reason, "…") {
		t.Errorf("model text must be clipped in reasons: %q", r.Reason)
	}
}

func TestArgs(t *testing.T) {
	step := golden.Step{
		Tool: "get_weather",
		Args: map[string]any{"location": "Seattle", "units": "celsius"},
		ArgMatch: map[string]golden.Matcher{
			"location": {Kind: golden.MatchSemantic},
		},
	}
	for _, c := range []struct {
		actual  string
		want    Verdict
		reasons []string
	}{
		{`{"location":"seattle","units":"celsius","extra":true}`, Match, nil},
		{`{"location":"Seattle, WA","units":"celsius"}`, Uncertain, []string{`location: expected "Seattle", got "Seattle, WA": uncertain`}},
		{`{"location":"Seattle, WA","units":"fahrenheit"}`, NoMatch, []string{"location: ", `units: expected "celsius", got "fahrenheit"`}},
		{`{"location":"Seattle"}`, NoMatch, []string{`units: not passed (expected "celsius")`}},
		{`["Seattle"]`, NoMatch, []string{"location: the arguments are not a JSON object", "units: the arguments are not a JSON object"}},
		{``, NoMatch, []string{"location: the arguments were not valid JSON", "units: "}},
	} {
		var raw json.RawMessage
		if c.actual != "" {
			raw = json.RawMessage(c.actual)
		}
		res := Args(step, raw)
		if res.Verdict != c.want {
			t.Errorf("%s: %s, want %s (%v)", c.actual, res.Verdict, c.want, res.Reasons())
		}
		if len(res.Results) != 2 || res.Results[0].Arg != "location" || res.Results[1].Arg != "units" {
			t.Fatalf("%s: results not one per expected argument by name: %+v", c.actual, res.Results)
		}
		if res.Results[0].Matcher != "semantic" || res.Results[1].Matcher != "exact" {
			t.Errorf("matchers shown: %q %q", res.Results[0].Matcher, res.Results[1].Matcher)
		}
		got := res.Reasons()
		if len(got) != len(c.reasons) {
			t.Errorf("%s: reasons %q, want %d", c.actual, got, len(c.reasons))
			continue
		}
		for i, prefix := range c.reasons {
			if !strings.HasPrefix(got[i], prefix) {
				t.Errorf("%s: reason %q, want prefix %q", c.actual, got[i], prefix)
			}
		}
	}
	if u := Args(step, json.RawMessage(`{"location":"Seattle, WA","units":"celsius"}`)).Uncertain(); len(u) != 1 || u[0].Arg != "location" || u[0].Expected != "Seattle" || u[0].Actual != "Seattle, WA" {
		t.Errorf("uncertain for the judge: %+v", u)
	}
	// Nothing expected: any call's arguments match, even unparsable ones.
	if res := Args(golden.Step{Tool: "t"}, nil); res.Verdict != Match || res.Results == nil {
		t.Errorf("no expected args: %+v", res)
	}
	big := json.RawMessage(`{"location":"` + strings.Repeat("x", MaxArgumentsBytes) + `"}`)
	if res := Args(step, big); res.Verdict != NoMatch || !strings.Contains(res.Reason, "more than the") {
		t.Errorf("oversized arguments: %+v", res.Reason)
	}
}

func TestCombine(t *testing.T) {
	r := func(v Verdict) Result { return Result{Verdict: v} }
	for _, c := range []struct {
		in   []Result
		want Verdict
	}{
		{nil, Match},
		{[]Result{r(Match), r(Match)}, Match},
		{[]Result{r(Match), r(Uncertain)}, Uncertain},
		{[]Result{r(Uncertain), r(NoMatch), r(Match)}, NoMatch},
	} {
		if got := Combine(c.in); got != c.want {
			t.Errorf("%v: %s, want %s", c.in, got, c.want)
		}
	}
}
