package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// tapped is one JSON-RPC message the reference server received, as the
// tap decoded it from the HTTP body.
type tapped struct {
	method                           string
	request                          bool // has an id: a request, not a notification
	traceparent, tracestate, baggage string
	hasMeta                          bool
}

// exported is one span the OTLP receiver got.
type exported struct {
	name, trace, span, parent, traceState string
	attrs                                 map[string]string
}

// traceSink is a tap in front of an MCP server over Streamable HTTP that
// decodes every JSON-RPC body the harness sends, and an OTLP/HTTP
// receiver that decodes every span it exports.
type traceSink struct {
	tb    testing.TB
	mu    sync.Mutex
	tap   []tapped
	spans []exported
	// Collector is the receiver's URL, for OTEL_EXPORTER_OTLP_ENDPOINT.
	Collector string
}

func newTraceSink(t testing.TB) *traceSink {
	t.Helper()
	ts := &traceSink{tb: t}
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			t.Errorf("the collector got %s %s, not an OTLP/HTTP protobuf trace export", r.Method, r.URL.Path)
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		ts.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					e := exported{name: s.Name, trace: hex.EncodeToString(s.TraceId), span: hex.EncodeToString(s.SpanId),
						parent: hex.EncodeToString(s.ParentSpanId), traceState: s.TraceState, attrs: map[string]string{}}
					for _, kv := range s.Attributes {
						v := kv.Value.GetStringValue()
						if v == "" && kv.Value.GetValue() != nil {
							v = strings.Trim(kv.Value.String(), " ")
						}
						e.attrs[kv.Key] = v
					}
					ts.spans = append(ts.spans, e)
				}
			}
		}
		ts.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(col.Close)
	ts.Collector = col.URL
	return ts
}

// serve starts the tap in front of inner and returns its base URL.
func (ts *traceSink) serve(inner http.Handler) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			ts.record(body)
		}
		inner.ServeHTTP(w, r)
	}))
	ts.tb.Cleanup(hs.Close)
	return hs.URL
}

// reset forgets what was tapped and exported, before the next command.
func (ts *traceSink) reset() {
	ts.mu.Lock()
	ts.tap, ts.spans = nil, nil
	ts.mu.Unlock()
}

// traceEnv is newEvalEnv's set-up with a tap in front of the server and
// an OTLP/HTTP receiver the harness is pointed at through the standard
// variables (plus extra, e.g. TRACEPARENT).
type traceEnv struct {
	*evalEnv
	*traceSink
	env map[string]string
}

func newTraceEnv(t *testing.T, extra map[string]string) *traceEnv {
	t.Helper()
	te := &traceEnv{env: extra, traceSink: newTraceSink(t)}
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	url := te.serve(srv.Handler())
	te.evalEnv = &evalEnv{t: t, dir: t.TempDir(), url: url + "/mcp", models: llmfake.New(t, llmfake.Options{Default: sensible})}
	cfg := `golden: tasks.yaml
models:
  default: [openai:gpt-5-mini]
endpoints:
  openai: {base-url: "` + te.models.URL + `/v1"}
eval:
  judge: none
  runs: 2
`
	for name, body := range map[string]string{"tasks.yaml": evalTasks, "mcp-eval.yaml": cfg} {
		if err := os.WriteFile(filepath.Join(te.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if te.env == nil {
		te.env = map[string]string{}
	}
	te.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = te.Collector
	return te
}

func (ts *traceSink) record(body []byte) {
	var msgs []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		_ = json.Unmarshal(body, &msgs)
	} else {
		msgs = []json.RawMessage{body}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, raw := range msgs {
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &m) != nil || m.Method == "" {
			continue // not a JSON-RPC request: a malformed-body probe, or a response
		}
		tp, _ := m.Params.Meta["traceparent"].(string)
		st, _ := m.Params.Meta["tracestate"].(string)
		bg, _ := m.Params.Meta["baggage"].(string)
		ts.tap = append(ts.tap, tapped{method: m.Method, request: len(m.ID) > 0 && string(m.ID) != "null", traceparent: tp, tracestate: st, baggage: bg, hasMeta: m.Params.Meta != nil})
	}
}

// main runs the command with the receiver's variables and returns the
// report it wrote.
func (te *traceEnv) main(args ...string) *report.Report {
	te.t.Helper()
	te.reset()
	lookup := func(k string) (string, bool) {
		if v, ok := te.env[k]; ok {
			return v, true
		}
		return te.models.LookupEnv(k)
	}
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, LookupEnv: lookup}
	args = append(args, "--url", te.url, "--out", te.path("report.json"), "--markdown", te.path("summary.md"), "--html", te.path("report.html"))
	if code := c.Main(te.t.Context(), args); code == ExitError {
		te.t.Fatalf("%v: exit %d\n%s\n%s", args, code, out.String(), errb.String())
	}
	if strings.Contains(errb.String(), "OTLP export") {
		te.t.Fatalf("%v: the export failed:\n%s", args, errb.String())
	}
	rep, err := report.Load(te.path("report.json"))
	if err != nil {
		te.t.Fatal(err)
	}
	return rep
}

var wireTraceparent = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)

