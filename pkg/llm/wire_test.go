package llm_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
)

func ptr[T any](v T) *T { return &v }

// The capability table decides what of temperature 0 and seed 42 is sent;
// the fake refuses what the real API refuses, so a wrong decision fails
// the call, and the body shows what went out.
func TestSamplingSentOnlyWhereAccepted(t *testing.T) {
	cases := []struct {
		name      string
		spec      func(f *llmfake.Server) string
		endpoints func(f *llmfake.Server) map[string]config.Endpoint
		sentTemp  bool
		sentSeed  bool
		dropped   []string // prefixes of Response.Dropped
		maxParam  string   // the max-tokens field expected in the body
		version   string
	}{
		{name: "responses, reasoning model", spec: func(*llmfake.Server) string { return "openai:gpt-5-mini" },
			dropped: []string{"temperature: reasoning model", "seed: the Responses API has no seed"}, maxParam: "max_output_tokens"},
		{name: "responses, non-reasoning model", spec: func(*llmfake.Server) string { return "openai:gpt-4.1" },
			sentTemp: true, dropped: []string{"seed: the Responses API has no seed"}, maxParam: "max_output_tokens"},
		{name: "anthropic, pinned 2026-10-21", spec: func(*llmfake.Server) string { return "anthropic:claude-sonnet-5-5" },
			dropped:  []string{"temperature: anthropic-version 2026-10-21 rejects", "seed: the Anthropic Messages API has no seed"},
			maxParam: "max_tokens", version: "2026-10-21"},
		{name: "anthropic, endpoint pinned to 2023-06-01",
			spec: func(*llmfake.Server) string { return "anthropic:claude-sonnet-5-5" },
			endpoints: func(f *llmfake.Server) map[string]config.Endpoint {
				return map[string]config.Endpoint{"anthropic": {BaseURL: f.URL, APIVersion: "2023-06-01"}}
			},
			sentTemp: true, dropped: []string{"seed: the Anthropic Messages API has no seed"}, maxParam: "max_tokens", version: "2023-06-01"},
		{name: "compatible chat, local model", spec: func(f *llmfake.Server) string { return "openai-compatible:qwen2.5@" + f.URL + "/v1" },
			sentTemp: true, sentSeed: true, maxParam: "max_tokens"},
		{name: "chat, OpenAI reasoning model", spec: func(f *llmfake.Server) string { return "openai-compatible:openai/o4-mini@" + f.URL + "/v1" },
			sentSeed: true, dropped: []string{"temperature: reasoning model"}, maxParam: "max_completion_tokens"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{}, llmfake.Text("ok"))
			eps := f.Endpoints()
			if c.endpoints != nil {
				eps = c.endpoints(f)
			}
			p, err := llm.New(c.spec(f), eps, f.LookupEnv, llm.Options{})
			if err != nil {
				t.Fatal(err)
			}
			req := userTurn("hi")
			req.Sampling = llm.Sampling{Temperature: ptr(0.0), Seed: ptr(int64(42)), MaxOutputTokens: 256}
			resp, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			r := f.Requests()[0]
			if temp, ok := r.Number("temperature"); ok != c.sentTemp || (ok && temp != 0) {
				t.Errorf("temperature in body: %v (%v), want sent=%v with 0", ok, temp, c.sentTemp)
			}
			if seed, ok := r.Number("seed"); ok != c.sentSeed || (ok && seed != 42) {
				t.Errorf("seed in body: %v (%v), want sent=%v with 42", ok, seed, c.sentSeed)
			}
			if (resp.Sent.Temperature != nil) != c.sentTemp || (resp.Sent.Seed != nil) != c.sentSeed || resp.Sent.MaxOutputTokens != 256 {
				t.Errorf("Sent = %+v, does not match the body", resp.Sent)
			}
			if n, ok := r.Number(c.maxParam); !ok || n != 256 {
				t.Errorf("%s = %v (%v), want 256", c.maxParam, n, ok)
			}
			if len(resp.Dropped) != len(c.dropped) {
				t.Fatalf("Dropped = %q, want %d entries like %q", resp.Dropped, len(c.dropped), c.dropped)
			}
			for i, d := range c.dropped {
				if !strings.HasPrefix(resp.Dropped[i], d) {
					t.Errorf("Dropped[%d] = %q, want prefix %q", i, resp.Dropped[i], d)
				}
			}
			if resp.APIVersion != c.version {
				t.Errorf("APIVersion = %q, want %q", resp.APIVersion, c.version)
			}
			if c.version != "" && r.Header.Get("anthropic-version") != c.version {
				t.Errorf("anthropic-version header = %q, want %q", r.Header.Get("anthropic-version"), c.version)
			}
		})
	}
}

