package score

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior/match"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The three cases of the hand-computed scenario: a single call with a
// semantic argument (hard), a chain (soft) and a negative (hard).
var (
	weather = &golden.Case{ID: "weather", Kind: golden.Hard, ExpectTool: "get_weather",
		ExpectArgs: map[string]any{"location": "Seattle", "units": "celsius"},
		ArgMatch:   map[string]golden.Matcher{"location": {Kind: golden.MatchSemantic}}}
	chain = &golden.Case{ID: "chain", Kind: golden.Soft,
		ExpectSequence:     []string{"search_invoices", "send_email"},
		ExpectSequenceArgs: []map[string]any{{"customer_id": "C2048"}, {"to": "billing@example.com"}}}
	negative = &golden.Case{ID: "negative", Kind: golden.Hard, Negative: true}
)

func call(name, args string) Call { return Call{Name: name, Arguments: json.RawMessage(args)} }

var (
	gwSeattle   = call("get_weather", `{"location":"seattle","units":"celsius"}`)
	gwSeattleWA = call("get_weather", `{"location":"Seattle, WA","units":"celsius"}`)
	gwFahr      = call("get_weather", `{"location":"Seattle","units":"fahrenheit"}`)
	lookup      = call("lookup_region", `{"query":"Seattle weather"}`)
	search      = call("search_invoices", `{"customer_id":"C2048"}`)
	searchWrong = call("search_invoices", `{"customer_id":"C9999"}`)
	email       = call("send_email", `{"to":"billing@example.com","subject":"Overdue","body":"…"}`)
)

// scenario is 5 runs of each case against one model, with every outcome
// the scores must tell apart.
func scenario() map[string][]RunOutcome {
	retry := search
	retry.IsError = true
	return map[string][]RunOutcome{
		"weather": {
			{Case: weather, Calls: []Call{gwSeattle}},              // pass
			{Case: weather, Calls: []Call{gwSeattleWA}},            // location uncertain, no judge
			{Case: weather, Calls: []Call{gwFahr}},                 // units wrong
			{Case: weather, Calls: []Call{lookup, gwSeattle}},      // wrong first tool
			{Case: weather, Err: "provider: 503 after 4 attempts"}, // error
		},
		"chain": {
			{Case: chain, Calls: []Call{search, email}, Task: TaskPass},                           // pass
			{Case: chain, Calls: []Call{retry, search, email}, Task: TaskPass},                    // retry folded: pass
			{Case: chain, Calls: []Call{email, search}, Task: TaskFail},                           // wrong order
			{Case: chain, Calls: []Call{search}, Task: TaskInconclusive},                          // stopped short
			{Case: chain, Calls: []Call{searchWrong, email, call("get_weather", `{}`)}, Task: ""}, // wrong id, extra call
		},
		"negative": {
			{Case: negative},
			{Case: negative},
			{Case: negative, Calls: []Call{call("get_weather", `{"location":"Paris"}`)}},
			{Case: negative},
			{Case: negative},
		},
	}
}

func evaluateAll(outcomes []RunOutcome) []Run {
	runs := make([]Run, len(outcomes))
	for i, o := range outcomes {
		runs[i] = Evaluate(o)
	}
	return runs
}

func wantScore(t *testing.T, scores []Tally, name string, k, n int) {
	t.Helper()
	s, ok := Score(scores, name)
	if !ok {
		t.Errorf("%s missing from %v", name, scores)
		return
	}
	if s.K != k || s.N != n {
		t.Errorf("%s = %d/%d, want %d/%d", name, s.K, s.N, k, n)
	}
	dir, _ := report.DirectionOf(name)
	if s.Direction != dir {
		t.Errorf("%s direction %s, want %s", name, s.Direction, dir)
	}
	if s.Interval != Wilson(k, n) {
		t.Errorf("%s interval %v", name, s.Interval)
	}
}

func wantAbsent(t *testing.T, scores []Tally, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, ok := Score(scores, name); ok {
			t.Errorf("%s present, but does not apply", name)
		}
	}
}

