package behavior

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func one(calls ...llm.ToolCall) turn { return turn{calls: calls} }

// matrixScripts: five runs per case, each run scripted so that every score
// has a known value (worked out in the comments).
func matrixScripts() map[string][]script {
	w, inv, neg, ch := weatherCase(), invoiceCase(), negativeCase(), chainCase()
	return map[string][]script{
		// toolSelection 3/5; argumentCorrectness 2/2 (an uncertain argument
		// is in no N); passed 2/5 (the uncertain run is in N, not in K).
		w.Prompt: {
			{one(call("get_weather", `{"location":"Seattle, WA"}`))},  // pass
			{one(call("get_weather", `{"location":"seattle, wa"}`))},  // pass: equal once normalised
			{one(call("get_weather", `{"location":"Seattle"}`))},      // uncertain, no judge: not passed
			{one(call("search_invoices", `{"customer_id":"C0001"}`))}, // wrong tool
			{{text: "It is probably raining."}},                       // no tool
		},
		// toolSelection 5/5, argumentCorrectness 3/5, passed 3/5.
		inv.Prompt: {
			{one(call("search_invoices", `{"customer_id":"C1234","status":"open"}`))},
			{one(call("search_invoices", `{"customer_id":"C1234","status":"open","limit":5}`))},
			{one(call("search_invoices", `{"status":"open","customer_id":"C1234"}`))},
			{one(call("search_invoices", `{"customer_id":"C1234","status":"paid"}`))}, // wrong value
			{one(call("search_invoices", `{"customer_id":"C1234"}`))},                 // missing status
		},
		// overTrigger 1/5, passed 4/5.
		neg.Prompt: {
			{{text: "Hello!"}}, {{text: "Hello!"}}, {{text: "Hello!"}}, {{text: "Hello!"}},
			{one(call("get_weather", `{"location":"here"}`))},
		},
		// toolSelection 4/5 (first call right); sequenceOrder 2/5 (exactly the
		// steps, in order); argumentCorrectness 5/6 over the steps whose tool
		// was right (run 1: 2/2, run 3: 1/1, run 4: 1/1, run 5: 1/2); passed 1/5.
		ch.Prompt: {
			{one(call("get_weather", `{"location":"Paris"}`)), one(call("slow_count", `{"n":3}`))},                                                   // pass
			{one(call("slow_count", `{"n":3}`)), one(call("get_weather", `{"location":"Paris"}`))},                                                   // wrong order
			{one(call("get_weather", `{"location":"Paris"}`)), one(call("get_weather", `{"location":"Paris"}`)), one(call("slow_count", `{"n":3}`))}, // a repeated successful call is an extra step
			{one(call("get_weather", `{"location":"Paris"}`))},                                                                                       // chain not finished
			{one(call("get_weather", `{"location":"Paris, France"}`)), one(call("slow_count", `{"n":3}`))},                                           // exact argument differs
		},
	}
}

// perfectScripts: the model that gets everything right.
func perfectScripts() map[string][]script {
	w, inv, neg, ch := weatherCase(), invoiceCase(), negativeCase(), chainCase()
	return map[string][]script{
		w.Prompt:   {{one(call("get_weather", `{"location":"Seattle, WA"}`))}},
		inv.Prompt: {{one(call("search_invoices", `{"customer_id":"C1234","status":"open"}`))}},
		neg.Prompt: {{{text: "Hello!"}}},
		ch.Prompt:  {{one(call("get_weather", `{"location":"Paris"}`)), one(call("slow_count", `{"n":3}`))}},
	}
}

func scoreOf(r report.CaseResult, name string) string {
	for _, s := range r.Scores {
		if s.Name == name {
			return fmt.Sprintf("%d/%d", s.K, s.N)
		}
	}
	return "-"
}

func resultFor(t *testing.T, b *report.Behavior, caseID, model string) report.CaseResult {
	t.Helper()
	for _, r := range b.Results {
		if r.Case == caseID && r.Model == model {
			return r
		}
	}
	t.Fatalf("no result for %s × %s", caseID, model)
	return report.CaseResult{}
}

