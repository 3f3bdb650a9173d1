package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
)

// Every scenario runs through llm.New and the real HTTP code against the
// fake, in each of the three dialects.

type dialectCase struct {
	name    string
	dialect string
	model   string
	spec    func(f *llmfake.Server) string
	// usage is what the dialect maps llmfake's wireUsage to (the mapping
	// documented on each dialect).
	usage llm.Usage
}

// wireUsage is reported by the fake in each API's own fields.
var wireUsage = llmfake.Usage{InputTokens: 120, CachedTokens: 20, CacheWriteTokens: 7, OutputTokens: 30, ReasoningTokens: 12}

var dialects = []dialectCase{
	{name: "responses", dialect: llm.DialectOpenAIResponses, model: "gpt-4.1",
		spec: func(*llmfake.Server) string { return "openai:gpt-4.1" },
		// input_tokens 120 − cached 20; no cache writes on OpenAI.
		usage: llm.Usage{InputTokens: 100, CachedInputTokens: 20, OutputTokens: 30, ReasoningTokens: 12}},
	{name: "anthropic", dialect: llm.DialectAnthropic, model: "claude-sonnet-5-5",
		spec: func(*llmfake.Server) string { return "anthropic:claude-sonnet-5-5" },
		// input_tokens already excludes cache reads and writes.
		usage: llm.Usage{InputTokens: 120, CachedInputTokens: 20, CacheWriteTokens: 7, OutputTokens: 30, ReasoningTokens: 12}},
	{name: "chat", dialect: llm.DialectOpenAIChat, model: "llama3.1:8b",
		spec: func(f *llmfake.Server) string { return "openai-compatible:llama3.1:8b@" + f.URL + "/v1" },
		// prompt_tokens 120 − cached 20.
		usage: llm.Usage{InputTokens: 100, CachedInputTokens: 20, OutputTokens: 30, ReasoningTokens: 12}},
}

// sleeps records the backoff waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func newProvider(t *testing.T, f *llmfake.Server, spec string, opts llm.Options) llm.Provider {
	t.Helper()
	p, err := llm.New(spec, f.Endpoints(), f.LookupEnv, opts)
	if err != nil {
		t.Fatalf("llm.New(%q): %v", spec, err)
	}
	return p
}

var testTools = []llm.Tool{
	{Name: "get_weather", Description: "Current weather for a city.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}`)},
	{Name: "search_docs", Description: "Search the documentation.", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)},
}

func userTurn(text string) *llm.Request {
	return &llm.Request{
		System:   "You are a helpful assistant.",
		Messages: []llm.Message{{Role: llm.User, Text: text}},
		Tools:    testTools,
	}
}

func jsonEq(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: got %s, not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want %s, not JSON: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func callNames(calls []llm.ToolCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Name)
	}
	return out
}