func TestRunStatuses(t *testing.T) {
	sc := scenario()
	want := map[string][]Status{
		"weather":  {Pass, Uncertain, Fail, Fail, Error},
		"chain":    {Pass, Pass, Fail, Fail, Fail},
		"negative": {Pass, Pass, Fail, Pass, Pass},
	}
	for id, outcomes := range sc {
		for i, r := range evaluateAll(outcomes) {
			if r.Status != want[id][i] {
				t.Errorf("%s run %d: %s, want %s (%q)", id, i+1, r.Status, want[id][i], r.Reasons)
			}
			if (r.Status == Pass) != (len(r.Reasons) == 0) {
				t.Errorf("%s run %d: status %s with reasons %q", id, i+1, r.Status, r.Reasons)
			}
		}
	}
}

// Case "weather": 5 runs, one error. Selection: runs 1–3 of the 4 that
// happened chose get_weather first → 3/4. Arguments: of those 3 calls,
// run 1 matched, run 3 did not, run 2 is uncertain (left out) → 1/2.
// Passed: run 1 only, over all 5 runs (the error counts) → 1/5; hard
// floor ⌈1.0·5⌉ = 5, not met.
func TestSummarizeSingleCase(t *testing.T) {
	s := SummarizeCase(evaluateAll(scenario()["weather"]))
	if s.Case != "weather" || s.Runs != 5 || s.Errors != 1 || s.Uncertain != 1 || s.Inconclusive != 0 {
		t.Errorf("counts: %+v", s)
	}
	if s.Passed != (report.Count{K: 1, N: 5}) || s.Need != 5 || s.FloorMet || s.Floor != 1 {
		t.Errorf("passed %v need %d met %v", s.Passed, s.Need, s.FloorMet)
	}
	wantInterval(t, s.Interval, 0.036224, 0.624465)
	wantScore(t, s.Scores, report.ToolSelection, 3, 4)
	wantScore(t, s.Scores, report.ArgumentCorrectness, 1, 2)
	wantAbsent(t, s.Scores, report.SequenceOrder, report.OverTrigger, report.TaskCompletion)
	if s.ArgsUncertain != 1 {
		t.Errorf("args uncertain %d", s.ArgsUncertain)
	}
	if got := names(scoreNames(s.Scores)); got != "toolSelection → argumentCorrectness" {
		t.Errorf("order: %s", got)
	}
	wantNotes := []string{
		`run 2: get_weather location: expected "Seattle", got "Seattle, WA": uncertain`,
		`run 3: get_weather units: expected "celsius", got "fahrenheit"`,
		"run 4: expected get_weather first, called lookup_region",
		"run 5: error: provider: 503 after 4 attempts",
	}
	if len(s.Notes) != len(wantNotes) {
		t.Fatalf("notes %q", s.Notes)
	}
	for i, w := range wantNotes {
		if !strings.HasPrefix(s.Notes[i], w) {
			t.Errorf("note %d: %q, want prefix %q", i, s.Notes[i], w)
		}
	}
}

// A judge that calls the uncertain location the same place turns run 2
// into a pass: passed 2/5, arguments 2/3. A judge cannot overturn a
// deterministic verdict: "fahrenheit" stays wrong.
func TestJudgeResolvesUncertainOnly(t *testing.T) {
	outcomes := scenario()["weather"]
	r := Evaluate(outcomes[1])
	u := r.UncertainArgs()
	ref := ArgRef{Step: 0, Arg: "location"}
	if len(u) != 1 || u[ref].Expected != "Seattle" || u[ref].Actual != "Seattle, WA" {
		t.Fatalf("uncertain: %+v", u)
	}
	outcomes[1].Judged = map[ArgRef]match.Verdict{ref: match.Match}
	outcomes[2].Judged = map[ArgRef]match.Verdict{{Step: 0, Arg: "units"}: match.Match}
	runs := evaluateAll(outcomes)
	if runs[1].Status != Pass || runs[1].Steps[0].Args.Results[0].Tier != match.TierJudge {
		t.Errorf("judged match: %+v", runs[1])
	}
	if runs[2].Status != Fail {
		t.Errorf("a judge overturned an exact mismatch: %+v", runs[2])
	}
	s := SummarizeCase(runs)
	if s.Passed != (report.Count{K: 2, N: 5}) || s.Uncertain != 0 || s.ArgsUncertain != 0 {
		t.Errorf("%+v", s)
	}
	wantScore(t, s.Scores, report.ArgumentCorrectness, 2, 3)

	outcomes[1].Judged = map[ArgRef]match.Verdict{ref: match.NoMatch}
	if r := Evaluate(outcomes[1]); r.Status != Fail || !strings.Contains(r.Reasons[0], "the judge says they differ") {
		t.Errorf("judged no-match: %+v", r)
	}
}