// Without the filter, the fake (like the real API) refuses: proves the
// test above would catch a filter that sent too much.
func TestFakeRefusesTemperatureForReasoningModel(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{})
	body := `{"model":"gpt-5-mini","messages":[{"role":"user","content":"hi"}],"temperature":0}`
	status, msg := rawPost(t, f.URL+"/v1/chat/completions", body, map[string]string{"Authorization": "Bearer " + llmfake.DefaultKey})
	if status != 400 || !strings.Contains(msg, "'temperature' does not support 0 with this model") {
		t.Errorf("got %d %s, want the 400 OpenAI sends", status, msg)
	}
}

func TestToolNamesMappedBothWays(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 5) // 100 characters
	tools := []llm.Tool{
		{Name: "weather.get", Description: "Weather.", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
		{Name: "weather_get", Description: "A different tool that already has the sanitised name.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: long, Description: "Long.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			// The model sees the provider names and calls by them; the
			// first turn tells us which names were sent.
			f := llmfake.New(t, llmfake.Options{Default: func(r *llmfake.Request) llmfake.Reply {
				names := r.ToolNames()
				return llmfake.Tools(
					llmfake.Call{Name: names[0], Arguments: `{"city":"Oslo"}`},
					llmfake.Call{Name: names[1]},
					llmfake.Call{Name: names[2]},
					llmfake.Call{Name: "made_up_tool"})
			}})
			p := newProvider(t, f, d.spec(f), llm.Options{})
			resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "go"}}, Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			sent := f.Requests()[0].ToolNames()
			// "weather.get" cannot keep its dot and "weather_get" is
			// taken, so it gets "_" + 6 hex digits of SHA-256("weather.get").
			wantSent := []string{"weather_get_" + sha6("weather.get"), "weather_get", long}
			if d.dialect != llm.DialectAnthropic {
				// OpenAI allows 64 characters: the long name is cut.
				wantSent[2] = long[:64]
			}
			if !reflect.DeepEqual(sent, wantSent) {
				t.Errorf("sent names %q, want %q", sent, wantSent)
			}
			if got := callNames(resp.Message.Calls); !reflect.DeepEqual(got, []string{"weather.get", "weather_get", long, "made_up_tool"}) {
				t.Errorf("calls mapped back to %q", got)
			}
			wantRenamed := map[string]string{"weather.get": wantSent[0]}
			if d.dialect != llm.DialectAnthropic {
				wantRenamed[long] = long[:64]
			}
			if !reflect.DeepEqual(resp.Renamed, wantRenamed) {
				t.Errorf("Renamed = %v, want %v", resp.Renamed, wantRenamed)
			}
		})
	}
}

func TestSchemasConvertedForProviders(t *testing.T) {
	tools := []llm.Tool{
		// Root anyOf of object shapes: OpenAI and Anthropic reject the
		// whole request over it.
		{Name: "lookup", Description: "Look a user up.", InputSchema: json.RawMessage(`{
			"$schema":"https://json-schema.org/draft/2020-12/schema",
			"anyOf":[
				{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]},
				{"type":"object","properties":{"email":{"type":"string"}},"required":["email"]}]}`)},
		// Root not: no object schema can say it.
		{Name: "tagged", Description: "Tags.", InputSchema: json.RawMessage(`{"type":"object","properties":{"tags":{"type":"array"}},"not":{"required":["x"]}}`)},
		// No schema at all.
		{Name: "ping", Description: "Ping."},
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{}, llmfake.Tool("lookup", `{"email":"a@b.c"}`))
			p := newProvider(t, f, d.spec(f), llm.Options{})
			resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "find a@b.c"}}, Tools: tools})
			if err != nil {
				t.Fatal(err) // the fake refuses unconverted schemas as the real APIs do
			}
			r := f.Requests()[0]
			lookup, _ := r.FindTool("lookup")
			jsonEq(t, "lookup schema", lookup.Schema, []byte(`{
				"type":"object",
				"properties":{"id":{"type":"integer"},"email":{"type":"string"}},
				"required":[],
				"description":"Arguments take at least one of these shapes: (1) with id; (2) with email."}`))
			tagged, _ := r.FindTool("tagged")
			jsonEq(t, "tagged schema", tagged.Schema, []byte(`{"type":"object","properties":{"tags":{"type":"array","items":{}}}}`))
			ping, _ := r.FindTool("ping")
			jsonEq(t, "ping schema", ping.Schema, []byte(`{"type":"object","properties":{}}`))
			want := []string{`tool "tagged": root not {"required":["x"]} dropped: providers reject it at the root and an object schema cannot say it`}
			if !reflect.DeepEqual(resp.SchemaNotes, want) {
				t.Errorf("SchemaNotes = %q, want %q", resp.SchemaNotes, want)
			}
			if d.dialect == llm.DialectOpenAIResponses {
				// Responses is strict by default: every tool says false.
				for _, tool := range r.Tools {
					if tool.Strict == nil || *tool.Strict {
						t.Errorf("tool %s strict = %v, want false", tool.Name, tool.Strict)
					}
				}
			}
		})
	}
}

