package lexical

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior/score"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func ask(t *testing.T, p *Provider, req *llm.Request) *llm.Response {
	t.Helper()
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func userTurn(prompt string, tools []llm.Tool) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.User, Text: prompt}}, Tools: tools}
}

// The baseline on the bundled golden set, through the production
// Complete: every case's choice and arguments, and the scores they make.
// This is what `mcp-eval run` shows with no API key; a change here is a
// change in the README's quick start.
func TestExampleSet(t *testing.T) {
	tools := exampleTools(t)
	set, err := golden.Load("../../../golden-examples/tasks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ // case → tool and arguments the baseline sends ("" = no tool)
		"weather-seattle":           `get_weather {"location":"Seattle, WA"}`,
		"weather-paris-fahrenheit":  `get_weather {"location":"Paris","units":"fahrenheit"}`,
		"weather-tokyo-celsius":     `get_weather {"location":"Tokyo, Japan","units":"celsius"}`,
		"weather-umbrella":          ``, // no shared word: the paraphrase a model gets and BM25 cannot
		"weather-helsinki-freezing": ``, // "celsius" alone scores 1.48
		"invoices-customer":         `search_invoices {"customer_id":"C1234"}`,
		"invoices-overdue":          `search_invoices {"customer_id":"C2048","status":"overdue"}`,
		"invoices-paid-limit":       `search_invoices {"customer_id":"C1001","limit":3,"status":"paid"}`,
		"invoices-open":             `search_invoices {"customer_id":"C1003","status":"open"}`,
		"invoices-id-shape":         `search_invoices {"customer_id":"C0042"}`,
		"region-us-west":            `lookup_region {"query":"solar panels","region":"us-west1"}`,
		"region-eu-central":         `lookup_region {"query":"battery recalls","region":"eu-central1"}`,
		"region-global":             `lookup_region {"query":"late delivery"}`,
		"count-to-five":             `slow_count {"n":5}`,
		"count-to-twelve":           `slow_count {"n":12}`,
		"count-about-ten":           `slow_count {"n":10}`,
		"email-confirmed":           `send_email {"body":"See you at noon.","subject":"Lunch","to":"ana@example.com"}`,
		"email-declined":            `send_email {"body":"Please sign by Friday.","subject":"Contract","to":"bob@example.com"}`,
		"chain-overdue-reminder":    `search_invoices {"customer_id":"C2048","status":"overdue"}`,
		"chain-region-then-weather": `lookup_region {"query":"storm damage","region":"us-east1"}`,
		"chain-two-cities":          `get_weather {"location":"Oslo"}`,
		"neg-capital":               ``,
		"neg-joke":                  ``,
		"neg-translate":             ``,
		"neg-arithmetic":            ``,                                            // "times" ~ "one step at a time": 1.51, under the threshold
		"neg-invoice-theory":        `search_invoices {"limit":1,"status":"open"}`, // the near miss it over-triggers on
		"neg-climate":               ``,
	}
	p := New()
	var runs []score.Run
	for i := range set.Cases {
		c := &set.Cases[i]
		resp := ask(t, p, userTurn(c.Prompt, tools))
		var calls []score.Call
		got := ""
		for _, call := range resp.Message.Calls {
			got = call.Name + " " + string(call.Arguments)
			calls = append(calls, score.Call{Name: call.Name, Arguments: call.Arguments})
		}
		if w, ok := want[c.ID]; !ok || got != w {
			t.Errorf("%s: %s\n  want %s\n  (%s)", c.ID, got, w, resp.Message.Text)
		}
		if (got == "") != (resp.StopReason == "end_turn") || !strings.HasPrefix(resp.Message.Text, Label+": ") {
			t.Errorf("%s: stop %s, text %q", c.ID, resp.StopReason, resp.Message.Text)
		}
		runs = append(runs, score.Evaluate(score.RunOutcome{Case: c, Calls: calls}))
	}
	if len(want) != len(set.Cases) {
		t.Errorf("%d expectations for %d cases", len(want), len(set.Cases))
	}
	// The baseline's scorecard: 19 of the 21 positive cases selected
	// (umbrella and Helsinki missed), every selected call's arguments
	// right, no chain completed (one call per case), one over-trigger in
	// six negatives.
	m := score.SummarizeModel(runs)
	for name, want := range map[string]report.Count{
		report.ToolSelection:       {K: 19, N: 21},
		report.ArgumentCorrectness: {K: 19, N: 19},
		report.SequenceOrder:       {K: 0, N: 3},
		report.OverTrigger:         {K: 1, N: 6},
	} {
		if s, ok := score.Score(m.Scores, name); !ok || s.Count() != want {
			t.Errorf("%s: %+v, want %v", name, s, want)
		}
	}
	// Its most frequent confusion: get_weather expected, nothing called —
	// umbrella and Helsinki, and the second step of two chains.
	if top := score.TopConfusions(m.Matrix, nil, 1); len(top) != 1 || top[0].Count != 4 || top[0].Expected != "get_weather" || top[0].Chosen != score.NoTool {
		t.Errorf("top confusion: %+v", top)
	}
}