// Case "chain" (soft): selection 4/5 (run 3 began with send_email);
// arguments over the 7 selected steps with arguments — runs 1 and 2 two
// each (run 2's retry folded, its first attempt scored), run 4 one, run 5
// two of which C9999 is wrong — 6/7; order exact in runs 1 and 2 → 2/5;
// judge: pass, pass, fail, inconclusive (left out), not judged → 2/3.
// Passed 2/5, soft floor ⌈0.8·5⌉ = 4, not met.
func TestSummarizeChain(t *testing.T) {
	runs := evaluateAll(scenario()["chain"])
	s := SummarizeCase(runs)
	if s.Passed != (report.Count{K: 2, N: 5}) || s.Need != 4 || s.FloorMet || s.Floor != 0.8 || s.Inconclusive != 0 {
		t.Errorf("%+v", s)
	}
	wantScore(t, s.Scores, report.ToolSelection, 4, 5)
	wantScore(t, s.Scores, report.ArgumentCorrectness, 6, 7)
	wantScore(t, s.Scores, report.SequenceOrder, 2, 5)
	wantScore(t, s.Scores, report.TaskCompletion, 2, 3)
	wantAbsent(t, s.Scores, report.OverTrigger)

	if r := runs[3]; r.Steps[1].Called != NoTool || r.Steps[1].Checked || !r.Steps[0].Checked {
		t.Errorf("stopped short: %+v", r.Steps)
	}
	if !strings.Contains(strings.Join(runs[4].Reasons, "\n"), "expected the sequence search_invoices → send_email, got search_invoices → send_email → get_weather") {
		t.Errorf("reasons: %q", runs[4].Reasons)
	}
	if !strings.Contains(strings.Join(runs[4].Reasons, "\n"), `step 1 (search_invoices) customer_id: expected "C2048", got "C9999"`) {
		t.Errorf("reasons: %q", runs[4].Reasons)
	}
}

// Case "negative": run 3 called a tool → over-trigger 1/5, passed 4/5.
func TestSummarizeNegative(t *testing.T) {
	s := SummarizeCase(evaluateAll(scenario()["negative"]))
	if s.Passed != (report.Count{K: 4, N: 5}) || s.Need != 5 || s.FloorMet {
		t.Errorf("%+v", s)
	}
	wantScore(t, s.Scores, report.OverTrigger, 1, 5)
	wantAbsent(t, s.Scores, report.ToolSelection, report.ArgumentCorrectness, report.SequenceOrder, report.TaskCompletion)
	if s.Notes[0] != "run 3: expected no tool call, called get_weather" {
		t.Errorf("%q", s.Notes)
	}
}

// The model's scores are sums over its 15 runs: selection 3/4 + 4/5 =
// 7/9; arguments 1/2 + 6/7 = 7/9; order 2/5; over-trigger 1/5; task 2/3;
// passed 1 + 2 + 4 = 7 of 15.
func TestSummarizeModel(t *testing.T) {
	sc := scenario()
	var all []Run
	for _, id := range []string{"weather", "chain", "negative"} {
		all = append(all, evaluateAll(sc[id])...)
	}
	m := SummarizeModel(all)
	if m.Runs != 15 || m.Errors != 1 || m.Uncertain != 1 || m.Passed != (report.Count{K: 7, N: 15}) || m.ArgsUncertain != 1 {
		t.Errorf("%+v", m)
	}
	wantScore(t, m.Scores, report.ToolSelection, 7, 9)
	wantScore(t, m.Scores, report.ArgumentCorrectness, 7, 9)
	wantScore(t, m.Scores, report.SequenceOrder, 2, 5)
	wantScore(t, m.Scores, report.OverTrigger, 1, 5)
	wantScore(t, m.Scores, report.TaskCompletion, 2, 3)
	wantInterval(t, mustScore(t, m.Scores, report.ToolSelection).Interval, 0.452589, 0.936775)
	wantInterval(t, mustScore(t, m.Scores, report.TaskCompletion).Interval, 0.20766, 0.938508)

	// The matrix, cell by cell: weather 3 right, 1 lookup_region (the
	// error run adds nothing); chain steps search 4 right + 1 send_email,
	// send_email 3 right + 1 search_invoices + 1 stopped short; negative
	// 4 right + 1 get_weather.
	wantCells := []Cell{
		{"get_weather", "get_weather", 3}, {"get_weather", "lookup_region", 1},
		{"search_invoices", "search_invoices", 4}, {"search_invoices", "send_email", 1},
		{"send_email", "search_invoices", 1}, {"send_email", "send_email", 3}, {"send_email", NoTool, 1},
		{NoTool, "get_weather", 1}, {NoTool, NoTool, 4},
	}
	if !reflect.DeepEqual(m.Matrix.Cells, wantCells) {
		t.Errorf("cells:\n got %v\nwant %v", m.Matrix.Cells, wantCells)
	}
	if want := []string{"get_weather", "lookup_region", "search_invoices", "send_email", NoTool}; !reflect.DeepEqual(m.Matrix.Classes, want) {
		t.Errorf("classes %v", m.Matrix.Classes)
	}
	if m.Matrix.Total() != 19 || m.Matrix.Count("send_email", NoTool) != 1 || m.Matrix.Count("get_weather", "send_email") != 0 {
		t.Errorf("total %d", m.Matrix.Total())
	}
}