// A non-object root travels as {"input": …} and comes back unwrapped.
func TestNonObjectSchemaWrapped(t *testing.T) {
	tools := []llm.Tool{{Name: "echo", Description: "Echo a string.", InputSchema: json.RawMessage(`{"type":"string"}`)}}
	f := llmfake.New(t, llmfake.Options{}, llmfake.Tool("echo", `{"input":"hello"}`))
	p := newProvider(t, f, "anthropic:claude-sonnet-5-5", llm.Options{})
	resp, err := p.Complete(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.User, Text: "echo hello"}}, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "sent schema", f.Requests()[0].Tools[0].Schema, []byte(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`))
	jsonEq(t, "arguments", resp.Message.Calls[0].Arguments, []byte(`"hello"`))
}

// A whole tool loop: the assistant turn is echoed (raw, with reasoning
// items or thinking blocks) and the results answer its calls. The fake
// checks the pairing rules and the echoed signatures.
func TestMultiTurnTranscript(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			first := llmfake.Tools(
				llmfake.Call{Name: "get_weather", Arguments: `{"city":"Oslo"}`},
				llmfake.Call{Name: "get_weather", Arguments: `{"city":"Lima"}`})
			first.Thinking = true
			f := llmfake.New(t, llmfake.Options{}, first, llmfake.Text("Oslo 3C, Lima 22C."))
			p := newProvider(t, f, d.spec(f), llm.Options{})
			req := userTurn("Weather in Oslo and Lima?")
			r1, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			req.Messages = append(req.Messages, r1.Message, llm.Message{Role: llm.ToolRole, Results: []llm.ToolResult{
				{CallID: r1.Message.Calls[0].ID, Content: "3C"},
				{CallID: r1.Message.Calls[1].ID, Content: "unknown city", IsError: true},
			}})
			r2, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if r2.Message.Text != "Oslo 3C, Lima 22C." || r2.StopReason != "end_turn" {
				t.Errorf("second turn: %q %s", r2.Message.Text, r2.StopReason)
			}
			second := f.Requests()[1]
			got := second.Results()
			want := []llmfake.Result{{CallID: r1.Message.Calls[0].ID, Content: "3C"}, {CallID: r1.Message.Calls[1].ID, Content: "unknown city", IsError: d.dialect == llm.DialectAnthropic}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("results sent = %+v, want %+v", got, want)
			}
		})
	}
}

// A transcript built by hand (or by another dialect) has no Raw: the
// neutral form is sent instead.
func TestNeutralTranscriptWithoutRaw(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{}, llmfake.Text("done"))
			p := newProvider(t, f, d.spec(f), llm.Options{})
			req := userTurn("Weather in Oslo?")
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.Assistant, Calls: []llm.ToolCall{{ID: "call_x1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}},
				llm.Message{Role: llm.ToolRole, Results: []llm.ToolResult{{CallID: "call_x1", Content: "3C"}}},
				llm.Message{Role: llm.User, Text: "Thanks. And tomorrow?"})
			if _, err := p.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			r := f.Requests()[0]
			if len(r.Messages) != 4 || r.Messages[1].Calls[0].Name != "get_weather" || r.LastUserText() != "Thanks. And tomorrow?" {
				t.Errorf("transcript sent: %+v", r.Messages)
			}
			jsonEq(t, "echoed arguments", []byte(r.Messages[1].Calls[0].Arguments), []byte(`{"city":"Oslo"}`))
		})
	}
}

var verdictSchema = json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]},"score":{"type":"number"}},"required":["verdict","score"],"additionalProperties":false}`)

func judgeRequest() *llm.Request {
	return &llm.Request{System: "You grade transcripts.", Messages: []llm.Message{{Role: llm.User, Text: "Grade this."}}, Output: verdictSchema}
}

