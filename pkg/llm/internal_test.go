package llm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestCapabilityTable(t *testing.T) {
	cases := []struct {
		dialect, model, version string
		temp, seed, reasoning   bool
	}{
		{DialectOpenAIResponses, "gpt-5-mini", "", false, false, true},
		{DialectOpenAIResponses, "gpt-5.2", "", false, false, true},
		{DialectOpenAIResponses, "GPT-6.1-terra", "", false, false, true},
		{DialectOpenAIResponses, "o3", "", false, false, true},
		{DialectOpenAIResponses, "gpt-4.1", "", true, false, false},
		{DialectOpenAIChat, "gpt-5-chat-latest", "", true, true, false},
		{DialectOpenAIChat, "openai/o4-mini", "", false, true, true}, // OpenRouter naming
		{DialectOpenAIChat, "llama3.1:8b", "", true, true, false},
		{DialectOpenAIChat, "omni-local", "", true, true, false}, // "o" + a letter is not the o-series
		{DialectAnthropic, "claude-sonnet-5-5", "2026-10-21", false, false, false},
		{DialectAnthropic, "claude-sonnet-5-5", "2027-01-01", false, false, false},
		{DialectAnthropic, "claude-sonnet-5-5", "2023-06-01", true, false, false},
	}
	for _, c := range cases {
		got := capabilityOf(c.dialect, c.model, c.version)
		if got.temperature != c.temp || got.seed != c.seed || got.reasoning != c.reasoning {
			t.Errorf("%s %s %s: temperature %v seed %v reasoning %v; want %v %v %v",
				c.dialect, c.model, c.version, got.temperature, got.seed, got.reasoning, c.temp, c.seed, c.reasoning)
		}
		if !got.temperature && got.tempWhy == "" || !got.seed && got.seedWhy == "" {
			t.Errorf("%s %s: a refused knob has no reason", c.dialect, c.model)
		}
	}
}

func TestFilterSamplingDefaults(t *testing.T) {
	c := capabilityOf(DialectAnthropic, "claude-x", "2026-10-21")
	sent, dropped := filterSampling(c, Sampling{}, 4096, DialectAnthropic)
	if sent.MaxOutputTokens != 4096 || sent.Temperature != nil || len(dropped) != 0 {
		t.Errorf("nothing requested: sent %+v dropped %q; want only max_tokens 4096 (required)", sent, dropped)
	}
	sent, _ = filterSampling(capabilityOf(DialectOpenAIChat, "m", ""), Sampling{MaxOutputTokens: -5}, 4096, DialectOpenAIChat)
	if sent.MaxOutputTokens != 0 {
		t.Errorf("negative max tokens sent as %d", sent.MaxOutputTokens)
	}
}

func TestRetryAfter(t *testing.T) {
	at := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		h    map[string]string
		min  time.Duration
		max  time.Duration
		name string
	}{
		{map[string]string{"Retry-After": "3"}, 3 * time.Second, 3 * time.Second, "seconds"},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, 500 * time.Millisecond, "fractional"},
		{map[string]string{"retry-after-ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, 250 * time.Millisecond, "ms wins"},
		{map[string]string{"Retry-After": at}, 80 * time.Second, 91 * time.Second, "HTTP date"},
		{map[string]string{"Retry-After": "soon"}, 0, 0, "unreadable"},
		{map[string]string{"Retry-After": "-4"}, 0, 0, "negative"},
		{nil, 0, 0, "absent"},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		if got := retryAfter(h); got < c.min || got > c.max {
			t.Errorf("%s: %v, want %v..%v", c.name, got, c.min, c.max)
		}
	}
}

func TestBackoffGrowsAndCaps(t *testing.T) {
	for attempt, want := range map[int]time.Duration{1: 500 * time.Millisecond, 2: time.Second, 3: 2 * time.Second, 5: 8 * time.Second, 40: 8 * time.Second} {
		for i := 0; i < 50; i++ {
			if got := backoff(attempt); got > want || got < want*3/4 {
				t.Fatalf("backoff(%d) = %v, want %v less at most 25%%", attempt, got, want)
			}
		}
	}
}

func TestErrorMessageShapes(t *testing.T) {
	cases := []struct{ body, typ, msg string }{
		{`{"error":{"message":"Rate limit","type":"requests","code":"rate_limit_exceeded"}}`, "rate_limit_exceeded", "Rate limit"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "Overloaded"},
		{`{"error":"model not found"}`, "", "model not found"},
		{`<html>502 Bad Gateway</html>`, "", "<html>502 Bad Gateway</html>"},
	}
	for _, c := range cases {
		typ, msg := errorMessage([]byte(c.body))
		if typ != c.typ || msg != c.msg {
			t.Errorf("%s: %q %q, want %q %q", c.body, typ, msg, c.typ, c.msg)
		}
	}
}

func TestExtractOutput(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"verdict":{"enum":["pass","fail"]}},"required":["verdict"]}`)
	cases := []struct{ text, want, err string }{
		{`{"verdict":"pass"}`, `{"verdict":"pass"}`, ""},
		{"  {\n \"verdict\": \"fail\"\n}\n", `{"verdict":"fail"}`, ""},
		{"```json\n{\"verdict\":\"pass\"}\n```", `{"verdict":"pass"}`, ""},
		{`Sure! {"verdict":"fail"} Hope that helps.`, `{"verdict":"fail"}`, ""},
		{``, "", "the reply is empty"},
		{`I think it passed`, "", "no JSON object"},
		{`{"verdict": pass}`, "", "does not parse"},
		{`{"verdict":"maybe"}`, "", "does not match the schema"},
		{`{}`, "", "does not match the schema"},
	}
	for _, c := range cases {
		got, err := extractOutput(c.text, schema)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.text, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%q: %s %v, want %s", c.text, got, err, c.want)
		}
	}
}

func TestStrictOutputSchema(t *testing.T) {
	cases := map[string]bool{
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`:                                                                 true,
		`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`:                                                                                              false,
		`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`:                                                                                  false,
		`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"x":{}},"required":["x"]}}},"required":["l"],"additionalProperties":false}`: false,
		`{"type":"object","properties":{"u":{"oneOf":[{"type":"string"}]}},"required":["u"],"additionalProperties":false}`:                                                     false,
		`not json`: false,
	}
	for s, want := range cases {
		if got := strictOutputSchema(json.RawMessage(s)); got != want {
			t.Errorf("%s: %v, want %v", s, got, want)
		}
	}
}

func TestFormatRejected(t *testing.T) {
	yes := &APIError{Status: 400, Message: "response_format of type json_schema is not supported"}
	no := &APIError{Status: 400, Message: "temperature is out of range"}
	server := &APIError{Status: 500, Message: "json_schema crashed"}
	if !formatRejected(yes) || formatRejected(no) || formatRejected(server) || formatRejected(nil) {
		t.Error("formatRejected misclassifies")
	}
}

func TestBound(t *testing.T) {
	if got := bound("héllo", 2); got != "h…" {
		t.Errorf("bound cut inside a rune: %q", got)
	}
	if got := bound("abc", 5); got != "abc" {
		t.Errorf("bound changed a short string: %q", got)
	}
}
