package behavior

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func TestJudgeThatFailsToAnswerIsInconclusiveNotAFail(t *testing.T) {
	for name, answer := range map[string]func(string) (string, error){
		"error":        func(string) (string, error) { return "", errors.New("503 overloaded") },
		"not the JSON": func(string) (string, error) { return `{"verdict":"maybe"}`, nil },
		"not JSON":     func(string) (string, error) { return `I think it passed`, nil },
	} {
		t.Run(name, func(t *testing.T) {
			rs := newRefServer(t)
			judge := &judgeFake{id: "test:judge", verdict: answer}
			cfg := Config{Set: set(judgedWeather(), invoiceCase()), Models: []llm.Provider{newScripted("test:a", perfectScripts())}, Judge: judge,
				Client: rs.client, Runs: 3}
			res := runOnce(t, cfg)
			b := res.Behavior
			if len(b.Results) != 1 || b.Results[0].Case != "invoices" {
				t.Fatalf("results %+v: weather had no decided run and must not appear as 0/0", b.Results)
			}
			if len(b.Inconclusive) != 1 || b.Inconclusive[0].Case != "weather" || b.Inconclusive[0].Runs != 3 || !strings.Contains(b.Inconclusive[0].Reason, "inconclusive") {
				t.Errorf("inconclusive = %+v, want weather ×3 with the judge's failure", b.Inconclusive)
			}
			if b.JudgeModel != "test:judge" || b.RubricHash == "" {
				t.Errorf("judge %q, rubric hash %q: the report must record both", b.JudgeModel, b.RubricHash)
			}
			if !strings.Contains(strings.Join(res.Notes, "\n"), "3 runs are inconclusive (the judge did not answer)") {
				t.Errorf("notes %q", res.Notes)
			}
		})
	}
}

func TestJudgeInconclusiveOnceLeavesTheOtherRunsScored(t *testing.T) {
	rs := newRefServer(t)
	var n atomic.Int64
	judge := &judgeFake{id: "test:judge", verdict: func(string) (string, error) {
		if n.Add(1) == 1 {
			return "", errors.New("timeout")
		}
		return `{"verdict":"pass","reason":"answered"}`, nil
	}}
	// Runs 1 and 2 have the same trajectory: run 2's verdict could come from
	// the cache, but there is none here.
	cfg := Config{Set: set(judgedWeather()), Models: []llm.Provider{newScripted("test:a", perfectScripts())}, Judge: judge, Client: rs.client, Runs: 5, Concurrency: 1}
	r := runOnce(t, cfg).Behavior.Results[0]
	if r.Passed.K != 4 || r.Passed.N != 4 || r.Inconclusive != 1 || scoreOf(r, report.TaskCompletion) != "4/4" {
		t.Errorf("passed %d/%d, %d inconclusive, taskCompletion %s; want 4/4, 1, 4/4", r.Passed.K, r.Passed.N, r.Inconclusive, scoreOf(r, report.TaskCompletion))
	}
	if r.Runs[0].Outcome != report.RunInconclusive || r.Runs[0].Judge != JudgeInconclusive {
		t.Errorf("run 1 = %+v, want inconclusive", r.Runs[0])
	}
}

func TestJudgeFailVerdictFailsTheRun(t *testing.T) {
	rs := newRefServer(t)
	var asked atomic.Value
	judge := &judgeFake{id: "test:judge", verdict: func(user string) (string, error) {
		asked.Store(user)
		return `{"verdict":"fail","reason":"no weather was given"}`, nil
	}}
	cfg := Config{Set: set(judgedWeather()), Models: []llm.Provider{newScripted("test:a", perfectScripts())}, Judge: judge, Client: rs.client, Runs: 2}
	r := runOnce(t, cfg).Behavior.Results[0]
	if r.Passed.K != 0 || r.Passed.N != 2 || scoreOf(r, report.TaskCompletion) != "0/2" || scoreOf(r, report.ToolSelection) != "2/2" {
		t.Errorf("passed %v, scores %+v; want 0/2 with taskCompletion 0/2, selection 2/2", r.Passed, r.Scores)
	}
	if !strings.Contains(strings.Join(r.Notes, " "), "no weather was given") {
		t.Errorf("notes %q do not carry the judge's reason", r.Notes)
	}
	u, _ := asked.Load().(string)
	for _, w := range []string{"Rubric:\nThe answer states the current weather in Seattle.", "called get_weather with {\"location\":\"Seattle, WA\"}", "<transcript>"} {
		if !strings.Contains(u, w) {
			t.Errorf("the judge was not shown %q:\n%s", w, u)
		}
	}
}

func TestUncertainArgumentGoesToTheJudge(t *testing.T) {
	c := weatherCase()
	uncertain := map[string][]script{c.Prompt: {{one(call("get_weather", `{"location":"Seattle"}`))}}}
	for _, tc := range []struct {
		equivalent string
		want       string
	}{{"true", "1/1"}, {"false", "0/1"}} {
		rs := newRefServer(t)
		judge := &judgeFake{id: "test:judge", verdict: func(user string) (string, error) {
			if !strings.Contains(user, `Expected value: "Seattle, WA"`) || !strings.Contains(user, `Value the assistant sent: "Seattle"`) {
				return "", errors.New("unexpected question: " + user)
			}
			return `{"equivalent":` + tc.equivalent + `,"reason":"r"}`, nil
		}}
		cfg := Config{Set: set(c), Models: []llm.Provider{newScripted("test:a", uncertain)}, Judge: judge, Client: rs.client, Runs: 1}
		r := runOnce(t, cfg).Behavior.Results[0]
		if got := scoreOf(r, report.ArgumentCorrectness); got != tc.want || r.Uncertain != 0 || judge.calls.Load() != 1 {
			t.Errorf("judge says %s: argumentCorrectness %s, %d uncertain, %d judge calls; want %s, 0, 1", tc.equivalent, got, r.Uncertain, judge.calls.Load(), tc.want)
		}
	}
}