// checkWire asserts what every command must hold: each message to the
// server carries a traceparent whose parent-id is an exported span, and
// tracestate and baggage exactly as inherited (absent when not). It
// returns the trace ids the messages carried.
func (te *traceSink) checkWire(cmd string, layer0 bool, state, baggage string) map[string]bool {
	te.tb.Helper()
	te.mu.Lock()
	defer te.mu.Unlock()
	if len(te.tap) == 0 || len(te.spans) == 0 {
		te.tb.Fatalf("%s: %d messages tapped, %d spans exported", cmd, len(te.tap), len(te.spans))
	}
	spans := map[string]exported{}
	for _, s := range te.spans {
		spans[s.span] = s
	}
	traces := map[string]bool{}
	var bare []string
	for _, m := range te.tap {
		if m.traceparent == "" {
			if m.hasMeta {
				te.tb.Errorf("%s: %s has _meta but no traceparent", cmd, m.method)
			}
			bare = append(bare, m.method)
			continue
		}
		w := wireTraceparent.FindStringSubmatch(m.traceparent)
		if m.traceparent == otelProbeTraceparent || w == nil {
			continue // OTEL-2's own fixed traceparent and tracestate
		}
		if s, ok := spans[w[2]]; !ok || s.trace != w[1] {
			te.tb.Errorf("%s: %s carried traceparent %s, but no exported span has that id in that trace", cmd, m.method, m.traceparent)
		}
		traces[w[1]] = true
		if m.tracestate != state || m.baggage != baggage {
			te.tb.Errorf("%s: %s carried tracestate %q baggage %q, want %q and %q", cmd, m.method, m.tracestate, m.baggage, state, baggage)
		}
	}
	// Layer 0 probes that must leave _meta out (docs/telemetry.md lists
	// them): the JSON-RPC notifications sent as fixed bytes, and the
	// requests without params._meta. Layers 1 and 2 send none.
	for _, method := range bare {
		switch {
		case !layer0:
			te.tb.Errorf("%s: %s was sent without a traceparent", cmd, method)
		case !rawProbes[method]:
			te.tb.Errorf("%s: %s was sent without _meta, and is not one of the raw probes", cmd, method)
		}
	}
	return traces
}

// otelProbeTraceparent is what OTEL-2 sends to see the server propagate it.
const otelProbeTraceparent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"

// rawProbes are the methods Layer 0 sends without _meta on purpose
// (docs/telemetry.md lists the probes): the fixed-byte probes, and the
// dual-era probe's legacy session (initialize, notifications/initialized
// and one legacy request: a declared list, else ping).
var rawProbes = map[string]bool{"notifications/cancelled": true, "notifications/mcp-eval/probe": true, "server/discover": true,
	"initialize": true, "notifications/initialized": true, "tools/list": true, "prompts/list": true, "resources/list": true, "ping": true}

