package llmfake_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
)

// The fake is checked against the providers' published API references:
// testdata/apidocs holds their request and response examples, one file
// per example, each naming where it was taken from. The fake must accept
// every documented request, and every reply it makes must have the
// documented fields with the documented JSON types and no field the
// references do not have (undocumentedOK lists the exceptions, each with
// the place that does document it).

// apiDoc is one example as stored: where it comes from, and the body.
type apiDoc struct {
	Source    string            `json:"source"`
	Commit    string            `json:"commit"`
	Retrieved string            `json:"retrieved"`
	Headers   map[string]string `json:"headers"`
	Body      json.RawMessage   `json:"body"`
}

func loadDoc(t *testing.T, name string) apiDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "apidocs", name))
	if err != nil {
		t.Fatal(err)
	}
	var d apiDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !strings.HasPrefix(d.Source, "https://") || d.Retrieved == "" || len(d.Body) == 0 {
		t.Fatalf("%s: an example must name its source URL, the date retrieved and a body", name)
	}
	return d
}

// Every stored example names its source; none is left unchecked.
func TestAPIDocsAllSourcedAndUsed(t *testing.T) {
	used := map[string]bool{}
	for _, d := range shapeDialects {
		for _, f := range d.requests {
			used[f] = true
		}
		for _, f := range d.responses {
			used[f] = true
		}
		for _, s := range d.scenarios {
			if s.example != "" {
				used[s.example] = true
			}
		}
	}
	used["openai/error-schema.json"] = true
	files, _ := filepath.Glob(filepath.Join("testdata", "apidocs", "*", "*.json"))
	if len(files) == 0 {
		t.Fatal("no examples under testdata/apidocs")
	}
	for _, f := range files {
		rel, _ := filepath.Rel(filepath.Join("testdata", "apidocs"), f)
		loadDoc(t, filepath.ToSlash(rel))
		if !used[filepath.ToSlash(rel)] {
			t.Errorf("%s is not used by any check", rel)
		}
	}
}

// shape maps a JSON path to the JSON types seen there. Object keys are
// joined with "."; array elements are "[]", or "[T]" when the element is
// an object with a string "type" (content blocks, output items), so a
// tool_use block is not compared with a text block.
type shape map[string]map[string]bool

func (s shape) add(path, typ string) {
	if s[path] == nil {
		s[path] = map[string]bool{}
	}
	s[path][typ] = true
}

// opaque paths hold caller-defined JSON (a tool's schema, a tool's input)
// whose inner keys are not the API's.
var opaque = []string{"tools[function].parameters", "content[tool_use].input", "metadata"}

func shapeOf(v any) shape {
	s := shape{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			s.add(path, "object")
			if slices.Contains(opaque, path) {
				return
			}
			for k, e := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, e)
			}
		case []any:
			s.add(path, "array")
			for _, e := range x {
				el := path + "[]"
				if m, ok := e.(map[string]any); ok {
					if typ, ok := m["type"].(string); ok {
						el = path + "[" + typ + "]"
					}
				}
				walk(el, e)
			}
		case string:
			s.add(path, "string")
		case float64:
			s.add(path, "number")
		case bool:
			s.add(path, "boolean")
		case nil:
			s.add(path, "null")
		}
	}
	walk("", v)
	delete(s, "")
	return s
}

func shapeOfJSON(t *testing.T, raw []byte) shape {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	return shapeOf(v)
}

// typeOK: the fake's type is one the references show there, or the
// references show only null (a nullable field whose other type the
// example does not show).
func typeOK(doc map[string]bool, typ string) bool {
	return doc[typ] || (len(doc) == 1 && doc["null"])
}

func documented(path string, union shape, exceptions map[string]string) bool {
	if union[path] != nil {
		return true
	}
	for p := range exceptions {
		if path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
			return true
		}
	}
	return false
}

// compareShape checks a reply of the fake: every path of the paired
// example is there with a documented type; every path of the reply is in
// some example of the dialect (or excepted) with a documented type.
func compareShape(t *testing.T, got, paired, union shape, exceptions map[string]string) {
	t.Helper()
	for _, p := range sortedKeys(paired) {
		types, ok := got[p]
		if !ok {
			t.Errorf("missing %s (%s in the reference)", p, keys(paired[p]))
			continue
		}
		for typ := range types {
			if !typeOK(union[p], typ) {
				t.Errorf("%s is %s, the reference has %s", p, typ, keys(union[p]))
			}
		}
	}
	for _, p := range sortedKeys(got) {
		if !documented(p, union, exceptions) {
			t.Errorf("%s (%s) is in no example of the reference and not excepted", p, keys(got[p]))
			continue
		}
		if union[p] == nil {
			continue // excepted: its type is the schema's, checked by hand
		}
		for typ := range got[p] {
			if !typeOK(union[p], typ) {
				t.Errorf("%s is %s, the reference has %s", p, typ, keys(union[p]))
			}
		}
	}
}