func TestTopConfusions(t *testing.T) {
	runs := []Run{
		Evaluate(RunOutcome{Case: weather, Calls: []Call{lookup}}),
		Evaluate(RunOutcome{Case: weather, Calls: []Call{lookup}}),
		Evaluate(RunOutcome{Case: weather, Calls: []Call{call("weather_now", `{}`)}}),
		Evaluate(RunOutcome{Case: weather}),
		Evaluate(RunOutcome{Case: negative, Calls: []Call{gwSeattle}}),
		Evaluate(RunOutcome{Case: weather, Calls: []Call{gwSeattle}}),
	}
	desc := map[string]string{
		"get_weather":   "Get the current weather for a city.",
		"lookup_region": "  Count the records matching a query in a region.  ",
	}
	got := TopConfusions(BuildMatrix(runs), desc, 3)
	want := []Confusion{
		{Cell: Cell{"get_weather", "lookup_region", 2}, ExpectedDescription: "Get the current weather for a city.", ChosenDescription: "Count the records matching a query in a region."},
		{Cell: Cell{"get_weather", "weather_now", 1}, ExpectedDescription: "Get the current weather for a city.", ChosenDescription: NotListed},
		{Cell: Cell{"get_weather", NoTool, 1}, ExpectedDescription: "Get the current weather for a city.", ChosenDescription: ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if all := TopConfusions(BuildMatrix(runs), desc, 10); len(all) != 4 || all[3].Expected != NoTool {
		t.Errorf("%+v", all)
	}
}

// An inconclusive judge leaves the run out of N (not a fail); a run that
// failed a check stays a fail whatever the judge says.
func TestInconclusiveLeftOutOfN(t *testing.T) {
	runs := evaluateAll([]RunOutcome{
		{Case: weather, Calls: []Call{gwSeattle}, Task: TaskInconclusive},
		{Case: weather, Calls: []Call{gwSeattle}, Task: TaskPass},
		{Case: weather, Calls: []Call{gwFahr}, Task: TaskInconclusive},
	})
	if runs[0].Status != Inconclusive || runs[2].Status != Fail {
		t.Fatalf("%s %s", runs[0].Status, runs[2].Status)
	}
	s := SummarizeCase(runs)
	if s.Passed != (report.Count{K: 1, N: 2}) || s.Inconclusive != 1 || s.Need != 2 {
		t.Errorf("%+v", s)
	}
	wantScore(t, s.Scores, report.TaskCompletion, 1, 1)
	wantScore(t, s.Scores, report.ToolSelection, 3, 3)
}

// Unparsable arguments fail the arguments, not the selection; a case
// with no expected arguments puts nothing in argument correctness.
func TestParseErrorsAndNoArgs(t *testing.T) {
	bad := Call{Name: "get_weather", ParseError: "unexpected end of JSON input"}
	r := Evaluate(RunOutcome{Case: weather, Calls: []Call{bad}})
	if !r.Selected || r.Status != Fail || r.Steps[0].Args.Verdict != match.NoMatch {
		t.Errorf("%+v", r)
	}
	noArgs := &golden.Case{ID: "n", ExpectTool: "slow_count"}
	s := SummarizeCase(evaluateAll([]RunOutcome{{Case: noArgs, Calls: []Call{{Name: "slow_count"}}}}))
	if s.Passed != (report.Count{K: 1, N: 1}) || s.Kind != golden.Hard {
		t.Errorf("%+v", s)
	}
	wantAbsent(t, s.Scores, report.ArgumentCorrectness)
	empty := SummarizeCase(nil)
	if empty.Passed.N != 0 || empty.FloorMet || empty.Scores == nil || empty.Notes == nil {
		t.Errorf("%+v", empty)
	}
}

// Retries fold only after an error result; two successful calls to the
// same tool are two steps (two cities, one tool).
func TestRetryFolding(t *testing.T) {
	twoCities := &golden.Case{ID: "two", ExpectSequence: []string{"get_weather", "get_weather"},
		ExpectSequenceArgs: []map[string]any{{"location": "Oslo"}, {"location": "Madrid"}}}
	oslo, madrid := call("get_weather", `{"location":"Oslo"}`), call("get_weather", `{"location":"Madrid"}`)
	if r := Evaluate(RunOutcome{Case: twoCities, Calls: []Call{oslo, madrid}}); r.Status != Pass {
		t.Errorf("two cities: %q", r.Reasons)
	}
	failed := oslo
	failed.IsError = true
	if r := Evaluate(RunOutcome{Case: twoCities, Calls: []Call{failed, oslo, madrid}}); r.Status != Pass {
		t.Errorf("retry: %q", r.Reasons)
	}
	if r := Evaluate(RunOutcome{Case: twoCities, Calls: []Call{failed, oslo}}); r.Status != Fail || r.Steps[1].Called != NoTool {
		t.Errorf("a retry is not a second step: %+v", r)
	}
}

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{1, 5, 0.036224, 0.624465},
		{4, 5, 0.375535, 0.963776},
		{0, 5, 0, 0.434482},
		{5, 5, 0.565518, 1},
		{7, 15, 0.248095, 0.69883},
		{1, 1, 0.206549, 1},
		{0, 1, 0, 0.793451},
		{0, 0, 0, 1},
	} {
		wantInterval(t, Wilson(c.k, c.n), c.lo, c.hi)
	}
}

