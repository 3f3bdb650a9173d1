package cli

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The promises of issue 12, checked the way a user would see them:
// through every command, with the built binary, against a server nobody
// here wrote, behind a tap that reads every JSON-RPC request, with a local
// OTLP receiver and a scripted model that counts its calls.

// proxyTo is a reverse proxy to an MCP endpoint, streams included.
func proxyTo(t *testing.T, endpoint string) (http.Handler, string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: u.Scheme, Host: u.Host})
		r.Out.URL.Path = u.Path
	}, FlushInterval: -1, ErrorLog: log.New(io.Discard, "", 0)}, u.Path
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
	url    string // the tap in front of the server
	sink   *traceSink
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
	proxy, path := proxyTo(t, tg.StartHTTP(t))
	bin, _ := buildBinaries(t)
	e := &promiseEnv{t: t, bin: bin, ws: reachableTempDir(t), sink: newTraceSink(t), models: llmfake.New(t, llmfake.Options{Default: scriptedModel})}
	e.url = e.sink.serve(proxy) + path
	e.writeConfig("server:\n  url: " + e.url + "\n" + extraConfig)
	return e
}

// writeConfig writes the golden set and mcp-eval.yaml with server (the
// server: section and anything else).
func (e *promiseEnv) writeConfig(server string) {
	e.t.Helper()
	cfg := server + `
golden: tasks.yaml
models:
  default: [openai:gpt-5-mini]
endpoints:
  openai: {base-url: "` + e.models.URL + `/v1"}
eval:
  judge: openai:gpt-5-mini
  runs: 2
  cache-dir: cache
`
	for name, body := range map[string]string{"tasks.yaml": promiseTasks, "mcp-eval.yaml": cfg} {
		if err := os.WriteFile(filepath.Join(e.ws, name), []byte(body), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
}

// env is what every command gets: the model key, the OTLP endpoint, and
// whatever the test adds (TRACEPARENT, …).
func (e *promiseEnv) env(extra ...string) []string {
	key, _ := e.models.LookupEnv("OPENAI_API_KEY")
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "OPENAI_API_KEY=" + key,
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + e.sink.Collector}, extra...)
}