func sortedKeys(s shape) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, "|")
}

type scenario struct {
	name    string
	reply   llmfake.Reply
	request string // example file sent as the request
	example string // response example the reply must match field for field ("" = only the union check)
	status  int    // the HTTP status expected (200 when 0)
}

type shapeDialect struct {
	name      string
	path      string
	headers   map[string]string
	requests  []string // documented requests the fake must accept
	responses []string // documented responses: together the fields a reply may have
	// undocumentedOK are reply fields no example shows, with where the
	// reference documents them.
	undocumentedOK map[string]string
	scenarios      []scenario
}

var allUsage = llmfake.Usage{InputTokens: 120, OutputTokens: 30, CachedTokens: 20, CacheWriteTokens: 7, ReasoningTokens: 12}

var shapeDialects = []shapeDialect{
	{
		name: "openai-chat", path: "/v1/chat/completions", headers: bearer,
		requests:  []string{"openai-chat/request-default.json", "openai-chat/request-functions.json"},
		responses: []string{"openai-chat/response-default.json", "openai-chat/response-functions.json"},
		scenarios: []scenario{
			{name: "text", reply: llmfake.Text("Hello!"), request: "openai-chat/request-default.json", example: "openai-chat/response-default.json"},
			{name: "verdict", reply: llmfake.Verdict(`{"pass":true}`), request: "openai-chat/request-default.json", example: "openai-chat/response-default.json"},
			{name: "usage with cache and reasoning", reply: llmfake.Reply{Text: "ok", Usage: allUsage}, request: "openai-chat/request-default.json", example: "openai-chat/response-default.json"},
			{name: "truncated", reply: llmfake.Reply{Text: "Hel", Truncated: true}, request: "openai-chat/request-default.json", example: "openai-chat/response-default.json"},
			{name: "tool call", reply: llmfake.Tool("get_current_weather", `{"location":"Boston, MA"}`), request: "openai-chat/request-functions.json", example: "openai-chat/response-functions.json"},
		},
	},
	{
		name: "openai-responses", path: "/v1/responses", headers: bearer,
		requests:  []string{"openai-responses/request-text.json", "openai-responses/request-functions.json", "openai-responses/request-reasoning.json"},
		responses: []string{"openai-responses/response-text.json", "openai-responses/response-functions.json", "openai-responses/response-reasoning.json"},
		undocumentedOK: map[string]string{
			"background": "Response.background in the same spec (components.schemas.ResponseProperties)",
			"output[message].content[output_text].logprobs": "required by components.schemas.OutputTextContent in the same spec",
			"output[reasoning]":                             "components.schemas.ReasoningItem (id, type, summary, encrypted_content) in the same spec; no example shows one",
			"incomplete_details.reason":                     "Response.incomplete_details {reason} in the same spec; the examples are all complete",
		},
		scenarios: []scenario{
			{name: "text", reply: llmfake.Text("Once upon a time."), request: "openai-responses/request-text.json", example: "openai-responses/response-text.json"},
			{name: "verdict", reply: llmfake.Verdict(`{"pass":true}`), request: "openai-responses/request-text.json", example: "openai-responses/response-text.json"},
			{name: "usage with cache and reasoning", reply: llmfake.Reply{Text: "ok", Usage: allUsage}, request: "openai-responses/request-reasoning.json", example: "openai-responses/response-reasoning.json"},
			{name: "tool call", reply: llmfake.Tool("get_current_weather", `{"location":"Boston, MA","unit":"celsius"}`), request: "openai-responses/request-functions.json", example: "openai-responses/response-functions.json"},
			{name: "thinking", reply: llmfake.Reply{Thinking: true, Text: "wood"}, request: "openai-responses/request-reasoning.json", example: "openai-responses/response-reasoning.json"},
			{name: "truncated", reply: llmfake.Reply{Text: "Once", Truncated: true}, request: "openai-responses/request-text.json"},
		},
	},
	{
		name: "anthropic-messages", path: "/v1/messages",
		headers:   map[string]string{"x-api-key": llmfake.DefaultKey},
		requests:  []string{"anthropic-messages/request-multi-turn.json", "anthropic-messages/request-tool-use.json", "anthropic-messages/request-tool-result.json"},
		responses: []string{"anthropic-messages/response-basic.json", "anthropic-messages/response-tool-use.json", "anthropic-messages/error-invalid-request.json"},
		undocumentedOK: map[string]string{
			// The examples predate prompt caching; the Usage object of
			// Anthropic's spec, as generated into anthropics/anthropic-sdk-go
			// message.go (commit b43f0d7a327fe3e30c302d773162669ab3bb4d26),
			// has these as integers / a string.
			"usage.cache_creation_input_tokens": "Usage.cache_creation_input_tokens (anthropic-sdk-go message.go)",
			"usage.cache_read_input_tokens":     "Usage.cache_read_input_tokens (anthropic-sdk-go message.go)",
			"usage.service_tier":                "Usage.service_tier (anthropic-sdk-go message.go)",
			"usage.output_tokens_details":       "Usage.output_tokens_details.thinking_tokens (anthropic-sdk-go message.go, OutputTokensDetails)",
			"content[thinking]":                 "ThinkingBlock {type, thinking, signature} (anthropic-sdk-go message.go)",
		},
		scenarios: []scenario{
			{name: "text", reply: llmfake.Text("Hello!"), request: "anthropic-messages/request-multi-turn.json", example: "anthropic-messages/response-basic.json"},
			{name: "verdict", reply: llmfake.Verdict(`{"pass":true}`), request: "anthropic-messages/request-multi-turn.json", example: "anthropic-messages/response-basic.json"},
			{name: "usage with cache and thinking", reply: llmfake.Reply{Text: "ok", Usage: allUsage}, request: "anthropic-messages/request-multi-turn.json", example: "anthropic-messages/response-basic.json"},
			{name: "text and tool call", reply: llmfake.Reply{Text: "<thinking>SF</thinking>", Calls: []llmfake.Call{{Name: "get_weather", Arguments: `{"location":"San Francisco, CA","unit":"celsius"}`}}},
				request: "anthropic-messages/request-tool-use.json", example: "anthropic-messages/response-tool-use.json"},
			{name: "after a tool result", reply: llmfake.Text("72°F and sunny in Paris."), request: "anthropic-messages/request-tool-result.json", example: "anthropic-messages/response-basic.json"},
			{name: "thinking", reply: llmfake.Reply{Thinking: true, Text: "ok"}, request: "anthropic-messages/request-multi-turn.json"},
			{name: "truncated", reply: llmfake.Reply{Text: "Hel", Truncated: true}, request: "anthropic-messages/request-multi-turn.json", example: "anthropic-messages/response-basic.json"},
			{name: "rate limited", reply: llmfake.Status(429).WithRetryAfter("1"), request: "anthropic-messages/request-multi-turn.json", example: "anthropic-messages/error-invalid-request.json", status: 429},
			{name: "overloaded", reply: llmfake.Status(529), request: "anthropic-messages/request-multi-turn.json", example: "anthropic-messages/error-invalid-request.json", status: 529},
			{name: "server error", reply: llmfake.Status(500), request: "anthropic-messages/request-multi-turn.json", example: "anthropic-messages/error-invalid-request.json", status: 500},
		},
	},
}