func TestTurns(t *testing.T) {
	tools := exampleTools(t)
	p := New()
	first := userTurn("What's the weather in Seattle, WA?", tools)
	resp := ask(t, p, first)
	if resp.StopReason != "tool_use" || len(resp.Message.Calls) != 1 || resp.ServedModel != ID || resp.Message.Role != llm.Assistant {
		t.Fatalf("%+v", resp)
	}
	if resp.Usage != (llm.Usage{}) || resp.Dropped != nil {
		t.Errorf("no model, no tokens: %+v", resp)
	}
	zero, seed := 0.0, int64(42)
	sampled := userTurn("What's the weather in Seattle, WA?", tools)
	sampled.Sampling = llm.Sampling{Temperature: &zero, Seed: &seed}
	if r := ask(t, p, sampled); len(r.Dropped) != 2 || !strings.HasPrefix(r.Dropped[0], "temperature: ") || !strings.HasPrefix(r.Dropped[1], "seed: ") {
		t.Errorf("dropped: %q", r.Dropped)
	}
	// Deterministic: the same request, the same answer.
	again := ask(t, p, first)
	if !reflect.DeepEqual(again.Message, resp.Message) || again.StopReason != resp.StopReason {
		t.Errorf("not deterministic:\n%+v\n%+v", again.Message, resp.Message)
	}
	// After the tool answered, it ends the turn quoting the result.
	call := resp.Message.Calls[0]
	second := &llm.Request{Tools: tools, Messages: append(first.Messages,
		resp.Message,
		llm.Message{Role: llm.ToolRole, Results: []llm.ToolResult{{CallID: call.ID, Content: `{"temperature":12}`}}})}
	end := ask(t, p, second)
	if end.StopReason != "end_turn" || len(end.Message.Calls) != 0 || !strings.Contains(end.Message.Text, `{"temperature":12}`) {
		t.Errorf("%+v", end)
	}
	// tool_choice none: no call; required: a call even below the threshold.
	none := userTurn("What's the weather in Seattle, WA?", tools)
	none.ToolChoice = "none"
	if r := ask(t, p, none); len(r.Message.Calls) != 0 {
		t.Errorf("none: %+v", r.Message)
	}
	req := userTurn("Tell me a joke.", tools)
	if r := ask(t, p, req); len(r.Message.Calls) != 0 || !strings.Contains(r.Message.Text, "no tool matches the request lexically") {
		t.Errorf("below threshold: %+v", r.Message)
	}
	req.ToolChoice = "required"
	if r := ask(t, p, req); len(r.Message.Calls) != 1 {
		t.Errorf("required: %+v", r.Message)
	}
	// A threshold of its own.
	strict := &Provider{Threshold: 100}
	if r := ask(t, strict, first); len(r.Message.Calls) != 0 {
		t.Errorf("threshold 100 still called: %+v", r.Message)
	}
}

