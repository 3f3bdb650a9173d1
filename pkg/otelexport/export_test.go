package otelexport

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

const (
	caseTrace   = "4bf92f3577b34da6a3ce929d0e0e4736"
	layer0Trace = "0af7651916cd43dd8448eb211c80319c"
	toolSpanID  = "00f067aa0ba902b7" // the traceparent span id of the case's tools/call
	caseSpanID  = "b7ad6b7169203331" // the case run's span (TraceContext.RunSpanID)
	listSpanID  = "b7ad6b7169203331"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// fixture is one case run of one model: a model call, the tool call it
// asked for with its MCP request, a second model call; and one Layer 0
// request in another trace.
func fixture() (*report.Report, telemetry.Events) {
	rep := report.New()
	rep.Run = report.Run{Commit: "0123456789abcdef", HarnessVersion: "0.1.0", StartedAt: t0, FinishedAt: at(5000)}
	rep.Server = report.Server{Name: "weather", Version: "1.2.0"}
	place := telemetry.Place{Case: "weather-oslo", Run: 1, TraceID: caseTrace, RunSpanID: caseSpanID}
	ev := telemetry.Events{
		Cases: []telemetry.CaseRun{{Model: "openai:gpt-5-mini", Place: place, Start: at(100), Duration: 1900 * time.Millisecond, Outcome: report.RunPass}},
		Models: []telemetry.ModelCall{
			{Model: "openai:gpt-5-mini", Place: place, Start: at(100), Latency: 700 * time.Millisecond,
				Usage: llm.Usage{InputTokens: 400, CachedInputTokens: 100, OutputTokens: 40, ReasoningTokens: 10}, Served: "gpt-5-mini-2025-08-07"},
			{Model: "openai:gpt-5-mini", Place: place, Start: at(900), Latency: 1100 * time.Millisecond, Failed: true},
		},
		Tools: []telemetry.ToolCall{{Model: "openai:gpt-5-mini", Place: place, Tool: "get_weather", Start: at(800), Latency: 90 * time.Millisecond}},
		MCP: []mcpclient.Call{
			{Method: "tools/call", Name: "get_weather", Start: at(810), Elapsed: 70 * time.Millisecond, TraceID: caseTrace, SpanID: toolSpanID, RunSpanID: caseSpanID},
			{Method: "tools/list", Start: at(10), Elapsed: 5 * time.Millisecond, ErrKind: "timeout", TraceID: layer0Trace, SpanID: listSpanID},
			{Method: "ping", Start: at(20), Elapsed: time.Millisecond}, // no trace context: not exported
		},
	}
	return rep, ev
}

func TestMaxSpansDropsRequestsFirst(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	rep, ev := fixture()
	err := Export(context.Background(), exp, rep, ev, Options{MaxSpans: 7})
	if err == nil || !strings.Contains(err.Error(), "1 MCP request spans") {
		t.Fatalf("err %v", err)
	}
	if n := len(exp.GetSpans()); n != 7 {
		t.Errorf("%d spans sent, want 7", n)
	}
}

// End to end over OTLP/HTTP: a fake collector receives protobuf on
// /v1/traces with the configured header.
func TestOTLPHTTP(t *testing.T) {
	var (
		mu    sync.Mutex
		names []string
		paths []string
		keys  []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("not OTLP protobuf: %v", err)
		}
		mu.Lock()
		paths, keys = append(paths, r.URL.Path), append(keys, r.Header.Get("X-Api-Key"))
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	exp, err := New(ctx, Config{Endpoint: srv.URL, Headers: map[string]string{"x-api-key": "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	rep, ev := fixture()
	if err := Export(ctx, exp, rep, ev); err != nil {
		t.Fatal(err)
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(names) != 8 || len(paths) == 0 || paths[0] != "/v1/traces" || keys[0] != "s3cret" {
		t.Errorf("collector got spans %v on %v with key %v", names, paths, keys)
	}
}

func TestFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	if _, ok, err := FromEnv(env(nil)); ok || err != nil {
		t.Errorf("no endpoint: ok %v err %v", ok, err)
	}
	cfg, ok, err := FromEnv(env(map[string]string{EnvEndpoint: "http://a:4318", EnvTracesEndpoint: "https://b/otlp/v1/traces",
		EnvHeaders: "api-key=one%20two,x=1", EnvTracesHeaders: "x=2"}))
	if err != nil || !ok || cfg.Endpoint != "https://b/otlp/v1/traces" || cfg.Headers["api-key"] != "one two" || cfg.Headers["x"] != "2" {
		t.Errorf("cfg %+v ok %v err %v", cfg, ok, err)
	}
	if _, _, err := FromEnv(env(map[string]string{EnvEndpoint: "http://a", EnvHeaders: "novalue"})); err == nil || strings.Contains(err.Error(), "novalue") {
		t.Errorf("bad headers: %v (must not echo the value)", err)
	}
	for in, want := range map[string]string{"http://a:4318": "http://a:4318/v1/traces", "http://a:4318/": "http://a:4318/v1/traces", "https://a/x/v1/traces": "https://a/x/v1/traces"} {
		if got, err := (Config{Endpoint: in}).endpointURL(); err != nil || got != want {
			t.Errorf("%s: %s %v, want %s", in, got, err, want)
		}
	}
	if _, err := New(context.Background(), Config{Endpoint: "localhost:4318"}); err == nil {
		t.Error("an endpoint without a scheme was accepted")
	}
}

// A tool call Layer 2 answered in the server's place says so on its span:
// its microseconds are no timing of the tool.
func TestInjectedToolCallSpansSaySo(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	rep, ev := fixture()
	ev.Tools = append(ev.Tools, telemetry.ToolCall{Model: "openai:gpt-5-mini", Place: ev.Tools[0].Place, Tool: "send_email", Start: at(1000), Latency: time.Microsecond, Injected: true, Outcome: telemetry.ToolOK})
	if err := Export(context.Background(), exp, rep, ev, Options{}); err != nil {
		t.Fatal(err)
	}
	marked := map[string]bool{}
	for _, s := range exp.GetSpans() {
		for _, a := range s.Attributes {
			if a.Key == attrInjected && a.Value.AsBool() {
				marked[s.Name] = true
			}
		}
	}
	if !marked["execute_tool send_email"] || marked["execute_tool get_weather"] {
		t.Errorf("spans marked injected: %v; want send_email's only", marked)
	}
}
