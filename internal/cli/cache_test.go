package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The cache against the go-sdk fixture (interop/bin/gosdk-srv), whose
// flags change what echo answers and never its tool list: the key is the
// same, and only asking the server again can tell the runs apart.

const echoTasks = `version: 1
cases:
  - id: echo
    prompt: Echo the word kestrel.
    expect_tool: echo
    expect_args: {text: kestrel}
    rubric: The answer repeats exactly what the tool returned, and that is the word kestrel alone.
`

const addTasks = `version: 1
cases:
  - id: add
    prompt: Add 2 and 3.
    expect_tool: add
    expect_args: {a: 2, b: 3}
`

// echoing answers with what the tool said, and judges like a grader who
// wants the tool's plain answer: a changed server changes the verdict.
func echoing(r *llmfake.Request) llmfake.Reply {
	switch {
	case r.Output != nil:
		if strings.Contains(r.LastUserText(), "CHANGED") {
			return llmfake.Verdict(`{"verdict":"fail","reason":"the tool's answer is not the word alone"}`)
		}
		return llmfake.Verdict(`{"verdict":"pass","reason":"it repeated kestrel"}`)
	case len(r.Results()) > 0:
		return llmfake.Text("The tool said: " + r.Results()[0].Content)
	case strings.Contains(r.LastUserText(), "Echo"):
		return llmfake.Tool("echo", `{"text":"kestrel"}`)
	case strings.Contains(r.LastUserText(), "Add"):
		return llmfake.Tool("add", `{"a":2,"b":3}`)
	case strings.Contains(r.LastUserText(), "Fail"):
		return llmfake.Tool("fail", `{}`)
	}
	return llmfake.Text("Hello!")
}

type goSDKEnv struct {
	t      *testing.T
	dir    string
	cmd    string // the fixture's command line, quoted for --cmd
	cwd    string
	models *llmfake.Server
}