func TestToolSelectionScenarios(t *testing.T) {
	type want struct {
		calls []string // MCP names in order
		args  []string // parsed arguments per call ("" = parse error expected)
		stop  string   // neutral stop reason
		text  string   // assistant text
	}
	scenarios := []struct {
		name  string
		reply llmfake.Reply
		want  want
	}{
		{"right tool", llmfake.Tool("get_weather", `{"city":"Seattle"}`),
			want{calls: []string{"get_weather"}, args: []string{`{"city":"Seattle"}`}, stop: "tool_use"}},
		{"wrong tool", llmfake.Tool("search_docs", `{"query":"weather Seattle"}`),
			want{calls: []string{"search_docs"}, args: []string{`{"query":"weather Seattle"}`}, stop: "tool_use"}},
		{"wrong arguments", llmfake.Tool("get_weather", `{"city":"Portland"}`),
			want{calls: []string{"get_weather"}, args: []string{`{"city":"Portland"}`}, stop: "tool_use"}},
		{"no tool", llmfake.Text("I cannot check the weather."),
			want{stop: "end_turn", text: "I cannot check the weather."}},
		{"several tools in order", llmfake.Tools(
			llmfake.Call{Name: "search_docs", Arguments: `{"query":"cities"}`},
			llmfake.Call{Name: "get_weather", Arguments: `{"city":"Oslo"}`},
			llmfake.Call{Name: "get_weather", Arguments: `{"city":"Lima"}`}),
			want{calls: []string{"search_docs", "get_weather", "get_weather"},
				args: []string{`{"query":"cities"}`, `{"city":"Oslo"}`, `{"city":"Lima"}`}, stop: "tool_use"}},
		{"malformed tool-call JSON", llmfake.Tool("get_weather", `{"city": "Seat`),
			want{calls: []string{"get_weather"}, args: []string{""}, stop: "tool_use"}},
		{"tool without arguments", llmfake.Tool("search_docs", ``),
			want{calls: []string{"search_docs"}, args: []string{`{}`}, stop: "tool_use"}},
	}
	for _, d := range dialects {
		for _, sc := range scenarios {
			t.Run(d.name+"/"+sc.name, func(t *testing.T) {
				reply := sc.reply
				reply.Usage = wireUsage
				f := llmfake.New(t, llmfake.Options{}, reply)
				p := newProvider(t, f, d.spec(f), llm.Options{})
				resp, err := p.Complete(context.Background(), userTurn("What's the weather in Seattle?"))
				if err != nil {
					t.Fatal(err)
				}
				if got := callNames(resp.Message.Calls); !reflect.DeepEqual(got, sc.want.calls) {
					t.Errorf("calls = %v, want %v", got, sc.want.calls)
				}
				for i, c := range resp.Message.Calls {
					if i >= len(sc.want.args) {
						break
					}
					if sc.want.args[i] == "" {
						if c.ParseError == "" || c.Arguments != nil {
							t.Errorf("call %d: want a parse error and no arguments, got %s (%q)", i, c.Arguments, c.ParseError)
						}
						if c.ArgumentsRaw != `{"city": "Seat` {
							t.Errorf("call %d: ArgumentsRaw = %q, want the model's text", i, c.ArgumentsRaw)
						}
						continue
					}
					if c.ParseError != "" {
						t.Errorf("call %d: unexpected parse error %q", i, c.ParseError)
					}
					jsonEq(t, "arguments", c.Arguments, []byte(sc.want.args[i]))
					if c.ID == "" {
						t.Errorf("call %d has no id", i)
					}
				}
				if resp.StopReason != sc.want.stop {
					t.Errorf("stop reason = %q, want %q", resp.StopReason, sc.want.stop)
				}
				if resp.Message.Text != sc.want.text {
					t.Errorf("text = %q, want %q", resp.Message.Text, sc.want.text)
				}
				if resp.Usage != d.usage {
					t.Errorf("usage = %+v, want %+v", resp.Usage, d.usage)
				}
				if want := llmfake.ServedModel(d.model); resp.ServedModel != want {
					t.Errorf("served model = %q, want %q", resp.ServedModel, want)
				}
				if resp.Attempts != 1 || resp.Message.Role != llm.Assistant || resp.Message.Dialect != d.dialect || len(resp.Message.Raw) == 0 {
					t.Errorf("attempts %d, role %q, dialect %q, raw %d bytes; want 1, assistant, %s, the provider's turn",
						resp.Attempts, resp.Message.Role, resp.Message.Dialect, len(resp.Message.Raw), d.dialect)
				}
				if resp.RequestID == "" {
					t.Error("no request id recorded")
				}
				reqs := f.Requests()
				if len(reqs) != 1 || reqs[0].Rejected != "" || reqs[0].Dialect != d.dialect {
					t.Fatalf("fake saw %d requests (first rejected %q); want one %s request", len(reqs), reqs[0].Rejected, d.dialect)
				}
				if got := reqs[0].ToolNames(); !reflect.DeepEqual(got, []string{"get_weather", "search_docs"}) {
					t.Errorf("tools sent = %v", got)
				}
				if reqs[0].System != "You are a helpful assistant." || reqs[0].LastUserText() != "What's the weather in Seattle?" {
					t.Errorf("system %q, user %q not sent as given", reqs[0].System, reqs[0].LastUserText())
				}
			})
		}
	}
}