func TestJudgeStructuredOutput(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{}, llmfake.Verdict(`{"verdict":"pass","score":0.9}`))
			p := newProvider(t, f, d.spec(f), llm.Options{})
			resp, err := p.Complete(context.Background(), judgeRequest())
			if err != nil {
				t.Fatal(err)
			}
			jsonEq(t, "output", resp.Output, []byte(`{"verdict":"pass","score":0.9}`))
			if resp.OutputMode != llm.OutputJSONSchema {
				t.Errorf("mode = %q, want json_schema", resp.OutputMode)
			}
			r := f.Requests()[0]
			jsonEq(t, "schema sent", r.Output, verdictSchema)
			if d.dialect != llm.DialectAnthropic && !r.OutputStrict {
				t.Error("a strict-valid schema was not sent strict")
			}
		})
	}
}

func TestJudgeFallsBackToJSONInText(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{NoStructuredOutput: true},
				llmfake.Verdict("Here you go:\n```json\n{\"verdict\":\"fail\",\"score\":0.1}\n```"),
				llmfake.Verdict(`{"verdict":"pass","score":1}`))
			p := newProvider(t, f, d.spec(f), llm.Options{})
			resp, err := p.Complete(context.Background(), judgeRequest())
			if err != nil {
				t.Fatal(err)
			}
			jsonEq(t, "output", resp.Output, []byte(`{"verdict":"fail","score":0.1}`))
			if resp.OutputMode != llm.OutputTextJSON || resp.Attempts != 2 {
				t.Errorf("mode %q after %d attempts, want text-json after 2", resp.OutputMode, resp.Attempts)
			}
			reqs := f.Requests()
			if len(reqs) != 2 || reqs[0].Rejected == "" || reqs[1].Output != nil || !strings.Contains(reqs[1].System, `"verdict"`) {
				t.Fatalf("want a refused structured request, then the schema in the prompt; got %d requests", len(reqs))
			}
			// The provider remembers: the next judge call asks in text
			// straight away.
			if _, err := p.Complete(context.Background(), judgeRequest()); err != nil {
				t.Fatal(err)
			}
			if reqs = f.Requests(); len(reqs) != 3 || reqs[2].Rejected != "" || reqs[2].Output != nil {
				t.Errorf("third request: %d requests, rejected %q", len(reqs), reqs[len(reqs)-1].Rejected)
			}
		})
	}
}

func TestJudgeRepairRetry(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{},
				llmfake.Verdict(`{"verdict":"maybe"}`).WithUsage(50, 5),
				llmfake.Verdict(`{"verdict":"pass","score":1}`).WithUsage(70, 6))
			p := newProvider(t, f, d.spec(f), llm.Options{})
			resp, err := p.Complete(context.Background(), judgeRequest())
			if err != nil {
				t.Fatal(err)
			}
			jsonEq(t, "output", resp.Output, []byte(`{"verdict":"pass","score":1}`))
			if resp.Usage.InputTokens != 120 || resp.Usage.OutputTokens != 11 || resp.Attempts != 2 {
				t.Errorf("usage %+v after %d attempts, want both calls summed: 120 in, 11 out, 2 attempts", resp.Usage, resp.Attempts)
			}
			second := f.Requests()[1]
			if len(second.Messages) != 3 || second.Messages[1].Text != `{"verdict":"maybe"}` ||
				!strings.Contains(second.LastUserText(), "not usable") {
				t.Errorf("repair turn = %+v", second.Messages)
			}
		})
	}
}

func TestJudgeGivesUpAfterOneRepair(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Verdict("I think it passed."), llmfake.Verdict("Definitely passed."))
	p := newProvider(t, f, "anthropic:claude-sonnet-5-5", llm.Options{})
	resp, err := p.Complete(context.Background(), judgeRequest())
	if !errors.Is(err, llm.ErrInvalidOutput) {
		t.Fatalf("err = %v, want ErrInvalidOutput", err)
	}
	if resp == nil || resp.Output != nil || resp.Usage.InputTokens != 2*llmfake.DefaultInputTokens {
		t.Errorf("want the response back for its usage, without output; got %+v", resp)
	}
	if len(f.Requests()) != 2 {
		t.Errorf("%d requests, want exactly one repair", len(f.Requests()))
	}
}

