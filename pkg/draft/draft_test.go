package draft_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/draft"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonschema"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
)

// toolsJSON is a tools/list result as a server sends it: a chain
// (create_order's order_id feeds get_order), a pattern, an enum, a format
// no value can be vouched for, a nested object.
const toolsJSON = `[
 {"name": "create_order", "description": "Create an order for a product. Returns the new order's id.",
  "inputSchema": {"type": "object", "properties": {
     "sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{3}$", "description": "Product code, e.g. ABC-123"},
     "quantity": {"type": "integer", "minimum": 1, "maximum": 9},
     "gift": {"type": "boolean"},
     "shipping": {"type": "object", "properties": {"city": {"type": "string"}, "speed": {"enum": ["standard", "express"]}}, "required": ["city", "speed"]}},
   "required": ["sku", "quantity", "shipping"]},
  "outputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}, "total": {"type": "number"}}}},
 {"name": "get_order", "description": "Get the status of an order by its id.",
  "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}, "verbose": {"type": "boolean"}}, "required": ["order_id"]}},
 {"name": "get_order_history", "description": "Get the history of an order's status changes.",
  "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}, "since": {"type": "string", "format": "x-internal-cursor"}}, "required": ["order_id", "since"]}},
 {"name": "ping", "inputSchema": {"type": "object"}}
]`

