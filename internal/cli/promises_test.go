package cli

import (
	"context"
	"fmt"
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
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
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

// TestActionBudgetCapsEveryLayer: the action, on a schedule, with every
// layer and a token cap: the scripted model receives no more calls than
// the cap allows plus those in flight, over Layers 1 and 2 and the judge;
// what the cap stopped is inconclusive or not measured, with the reason;
// the spend line counts every layer.
func TestActionBudgetCapsEveryLayer(t *testing.T) {
	e := newPromiseEnv(t, "")
	e.writeConfig("server:\n  url: " + e.url + "\n")
	cfg, _ := os.ReadFile(filepath.Join(e.ws, "mcp-eval.yaml"))
	const concurrency = 2
	cfg = append(cfg, []byte("  concurrency: 2\n  budget: {max-tokens: 500}\n")...)
	if err := os.WriteFile(filepath.Join(e.ws, "mcp-eval.yaml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	_, out := e.action("schedule")
	rep := e.report()
	reqs := e.models.Requests()
	perCall := llmfake.DefaultInputTokens + llmfake.DefaultOutputTokens
	capAt := (500 + perCall - 1) / perCall
	if len(reqs) > capAt+concurrency {
		t.Errorf("the model received %d calls; the cap was crossed at call %d, so at most %d may start", len(reqs), capAt, capAt+concurrency)
	}
	s := rep.Spend
	if s == nil || !s.Reached || s.Used.Calls != len(reqs) {
		t.Fatalf("spend %+v: want the cap reached and every one of the %d calls counted\n%s", s, len(reqs), out)
	}
	if !strings.Contains(out, "budget reached") || !strings.Contains(out, fmt.Sprintf("spend: %d provider calls", len(reqs))) {
		t.Errorf("the log does not show the spend and the cap:\n%s", out)
	}
	inconclusive := 0
	for _, inc := range rep.Behavior.Inconclusive {
		inconclusive += inc.Runs
		if !strings.Contains(inc.Reason, "budget") {
			t.Errorf("Layer 1 case %s is inconclusive for %q, want the budget named", inc.Case, inc.Reason)
		}
	}
	stopped := 0
	for _, r := range rep.Resilience.Runs {
		if !r.Counted && strings.Contains(r.Reason, "budget reached") {
			stopped++
		}
	}
	if inconclusive == 0 || stopped == 0 {
		t.Errorf("%d Layer 1 runs inconclusive and %d Layer 2 runs stopped by the budget; want both", inconclusive, stopped)
	}
	if len(rep.Resilience.Unmeasured) == 0 {
		t.Errorf("Layer 2 does not say what it could not measure")
	}
}

// TestActionNeverReplaysAChangedServer: a pull request labelled run-evals
// reuses stored runs, but only while the server answers their calls the
// same way; a build whose echo answers differently, with the same tool
// list, is run anew, Layer 2 included.
func TestActionNeverReplaysAChangedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	_, cmd, _ := realServer(t, "go-sdk-stdio")
	// The server runs unprivileged when the test runs as root: it must
	// be reachable by others.
	dir := reachableTempDir(t)
	srv := filepath.Join(dir, "gosdk-srv")
	argv, err := pipeline.SplitCommand(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(argv[0]); err != nil || os.WriteFile(srv, b, 0o755) != nil {
		t.Fatalf("copying %s: %v", argv[0], err)
	}
	bin, _ := buildBinaries(t)
	e := &promiseEnv{t: t, bin: bin, ws: reachableTempDir(t), sink: newTraceSink(t), models: llmfake.New(t, llmfake.Options{Default: scriptedModel})}
	// Only echo is readOnlyHint, so only runs that call nothing else may
	// be reused (add's never are: TestEvalNeverReusesACallToAToolWithoutReadOnlyHint).
	server := func(flags string) {
		e.writeConfig("server:\n  command: " + srv + flags + "\n")
		tasks := strings.Split(promiseTasks, "  - id: add")[0] + "  - id: hello\n    prompt: Just say hello.\n    expect_tool: null\n"
		if err := os.WriteFile(filepath.Join(e.ws, "tasks.yaml"), []byte(tasks), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	server("")
	e.action("pull_request")
	first := len(e.models.Requests())
	if first == 0 {
		t.Fatal("the first run called no model")
	}
	e.action("pull_request")
	if n := len(e.models.Requests()) - first; n != 0 {
		t.Errorf("an unchanged server: %d model calls, want 0 (every run reused)", n)
	}
	again := e.report()
	if again.Spend == nil || again.Spend.FreshRuns != 0 || again.Resilience == nil || again.Resilience.FreshRuns != 0 {
		t.Errorf("an unchanged server: spend %+v, Layer 2 fresh runs %d; want nothing made anew\n%s", again.Spend, again.Resilience.FreshRuns, strings.Join(again.Gate.Notes, "\n"))
	}

	server(" -echo-prefix CHANGED-")
	before := len(e.models.Requests())
	_, out := e.action("pull_request")
	changed := e.report()
	if len(e.models.Requests()) == before || changed.Spend.StaleRuns == 0 || changed.Resilience.StaleRuns == 0 {
		t.Errorf("a changed echo: %d model calls, %d Layer 1 and %d Layer 2 runs made anew because the server changed; want some of each\n%s",
			len(e.models.Requests())-before, changed.Spend.StaleRuns, changed.Resilience.StaleRuns, out)
	}
	for _, r := range changed.Behavior.Results {
		for _, run := range r.Runs {
			for _, turn := range run.Trajectory.Turns {
				for _, call := range turn.Calls {
					if call.Name == "echo" && !strings.HasPrefix(call.Result, "CHANGED-") {
						t.Errorf("a Layer 1 run replayed the old echo result %q", call.Result)
					}
				}
			}
		}
	}
}
