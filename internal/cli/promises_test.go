package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// The promises of issue 12, checked the way a user would see them:
// through every command, with the built binary, against a server nobody
// here wrote, behind a tap that reads every JSON-RPC request, with a local
// OTLP receiver and a scripted model that counts its calls.

// tapped is one JSON-RPC request as the tap saw it on the wire.
type tapped struct {
	Method      string
	ID          json.RawMessage
	HasMeta     bool
	Traceparent string
	Tracestate  string
	Baggage     string
}

// mcpTap is a reverse proxy in front of an MCP server over Streamable
// HTTP that records every request body the harness sends.
type mcpTap struct {
	URL string
	mu  sync.Mutex
	got []tapped
}

func newMCPTap(t *testing.T, upstream string) *mcpTap {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	tap := &mcpTap{}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
		r.Out.URL.Path = u.Path
	}, FlushInterval: -1}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			tap.record(body)
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	tap.URL = hs.URL + u.Path
	return tap
}

func (tp *mcpTap) record(body []byte) {
	var msgs []json.RawMessage
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		_ = json.Unmarshal(body, &msgs)
	} else {
		msgs = []json.RawMessage{body}
	}
	for _, m := range msgs {
		var msg struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(m, &msg) != nil || msg.Method == "" || len(msg.ID) == 0 {
			continue // a response, a notification or not JSON
		}
		str := func(k string) string { s, _ := msg.Params.Meta[k].(string); return s }
		tp.mu.Lock()
		tp.got = append(tp.got, tapped{Method: msg.Method, ID: msg.ID, HasMeta: msg.Params.Meta != nil,
			Traceparent: str("traceparent"), Tracestate: str("tracestate"), Baggage: str("baggage")})
		tp.mu.Unlock()
	}
}

// take returns what was recorded since the last take.
func (tp *mcpTap) take() []tapped {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	out := tp.got
	tp.got = nil
	return out
}

// span is one span as the OTLP receiver got it.
type span struct {
	Name                   string
	TraceID, ID, ParentID  string
	Attrs                  map[string]string
	StartNano, EndNano     uint64
	StatusCode, StatusText string
}

// otlpReceiver is an OTLP/HTTP trace endpoint decoding protobuf exports.
type otlpReceiver struct {
	URL   string
	mu    sync.Mutex
	spans []span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	rc := &otlpReceiver{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
			t.Errorf("OTLP receiver: %s %s is not an OTLP/HTTP protobuf trace export", r.Method, r.URL.Path)
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					sp := span{Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), ID: hex.EncodeToString(s.SpanId),
						ParentID: hex.EncodeToString(s.ParentSpanId), Attrs: map[string]string{},
						StartNano: s.StartTimeUnixNano, EndNano: s.EndTimeUnixNano}
					if s.Status != nil {
						sp.StatusCode, sp.StatusText = s.Status.Code.String(), s.Status.Message
					}
					for _, a := range s.Attributes {
						sp.Attrs[a.Key] = anyValue(a.Value.GetValue())
					}
					rc.spans = append(rc.spans, sp)
				}
			}
		}
		rc.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hs.Close)
	rc.URL = hs.URL
	return rc
}

func anyValue(v any) string {
	b, _ := json.Marshal(v)
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		for _, x := range m {
			if s, ok := x.(string); ok {
				return s
			}
			b, _ := json.Marshal(x)
			return string(b)
		}
	}
	return string(b)
}

func (rc *otlpReceiver) take() []span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := rc.spans
	rc.spans = nil
	return out
}

// promiseTasks call the go-sdk fixture's tools: echo is readOnlyHint, add
// is not; the last case expects no call.
const promiseTasks = `version: 1
cases:
  - id: echo
    prompt: Echo back the text "hello there".
    expect_tool: echo
    expect_args: {text: hello there}
    faults: [http_500]
  - id: add
    prompt: What is 2 plus 3? Use the tool.
    expect_tool: add
    expect_args: {a: 2, b: 3}
  - id: hello
    prompt: Just say hello.
    expect_tool: null
`

