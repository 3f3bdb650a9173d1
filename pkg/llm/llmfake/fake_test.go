package llmfake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
)

// These tests talk to the fake with hand-written bodies: they pin that it
// refuses what the real APIs refuse and answers in their shapes, so tests
// of package llm that pass against it mean something.

var (
	bearer    = map[string]string{"Authorization": "Bearer " + llmfake.DefaultKey}
	anthropic = map[string]string{"x-api-key": llmfake.DefaultKey, "anthropic-version": "2026-10-21"}
)

func with(h map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range h {
		out[a] = b
	}
	if v == "" {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

func post(t *testing.T, url, body string, headers map[string]string) (int, http.Header, map[string]any) {
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
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("reply is not a JSON object: %s", b)
	}
	return resp.StatusCode, resp.Header, m
}

const (
	chatUser     = `"messages":[{"role":"user","content":"hi"}]`
	anthroUser   = `"max_tokens":100,"messages":[{"role":"user","content":"hi"}]`
	objectSchema = `{"type":"object","properties":{"a":{"type":"string"}}}`
)

func TestFakeRefusesLikeTheRealAPIs(t *testing.T) {
	cases := []struct {
		name    string
		opts    llmfake.Options
		path    string
		headers map[string]string
		body    string
		status  int
		msg     string
	}{
		// Transport and auth.
		{name: "unknown path", path: "/v1/completions", headers: bearer, body: `{}`, status: 404, msg: "Invalid URL"},
		{name: "openai without key", path: "/v1/chat/completions", headers: nil, body: `{}`, status: 401, msg: "You didn't provide an API key"},
		{name: "openai wrong key", path: "/v1/responses", headers: map[string]string{"Authorization": "Bearer nope"}, body: `{}`, status: 401, msg: "Incorrect API key"},
		{name: "anthropic without key", path: "/v1/messages", headers: with(anthropic, "x-api-key", ""), body: `{}`, status: 401, msg: "x-api-key header is required"},
		{name: "anthropic without version", path: "/v1/messages", headers: with(anthropic, "anthropic-version", ""), body: `{}`, status: 400, msg: "anthropic-version: header is required"},
		{name: "azure wants api-key", opts: llmfake.Options{Auth: "api-key"}, path: "/openai/deployments/d/chat/completions", headers: bearer, body: `{}`, status: 401, msg: "invalid subscription key"},
		{name: "azure api-version", opts: llmfake.Options{Auth: "none", APIVersion: "2024-10-21"}, path: "/openai/deployments/d/chat/completions?api-version=2023-01-01", body: `{}`, status: 404, msg: "api-version"},
		{name: "not JSON", path: "/v1/chat/completions", headers: bearer, body: `{`, status: 400, msg: "could not parse the JSON body"},

		// Chat Completions.
		{name: "chat root anyOf", path: "/v1/chat/completions", headers: bearer,
			body:   `{"model":"m",` + chatUser + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","anyOf":[{"required":["a"]}]}}}]}`,
			status: 400, msg: "Invalid schema for function 'f': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level."},
		{name: "chat root without type", path: "/v1/chat/completions", headers: bearer,
			body:   `{"model":"m",` + chatUser + `,"tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{}}}}]}`,
			status: 400, msg: `got 'type: "None"'`},
		{name: "chat dotted name", path: "/v1/chat/completions", headers: bearer,
			body:   `{"model":"m",` + chatUser + `,"tools":[{"type":"function","function":{"name":"a.b","parameters":` + objectSchema + `}}]}`,
			status: 400, msg: "Invalid 'tools[0].function.name': string does not match pattern"},
		{name: "chat name too long", path: "/v1/chat/completions", headers: bearer,
			body:   `{"model":"m",` + chatUser + `,"tools":[{"type":"function","function":{"name":"` + strings.Repeat("a", 65) + `","parameters":` + objectSchema + `}}]}`,
			status: 400, msg: "maximum length 64, but got a string with length 65"},
		{name: "chat tool_choice without tools", path: "/v1/chat/completions", headers: bearer,
			body: `{"model":"m",` + chatUser + `,"tool_choice":"auto"}`, status: 400, msg: "'tool_choice' is only allowed when 'tools' are specified"},
		{name: "chat orphan tool message", path: "/v1/chat/completions", headers: bearer,
			body:   `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1","content":"x"}]}`,
			status: 400, msg: "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"},
		{name: "chat unanswered tool call", path: "/v1/chat/completions", headers: bearer,
			body:   `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"user","content":"?"}]}`,
			status: 400, msg: "The following tool_call_ids did not have response messages: c1"},
		{name: "chat reasoning model temperature", path: "/v1/chat/completions", headers: bearer,
			body: `{"model":"o3",` + chatUser + `,"temperature":0}`, status: 400, msg: "'temperature' does not support 0 with this model"},
		{name: "chat reasoning model max_tokens", path: "/v1/chat/completions", headers: bearer,
			body: `{"model":"gpt-5",` + chatUser + `,"max_tokens":10}`, status: 400, msg: "Use 'max_completion_tokens' instead"},
		{name: "chat strict response_format must be closed", path: "/v1/chat/completions", headers: bearer,
			body:   `{"model":"m",` + chatUser + `,"response_format":{"type":"json_schema","json_schema":{"name":"v","strict":true,"schema":` + objectSchema + `}}}`,
			status: 400, msg: "'additionalProperties' is required to be supplied and to be false"},
		{name: "chat without structured output support", opts: llmfake.Options{NoStructuredOutput: true}, path: "/v1/chat/completions", headers: bearer,
			body:   `{"model":"m",` + chatUser + `,"response_format":{"type":"json_schema","json_schema":{"name":"v","schema":` + objectSchema + `}}}`,
			status: 400, msg: "response_format of type json_schema is not supported"},

		// Responses.
		{name: "responses seed", path: "/v1/responses", headers: bearer, body: `{"model":"m","input":"hi","seed":1}`, status: 400, msg: "Unknown parameter: 'seed'."},
		{name: "responses explicit strict", path: "/v1/responses", headers: bearer,
			body:   `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","strict":true,"parameters":` + objectSchema + `}]}`,
			status: 400, msg: "Invalid schema for function 'f': In context=(), 'additionalProperties' is required"},
		{name: "responses orphan output", path: "/v1/responses", headers: bearer,
			body: `{"model":"m","input":[{"role":"user","content":"hi"},{"type":"function_call_output","call_id":"c9","output":"x"}]}`, status: 400, msg: "No tool call found for function call output with call_id c9."},
		{name: "responses unanswered call", path: "/v1/responses", headers: bearer,
			body: `{"model":"m","input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]}`, status: 400, msg: "No tool output found for function call c1."},
		{name: "responses reasoning item without content, store false", path: "/v1/responses", headers: bearer,
			body: `{"model":"m","store":false,"input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","summary":[]}]}`, status: 400, msg: "Items are not persisted when `store` is set to false"},
		{name: "responses reasoning model temperature", path: "/v1/responses", headers: bearer,
			body: `{"model":"gpt-5-mini","input":"hi","temperature":0.2}`, status: 400, msg: "'temperature' does not support 0.2 with this model"},

		// Anthropic Messages.
		{name: "anthropic temperature on 2026-10-21", path: "/v1/messages", headers: anthropic,
			body: `{"model":"c",` + anthroUser + `,"temperature":1}`, status: 400, msg: "temperature: Extra inputs are not permitted"},
		{name: "anthropic seed", path: "/v1/messages", headers: anthropic,
			body: `{"model":"c",` + anthroUser + `,"seed":1}`, status: 400, msg: "seed: Extra inputs are not permitted"},
		{name: "anthropic max_tokens required", path: "/v1/messages", headers: anthropic,
			body: `{"model":"c","messages":[{"role":"user","content":"hi"}]}`, status: 400, msg: "max_tokens: Field required"},
		{name: "anthropic root anyOf", path: "/v1/messages", headers: anthropic,
			body:   `{"model":"c",` + anthroUser + `,"tools":[{"name":"f","input_schema":{"type":"object","anyOf":[]}}]}`,
			status: 400, msg: "input_schema does not support oneOf, allOf, or anyOf at the top level"},
		{name: "anthropic dotted name", path: "/v1/messages", headers: anthropic,
			body:   `{"model":"c",` + anthroUser + `,"tools":[{"name":"a.b","input_schema":` + objectSchema + `}]}`,
			status: 400, msg: "tools.0.custom.name: String should match pattern"},
		{name: "anthropic tool_use without result", path: "/v1/messages", headers: anthropic,
			body:   `{"model":"c","max_tokens":9,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":"?"}]}`,
			status: 400, msg: "`tool_use` ids were found without `tool_result` blocks immediately after: t1"},
		{name: "anthropic result without tool_use", path: "/v1/messages", headers: anthropic,
			body:   `{"model":"c","max_tokens":9,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t7","content":"x"}]}]}`,
			status: 400, msg: "unexpected `tool_use_id` found in `tool_result` blocks: t7"},
		{name: "anthropic empty text", path: "/v1/messages", headers: anthropic,
			body: `{"model":"c","max_tokens":9,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, status: 400, msg: "text content blocks must be non-empty"},
		{name: "anthropic forged thinking signature", path: "/v1/messages", headers: anthropic,
			body:   `{"model":"c","max_tokens":9,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":"forged"}]},{"role":"user","content":"go"}]}`,
			status: 400, msg: "Invalid `signature` in `thinking` block"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := llmfake.New(t, c.opts)
			status, _, body := post(t, f.URL+c.path, c.body, c.headers)
			if status != c.status {
				t.Errorf("status %d, want %d (%v)", status, c.status, body)
			}
			errObj, _ := body["error"].(map[string]any)
			msg, _ := errObj["message"].(string)
			if !strings.Contains(msg, c.msg) {
				t.Errorf("message %q, want it to contain %q", msg, c.msg)
			}
			if strings.HasSuffix(strings.Split(c.path, "?")[0], "/messages") {
				if body["type"] != "error" || errObj["type"] == "" {
					t.Errorf("not Anthropic's error shape: %v", body)
				}
			} else if _, ok := errObj["code"]; !ok {
				t.Errorf("not OpenAI's error shape: %v", body)
			}
			reqs := f.Requests()
			if len(reqs) != 1 || reqs[0].Rejected == "" || reqs[0].Status != c.status {
				t.Errorf("the refusal was not recorded: %+v", reqs)
			}
		})
	}
}

func TestFakeAccepts(t *testing.T) {
	cases := []struct {
		name, path, body string
		headers          map[string]string
	}{
		{"anthropic 2023-06-01 takes temperature", "/v1/messages", `{"model":"c",` + anthroUser + `,"temperature":0}`, with(anthropic, "anthropic-version", "2023-06-01")},
		{"anthropic takes Bearer auth", "/v1/messages", `{"model":"c",` + anthroUser + `}`, with(with(anthropic, "x-api-key", ""), "Authorization", "Bearer "+llmfake.DefaultKey)},
		{"gpt-5-chat takes temperature", "/v1/chat/completions", `{"model":"gpt-5-chat-latest",` + chatUser + `,"temperature":0}`, bearer},
		{"responses non-strict tool", "/v1/responses", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","strict":false,"parameters":` + objectSchema + `}]}`, bearer},
		// An omitted strict is normalised, not refused: OpenAI's own
		// Functions example (testdata/apidocs/openai-responses) does this.
		{"responses omitted strict", "/v1/responses", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":` + objectSchema + `}]}`, bearer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{}, llmfake.Text("ok"))
			if status, _, body := post(t, f.URL+c.path, c.body, c.headers); status != 200 {
				t.Errorf("status %d: %v", status, body)
			}
		})
	}
}

// The replies carry what clients read: ids, the served model, tool calls
// in each API's form, usage in each API's fields.
func TestFakeReplyShapes(t *testing.T) {
	u := llmfake.Usage{InputTokens: 50, OutputTokens: 8, CachedTokens: 10, CacheWriteTokens: 3, ReasoningTokens: 2}
	reply := llmfake.Tool("f", `{"a":"x"}`)
	reply.Usage = u
	t.Run("chat", func(t *testing.T) {
		f := llmfake.New(t, llmfake.Options{}, reply)
		_, h, b := post(t, f.URL+"/v1/chat/completions", `{"model":"m",`+chatUser+`}`, bearer)
		want := `{"id":"chatcmpl-3","object":"chat.completion","created":1767225600,"model":"m-2026-01-01",
			"choices":[{"index":0,"logprobs":null,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"refusal":null,"annotations":[],
				"tool_calls":[{"id":"call_2","type":"function","function":{"name":"f","arguments":"{\"a\":\"x\"}"}}]}}],
			"usage":{"prompt_tokens":50,"completion_tokens":8,"total_tokens":58,"prompt_tokens_details":{"cached_tokens":10,"audio_tokens":0},
				"completion_tokens_details":{"reasoning_tokens":2,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},
			"service_tier":"default"}`
		sameJSON(t, b, want)
		if h.Get("x-request-id") == "" {
			t.Error("no x-request-id")
		}
	})
	t.Run("responses", func(t *testing.T) {
		f := llmfake.New(t, llmfake.Options{}, reply)
		_, _, b := post(t, f.URL+"/v1/responses", `{"model":"m","input":"hi"}`, bearer)
		out := b["output"].([]any)[0].(map[string]any)
		if out["type"] != "function_call" || out["name"] != "f" || out["arguments"] != `{"a":"x"}` || out["call_id"] != "call_2" {
			t.Errorf("output item %v", out)
		}
		sameJSON(t, b["usage"].(map[string]any), `{"input_tokens":50,"input_tokens_details":{"cached_tokens":10,"cache_write_tokens":0},"output_tokens":8,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":58}`)
		if b["object"] != "response" || b["status"] != "completed" || b["model"] != "m-2026-01-01" {
			t.Errorf("response %v", b)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		f := llmfake.New(t, llmfake.Options{}, reply)
		_, h, b := post(t, f.URL+"/v1/messages", `{"model":"c",`+anthroUser+`}`, anthropic)
		want := `{"id":"msg_3","type":"message","role":"assistant","model":"c-2026-01-01","stop_reason":"tool_use","stop_sequence":null,
			"content":[{"type":"tool_use","id":"toolu_2","name":"f","input":{"a":"x"}}],
			"usage":{"input_tokens":50,"cache_creation_input_tokens":3,"cache_read_input_tokens":10,"output_tokens":8,"service_tier":"standard","output_tokens_details":{"thinking_tokens":2}}}`
		sameJSON(t, b, want)
		if h.Get("request-id") == "" {
			t.Error("no request-id")
		}
	})
}

func TestFakeErrorReplies(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Status(429).WithRetryAfter("7"), llmfake.Status(529))
	status, h, b := post(t, f.URL+"/v1/chat/completions", `{"model":"m",`+chatUser+`}`, bearer)
	if status != 429 || h.Get("Retry-After") != "7" || b["error"].(map[string]any)["code"] != "rate_limit_exceeded" {
		t.Errorf("429: %d %v %v", status, h, b)
	}
	status, _, b = post(t, f.URL+"/v1/messages", `{"model":"c",`+anthroUser+`}`, anthropic)
	if status != 529 || b["error"].(map[string]any)["type"] != "overloaded_error" {
		t.Errorf("529: %d %v", status, b)
	}
	if f.Remaining() != 0 {
		t.Errorf("remaining %d", f.Remaining())
	}
}

func TestFakeDefaultAndLatency(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{Latency: 60 * time.Millisecond, Default: func(r *llmfake.Request) llmfake.Reply {
		return llmfake.Text("echo: " + r.LastUserText())
	}})
	start := time.Now()
	_, _, b := post(t, f.URL+"/v1/chat/completions", `{"model":"m",`+chatUser+`}`, bearer)
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Errorf("answered in %v, before the latency", el)
	}
	msg := b["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != "echo: hi" {
		t.Errorf("content %v", msg["content"])
	}
}

func sameJSON(t *testing.T, got map[string]any, want string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("got\n  %s\nwant\n  %s", gb, wb)
	}
}