func TestRetry429ThenSuccessHonoursRetryAfter(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{},
				llmfake.Status(429).WithRetryAfter("2"),
				llmfake.Tool("get_weather", `{"city":"Seattle"}`))
			var s sleeps
			p := newProvider(t, f, d.spec(f), llm.Options{Sleep: s.sleep})
			resp, err := p.Complete(context.Background(), userTurn("weather?"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Attempts != 2 {
				t.Errorf("attempts = %d, want 2", resp.Attempts)
			}
			if got := s.all(); !reflect.DeepEqual(got, []time.Duration{2 * time.Second}) {
				t.Errorf("waited %v, want [2s] from Retry-After", got)
			}
			if got := callNames(resp.Message.Calls); !reflect.DeepEqual(got, []string{"get_weather"}) {
				t.Errorf("calls = %v", got)
			}
			if n := len(f.Requests()); n != 2 {
				t.Errorf("fake saw %d requests, want 2", n)
			}
		})
	}
}

func TestRetry5xxWithBackoff(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{}, llmfake.Status(500), llmfake.Status(529), llmfake.Text("ok"))
			var s sleeps
			p := newProvider(t, f, d.spec(f), llm.Options{Sleep: s.sleep})
			resp, err := p.Complete(context.Background(), userTurn("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Attempts != 3 || resp.Message.Text != "ok" {
				t.Errorf("attempts %d text %q, want 3 and ok", resp.Attempts, resp.Message.Text)
			}
			// Exponential backoff with up to 25% jitter: 0.5s then 1s.
			got := s.all()
			if len(got) != 2 || got[0] < 375*time.Millisecond || got[0] > 500*time.Millisecond ||
				got[1] < 750*time.Millisecond || got[1] > time.Second {
				t.Errorf("backoff = %v, want ~[0.5s 1s] less jitter", got)
			}
		})
	}
}

func TestRetriesRunOut(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Status(503), llmfake.Status(503))
	var s sleeps
	p := newProvider(t, f, "openai:gpt-4.1", llm.Options{Sleep: s.sleep, MaxRetries: 1})
	_, err := p.Complete(context.Background(), userTurn("hi"))
	var ae *llm.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an *llm.APIError", err)
	}
	if ae.Status != 503 || !ae.Retryable || ae.Attempts != 2 || ae.Type != "server_error" || ae.RequestID == "" {
		t.Errorf("APIError = %+v, want 503 server_error retryable after 2 attempts with a request id", ae)
	}
	if !strings.Contains(err.Error(), "openai:gpt-4.1") {
		t.Errorf("error %q does not name the model", err)
	}
}

func TestNoRetryOn400(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Reply{Status: 400, Message: "bad things"})
	var s sleeps
	p := newProvider(t, f, "anthropic:claude-sonnet-5-5", llm.Options{Sleep: s.sleep})
	_, err := p.Complete(context.Background(), userTurn("hi"))
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Retryable || ae.Type != "invalid_request_error" || ae.Message != "bad things" {
		t.Fatalf("err = %v, want the 400 invalid_request_error as is", err)
	}
	if len(s.all()) != 0 || len(f.Requests()) != 1 {
		t.Errorf("a 400 was retried")
	}
}

func TestRetryAfterPastDeadlineGivesUp(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Status(429).WithRetryAfter("30"))
	var s sleeps
	p := newProvider(t, f, "openai:gpt-4.1", llm.Options{Sleep: s.sleep, Timeout: time.Second})
	_, err := p.Complete(context.Background(), userTurn("hi"))
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err = %v, want a give-up naming the deadline", err)
	}
	if len(s.all()) != 0 {
		t.Errorf("slept %v although the wait could not fit", s.all())
	}
}