func TestMatrixScoresHandComputed(t *testing.T) {
	rs := newRefServer(t)
	a, b := newScripted("test:a", matrixScripts()), newScripted("test:b", perfectScripts())
	cfg := Config{Set: set(weatherCase(), invoiceCase(), negativeCase(), chainCase()), Source: "tasks.yaml",
		Models: []llm.Provider{a, b}, Client: rs.client, Runs: 5, Concurrency: 3}
	plan, err := Prepare(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Run(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{ // case → score → k/n for model a
		"weather":  {"passed": "2/5", report.ToolSelection: "3/5", report.ArgumentCorrectness: "2/2", report.SequenceOrder: "-", report.OverTrigger: "-"},
		"invoices": {"passed": "3/5", report.ToolSelection: "5/5", report.ArgumentCorrectness: "3/5"},
		"hello":    {"passed": "4/5", report.OverTrigger: "1/5", report.ToolSelection: "-"},
		"chain":    {"passed": "1/5", report.ToolSelection: "4/5", report.SequenceOrder: "2/5", report.ArgumentCorrectness: "5/6"},
	}
	for c, scores := range want {
		r := resultFor(t, res.Behavior, c, "test:a")
		for name, w := range scores {
			got := scoreOf(r, name)
			if name == "passed" {
				got = fmt.Sprintf("%d/%d", r.Passed.K, r.Passed.N)
			}
			if got != w {
				t.Errorf("test:a %s %s = %s, want %s", c, name, got, w)
			}
		}
		if rb := resultFor(t, res.Behavior, c, "test:b"); rb.Passed.K != 5 || rb.Passed.N != 5 {
			t.Errorf("test:b %s passed %d/%d, want 5/5", c, rb.Passed.K, rb.Passed.N)
		}
	}
	w := resultFor(t, res.Behavior, "weather", "test:a")
	if w.Uncertain != 1 || !strings.Contains(strings.Join(w.Notes, "\n"), "uncertain") || !strings.Contains(strings.Join(w.Notes, "\n"), "no judge") {
		t.Errorf("weather: %d uncertain, notes %q; want 1, said to be uncertain for want of a judge", w.Uncertain, w.Notes)
	}
	if len(w.Runs) != 5 || w.Runs[0].Trajectory == nil {
		t.Errorf("weather: %d run records; want 5 with trajectories", len(w.Runs))
	}
	// The confusion matrix of model a, counted by hand per expected step:
	// get_weather→get_weather 3 (weather) + 4 (chain step 1), and the
	// chain's step 2 took get_weather instead of slow_count twice.
	conf := res.Behavior.Confusion[0]
	cell := func(e, c string) int {
		for _, x := range conf.Cells {
			if x.Expected == e && x.Chosen == c {
				return x.Count
			}
		}
		return 0
	}
	for _, w := range []struct {
		e, c string
		n    int
	}{{"get_weather", "get_weather", 7}, {"get_weather", "search_invoices", 1}, {"get_weather", "(no tool)", 1}, {"get_weather", "slow_count", 1},
		{"search_invoices", "search_invoices", 5}, {"(no tool)", "(no tool)", 4}, {"(no tool)", "get_weather", 1},
		{"slow_count", "slow_count", 2}, {"slow_count", "get_weather", 2}, {"slow_count", "(no tool)", 1}} {
		if got := cell(w.e, w.c); got != w.n {
			t.Errorf("confusion %s → %s = %d, want %d", w.e, w.c, got, w.n)
		}
	}
	if len(conf.Top) != 3 || conf.Top[0].Expected != "slow_count" || conf.Top[0].Chosen != "get_weather" || conf.Top[0].Count != 2 ||
		!strings.Contains(conf.Top[0].ExpectedDescription, "Count from 1 to n") || !strings.Contains(conf.Top[0].ChosenDescription, "current weather") {
		t.Errorf("top confusions %+v, want slow_count → get_weather ×2 first, with both descriptions", conf.Top)
	}
	// One column per model, in order, and a report that validates.
	rep := report.New()
	rep.Models = res.Models
	rep.Behavior = res.Behavior
	if len(rep.Models) != 2 || rep.Models[0].ID != "test:a" || rep.Models[1].ID != "test:b" {
		t.Errorf("models = %+v", rep.Models)
	}
	if _, err := report.Marshal(rep); err != nil {
		t.Fatalf("the report does not validate: %v", err)
	}
	if res.Spend.Used.Calls != int(a.calls.Load()+b.calls.Load()) {
		t.Errorf("spend counts %d calls, the providers saw %d", res.Spend.Used.Calls, a.calls.Load()+b.calls.Load())
	}
	if res.Spend.Used.USD != nil || !strings.Contains(res.Spend.Used.USDUnknown, "test:a") {
		t.Errorf("models without a price must have an unknown cost, never 0: %+v", res.Spend.Used)
	}
}

func TestMatrixRunsConcurrentlyUnderTheLimit(t *testing.T) {
	rs := newRefServer(t)
	a := newScripted("test:a", perfectScripts())
	a.latency = 20 * time.Millisecond
	cfg := Config{Set: set(weatherCase(), negativeCase()), Models: []llm.Provider{a}, Client: rs.client, Runs: 6, Concurrency: 4,
		RateLimits: map[string]RateLimit{"test": {Concurrency: 2}}}
	plan, err := Prepare(ctx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Run(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if got := a.maxInFlight.Load(); got != 2 {
		t.Errorf("%d calls in flight at most, want the provider's limit 2", got)
	}
}