func (te *traceSink) spansNamed(prefix string) []exported {
	te.mu.Lock()
	defer te.mu.Unlock()
	var out []exported
	for _, s := range te.spans {
		if strings.HasPrefix(s.name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func TestEveryRequestOfEveryCommandIsInAnExportedTrace(t *testing.T) {
	te := newTraceEnv(t, nil)

	te.main("check")
	te.checkWire("check", true, "", "")
	if len(te.spansNamed("mcp-eval run")) != 1 || len(te.spansNamed("mcp requests")) == 0 {
		t.Errorf("check exported no run span or no requests span")
	}

	te.main("eval", "--config", te.path("mcp-eval.yaml"))
	traces := te.checkWire("eval", false, "", "")
	cases := te.spansNamed("case ")
	// 3 cases × 2 runs of one model, each the root of its own trace.
	perTrace := map[string]int{}
	for _, c := range cases {
		perTrace[c.trace]++
		if c.parent != "" {
			t.Errorf("case span %s has parent %s; without TRACEPARENT a case run is a root", c.name, c.parent)
		}
	}
	if len(cases) != 6 || len(perTrace) != 6 {
		t.Fatalf("%d case spans in %d traces, want 6 in 6", len(cases), len(perTrace))
	}
	tools := te.spansNamed("execute_tool ")
	// weather and invoices call one tool each per run.
	if len(tools) != 4 {
		t.Fatalf("%d execute_tool spans, want 4", len(tools))
	}
	for _, s := range tools {
		if s.attrs["mcp_eval.outcome"] != "ok" || perTrace[s.trace] == 0 {
			t.Errorf("%s: outcome %q in trace %s, want ok in a case run's trace", s.name, s.attrs["mcp_eval.outcome"], s.trace)
		}
	}
	for _, s := range te.spansNamed("tools/call ") {
		if perTrace[s.trace] == 0 {
			t.Errorf("%s is not in a case run's trace", s.name)
		}
		parentIsTool := false
		for _, tool := range tools {
			parentIsTool = parentIsTool || tool.span == s.parent
		}
		if !parentIsTool {
			t.Errorf("%s is not a child of an execute_tool span", s.name)
		}
	}
	if n := len(te.spansNamed("chat ")); n != 10 {
		t.Errorf("%d chat spans, want 10 (2 + 2 + 1 model calls × 2 runs)", n)
	}
	for _, s := range tools {
		if !traces[s.trace] {
			t.Errorf("the trace of %s carried no request to the server", s.name)
		}
	}

	// --fresh: eval stored its results, and a reused run calls nothing.
	rep := te.main("run", "--config", te.path("mcp-eval.yaml"), "--layers", "conformance,behavior,resilience,telemetry", "--fresh")
	te.checkWire("run", true, "", "")
	var scenarios int
	for _, c := range te.spansNamed("case ") {
		if c.attrs["mcp_eval.scenario"] != "" {
			scenarios++
		}
	}
	if scenarios == 0 {
		t.Errorf("run exported no Layer 2 case run")
	}
	tel := rep.Telemetry
	if rep.Behavior == nil {
		t.Fatalf("run made no Layer 1 results")
	}
	calls := 0
	for _, c := range tel.Cases {
		calls += c.ToolCalls
	}
	if calls != 4 || len(tel.Tools) == 0 || tel.Tools[0].Tool != "get_weather" || tel.Tools[0].Calls < 2 || tel.Tools[0].MaxMs == nil || tel.Tools[0].CostPerCallUSD == nil {
		t.Errorf("telemetry counts %d Layer 1 tool calls over the cases %+v, tools %+v; want 4, and get_weather timed and costed", calls, tel.Cases, tel.Tools)
	}
	if u := tel.Usage[0]; u.ToolCalls < 4 || u.CostPer1kToolCallsUSD == nil {
		t.Errorf("usage %+v: want the tool calls and a cost per 1k of them", u)
	}
	md, _ := os.ReadFile(te.path("summary.md"))
	// A model id longer than 8 characters is shown under its matrix label.
	if !bytes.Contains(md, []byte("**Per tool call**")) || !bytes.Contains(md, []byte("| `get_weather` | **A** |")) || !bytes.Contains(md, []byte("**A** `openai:gpt-5-mini`")) {
		t.Errorf("the PR comment has no per-tool row:\n%s", md)
	}
	page, _ := os.ReadFile(te.path("report.html"))
	if !bytes.Contains(page, []byte(`<table id="tools">`)) || !bytes.Contains(page, []byte("<td><code>get_weather</code></td>")) {
		t.Errorf("the HTML report has no per-tool table")
	}
}