func TestDeadlineOnEveryCall(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{Latency: 5 * time.Second}, llmfake.Text("late"))
	p := newProvider(t, f, "openai:gpt-4.1", llm.Options{Timeout: 150 * time.Millisecond})
	start := time.Now()
	_, err := p.Complete(context.Background(), userTurn("hi"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v; the deadline was not enforced", el)
	}
}

func TestHungAttemptIsRetried(t *testing.T) {
	slow := llmfake.Text("too late")
	slow.Delay = 3 * time.Second
	f := llmfake.New(t, llmfake.Options{}, slow, llmfake.Text("fast"))
	var s sleeps
	p := newProvider(t, f, "anthropic:claude-sonnet-5-5", llm.Options{Sleep: s.sleep, AttemptTimeout: 150 * time.Millisecond})
	resp, err := p.Complete(context.Background(), userTurn("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != "fast" || resp.Attempts != 2 {
		t.Errorf("text %q after %d attempts, want fast after 2", resp.Message.Text, resp.Attempts)
	}
}

func TestMalformedReplyBody(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{}, llmfake.Reply{RawBody: `{"choices": [`})
			p := newProvider(t, f, d.spec(f), llm.Options{})
			_, err := p.Complete(context.Background(), userTurn("hi"))
			if err == nil || !strings.Contains(err.Error(), "reading the reply") {
				t.Fatalf("err = %v, want a reply parse error", err)
			}
		})
	}
}