// command runs the built binary in the workspace, after forgetting what
// the tap and the receiver saw; it returns the exit code and the output.
func (e *promiseEnv) command(env []string, args ...string) (int, string) {
	e.t.Helper()
	e.sink.reset()
	os.Remove(filepath.Join(e.ws, "report.json"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env, cmd.Dir = env, e.ws
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		e.t.Fatalf("mcp-eval %s did not finish:\n%s", strings.Join(args, " "), out)
	}
	if cmd.ProcessState.ExitCode() == ExitError || strings.Contains(string(out), "OTLP export") {
		e.t.Fatalf("mcp-eval %s: exit %d\n%s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), out)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// action runs the built binary as the runner runs the action, on event
// (schedule: every model call anew; pull_request: a PR labelled
// run-evals, which reuses stored runs).
func (e *promiseEnv) action(event string, extra ...string) (int, string) {
	e.t.Helper()
	gh := fakegithub.New("octo", "server")
	e.t.Cleanup(gh.Close)
	file := map[string]string{"schedule": "schedule.json", "pull_request": "pull_request_labeled_run-evals.json"}[event]
	evPath, _ := filepath.Abs(filepath.Join("..", "..", "pkg", "action", "testdata", "events", file))
	out, sum := filepath.Join(e.ws, "gh-output"), filepath.Join(e.ws, "gh-summary")
	for _, f := range []string{out, sum} {
		os.WriteFile(f, nil, 0o644)
	}
	env := e.env(append([]string{"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=" + event, "GITHUB_EVENT_PATH=" + evPath,
		"GITHUB_OUTPUT=" + out, "GITHUB_STEP_SUMMARY=" + sum, "GITHUB_WORKSPACE=" + e.ws,
		"GITHUB_API_URL=" + gh.APIURL(), "GITHUB_SERVER_URL=https://github.example", "GITHUB_REPOSITORY=octo/server",
		"GITHUB_RUN_ID=778", "GITHUB_SHA=0123456789abcdef0123456789abcdef01234567",
		"INPUT_GITHUB-TOKEN=ghs_canarytoken_promises", "INPUT_CONFIG=mcp-eval.yaml", "INPUT_COMMENT=false", "INPUT_LAYERS=all"}, extra...)...)
	return e.command(env, "action")
}

// report reads the report the last command wrote.
func (e *promiseEnv) report() *report.Report {
	e.t.Helper()
	rep, err := report.Load(filepath.Join(e.ws, "report.json"))
	if err != nil {
		e.t.Fatal(err)
	}
	return rep
}

// commands are the entry points that talk to the server, as a user runs
// them; layer1 says whether models run.
func (e *promiseEnv) commands() []struct {
	name           string
	layer0, layer1 bool
	run            func(env ...string) (int, string)
} {
	return []struct {
		name           string
		layer0, layer1 bool
		run            func(env ...string) (int, string)
	}{
		{"check", true, false, func(env ...string) (int, string) {
			return e.command(e.env(env...), "check", "--url", e.url, "--out", "report.json")
		}},
		{"eval", false, true, func(env ...string) (int, string) {
			return e.command(e.env(env...), "eval", "--config", "mcp-eval.yaml", "--fresh", "--out", "report.json")
		}},
		{"run", true, true, func(env ...string) (int, string) {
			return e.command(e.env(env...), "run", "--config", "mcp-eval.yaml", "--layers", "all", "--fresh", "--out", "report.json")
		}},
		{"action", true, true, func(env ...string) (int, string) { return e.action("schedule", env...) }},
	}
}

// TestEveryCommandCarriesTraceContext: through check, eval, run and the
// action, every MCP request carries a traceparent whose parent-id is a
// span the OTLP receiver got, in the trace of that span; models give each
// case run its own trace, with its model calls and its execute_tool spans
// (with their outcome) in it.
func TestEveryCommandCarriesTraceContext(t *testing.T) {
	e := newPromiseEnv(t, "")
	for _, c := range e.commands() {
		t.Run(c.name, func(t *testing.T) {
			c.run()
			e.sink.checkWire(c.name, c.layer0, "", "")
			if len(e.sink.spansNamed("mcp-eval run")) != 1 {
				t.Errorf("%s exported %d run spans, want 1", c.name, len(e.sink.spansNamed("mcp-eval run")))
			}
			if c.layer1 {
				checkCaseTraces(t, e.sink)
			}
		})
	}
}

// TestInheritedTraceContextHoldsEverySpan: started inside a trace (a CI
// step with TRACEPARENT, TRACESTATE and BAGGAGE set), every command puts
// every span in that trace under the given parent, and every request
// carries the given tracestate and baggage as given.
func TestInheritedTraceContextHoldsEverySpan(t *testing.T) {
	e := newPromiseEnv(t, "")
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		parent  = "00f067aa0ba902b7"
		state   = "ci=step7,rojo=00f067aa0ba902b7"
		baggage = "build=1234,branch=main"
	)
	for _, c := range e.commands() {
		t.Run(c.name, func(t *testing.T) {
			c.run("TRACEPARENT=00-"+traceID+"-"+parent+"-01", "TRACESTATE="+state, "BAGGAGE="+baggage)
			traces := e.sink.checkWire(c.name, c.layer0, state, baggage)
			if len(traces) != 1 || !traces[traceID] {
				t.Errorf("requests carried traces %v, want only %s", traces, traceID)
			}
			e.sink.mu.Lock()
			defer e.sink.mu.Unlock()
			for _, s := range e.sink.spans {
				if s.trace != traceID {
					t.Errorf("span %s is in trace %s, not the inherited %s", s.name, s.trace, traceID)
				}
				if s.name == "mcp-eval run" && s.parent != parent {
					t.Errorf("the run span's parent is %q, want the inherited %s", s.parent, parent)
				}
			}
		})
	}
}

// TestInvalidInheritedTraceContextIsIgnored: a malformed TRACEPARENT,
// TRACESTATE or BAGGAGE is named in a warning, its value never printed,
// and nothing of it reaches the server.
func TestInvalidInheritedTraceContextIsIgnored(t *testing.T) {
	e := newPromiseEnv(t, "")
	const (
		badState = "not a valid tracestate !!secret-ish"
		traceID  = "4bf92f3577b34da6a3ce929d0e0e4736"
	)
	for _, c := range []struct {
		env   []string
		warn  []string
		trace string // the trace requests must carry, "" for their own
	}{
		{[]string{"TRACEPARENT=00-zz-yy-01", "TRACESTATE=" + badState}, []string{"TRACEPARENT", "TRACESTATE"}, ""},
		{[]string{"TRACEPARENT=00-" + traceID + "-00f067aa0ba902b7-01", "TRACESTATE=" + badState, "BAGGAGE=secret-ish"},
			[]string{"TRACESTATE", "BAGGAGE"}, traceID},
	} {
		_, out := e.command(e.env(c.env...), "check", "--url", e.url, "--out", "report.json")
		for _, w := range c.warn {
			if !strings.Contains(out, "warning: "+w) && !strings.Contains(out, w+" and") {
				t.Errorf("%v: no warning names %s:\n%s", c.env, w, out)
			}
		}
		if strings.Contains(out, "secret-ish") {
			t.Errorf("%v: a value was printed:\n%s", c.env, out)
		}
		traces := e.sink.checkWire("check", true, "", "")
		if c.trace != "" && (len(traces) != 1 || !traces[c.trace]) {
			t.Errorf("%v: requests carried traces %v, want only the inherited %s", c.env, traces, c.trace)
		}
		if c.trace == "" && traces[traceID] {
			t.Errorf("%v: a malformed TRACEPARENT was used", c.env)
		}
	}
}

// checkCaseTraces: one trace per case run, holding its model calls and its
// tool calls with their outcome.
func checkCaseTraces(t *testing.T, sink *traceSink) {
	t.Helper()
	caseTraces := map[string]int{}
	for _, s := range sink.spansNamed("case ") {
		caseTraces[s.trace]++
	}
	if len(caseTraces) == 0 {
		t.Fatalf("no case spans")
	}
	for tr, n := range caseTraces {
		if n != 1 {
			t.Errorf("trace %s holds %d case runs; want one trace per case run", tr, n)
		}
	}
	tools, chats := sink.spansNamed("execute_tool "), sink.spansNamed("chat ")
	if len(tools) == 0 || len(chats) == 0 {
		t.Fatalf("%d execute_tool and %d chat spans; want both", len(tools), len(chats))
	}
	for _, s := range append(tools, chats...) {
		if caseTraces[s.trace] == 0 {
			t.Errorf("span %s is in trace %s, which holds no case run", s.name, s.trace)
		}
	}
	for _, s := range tools {
		if s.attrs["mcp_eval.outcome"] == "" {
			t.Errorf("span %s has no outcome: %v", s.name, s.attrs)
		}
	}
}
