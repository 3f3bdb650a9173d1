package behavior

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func agentFor(t *testing.T, rs *refServer, p llm.Provider, stubs map[string]string) *Agent {
	t.Helper()
	lt, err := rs.client.ListTools(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var tools []llm.Tool
	for _, tl := range lt.Tools {
		tools = append(tools, llm.Tool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema})
	}
	return &Agent{Provider: p, Executor: &MCPExecutor{Client: rs.client, Stubs: stubs}, Tools: tools, MaxSteps: 4}
}

func TestLoopRunsToolsOnTheServerAndFeedsResultsBack(t *testing.T) {
	rs := newRefServer(t)
	c := chainCase()
	p := newScripted("test:m", map[string][]script{c.Prompt: {{
		{calls: []llm.ToolCall{call("get_weather", `{"location":"Paris"}`)}},
		{calls: []llm.ToolCall{call("slow_count", `{"n":3}`)}},
		{text: "Paris is fine; counted to 3."},
	}}})
	tr := agentFor(t, rs, p, nil).Run(ctx(t), c)
	if tr.End != EndAnswered || tr.ModelCalls != 3 || len(tr.Turns) != 3 {
		t.Fatalf("end %s, %d model calls, %d turns; want answered after 3: %+v", tr.End, tr.ModelCalls, len(tr.Turns), tr)
	}
	w := tr.Turns[0].Calls[0]
	if w.Name != "get_weather" || !strings.Contains(w.Result, "Paris") || w.IsError || string(w.Arguments) != `{"location":"Paris"}` {
		t.Errorf("first call = %+v, want get_weather on the server with Paris in the result", w)
	}
	if rs.callsTo("get_weather") != 1 || rs.callsTo("slow_count") != 1 {
		t.Errorf("server saw get_weather ×%d, slow_count ×%d; want 1 each", rs.callsTo("get_weather"), rs.callsTo("slow_count"))
	}
	if tr.Final != "Paris is fine; counted to 3." || tr.InputTokens != 300 || tr.OutputTokens != 60 {
		t.Errorf("final %q, tokens %d/%d; want the last text and 3×100 / 3×20", tr.Final, tr.InputTokens, tr.OutputTokens)
	}
}

func TestLoopStopsAtTheStepLimit(t *testing.T) {
	rs := newRefServer(t)
	c := weatherCase()
	loop := make(script, 10)
	for i := range loop {
		loop[i] = turn{calls: []llm.ToolCall{call("get_weather", `{"location":"Seattle"}`)}}
	}
	tr := agentFor(t, rs, newScripted("test:m", map[string][]script{c.Prompt: {loop}}), nil).Run(ctx(t), c)
	if tr.End != EndStepLimit || tr.ModelCalls != 4 || !strings.Contains(tr.Reason, "4 turns") {
		t.Errorf("end %s after %d calls (%s); want step-limit after 4", tr.End, tr.ModelCalls, tr.Reason)
	}
}

func TestLoopAnswersBadCallsWithoutTheServer(t *testing.T) {
	rs := newRefServer(t)
	c := weatherCase()
	p := newScripted("test:m", map[string][]script{c.Prompt: {{
		{calls: []llm.ToolCall{call("get_weather", `{"location": "Seattle"`)}}, // truncated JSON
		{calls: []llm.ToolCall{call("get_forecast", `{"location":"Seattle"}`)}},
		{calls: []llm.ToolCall{call("get_weather", `["Seattle"]`)}},
		{text: "sorry"},
	}}})
	tr := agentFor(t, rs, p, nil).Run(ctx(t), c)
	if rs.callsTo("get_weather")+rs.callsTo("get_forecast") != 0 {
		t.Errorf("the server saw a call; malformed, unknown and non-object calls must be answered by the harness")
	}
	want := []string{"not valid JSON", "no tool named", "must be a JSON object"}
	for i, w := range want {
		c := tr.Turns[i].Calls[0]
		if !c.IsError || !strings.Contains(c.Result, w) {
			t.Errorf("turn %d: %+v, want an error result saying %q", i+1, c, w)
		}
	}
	if tr.Turns[0].Calls[0].ParseError == "" || tr.Turns[0].Calls[0].ArgumentsRaw == "" {
		t.Errorf("the malformed call must keep its raw arguments and the parse error: %+v", tr.Turns[0].Calls[0])
	}
}