func TestFloor(t *testing.T) {
	for _, c := range []struct {
		f    float64
		n    int
		want int
	}{
		{FloorHard, 5, 5}, {FloorSoft, 5, 4}, {FloorSoft, 3, 3}, {FloorSoft, 10, 8}, {FloorSoft, 7, 6},
		{0.7, 10, 7}, // 0.7·10 is 7.000000000000001 in float64
		{FloorSoft, 0, 0},
	} {
		if got := Floor(c.f, c.n); got != c.want {
			t.Errorf("⌈%v·%d⌉ = %d, want %d", c.f, c.n, got, c.want)
		}
	}
	if FloorFor("soft") != 0.8 || FloorFor("hard") != 1 || FloorFor("") != 1 {
		t.Error("FloorFor")
	}
}

func wantInterval(t *testing.T, got Interval, lo, hi float64) {
	t.Helper()
	if math.Abs(got.Lo-lo) > 1e-6 || math.Abs(got.Hi-hi) > 1e-6 {
		t.Errorf("interval [%.6f, %.6f], want [%.6f, %.6f]", got.Lo, got.Hi, lo, hi)
	}
}

func mustScore(t *testing.T, scores []Tally, name string) Tally {
	t.Helper()
	s, ok := Score(scores, name)
	if !ok {
		t.Fatalf("%s missing", name)
	}
	return s
}

func scoreNames(scores []Tally) []Call {
	out := make([]Call, len(scores))
	for i, s := range scores {
		out[i] = Call{Name: s.Name}
	}
	return out
}

// A hand-built case that expects nothing is an error run, not a panic.
func TestMalformedCases(t *testing.T) {
	if r := Evaluate(RunOutcome{}); r.Status != Error {
		t.Errorf("nil case: %+v", r)
	}
	if r := Evaluate(RunOutcome{Case: &golden.Case{ID: "x"}}); r.Status != Error || !strings.Contains(r.Err, "expects no tool") {
		t.Errorf("empty case: %+v", r)
	}
}
