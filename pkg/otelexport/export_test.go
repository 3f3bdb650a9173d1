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

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
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
	ev := telemetry.Events{
		Cases: []telemetry.CaseRun{{Case: "weather-oslo", Model: "openai:gpt-5-mini", Run: 1, TraceID: caseTrace, Start: at(100), Duration: 1900 * time.Millisecond, Outcome: report.RunPass}},
		Models: []telemetry.ModelCall{
			{Model: "openai:gpt-5-mini", Case: "weather-oslo", Run: 1, TraceID: caseTrace, Start: at(100), Latency: 700 * time.Millisecond,
				Usage: llm.Usage{InputTokens: 400, CachedInputTokens: 100, OutputTokens: 40, ReasoningTokens: 10}, Served: "gpt-5-mini-2025-08-07"},
			{Model: "openai:gpt-5-mini", Case: "weather-oslo", Run: 1, TraceID: caseTrace, Start: at(900), Latency: 1100 * time.Millisecond, Failed: true},
		},
		Tools: []telemetry.ToolCall{{Model: "openai:gpt-5-mini", Case: "weather-oslo", Run: 1, TraceID: caseTrace, Tool: "get_weather", Start: at(800), Latency: 90 * time.Millisecond}},
		MCP: []mcpclient.Call{
			{Method: "tools/call", Name: "get_weather", Start: at(810), Elapsed: 70 * time.Millisecond, TraceID: caseTrace, SpanID: toolSpanID},
			{Method: "tools/list", Start: at(10), Elapsed: 5 * time.Millisecond, ErrKind: "timeout", TraceID: layer0Trace, SpanID: listSpanID},
			{Method: "ping", Start: at(20), Elapsed: time.Millisecond}, // no trace context: not exported
		},
	}
	return rep, ev
}

func byName(spans tracetest.SpanStubs) map[string]tracetest.SpanStub {
	m := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		m[s.Name] = s
	}
	return m
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// The span tree: the run; the case as the root of the trace its requests
// carried, linked to the run; model and tool calls under the case; the
// MCP request under its tool call with the span id sent on the wire; a
// Layer 0 request under a requests span in its own trace.
func TestSpanStructure(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	rep, ev := fixture()
	if err := Export(context.Background(), exp, rep, ev); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 8 {
		for _, s := range spans {
			t.Log(s.Name)
		}
		t.Fatalf("%d spans, want 8", len(spans))
	}
	s := byName(spans)
	run, kase := s["mcp-eval run"], s["case weather-oslo"]
	chat, tool, req := s["chat gpt-5-mini"], s["execute_tool get_weather"], s["tools/call get_weather"]
	reqs, list := s["mcp requests"], s["tools/list"]

	if run.Parent.IsValid() || !run.StartTime.Equal(t0) || !run.EndTime.Equal(at(5000)) {
		t.Errorf("run span: parent %v, %v – %v", run.Parent, run.StartTime, run.EndTime)
	}
	if got := kase.SpanContext.TraceID().String(); got != caseTrace || kase.Parent.IsValid() {
		t.Errorf("case span: trace %s parent %v, want the case's trace %s as a root", got, kase.Parent, caseTrace)
	}
	if len(kase.Links) != 1 || kase.Links[0].SpanContext.SpanID() != run.SpanContext.SpanID() {
		t.Errorf("case span links %+v, want the run span", kase.Links)
	}
	if !kase.StartTime.Equal(at(100)) || !kase.EndTime.Equal(at(2000)) || attrs(kase)[attrOutcome].AsString() != report.RunPass {
		t.Errorf("case span %v – %v %v", kase.StartTime, kase.EndTime, kase.Attributes)
	}
	var models []tracetest.SpanStub
	for _, sp := range spans {
		if sp.Name == "chat gpt-5-mini" {
			models = append(models, sp)
		}
	}
	if len(models) != 2 {
		t.Fatalf("%d model call spans, want 2", len(models))
	}
	for _, m := range append(models, tool) {
		if m.Parent.SpanID() != kase.SpanContext.SpanID() || m.SpanContext.TraceID() != kase.SpanContext.TraceID() {
			t.Errorf("%s: parent %v, want the case span", m.Name, m.Parent.SpanID())
		}
	}
	if chat.Status.Code == codes.Error {
		chat = models[0]
	}
	a := attrs(chat)
	if a[attrProvider].AsString() != "openai" || a[attrReqModel].AsString() != "gpt-5-mini" || a[attrInTokens].AsInt64() != 500 ||
		a[attrCacheRead].AsInt64() != 100 || a[attrOutTokens].AsInt64() != 40 || a[attrReasoning].AsInt64() != 10 || chat.SpanKind != trace.SpanKindClient {
		t.Errorf("model span attributes %v", chat.Attributes)
	}
	if models[1].Status.Code != codes.Error && models[0].Status.Code != codes.Error {
		t.Error("the failed model call's span is not an error")
	}
	if got := req.SpanContext.SpanID().String(); got != toolSpanID {
		t.Errorf("MCP request span id %s, want the traceparent's %s", got, toolSpanID)
	}
	if req.Parent.SpanID() != tool.SpanContext.SpanID() || attrs(req)[attrMCPMethod].AsString() != "tools/call" || attrs(req)[attrToolName].AsString() != "get_weather" {
		t.Errorf("MCP request span: parent %v attrs %v, want under the tool call", req.Parent.SpanID(), req.Attributes)
	}
	if !req.StartTime.Equal(at(810)) || !req.EndTime.Equal(at(880)) || !tool.EndTime.Equal(at(890)) {
		t.Errorf("timestamps: request %v – %v, tool ends %v", req.StartTime, req.EndTime, tool.EndTime)
	}
	if reqs.SpanContext.TraceID().String() != layer0Trace || reqs.Parent.IsValid() {
		t.Errorf("Layer 0 requests span in trace %s", reqs.SpanContext.TraceID())
	}
	if list.SpanContext.SpanID().String() != listSpanID || list.Parent.SpanID() != reqs.SpanContext.SpanID() || list.Status.Code != codes.Error {
		t.Errorf("tools/list span %+v", list)
	}
	if v, _ := spans[0].Resource.Set().Value("service.name"); v.AsString() != "mcp-eval" {
		t.Errorf("resource %v", spans[0].Resource)
	}
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