func tools(t *testing.T, raw string) []mcpclient.Tool {
	t.Helper()
	var out []mcpclient.Tool
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// build drafts, writes, and checks that the file loads with the golden
// loader and that the draft's own check passes.
func build(t *testing.T, ts []mcpclient.Tool) (*draft.Draft, *golden.Set, []byte) {
	t.Helper()
	d, err := draft.Build(ts, draft.Options{Source: "test server"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := d.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Check("tasks.yaml", data); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	set, err := golden.Parse("tasks.yaml", data)
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, data)
	}
	return d, set, data
}

func TestDraftCoversEveryToolWithSchemaValidArguments(t *testing.T) {
	ts := tools(t, toolsJSON)
	_, set, data := build(t, ts)
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range ts {
		s, err := jsonschema.Compile(tool.InputSchema, jsonschema.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		schemas[tool.Name] = s
	}
	covered := map[string]bool{}
	negatives := 0
	byID := map[string]golden.Case{}
	for _, c := range set.Cases {
		byID[c.ID] = c
		if c.Negative {
			negatives++
		}
		if !slices.Contains(c.Tags, draft.TagDraft) {
			t.Errorf("%s: no draft tag: %v", c.ID, c.Tags)
		}
		if c.Chain() || c.Negative {
			continue
		}
		covered[c.ExpectTool] = true
		if slices.Contains(c.Tags, draft.TagNeedsValue) {
			continue
		}
		args := c.ExpectArgs
		if args == nil {
			args = map[string]any{} // a tool with no required argument: the model sends {}
		}
		if err := schemas[c.ExpectTool].ValidateAny(args); err != nil {
			t.Errorf("%s: expect_args %v do not validate against %s's inputSchema: %v", c.ID, c.ExpectArgs, c.ExpectTool, err)
		}
	}
	for _, tool := range ts {
		if !covered[tool.Name] {
			t.Errorf("no positive case for %s:\n%s", tool.Name, data)
		}
	}
	if negatives < 4 {
		t.Errorf("%d negatives, want at least 4", negatives)
	}

	// The pattern's example from the description is used; the enum, the
	// id and the number are matched exactly, the free text semantically.
	co := byID["create_order"]
	if co.ExpectArgs["sku"] != "ABC-123" || co.ExpectArgs["quantity"] != int64(3) {
		t.Errorf("create_order args %v", co.ExpectArgs)
	}
	ship, _ := co.ExpectArgs["shipping"].(map[string]any)
	if ship["speed"] != "standard" || ship["city"] == nil {
		t.Errorf("nested shipping %v", co.ExpectArgs["shipping"])
	}
	for name, want := range map[string]string{"sku": "exact", "quantity": "exact", "shipping": "exact"} {
		if got := co.ArgMatch[name].Kind; got != want {
			t.Errorf("create_order arg_match %s = %q, want %q", name, got, want)
		}
	}
	if got := byID["get_order"].ArgMatch["order_id"].Kind; got != "exact" {
		t.Errorf("an id is matched %q", got)
	}
	if all := byID["create_order-all-args"]; all.ExpectArgs["gift"] != true || all.ArgMatch["gift"].Kind != "exact" {
		t.Errorf("all-args case %v %v", all.ExpectArgs, all.ArgMatch)
	}

	// A format nothing can vouch for is said, not invented.
	h := byID["get_order_history"]
	if !slices.Contains(h.Tags, draft.TagNeedsValue) || h.ExpectArgs["since"] != nil {
		t.Errorf("get_order_history: tags %v args %v", h.Tags, h.ExpectArgs)
	}
	if !bytes.Contains(data, []byte(`TODO: no schema-valid value could be made for since (format "x-internal-cursor"`)) {
		t.Errorf("no TODO for since:\n%s", data)
	}

	// The chain: create_order's output order_id feeds get_order.
	var chain *golden.Case
	for i, c := range set.Cases {
		if c.Chain() && c.ExpectSequence[0] == "create_order" && c.ExpectSequence[1] == "get_order" {
			chain = &set.Cases[i]
		}
	}
	if chain == nil {
		t.Fatalf("no create_order → get_order chain:\n%s", data)
	}
	if _, fed := chain.ExpectSequenceArgs[1]["order_id"]; fed {
		t.Errorf("the fed order_id has an expected value: %v", chain.ExpectSequenceArgs)
	}
	if err := schemas["create_order"].ValidateAny(chain.ExpectSequenceArgs[0]); err != nil {
		t.Errorf("chain step 1: %v", err)
	}
	for _, w := range []string{"# DRAFT golden set", "test server", "order_id comes from the previous step's result", "chain: create_order's output field order_id feeds get_order"} {
		if !bytes.Contains(data, []byte(w)) {
			t.Errorf("the draft lacks %q:\n%s", w, data)
		}
	}
}

func TestDraftIsDeterministicAndNamesTheMostSimilarPair(t *testing.T) {
	ts := tools(t, toolsJSON)
	_, set, a := build(t, ts)
	_, _, b := build(t, ts)
	if !bytes.Equal(a, b) {
		t.Fatal("two drafts of the same tools differ")
	}
	pairs := draft.SimilarPairs(ts, 1)
	if len(pairs) != 1 || pairs[0].A != "get_order" || pairs[0].B != "get_order_history" {
		t.Fatalf("most similar pair %+v, want get_order / get_order_history", pairs)
	}
	var near *golden.Case
	for i, c := range set.Cases {
		if c.ID == "no-tool-near-miss-1" {
			near = &set.Cases[i]
		}
	}
	if near == nil || !near.Negative || !strings.Contains(near.Prompt, "status of an order") || !strings.Contains(near.Prompt, "history of an order") {
		t.Fatalf("near-miss case %+v", near)
	}
	if !bytes.Contains(a, []byte("near miss: get_order and get_order_history are the most similar pair")) {
		t.Errorf("the near miss does not say how it was made:\n%s", a)
	}
}

func TestDraftOfOneToolStillHasFourNegatives(t *testing.T) {
	_, set, _ := build(t, tools(t, `[{"name": "echo", "description": "Echo the message back.", "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}}]`))
	n := 0
	for _, c := range set.Cases {
		if c.Negative {
			n++
		}
	}
	if n < 4 {
		t.Errorf("%d negatives", n)
	}
}

func TestDraftRefusesAServerWithoutUsableTools(t *testing.T) {
	_, err := draft.Build(tools(t, `[{"name": "has space", "inputSchema": {"type": "object"}}]`), draft.Options{})
	if err == nil || !strings.Contains(err.Error(), "write the cases by hand") {
		t.Fatalf("err %v", err)
	}
}

func TestRewriteUsesAModelsPromptOnlyWhenItKeepsTheValues(t *testing.T) {
	ts := tools(t, `[{"name": "get_order", "description": "Get the status of an order by its id.", "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string", "description": "e.g. ORD-7"}}, "required": ["order_id"]}},
	  {"name": "get_weather", "description": "Weather for a city.", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]`)
	fake := llmfake.New(t, llmfake.Options{Default: func(r *llmfake.Request) llmfake.Reply {
		if strings.Contains(r.LastUserText(), "ORD-7") {
			return llmfake.Verdict(`{"prompt": "Where is my order ORD-7 at?"}`)
		}
		return llmfake.Verdict(`{"prompt": "Is it raining where I live?"}`) // the city left out
	}})
	model, err := llm.New("openai:gpt-5-mini", fake.Endpoints(), fake.LookupEnv, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := draft.Build(ts, draft.Options{Source: "x"})
	if err != nil {
		t.Fatal(err)
	}
	meter := spend.NewMeter(spend.Budget{}, nil, nil)
	if err := draft.Rewrite(context.Background(), model, meter, d); err != nil {
		t.Fatal(err)
	}
	data, err := d.YAML()
	if err != nil {
		t.Fatal(err)
	}
	set, err := d.Check("tasks.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range set.Cases {
		if c.ID == "get_order" && (c.Prompt != "Where is my order ORD-7 at?" || !slices.Contains(c.Tags, draft.TagModel)) {
			t.Errorf("get_order: %q %v", c.Prompt, c.Tags)
		}
		// A semantic value forgives a paraphrase, not a prompt that
		// never asks for it: no model could pass city "Seattle, WA" on
		// "Is it raining where I live?".
		if c.ID == "get_weather" && (slices.Contains(c.Tags, draft.TagModel) || !strings.Contains(c.Prompt, "Seattle")) {
			t.Errorf("get_weather took a prompt without its city: %q %v", c.Prompt, c.Tags)
		}
	}
	if !bytes.Contains(data, []byte(`drafted prompt was not used (it says nothing of "Seattle, WA", which the case expects (matched semantically))`)) {
		t.Errorf("no note of the refused prompt:\n%s", data)
	}
	if !bytes.Contains(data, []byte("prompt drafted by openai:gpt-5-mini")) {
		t.Errorf("no note of the model:\n%s", data)
	}
	if used := meter.Used(); used.Calls != len(fake.Requests()) || used.Tokens == 0 {
		t.Errorf("the meter counted %d calls and %d tokens for %d requests", used.Calls, used.Tokens, len(fake.Requests()))
	}
	if len(fake.Requests()) == 0 || fake.Requests()[0].Output == nil {
		t.Errorf("the model was not asked for structured output")
	}

	// A paraphrase that keeps a word of the semantic value is used.
	para := llmfake.New(t, llmfake.Options{Default: func(r *llmfake.Request) llmfake.Reply {
		if strings.Contains(r.LastUserText(), "ORD-7") {
			return llmfake.Verdict(`{"prompt": "Where is my order ORD-7 at?"}`)
		}
		return llmfake.Verdict(`{"prompt": "Do I need an umbrella in seattle today?"}`)
	}})
	model3, _ := llm.New("openai:gpt-5-mini", para.Endpoints(), para.LookupEnv, llm.Options{})
	d3, _ := draft.Build(ts, draft.Options{})
	if err := draft.Rewrite(context.Background(), model3, spend.NewMeter(spend.Budget{}, nil, nil), d3); err != nil {
		t.Fatal(err)
	}
	for _, c := range d3.Cases {
		if c.ID == "get_weather" && (c.Prompt != "Do I need an umbrella in seattle today?" || !slices.Contains(c.Tags, draft.TagModel)) {
			t.Errorf("get_weather refused a paraphrase that names the city: %q %v", c.Prompt, c.Tags)
		}
	}

	// A prompt that drops the exactly matched id is not used.
	drop := llmfake.New(t, llmfake.Options{Default: func(*llmfake.Request) llmfake.Reply {
		return llmfake.Verdict(`{"prompt": "Where is my order?"}`)
	}})
	model2, _ := llm.New("openai:gpt-5-mini", drop.Endpoints(), drop.LookupEnv, llm.Options{})
	d2, _ := draft.Build(ts, draft.Options{})
	if err := draft.Rewrite(context.Background(), model2, spend.NewMeter(spend.Budget{}, nil, nil), d2); err != nil {
		t.Fatal(err)
	}
	data2, _ := d2.YAML()
	if !bytes.Contains(data2, []byte(`drafted prompt was not used (it leaves out "ORD-7"`)) || !bytes.Contains(data2, []byte(`with order id "ORD-7"`)) {
		t.Errorf("the dropped value is not caught:\n%s", data2)
	}
}

// A server's tools are untrusted: newlines, YAML syntax and huge values in
// them must not break the file or bloat the prompts.
func TestDraftOfHostileToolsStillLoads(t *testing.T) {
	big := strings.Repeat("x", 100_000)
	raw, _ := json.Marshal([]map[string]any{
		{"name": "bad\nname", "inputSchema": map[string]any{"type": "object"}},
		{"name": "weird", "description": "Line one\n# not a comment\n---\nkey: [unclosed \u2028 \x1b[31m" + big,
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{
				"blob": map[string]any{"const": big},
				"q":    map[string]any{"type": "string", "pattern": "^(?=lookahead)x$"},
			}, "required": []string{"blob", "q"}}},
		{"name": "no-tool-small-talk", "description": "A tool whose name is a negative's id.", "inputSchema": map[string]any{"type": "object"}},
	})
	d, set, data := build(t, tools(t, string(raw)))
	if len(d.Notes) == 0 || !strings.Contains(d.Notes[0], "left out") {
		t.Errorf("notes %v", d.Notes)
	}
	ids := map[string]bool{}
	for _, c := range set.Cases {
		if len(c.Prompt) > 2000 {
			t.Errorf("%s: prompt of %d bytes", c.ID, len(c.Prompt))
		}
		ids[c.ID] = true
	}
	if !ids["tool-no-tool-small-talk"] || !ids["no-tool-small-talk"] {
		t.Errorf("ids %v", ids)
	}
	if len(data) > 20_000 || !bytes.Contains(data, []byte("TODO: no schema-valid value could be made for blob")) || !bytes.Contains(data, []byte("TODO: no schema-valid value could be made for q (pattern")) {
		t.Errorf("%d bytes:\n%.3000s", len(data), data)
	}
}

// Drafting spends from the run's budget: once the cap is reached no more
// prompts are asked for, and the cases say why they kept the template.
func TestRewriteStopsAtTheBudget(t *testing.T) {
	ts := tools(t, `[{"name": "get_order", "description": "Get the status of an order.", "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string", "description": "e.g. ORD-7"}}, "required": ["order_id"]}},
	  {"name": "get_weather", "description": "Weather for a city.", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]`)
	fake := llmfake.New(t, llmfake.Options{Default: func(r *llmfake.Request) llmfake.Reply {
		return llmfake.Verdict(`{"prompt": "Where is order ORD-7, and is it raining in the city?"}`)
	}})
	model, err := llm.New("openai:gpt-5-mini", fake.Endpoints(), fake.LookupEnv, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := draft.Build(ts, draft.Options{})
	if err != nil {
		t.Fatal(err)
	}
	meter := spend.NewMeter(spend.Budget{MaxTokens: 1}, nil, nil)
	if err := draft.Rewrite(context.Background(), model, meter, d); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d model calls under a cap the first call reaches, want 1", n)
	}
	data, err := d.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("the budget was reached before this prompt was drafted")) {
		t.Errorf("no case says the budget stopped its drafting:\n%s", data)
	}
	// A meter already at its cap refuses to start.
	if err := draft.Rewrite(context.Background(), model, meter, d); !errors.Is(err, spend.ErrBudget) {
		t.Errorf("a spent budget: err %v, want spend.ErrBudget", err)
	}
}

// A case that calls a tool not marked read-only says that every run calls
// it for real, and the draft's header says how to stub them all; a
// read-only tool's case says nothing of the kind.
func TestDraftSaysWhichCasesCallToolsForReal(t *testing.T) {
	ts := tools(t, `[
	 {"name": "close_ticket", "description": "Close a ticket by its id.", "annotations": {"destructiveHint": true},
	  "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
	 {"name": "create_ticket", "description": "Create a ticket with a title.", "annotations": {"readOnlyHint": false, "destructiveHint": false},
	  "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
	 {"name": "search_tickets", "description": "Search the tickets by a query.", "annotations": {"readOnlyHint": true},
	  "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}
	]`)
	_, _, data := build(t, ts)
	text := string(data)
	for _, want := range []string{
		"close_ticket is not read-only, and destructive",
		"create_ticket is not read-only: every run calls it for real",
		"#     stubs:\n#       close_ticket: \"stubbed\"\n#       create_ticket: \"stubbed\"\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the draft lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "search_tickets is not read-only") {
		t.Errorf("a read-only tool is said to have side effects:\n%s", text)
	}
}

// Values a person would write: an example in parentheses keeps all its
// words ("Team lunch", not "Team"), the first of several; a pattern that
// takes a date gets a date, not "0000-00-00".
func TestDraftValuesReadLikeAPersonsOwn(t *testing.T) {
	ts := tools(t, `[
	 {"name": "create_event", "description": "Create a calendar event.",
	  "inputSchema": {"type": "object", "properties": {
	    "title": {"type": "string", "description": "The event's title (e.g. Team lunch)"},
	    "region": {"type": "string", "description": "Where it runs (e.g. us-west1, eu-west2)"},
	    "date": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$", "description": "The day"}},
	   "required": ["title", "region", "date"]}}
	]`)
	d, _, _ := build(t, ts)
	args := d.Cases[0].Steps[0].Args
	if args["title"] != "Team lunch" || args["region"] != "us-west1" || args["date"] != "2026-03-14" {
		t.Errorf("args %v", args)
	}
}

// A free string a program reads (a date, an email address, a URL, a path)
// is matched exactly, as an id is: "January 15" is not the "2026-01-15"
// the tool takes. Free text stays semantic.
func TestDraftMatchesMachineTextExactly(t *testing.T) {
	ts := tools(t, `[
	 {"name": "send_report", "description": "Send a report.",
	  "inputSchema": {"type": "object", "properties": {
	    "date": {"type": "string"}, "email": {"type": "string"}, "url": {"type": "string"},
	    "path": {"type": "string"}, "subject": {"type": "string"}, "city": {"type": "string"}},
	   "required": ["date", "email", "url", "path", "subject", "city"]}}
	]`)
	_, set, data := build(t, ts)
	c := set.Cases[0]
	want := map[string]string{"date": "exact", "email": "exact", "url": "exact", "path": "exact", "subject": "semantic", "city": "semantic"}
	for name, kind := range want {
		if got := c.ArgMatch[name].Kind; got != kind {
			t.Errorf("%s = %v matched %q, want %q\n%s", name, c.ExpectArgs[name], got, kind, data)
		}
	}
}
