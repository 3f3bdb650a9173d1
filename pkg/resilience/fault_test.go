package resilience

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
)

// The fault table of docs/resilience.md, as code: exactly what the model
// sees for each fault.
func TestShown(t *testing.T) {
	want := map[string]struct {
		text    string
		isError bool
	}{
		HTTP500:       {"error -32603: Internal server error", true},
		Timeout:       {"calling tool get_weather: the server did not answer tools/call within 30s; the request was cancelled", true},
		MalformedJSON: {`{"status": "ok", "result": {"items": [{"id": "`, false},
		ExpiredToken:  {`calling tool get_weather: POST /mcp (tools/call): HTTP status 401, body: "Unauthorized"; WWW-Authenticate: Bearer error="invalid_token", error_description="The access token expired"`, true},
	}
	for f, w := range want {
		got, err := Shown(f, "get_weather", 0)
		if err != nil || got.Content != w.text || got.IsError != w.isError {
			t.Errorf("%s: got %q (isError %v, %v), want %q (isError %v)", f, got.Content, got.IsError, err, w.text, w.isError)
		}
	}
	for _, limit := range []int{0, 1000, 4097} {
		got, _ := Shown(Oversized, "get_weather", limit)
		if limit == 0 {
			limit = behavior.DefaultMaxResultBytes
		}
		if got.IsError || len(got.Content) > limit || len(got.Content) < limit-8 || !strings.HasSuffix(got.Content, clipMark) ||
			!strings.HasPrefix(got.Content, `{"total_bytes": 1048576, "rows": [{"blob": "AAAA`) || !utf8.ValidString(got.Content) {
			t.Errorf("oversized at %d: %d bytes, %q…%q", limit, len(got.Content), got.Content[:40], got.Content[len(got.Content)-20:])
		}
		if len(figures(got.Content)) != 1 { // the claimed size only: no figure a fabrication could hide behind
			t.Errorf("oversized body carries figures: %v", figures(got.Content))
		}
	}
	if _, err := Shown("http_501", "x", 0); err == nil || !strings.Contains(err.Error(), "http_500, timeout") {
		t.Errorf("unknown fault: %v", err)
	}
	if len(Faults()) != 5 {
		t.Errorf("faults: %v", Faults())
	}
}

// The first call to the tool gets the fault; a retry and other tools go
// through. The real call is made behind the fault only for a readOnlyHint
// tool.
func TestFaultExecutor(t *testing.T) {
	tools := serverTools()
	for _, tc := range []struct {
		tool     int
		realCall bool
	}{{0, true}, {2, false}} {
		srv := newFakeServer()
		tool := tools[tc.tool]
		x, err := NewFaultExecutor(srv, tool, HTTP500, 0)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		r1, err := x.Call(ctx, tool.Name, []byte(`{}`), nil)
		if err != nil || r1.Content != "error -32603: Internal server error" || !r1.IsError || !r1.Injected {
			t.Fatalf("%s: first call %+v %v; want the fault, marked injected", tool.Name, r1, err)
		}
		if got := srv.count(tool.Name); (got == 1) != tc.realCall {
			t.Errorf("%s: %d real calls behind the fault, readOnly %v", tool.Name, got, tool.ReadOnly())
		}
		log := x.Log()
		if !log.Fired || log.RealCall != tc.realCall || (tc.realCall && !strings.Contains(log.Withheld, srv.results[tool.Name])) {
			t.Errorf("%s: log %+v", tool.Name, log)
		}
		r2, _ := x.Call(ctx, tool.Name, []byte(`{}`), nil)
		if r2.IsError || r2.Injected || r2.Content != srv.results[tool.Name] {
			t.Errorf("%s: the retry must reach the server: %+v", tool.Name, r2)
		}
		r3, _ := x.Call(ctx, "search_docs", []byte(`{}`), nil)
		if r3.Content != srv.results["search_docs"] {
			t.Errorf("other tools must pass through: %+v", r3)
		}
	}
	if _, err := NewFaultExecutor(newFakeServer(), tools[0], "nope", 0); err == nil {
		t.Error("unknown fault accepted")
	}
}