func TestMRTRInputsAnswerTheServer(t *testing.T) {
	rs := newRefServer(t)
	c := emailCase(true)
	p := newScripted("test:m", map[string][]script{c.Prompt: {{
		{calls: []llm.ToolCall{call("send_email", `{"to":"bob@example.com","subject":"Report","body":"The report is ready."}`)}},
		{text: "Sent."},
	}}})
	tr := agentFor(t, rs, p, nil).Run(ctx(t), c)
	got := tr.Turns[0].Calls[0]
	if tr.End != EndAnswered || !strings.Contains(got.Result, "Queued email to bob@example.com") || got.InputRounds != 1 {
		t.Errorf("end %s, call %+v; want the confirmation answered from inputs (1 round) and the email queued", tr.End, got)
	}
}

func TestMRTRWithoutInputsFailsTheCaseSayingWhy(t *testing.T) {
	rs := newRefServer(t)
	c := emailCase(false)
	p := newScripted("test:m", map[string][]script{c.Prompt: {{
		{calls: []llm.ToolCall{call("send_email", `{"to":"bob@example.com","subject":"Report","body":"ready"}`)}},
		{text: "Sent."},
	}}})
	tr := agentFor(t, rs, p, nil).Run(ctx(t), c)
	if tr.End != EndInputMissing {
		t.Fatalf("end %s, want input-missing", tr.End)
	}
	for _, w := range []string{`"confirm"`, "elicitation/create", "Send an email to bob@example.com", "inputs"} {
		if !strings.Contains(tr.Reason, w) {
			t.Errorf("reason %q does not mention %s", tr.Reason, w)
		}
	}
	if out := (&scorer{}).score(ctx(t), c, tr).outcome(); out != report.RunFail {
		t.Errorf("outcome %s, want fail", out)
	}
}

func TestStubsNeverReachTheServer(t *testing.T) {
	rs := newRefServer(t)
	c := emailCase(false) // no inputs: only a server call could ask for them
	p := newScripted("test:m", map[string][]script{c.Prompt: {{
		{calls: []llm.ToolCall{call("send_email", `{"to":"bob@example.com","subject":"Report","body":"ready"}`), call("get_weather", `{"location":"Oslo"}`)}},
		{text: "Sent."},
	}}})
	tr := agentFor(t, rs, p, map[string]string{"send_email": "stubbed: email queued"}).Run(ctx(t), c)
	if rs.callsTo("send_email") != 0 {
		t.Fatalf("the server received %d send_email calls; a stubbed tool must never run", rs.callsTo("send_email"))
	}
	s := tr.Turns[0].Calls[0]
	if tr.End != EndAnswered || !s.Stubbed || s.Result != "stubbed: email queued" {
		t.Errorf("end %s, call %+v; want the stub's text, marked stubbed", tr.End, s)
	}
	if w := tr.Turns[0].Calls[1]; w.Stubbed || rs.callsTo("get_weather") != 1 {
		t.Errorf("an unstubbed tool in the same turn must still run on the server: %+v", w)
	}
}

func TestTrajectoryIsBounded(t *testing.T) {
	rs := newRefServer(t)
	c := golden.Case{ID: "big", Prompt: "p"}
	huge := strings.Repeat("x", 100<<10)
	p := newScripted("test:m", map[string][]script{"p": {{{text: huge}}}})
	tr := agentFor(t, rs, p, map[string]string{}).Run(ctx(t), c)
	if len(tr.Final) > maxTextBytes || !tr.Truncated {
		t.Errorf("final is %d bytes (truncated %v); want ≤ %d and marked", len(tr.Final), tr.Truncated, maxTextBytes)
	}
}