func TestTruncatedReply(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			f := llmfake.New(t, llmfake.Options{}, llmfake.Reply{Text: "The weather in", Truncated: true})
			p := newProvider(t, f, d.spec(f), llm.Options{})
			resp, err := p.Complete(context.Background(), userTurn("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != "max_tokens" {
				t.Errorf("stop reason = %q, want max_tokens", resp.StopReason)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// An endpoint that refuses connections costs one call its retries; the
// calls after it try once, until one gets through, and after that a call
// retries again. (A run of a whole golden set against a wrong base URL
// waited out every call's backoff: 47 s for 27 single runs.)
func TestCallsTryOnceWhileTheEndpointRefusesConnections(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Text("up"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens there now: connections are refused
	var down, reset atomic.Bool
	down.Store(true)
	var trips atomic.Int64
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		trips.Add(1)
		if reset.Swap(false) {
			return nil, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}
		}
		if down.Load() {
			r = r.Clone(r.Context())
			r.URL.Host = closed
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	var s sleeps
	p := newProvider(t, f, "openai-compatible:llama3.1:8b@"+f.URL+"/v1", llm.Options{Sleep: s.sleep, HTTPClient: client})
	call := func() (int64, error) {
		before := trips.Load()
		_, err := p.Complete(context.Background(), userTurn("hi"))
		return trips.Load() - before, err
	}
	if n, err := call(); n != llm.DefaultMaxRetries+1 || err == nil || !strings.Contains(err.Error(), "later calls try once") {
		t.Fatalf("first refused call: %d attempts, err %v; want every retry and the note", n, err)
	}
	if n, err := call(); n != 1 || err == nil || !strings.Contains(err.Error(), "one attempt") || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("second call: %d attempts, err %v; want one attempt that says why", n, err)
	}
	// Up again, but the first attempt's connection is reset: that is no
	// failure to connect, so it is retried as before.
	down.Store(false)
	reset.Store(true)
	if n, err := call(); n != 2 || err != nil {
		t.Fatalf("the endpoint is up again, its first answer cut: %d attempts, err %v; want a retry that gets through", n, err)
	}
	down.Store(true)
	if n, _ := call(); n != llm.DefaultMaxRetries+1 {
		t.Fatalf("refused again after a call got through: %d attempts, want every retry", n)
	}
	// Refused (one attempt now), then a reset: a connection was made, so
	// the call after it retries fully again.
	if n, _ := call(); n != 1 {
		t.Fatalf("refused once more: %d attempts, want one", n)
	}
	reset.Store(true)
	if n, _ := call(); n != llm.DefaultMaxRetries+1 {
		t.Fatalf("a reset, then refused: %d attempts, want every retry (the reset showed the endpoint reachable)", n)
	}
}

// An endpoint that answers only 5xx costs one call its retries; the calls
// after it try once, until an answer that is not a server error, after
// which a call retries again. (28 runs behind a failing gateway took 47 s.)
func TestCallsTryOnceWhileTheEndpointAnswersServerErrors(t *testing.T) {
	f := llmfake.New(t, llmfake.Options{}, llmfake.Text("up"))
	var failing atomic.Bool
	failing.Store(true)
	var trips atomic.Int64
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		trips.Add(1)
		if failing.Load() {
			return &http.Response{StatusCode: 502, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(`{"error":{"message":"upstream down"}}`)), Request: r}, nil
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	var s sleeps
	p := newProvider(t, f, "openai-compatible:llama3.1:8b@"+f.URL+"/v1", llm.Options{Sleep: s.sleep, HTTPClient: client})
	call := func() (int64, error) {
		before := trips.Load()
		_, err := p.Complete(context.Background(), userTurn("hi"))
		return trips.Load() - before, err
	}
	if n, err := call(); n != llm.DefaultMaxRetries+1 || err == nil {
		t.Fatalf("first failing call: %d attempts, err %v; want every retry", n, err)
	}
	if n, err := call(); n != 1 || err == nil || !strings.Contains(err.Error(), "one attempt") {
		t.Fatalf("second call: %d attempts, err %v; want one attempt that says why", n, err)
	}
	failing.Store(false)
	if n, err := call(); n != 1 || err != nil {
		t.Fatalf("up again: %d attempts, err %v; want one that gets through", n, err)
	}
	failing.Store(true)
	if n, _ := call(); n != llm.DefaultMaxRetries+1 {
		t.Fatalf("failing again after a call got through: %d attempts, want every retry", n)
	}
}

// A model the endpoint refuses for good (404: a misspelled model; 401: a
// bad key) is asked once: later calls are not sent, and say why. Another
// model of the same endpoint is not affected.
func TestARefusedModelIsAskedOnce(t *testing.T) {
	for _, code := range []int{404, 401} {
		f := llmfake.New(t, llmfake.Options{Default: func(*llmfake.Request) llmfake.Reply { return llmfake.Status(code) }})
		p := newProvider(t, f, "openai:gpt-5-mimi", llm.Options{})
		if _, err := p.Complete(context.Background(), userTurn("hi")); err == nil {
			t.Fatalf("HTTP %d: no error", code)
		}
		_, err := p.Complete(context.Background(), userTurn("hi again"))
		var apiErr *llm.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != code || !strings.Contains(err.Error(), "not sent") || len(f.Requests()) != 1 {
			t.Errorf("HTTP %d, second call: %v after %d requests; want the first answer, not sent again", code, err, len(f.Requests()))
		}
		other := newProvider(t, f, "openai:gpt-5-mini", llm.Options{})
		if _, err := other.Complete(context.Background(), userTurn("hi")); err == nil || len(f.Requests()) != 2 {
			t.Errorf("HTTP %d: another model of the endpoint was not asked (%d requests)", code, len(f.Requests()))
		}
	}
	// Once a call got through, a 404 is that request's (an item the
	// conversation no longer holds): later calls are still sent.
	var n atomic.Int64
	f := llmfake.New(t, llmfake.Options{Default: func(*llmfake.Request) llmfake.Reply {
		if n.Add(1) == 2 {
			return llmfake.Status(404)
		}
		return llmfake.Text("ok")
	}})
	p := newProvider(t, f, "openai:gpt-5-mini", llm.Options{})
	for i, wantErr := range []bool{false, true, false} {
		if _, err := p.Complete(context.Background(), userTurn("hi")); (err != nil) != wantErr {
			t.Errorf("call %d after a success: err %v, want error %v", i+1, err, wantErr)
		}
	}
}