func TestAzureEndpoint(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{Auth: "api-key", APIVersion: "2024-10-21"}, llmfake.Text("hello"))
	env := map[string]string{"AZURE_OPENAI_API_KEY": llmfake.DefaultKey, "TEAM_TOKEN": "tok-secret-77"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	eps := map[string]config.Endpoint{"azure": {
		Dialect: llm.DialectOpenAIChat, BaseURL: f.URL + "/openai/deployments/gpt-4o", KeyEnv: "AZURE_OPENAI_API_KEY",
		KeyHeader: "api-key", APIVersion: "2024-10-21",
		Headers: map[string]string{"X-Team": "evals", "X-Team-Token": "${TEAM_TOKEN}"},
	}}
	p, err := llm.New("azure:gpt-4o", eps, lookup, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID() != "azure:gpt-4o" {
		t.Errorf("ID = %q", p.ID())
	}
	resp, err := p.Complete(context.Background(), userTurn("hi"))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Requests()[0]
	if r.Path != "/openai/deployments/gpt-4o/chat/completions" || r.Query.Get("api-version") != "2024-10-21" {
		t.Errorf("path %s query %v", r.Path, r.Query)
	}
	if r.Header.Get("api-key") != llmfake.DefaultKey || r.Header.Get("Authorization") != "" {
		t.Errorf("auth headers: api-key %q, Authorization %q", r.Header.Get("api-key"), r.Header.Get("Authorization"))
	}
	if r.Header.Get("X-Team") != "evals" || r.Header.Get("X-Team-Token") != "tok-secret-77" {
		t.Errorf("custom headers not sent: %v", r.Header)
	}
	if resp.APIVersion != "2024-10-21" {
		t.Errorf("APIVersion = %q", resp.APIVersion)
	}
}

func TestAuthHeaders(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Text("a"), llmfake.Text("b"))
	for _, spec := range []string{"openai:gpt-4.1", "anthropic:claude-sonnet-5-5"} {
		if _, err := newProvider(t, f, spec, llm.Options{}).Complete(context.Background(), userTurn("hi")); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.Requests()
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+llmfake.DefaultKey || reqs[0].Path != "/v1/responses" {
		t.Errorf("openai: Authorization %q path %s", got, reqs[0].Path)
	}
	if got := reqs[1].Header.Get("x-api-key"); got != llmfake.DefaultKey || reqs[1].Path != "/v1/messages" ||
		reqs[1].Header.Get("anthropic-version") != llm.AnthropicVersion || reqs[1].Header.Get("Authorization") != "" {
		t.Errorf("anthropic: x-api-key %q, version %q, path %s", got, reqs[1].Header.Get("anthropic-version"), reqs[1].Path)
	}
}

func TestWrongKeyIsRedacted(t *testing.T) {
	const wrong = "sk-wrong-key-5551234"
	f := llmfake.New(t, llmfake.Options{})
	lookup := func(k string) (string, bool) { return wrong, k == "OPENAI_API_KEY" }
	p, err := llm.New("openai:gpt-4.1", f.Endpoints(), lookup, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), userTurn("hi"))
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Retryable {
		t.Fatalf("err = %v, want a 401", err)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Errorf("error leaks the key: %v", err)
	}
}

func TestProviderEchoingTheKeyIsRedacted(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Reply{Status: 400, Message: "invalid key prefix in " + llmfake.DefaultKey})
	p := newProvider(t, f, "openai:gpt-4.1", llm.Options{})
	_, err := p.Complete(context.Background(), userTurn("hi"))
	if err == nil || strings.Contains(err.Error(), llmfake.DefaultKey) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("err = %v, want the key redacted", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{Default: func(r *llmfake.Request) llmfake.Reply {
		return llmfake.Tool("get_weather", `{"city":"`+r.LastUserText()+`"}`)
	}})
	p := newProvider(t, f, "openai:gpt-4.1", llm.Options{})
	cities := []string{"Oslo", "Lima", "Pune", "Kyiv", "Rome", "Bern", "Doha", "Baku"}
	errs := make(chan error, len(cities))
	for _, c := range cities {
		go func() {
			resp, err := p.Complete(context.Background(), userTurn(c))
			if err == nil && string(resp.Message.Calls[0].Arguments) != `{"city":"`+c+`"}` {
				err = errors.New("crossed replies: " + string(resp.Message.Calls[0].Arguments))
			}
			errs <- err
		}()
	}
	for range cities {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// sha6 is the collision suffix the name map uses: 6 hex digits of SHA-256.
func sha6(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])[:6]
}

// rawPost sends a hand-written body to the fake, bypassing package llm.
func rawPost(t *testing.T, url, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A redirect is never followed: it would carry x-api-key or api-key to
// another host.
func TestRedirectNotFollowed(t *testing.T) {
	var leaked bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = r.Header.Get("x-api-key") != ""
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/messages", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	lookup := func(string) (string, bool) { return "sk-test-redirect", true }
	p, err := llm.New("anthropic:claude-x", map[string]config.Endpoint{"anthropic": {BaseURL: redirect.URL}}, lookup, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), userTurn("hi"))
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusTemporaryRedirect || leaked {
		t.Errorf("err = %v, leaked = %v; want the 307 as an error and nothing sent elsewhere", err, leaked)
	}
}