// postDoc sends a documented request to the fake, with the example's own
// headers (its anthropic-version) over the dialect's auth.
func postDoc(t *testing.T, f *llmfake.Server, d shapeDialect, file string) (int, map[string]any, []byte) {
	t.Helper()
	doc := loadDoc(t, file)
	h := map[string]string{}
	for k, v := range d.headers {
		h[k] = v
	}
	for k, v := range doc.Headers {
		h[k] = v
	}
	status, _, body := post(t, f.URL+d.path, string(doc.Body), h)
	raw, _ := json.Marshal(body)
	return status, body, raw
}

// (b) The fake accepts every documented request as the real API does.
func TestFakeAcceptsDocumentedRequests(t *testing.T) {
	for _, d := range shapeDialects {
		for _, file := range d.requests {
			t.Run(file, func(t *testing.T) {
				f := llmfake.New(t, llmfake.Options{}, llmfake.Text("ok"))
				if status, body, _ := postDoc(t, f, d, file); status != 200 {
					t.Fatalf("the documented request was refused: %d %v", status, body)
				}
				r := f.Requests()[0]
				var want struct {
					Model string `json:"model"`
				}
				json.Unmarshal(loadDoc(t, file).Body, &want)
				if r.Model != want.Model || len(r.Messages) == 0 {
					t.Errorf("decoded model %q and %d messages, want model %q and the transcript", r.Model, len(r.Messages), want.Model)
				}
			})
		}
	}
}