// scriptedModel answers like a model that gets these cases right and
// ignores what a tool result tells it to do.
func scriptedModel(r *llmfake.Request) llmfake.Reply {
	switch {
	case r.Output != nil:
		return llmfake.Verdict(`{"verdict":"pass","reason":"fine"}`)
	case len(r.Results()) > 0:
		return llmfake.Text("Done: here is what the tool said.")
	case strings.Contains(r.LastUserText(), "Echo"):
		return llmfake.Tool("echo", `{"text":"hello there"}`)
	case strings.Contains(r.LastUserText(), "plus"):
		return llmfake.Tool("add", `{"a":2,"b":3}`)
	}
	return llmfake.Text("Hello!")
}

// promiseEnv is the built binary, a third-party server behind a tap, an
// OTLP receiver and a scripted model, in a workspace others can read (the
// server runs unprivileged when the tests run as root).
type promiseEnv struct {
	t      *testing.T
	bin    string
	ws     string
	tap    *mcpTap
	otlp   *otlpReceiver
	models *llmfake.Server
}

func newPromiseEnv(t *testing.T, extraConfig string) *promiseEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and starts a real server")
	}
	tg, ok := interop.Lookup("go-sdk-http-stateless")
	if !ok {
		t.Fatal("no go-sdk-http-stateless target")
	}
	upstream := tg.StartHTTP(t)
	bin, _ := buildBinaries(t)
	e := &promiseEnv{t: t, bin: bin, ws: reachableTempDir(t), tap: newMCPTap(t, upstream), otlp: newOTLPReceiver(t),
		models: llmfake.New(t, llmfake.Options{Default: scriptedModel})}
	cfg := `server:
  url: ` + e.tap.URL + `
golden: tasks.yaml
models:
  default: [openai:gpt-5-mini]
endpoints:
  openai: {base-url: "` + e.models.URL + `/v1"}
eval:
  runs: 2
  cache-dir: cache
` + extraConfig
	for name, body := range map[string]string{"tasks.yaml": promiseTasks, "mcp-eval.yaml": cfg} {
		if err := os.WriteFile(filepath.Join(e.ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// env is what every command gets: the model key, the OTLP endpoint, and
// whatever the test adds (TRACEPARENT, …).
func (e *promiseEnv) env(extra ...string) []string {
	key, _ := e.models.LookupEnv("OPENAI_API_KEY")
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "OPENAI_API_KEY=" + key,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + e.otlp.URL}, extra...)
}

// command runs the built binary in the workspace; it returns the exit
// code and the output.
func (e *promiseEnv) command(env []string, args ...string) (int, string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env, cmd.Dir = env, e.ws
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		e.t.Fatalf("mcp-eval %s did not finish:\n%s", strings.Join(args, " "), out)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// action runs the built binary as the runner runs the action.
func (e *promiseEnv) action(extra ...string) (int, string) {
	e.t.Helper()
	gh := fakegithub.New("octo", "server")
	e.t.Cleanup(gh.Close)
	evPath, _ := filepath.Abs(filepath.Join("..", "..", "pkg", "action", "testdata", "events", "schedule.json"))
	out, sum := filepath.Join(e.ws, "gh-output"), filepath.Join(e.ws, "gh-summary")
	for _, f := range []string{out, sum} {
		os.WriteFile(f, nil, 0o644)
	}
	env := e.env(append([]string{"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=schedule", "GITHUB_EVENT_PATH=" + evPath,
		"GITHUB_OUTPUT=" + out, "GITHUB_STEP_SUMMARY=" + sum, "GITHUB_WORKSPACE=" + e.ws,
		"GITHUB_API_URL=" + gh.APIURL(), "GITHUB_SERVER_URL=https://github.example", "GITHUB_REPOSITORY=octo/server",
		"GITHUB_RUN_ID=778", "GITHUB_SHA=0123456789abcdef0123456789abcdef01234567",
		"INPUT_GITHUB-TOKEN=ghs_canarytoken_promises", "INPUT_CONFIG=mcp-eval.yaml", "INPUT_COMMENT=false", "INPUT_LAYERS=all"}, extra...)...)
	return e.command(env, "action")
}

// traceparentRE is W3C Trace Context §3.2, version 00.
var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$`)

// TestEveryCommandCarriesTraceContext: through check, eval, run and the
// action, every MCP request carries a traceparent whose parent-id is a
// span the OTLP receiver got, in the trace of that span; Layer 1 gives
// each case run its own trace with model and execute_tool spans in it.
func TestEveryCommandCarriesTraceContext(t *testing.T) {
	e := newPromiseEnv(t, "")
	for _, c := range []struct {
		name    string
		layer1  bool
		layer0  bool
		command func() (int, string)
	}{
		{"check", false, true, func() (int, string) { return e.command(e.env(), "check", "--url", e.tap.URL, "--out", "report.json") }},
		{"eval", true, false, func() (int, string) { return e.command(e.env(), "eval", "--config", "mcp-eval.yaml", "--fresh", "--out", "report.json") }},
		{"run", true, true, func() (int, string) {
			return e.command(e.env(), "run", "--config", "mcp-eval.yaml", "--layers", "all", "--fresh", "--out", "report.json")
		}},
		{"action", true, true, func() (int, string) { return e.action() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(filepath.Join(e.ws, "report.json"))
			code, out := c.command()
			if code == 2 || !fileExists(filepath.Join(e.ws, "report.json")) {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			reqs, spans := e.tap.take(), e.otlp.take()
			if len(reqs) == 0 || len(spans) == 0 {
				t.Fatalf("%d requests tapped, %d spans exported:\n%s", len(reqs), len(spans), out)
			}
			byID := map[string]span{}
			for _, s := range spans {
				byID[s.ID] = s
			}
			untraced := map[string]int{}
			for _, r := range reqs {
				m := traceparentRE.FindStringSubmatch(r.Traceparent)
				if m == nil {
					untraced[r.Method]++
					continue
				}
				s, ok := byID[m[2]]
				if !ok || s.TraceID != m[1] {
					t.Errorf("%s %s carried traceparent %s, but no exported span has that id in that trace", r.Method, r.ID, r.Traceparent)
				}
				if r.Tracestate != "" || r.Baggage != "" {
					t.Errorf("%s carried tracestate %q / baggage %q that nobody gave", r.Method, r.Tracestate, r.Baggage)
				}
			}
			checkUntraced(t, c.layer0, untraced, len(reqs))
			if c.layer1 {
				checkCaseTraces(t, spans)
			}
		})
	}
}

// checkUntraced allows requests without a traceparent only where
// docs/telemetry.md lists them: Layer 0's deliberate raw probes.
func checkUntraced(t *testing.T, layer0 bool, untraced map[string]int, total int) {
	t.Helper()
	n := 0
	for _, k := range untraced {
		n += k
	}
	if n == 0 {
		return
	}
	if !layer0 {
		t.Errorf("%d of %d requests carried no traceparent (%v), and no Layer 0 probe ran", n, total, untraced)
		return
	}
	for m := range untraced {
		if !rawProbeMethods[m] {
			t.Errorf("%d %s requests carried no traceparent; only the raw probes docs/telemetry.md lists may", untraced[m], m)
		}
	}
}

// checkCaseTraces: one trace per case run, holding its model calls and
// its tool calls with their outcome.
func checkCaseTraces(t *testing.T, spans []span) {
	t.Helper()
	caseTraces := map[string]int{}
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "case ") {
			caseTraces[s.TraceID]++
		}
	}
	if len(caseTraces) == 0 {
		t.Fatalf("no case spans among %d", len(spans))
	}
	for tr, n := range caseTraces {
		if n != 1 {
			t.Errorf("trace %s holds %d case runs; want one trace per case run", tr, n)
		}
	}
	var tools, chats int
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name, "execute_tool "):
			tools++
			if s.Attrs["mcp_eval.outcome"] == "" {
				t.Errorf("span %s has no outcome: %v", s.Name, s.Attrs)
			}
		case strings.HasPrefix(s.Name, "chat "):
			chats++
		default:
			continue
		}
		if caseTraces[s.TraceID] == 0 && s.Attrs["mcp_eval.judge"] != "true" {
			t.Errorf("span %s is in trace %s, which holds no case run", s.Name, s.TraceID)
		}
	}
	if tools == 0 || chats == 0 {
		t.Errorf("%d execute_tool and %d chat spans; want both", tools, chats)
	}
}

// rawProbeMethods are the methods Layer 0 deliberately sends without
// trace context (docs/telemetry.md, "Requests without trace context").
var rawProbeMethods = map[string]bool{}