func TestRefusals(t *testing.T) {
	p := New()
	judge := userTurn("grade this", nil)
	judge.Output = json.RawMessage(`{"type":"object"}`)
	if _, err := p.Complete(context.Background(), judge); !errors.Is(err, ErrCannotJudge) {
		t.Errorf("judge request: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Complete(ctx, userTurn("x", nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := p.Complete(context.Background(), &llm.Request{}); err == nil {
		t.Error("no user message accepted")
	}
	if _, err := p.Complete(context.Background(), nil); err == nil {
		t.Error("nil request accepted")
	}
	if p.ID() != "baseline:lexical" {
		t.Error(p.ID())
	}
}

func TestRank(t *testing.T) {
	tools := []llm.Tool{
		{Name: "b_tool", Description: "nothing in common"},
		{Name: "a_tool", Description: "nothing in common"},
		{Name: "searchInvoices", Description: "Find invoices."},
	}
	r := Rank("search my invoices", tools)
	if r[0].Tool != "searchInvoices" || !reflect.DeepEqual(r[0].Terms, []string{"invoice", "search"}) {
		t.Errorf("camelCase name and stemming: %+v", r[0])
	}
	if r[1].Tool != "a_tool" || r[2].Tool != "b_tool" {
		t.Errorf("ties by name: %+v", r)
	}
}

func TestStemAndTerms(t *testing.T) {
	for in, want := range map[string]string{
		"invoices": "invoice", "matching": "match", "counted": "count", "queries": "query",
		"boxes": "box", "status": "status", "class": "class", "is": "is",
	} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
	if got := terms("Get the current_weather for São Paulo, please!"); !reflect.DeepEqual(got, []string{"current", "weather", "são", "paulo"}) {
		t.Errorf("terms: %q", got)
	}
}

func TestExtractArgs(t *testing.T) {
	schema := `{"type":"object","properties":{
		"title":{"type":"string"},
		"note":{"type":"string"},
		"priority":{"$ref":"#/$defs/prio","description":"How urgent"},
		"ticket":{"type":"string","description":"Ticket key, e.g. OPS-123"},
		"count":{"type":"integer","minimum":1,"maximum":50},
		"ratio":{"type":"number"},
		"city":{"type":"string","description":"City to file it for"}
	},"required":["title","note","city"],
	"$defs":{"prio":{"type":"string","enum":["low","high"]}}}`
	tool := llm.Tool{Name: "file", InputSchema: json.RawMessage(schema)}
	got := ExtractArgs(`File "Disk full" about OPS-42 in Berlin, Germany with note 'check /var' at HIGH priority, up to 7 items, ratio 0.5`, tool)
	want := map[string]any{
		"title": "Disk full", "note": "check /var", "priority": "high", "ticket": "OPS-42",
		"count": int64(7), "ratio": 0.5, "city": "Berlin, Germany",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %#v\nwant %#v", got, want)
	}
	// A number out of range, or a fraction for an integer, is left out.
	if got := ExtractArgs("count 99 or 2.5", tool); got["count"] != nil {
		t.Errorf("out of range: %#v", got)
	}
	// A schema that does not parse gives no arguments, not a panic.
	if got := ExtractArgs("x", llm.Tool{InputSchema: json.RawMessage(`[`)}); len(got) != 0 {
		t.Errorf("%#v", got)
	}
}

// Pydantic's schemas (FastMCP's): Optional[X] is {"anyOf": [X, {"type":
// "null"}]} and a model or enum type is a $ref into $defs, often both.
// The baseline reads the type, enum and bounds inside, as a model does.
func TestExtractArgsPydantic(t *testing.T) {
	schema := `{"type":"object","properties":{
		"priority":{"anyOf":[{"$ref":"#/$defs/Priority"},{"type":"null"}],"default":null},
		"limit":{"anyOf":[{"type":"integer","minimum":1,"maximum":20},{"type":"null"}],"default":null,"title":"Limit"},
		"owner":{"anyOf":[{"type":"string","format":"email"},{"type":"null"}],"default":null}
	},
	"$defs":{"Priority":{"enum":["low","high"],"title":"Priority","type":"string"}}}`
	tool := llm.Tool{Name: "search", InputSchema: json.RawMessage(schema)}
	got := ExtractArgs(`HIGH priority tickets of ana@example.com, up to 5`, tool)
	want := map[string]any{"priority": "high", "limit": int64(5), "owner": "ana@example.com"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %#v\nwant %#v", got, want)
	}
	if got := ExtractArgs("up to 50", tool); got["limit"] != nil {
		t.Errorf("the bound inside the wrapper is not kept: %#v", got)
	}
}

func TestShapeOf(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1": `\p{Ll}+-\p{Ll}+[0-9]+`,
		"OPS-123":  `\p{Lu}+-[0-9]+`,
		"a.b":      `\p{Ll}+\.\p{Ll}+`,
	} {
		if got := shapeOf(in); got != want {
			t.Errorf("shapeOf(%q) = %q, want %q", in, got, want)
		}
	}
}