// (c) Every reply the fake makes has the documented shape.
func TestFakeRepliesHaveTheDocumentedShape(t *testing.T) {
	for _, d := range shapeDialects {
		union := shape{}
		for _, file := range d.responses {
			for p, types := range shapeOfJSON(t, loadDoc(t, file).Body) {
				for typ := range types {
					union.add(p, typ)
				}
			}
		}
		for p := range d.undocumentedOK {
			if union[p] != nil {
				t.Errorf("%s: %s is excepted but an example has it; drop the exception", d.name, p)
			}
		}
		for _, sc := range d.scenarios {
			t.Run(d.name+"/"+sc.name, func(t *testing.T) {
				f := llmfake.New(t, llmfake.Options{}, sc.reply)
				status, _, raw := postDoc(t, f, d, sc.request)
				if want := max(sc.status, 200); status != want {
					t.Fatalf("status %d, want %d: %s", status, want, raw)
				}
				paired := shape{}
				if sc.example != "" {
					paired = shapeOfJSON(t, loadDoc(t, sc.example).Body)
				}
				compareShape(t, shapeOfJSON(t, raw), paired, union, d.undocumentedOK)
			})
		}
	}
}

// OpenAI's reference has no error example, only the error object's
// schema: every error the fake sends on the OpenAI paths has exactly its
// required fields, with its types.
func TestFakeOpenAIErrorsMatchTheSchema(t *testing.T) {
	var schema struct {
		Error struct {
			Properties map[string]struct {
				Type  string `json:"type"`
				AnyOf []struct {
					Type string `json:"type"`
				} `json:"anyOf"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"Error"`
	}
	if err := json.Unmarshal(loadDoc(t, "openai/error-schema.json").Body, &schema); err != nil {
		t.Fatal(err)
	}
	jsonType := map[string]string{"string": "string", "null": "null", "number": "number"}
	cases := []struct {
		name, path, body string
		reply            llmfake.Reply
		status           int
	}{
		{"chat 429", "/v1/chat/completions", `{"model":"m",` + chatUser + `}`, llmfake.Status(429).WithRetryAfter("1"), 429},
		{"chat 500", "/v1/chat/completions", `{"model":"m",` + chatUser + `}`, llmfake.Status(500), 500},
		{"responses 503", "/v1/responses", `{"model":"m","input":"hi"}`, llmfake.Status(503), 503},
		{"chat refused request", "/v1/chat/completions", `{"model":"m","messages":[]}`, llmfake.Reply{}, 400},
		{"responses unknown parameter", "/v1/responses", `{"model":"m","input":"hi","seed":1}`, llmfake.Reply{}, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{Default: func(*llmfake.Request) llmfake.Reply { return c.reply }})
			status, h, body := post(t, f.URL+c.path, c.body, bearer)
			if status != c.status {
				t.Fatalf("status %d, want %d: %v", status, c.status, body)
			}
			if c.reply.RetryAfter != "" && h.Get("Retry-After") != c.reply.RetryAfter {
				t.Errorf("Retry-After = %q", h.Get("Retry-After"))
			}
			if len(body) != 1 {
				t.Errorf("error body has %d top-level fields, the schema one (error): %v", len(body), body)
			}
			e, _ := body["error"].(map[string]any)
			if len(e) != len(schema.Error.Required) {
				t.Errorf("error object %v, the schema requires exactly %v", e, schema.Error.Required)
			}
			for _, k := range schema.Error.Required {
				v, ok := e[k]
				if !ok {
					t.Errorf("error.%s missing", k)
					continue
				}
				got := map[bool]string{true: "null"}[v == nil]
				switch v.(type) {
				case string:
					got = "string"
				case float64:
					got = "number"
				}
				p := schema.Error.Properties[k]
				allowed := []string{jsonType[p.Type]}
				for _, a := range p.AnyOf {
					allowed = append(allowed, jsonType[a.Type])
				}
				if !slices.Contains(allowed, got) {
					t.Errorf("error.%s is %s, the schema allows %v", k, got, allowed)
				}
			}
		})
	}
}