func newGoSDKEnv(t *testing.T, tasks string) *goSDKEnv {
	t.Helper()
	_, cmd, cwd := realServer(t, "go-sdk-stdio")
	e := &goSDKEnv{t: t, dir: t.TempDir(), cmd: cmd, cwd: cwd, models: llmfake.New(t, llmfake.Options{Default: echoing})}
	cfg := `golden: tasks.yaml
models:
  default: [openai:gpt-5-mini]
endpoints:
  openai: {base-url: "` + e.models.URL + `/v1"}
  anthropic: {base-url: "` + e.models.URL + `"}
eval:
  judge: anthropic:claude-haiku-4-5
  runs: 2
  cache-dir: cache
`
	for name, body := range map[string]string{"tasks.yaml": tasks, "mcp-eval.yaml": cfg} {
		if err := os.WriteFile(filepath.Join(e.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// eval runs mcp-eval eval against the fixture started with flags and
// returns the report, stdout and the provider requests it made.
func (e *goSDKEnv) eval(name string, flags ...string) (*report.Report, string, int) {
	e.t.Helper()
	return e.invoke([]string{"eval"}, name, flags...)
}

// invoke runs the command line cmdline against the fixture.
func (e *goSDKEnv) invoke(cmdline []string, name string, flags ...string) (*report.Report, string, int) {
	e.t.Helper()
	before := len(e.models.Requests())
	cmd := e.cmd
	for _, f := range flags {
		cmd += " " + quoteArgv([]string{f})
	}
	env := &evalEnv{t: e.t, dir: e.dir, models: e.models}
	out := filepath.Join(e.dir, name+".json")
	// The fixture lives in the checkout, which others may not enter (a
	// clone in a 0700 directory, as root): it runs as the tests' user.
	// Who a server runs as is TestEveryCommandStartsTheServerAsTheSameUser's.
	code, stdout, stderr := env.run(append(cmdline, "--config", filepath.Join(e.dir, "mcp-eval.yaml"), "--cmd", cmd, "--cwd", e.cwd, "--out", out, "--concurrency", "1",
		"--server-user", "current")...)
	if code == ExitError {
		e.t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", name, code, stdout, stderr)
	}
	rep, err := report.Load(out)
	if err != nil {
		e.t.Fatalf("%s: %v\n%s", name, err, stdout)
	}
	return rep, stdout, len(e.models.Requests()) - before
}

func toolResults(rep *report.Report) []string {
	var out []string
	for _, r := range rep.Behavior.Results {
		for _, run := range r.Runs {
			for _, turn := range run.Trajectory.Turns {
				for _, c := range turn.Calls {
					out = append(out, c.Result)
				}
			}
		}
	}
	return out
}

// A run replayed from the cache keeps its tool calls' per-tool rows,
// counted as reused and not timed: a cached run's tools had no row at
// all, so a PR whose runs were all cached showed only the stubbed tools.
func TestRunCachedRunsKeepTheirToolRows(t *testing.T) {
	e := newGoSDKEnv(t, echoTasks)
	run := []string{"run", "--layers", "behavior,telemetry"}
	first, _, made := e.invoke(run, "first")
	same, out, again := e.invoke(run, "same")
	if made == 0 || again != 0 || same.Spend.ReusedRuns != 2 {
		t.Fatalf("%d then %d provider requests, spend %+v; want the second run all reused\n%s", made, again, same.Spend, out)
	}
	if first.Telemetry == nil || same.Telemetry == nil || len(first.Telemetry.Tools) == 0 || len(same.Telemetry.Tools) != len(first.Telemetry.Tools) {
		t.Fatalf("per-tool rows: first %+v, unchanged build %+v", first.Telemetry, same.Telemetry)
	}
	for i, now := range same.Telemetry.Tools {
		was := first.Telemetry.Tools[i]
		if was.Reused != 0 || len(was.SamplesMs) == 0 {
			t.Errorf("%s × %s, first run: %+v; want its calls timed, none reused", was.Tool, was.Model, was)
		}
		if now.Tool != was.Tool || now.Calls != was.Calls || now.Errors != was.Errors || now.Reused != now.Calls || now.Untimed != 0 || len(now.SamplesMs) != 0 || now.P50Ms != nil {
			t.Errorf("%s × %s: first %d calls, unchanged build %+v; want the same calls, all reused, none timed", now.Tool, now.Model, was.Calls, now)
		}
		// Nothing was spent on them now: no cost per call to show.
		if now.CostPerCallUSD != nil || now.TokensPerCall != 0 {
			t.Errorf("%s × %s: %v tokens and %v per call for calls all replayed; want none", now.Tool, now.Model, now.TokensPerCall, now.CostPerCallUSD)
		}
	}
}

func TestEvalCacheNeverReplaysAServerThatAnswersDifferently(t *testing.T) {
	e := newGoSDKEnv(t, echoTasks)
	first, _, made := e.eval("first")
	// 2 runs × (the call, the answer) and one judge call: the second
	// run's trajectory is the first's, so its verdict is reused.
	if made != 5 || first.Behavior.Results[0].Passed.K != 2 {
		t.Fatalf("first run: %d provider requests, passed %+v; want 5 and 2/2", made, first.Behavior.Results[0].Passed)
	}

	// The same build again: echo is asked once, answers the same, and
	// everything is reused.
	same, out, made := e.eval("same")
	if made != 0 || same.Spend.ReusedRuns != 2 || same.Spend.StaleRuns != 0 {
		t.Fatalf("unchanged build: %d provider requests, spend %+v; want 0 and 2 reused\n%s", made, same.Spend, out)
	}

	// A new build whose echo answers differently, with the same tool
	// list: the same keys, but every run is made anew, and judged on
	// what the server answers now.
	changed, out, made := e.eval("changed", "-echo-prefix", "CHANGED: ")
	if made != 5 {
		t.Errorf("changed build: %d provider requests, want 5 (every run and the judge anew)\n%s", made, out)
	}
	if s := changed.Spend; s.ReusedRuns != 0 || s.FreshRuns != 2 || s.StaleRuns != 2 {
		t.Errorf("changed build: spend %+v; want 0 reused, 2 fresh, 2 stale", s)
	}
	// The server is asked before the preview, so the preview (and a money
	// cap checked against it) counts the runs it refuses.
	if s := changed.Spend; !strings.Contains(out, "(0 from the cache)") || s.Preview.Calls < s.Used.Calls {
		t.Errorf("changed build: the preview counted refused runs as reused (preview %d calls, %d made):\n%s", s.Preview.Calls, s.Used.Calls, out)
	}
	for _, res := range toolResults(changed) {
		if res != "CHANGED: kestrel" {
			t.Errorf("a run replayed the old tool result %q", res)
		}
	}
	if p := changed.Behavior.Results[0].Passed; p.K != 0 || p.N != 2 {
		t.Errorf("changed build: passed %+v, want 0/2 (the judge fails the new answer)", p)
	}
	if !strings.Contains(out, "0 runs reused, 2 made now (2 because the server answers differently now)") {
		t.Errorf("the spend line does not say why the runs were made anew:\n%s", out)
	}
	if !strings.Contains(strings.Join(changed.Gate.Notes, "\n"), "2 stored runs were made anew because the server answers their tool calls differently now") {
		t.Errorf("gate notes %q do not count the stale runs", changed.Gate.Notes)
	}

	// The changed build again: its runs are now the stored ones.
	again, _, made := e.eval("again", "-echo-prefix", "CHANGED: ")
	if made != 0 || again.Spend.ReusedRuns != 2 {
		t.Errorf("changed build again: %d provider requests, spend %+v; want 0 and 2 reused", made, again.Spend)
	}
}

func TestEvalNeverReusesACallToAToolWithoutReadOnlyHint(t *testing.T) {
	e := newGoSDKEnv(t, addTasks)
	_, _, made := e.eval("first")
	if made != 4 {
		t.Fatalf("first run: %d provider requests, want 4", made)
	}
	// add is not annotated readOnlyHint, so it cannot be asked again to
	// check the stored runs: they are made anew, and are not "stale".
	second, out, made := e.eval("second")
	if s := second.Spend; made != 4 || s.ReusedRuns != 0 || s.FreshRuns != 2 || s.StaleRuns != 0 {
		t.Errorf("second run: %d provider requests, spend %+v; want 4, nothing reused, nothing stale\n%s", made, s, out)
	}
}

func TestEvalReportsAToolThatAnswersTheSameCallDifferently(t *testing.T) {
	e := newGoSDKEnv(t, echoTasks)
	e.eval("first", "-echo-nonce")
	second, _, made := e.eval("second", "-echo-nonce")
	// Both runs anew (2 × 2), each judged: their results differ.
	if s := second.Spend; made != 6 || s.ReusedRuns != 0 || s.StaleRuns != 0 {
		t.Errorf("second run: %d provider requests, spend %+v; want 6, nothing reused, nothing counted stale", made, s)
	}
	if want := "Layer 1: tool echo answered the same call differently; runs that call it are not reused"; !strings.Contains(strings.Join(second.Gate.Notes, "\n"), want) {
		t.Errorf("gate notes %q lack %q", second.Gate.Notes, want)
	}
}

// Layer 2 keeps its runs in the same cache: an unchanged re-run makes no
// model call, and says so.
func TestRunLayer2ReusesUnchangedRuns(t *testing.T) {
	e := newEvalEnv(t, "")
	args := func(name string) []string {
		return []string{"run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "resilience", "--out", e.path(name)}
	}
	code, out, errOut := e.run(args("first.json")...)
	if code == ExitError {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	made := len(e.models.Requests())
	first, _ := report.Load(e.path("first.json"))
	if made == 0 || first.Resilience == nil || first.Resilience.FreshRuns == 0 || first.Resilience.ReusedRuns != 0 {
		t.Fatalf("first run: %d provider requests, resilience %+v", made, first.Resilience)
	}
	n := first.Resilience.FreshRuns

	code, out, _ = e.run(args("second.json")...)
	second, _ := report.Load(e.path("second.json"))
	if d := len(e.models.Requests()) - made; code == ExitError || d != 0 {
		t.Fatalf("unchanged re-run: exit %d, %d provider requests; want 0\n%s", code, d, out)
	}
	if r := second.Resilience; r.ReusedRuns != n || r.FreshRuns != 0 {
		t.Errorf("re-run: %d reused, %d fresh; want %d and 0", r.ReusedRuns, r.FreshRuns, n)
	}
	// Each run says it was reused, and since when, as Layer 1's do.
	for _, r := range first.Resilience.Runs {
		if r.CachedAt != nil {
			t.Fatalf("first run: %s %s × %s marked reused", r.Kind, r.Subject, r.Model)
		}
	}
	for _, r := range second.Resilience.Runs {
		if r.CachedAt == nil || r.CachedAt.After(second.Run.StartedAt) || r.AgeSeconds < 0 {
			t.Fatalf("re-run: %s %s × %s run %d: cachedAt %v, age %d s", r.Kind, r.Subject, r.Model, r.Run, r.CachedAt, r.AgeSeconds)
		}
	}
	if want := "Layer 2: " + strconv.Itoa(n) + " of " + strconv.Itoa(n) + " runs reused from the cache"; !strings.Contains(out, want) || !strings.Contains(out, "0 model calls made now") {
		t.Errorf("the output does not say Layer 2 was reused (%q):\n%s", want, out)
	}
	// The verdicts are the stored ones.
	if len(second.Resilience.Attacks) != len(first.Resilience.Attacks) {
		t.Fatalf("attacks %d then %d", len(first.Resilience.Attacks), len(second.Resilience.Attacks))
	}
	for i, a := range first.Resilience.Attacks {
		b := second.Resilience.Attacks[i]
		if a.Attack != b.Attack || a.Scores[0].K != b.Scores[0].K || a.Scores[0].N != b.Scores[0].N || a.Scores[1].K != b.Scores[1].K {
			t.Errorf("attack %s: %+v then %+v", a.Attack, a.Scores, b.Scores)
		}
	}

	// --fresh makes every Layer 2 run anew.
	before := len(e.models.Requests())
	e.run(append(args("third.json"), "--fresh")...)
	if len(e.models.Requests()) == before {
		t.Errorf("--fresh reused Layer 2 runs")
	}
}

// Layer 2 asks the server again too: the calls its faults and payloads
// let through (the real call behind a fault included) must answer as
// stored, or the runs are made anew.
func TestRunLayer2NeverReplaysAServerThatAnswersDifferently(t *testing.T) {
	e := newGoSDKEnv(t, strings.Replace(echoTasks, "    rubric:", "    faults: [timeout]\n    rubric:", 1))
	layer2 := []string{"run", "--layers", "resilience"}
	first, _, made := e.invoke(layer2, "first")
	r := first.Resilience
	if r == nil || r.FreshRuns == 0 || made == 0 {
		t.Fatalf("first run: %d provider requests, resilience %+v", made, r)
	}
	same, out, made := e.invoke(layer2, "same")
	if made != 0 || same.Resilience.ReusedRuns != r.FreshRuns {
		t.Errorf("unchanged build: %d provider requests, %d of %d runs reused; want 0 and all\n%s", made, same.Resilience.ReusedRuns, r.FreshRuns, out)
	}
	changed, out, made := e.invoke(layer2, "changed", "-echo-prefix", "CHANGED: ")
	if c := changed.Resilience; made == 0 || c.ReusedRuns != 0 || c.StaleRuns != r.FreshRuns {
		t.Errorf("changed build: %d provider requests, %d reused, %d stale of %d; want some, 0 and all\n%s", made, c.ReusedRuns, c.StaleRuns, r.FreshRuns, out)
	}
}

// A tool that answers every call with an error result: its case passes on
// the choice of tool and arguments, and without a rubric or a baseline
// nothing else said the tool did nothing (a user's trial). The gate warns,
// once, naming the tool and what it answered.
func TestEvalWarnsOfAToolThatOnlyErrs(t *testing.T) {
	e := newGoSDKEnv(t, `version: 1
cases:
  - id: fail
    prompt: Fail on purpose.
    expect_tool: fail
  - id: add
    prompt: Add 2 and 3.
    expect_tool: add
    expect_args: {a: 2, b: 3}
`)
	rep, out, _ := e.invoke([]string{"eval", "--runs", "3"}, "first")
	var warned []report.GateItem
	for _, it := range rep.Gate.Items {
		if it.Kind == report.KindTool && it.Layer == 1 {
			warned = append(warned, it)
		}
	}
	if len(warned) != 1 || warned[0].Subject != "fail" || warned[0].Status != report.ItemWarn ||
		!strings.Contains(warned[0].Reason, "all 3 calls of fail in Layer 1") || !strings.Contains(warned[0].Reason, `"boom"`) {
		t.Fatalf("Layer 1 tool items %+v, want one warning for fail naming its answer\n%s", warned, out)
	}
	if rep.Gate.Verdict != report.GatePass {
		t.Errorf("verdict %s: a warning must not fail the build", rep.Gate.Verdict)
	}
}

// A stdio server that exits on one tool's call is started again for the
// next call: the runs that called it err, naming the call, and the cases
// after it still run (a user's trial lost half its suite to one crash).
func TestEvalStartsAServerThatExitedAgain(t *testing.T) {
	e := newGoSDKEnv(t, `version: 1
cases:
  - id: add
    prompt: Add 2 and 3.
    expect_tool: add
    expect_args: {a: 2, b: 3}
  - id: echo
    prompt: Echo the word kestrel.
    expect_tool: echo
    expect_args: {text: kestrel}
`)
	env := &evalEnv{t: t, dir: e.dir, models: e.models}
	path := filepath.Join(e.dir, "crash.json")
	code, out, stderr := env.run("eval", "--config", filepath.Join(e.dir, "mcp-eval.yaml"), "--cmd", e.cmd+" -exit-on-call add", "--cwd", e.cwd,
		"--out", path, "--concurrency", "1", "--server-user", "current")
	if code != ExitError {
		t.Errorf("exit %d, want 2: runs lost with the server are not judged\n%s\n%s", code, out, stderr)
	}
	rep, err := report.Load(path)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	by := map[string]report.CaseResult{}
	for _, r := range rep.Behavior.Results {
		by[r.Case] = r
	}
	add, echo := by["add"], by["echo"]
	if echo.Passed.K != echo.Passed.N || echo.Passed.N == 0 {
		t.Errorf("echo after the crash: %d/%d passed, want every run (the server started again)\n%s", echo.Passed.K, echo.Passed.N, out)
	}
	for _, run := range add.Runs {
		if run.Outcome != report.RunError || len(run.Reasons) == 0 || !strings.Contains(run.Reasons[0], `while serving tools/call "add"`) {
			t.Errorf("add run %d: %s %q, want an error naming the call the server exited on", run.Run, run.Outcome, run.Reasons)
		}
	}
	if len(add.Runs) != 2 {
		t.Errorf("add ran %d times, want 2", len(add.Runs))
	}
}

// A case that expects a tool the server does not list fails every run,
// and its failing runs say why first (a user's trial read "expected
// list_loan first, called list_loans" and blamed the model).
func TestEvalSaysACaseExpectsAToolTheServerDoesNotList(t *testing.T) {
	e := newGoSDKEnv(t, `version: 1
cases:
  - id: add
    prompt: Add 2 and 3.
    expect_tool: ad
`)
	rep, out, _ := e.eval("typo")
	r := rep.Behavior.Results[0]
	if r.Passed.K != 0 || len(r.Runs) == 0 {
		t.Fatalf("the case passed %d/%d\n%s", r.Passed.K, r.Passed.N, out)
	}
	for _, run := range r.Runs {
		if len(run.Reasons) == 0 || !strings.HasPrefix(run.Reasons[0], `the case expects the tool "ad", which the server does not list (did you mean add?`) {
			t.Errorf("run %d reasons %q: want the unlisted tool first", run.Run, run.Reasons)
		}
	}
}
