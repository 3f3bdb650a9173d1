package cli

import (
	"bytes"
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// evalEnv is a reference server over HTTP, a fake OpenAI + Anthropic that
// behaves like a sensible model, and a workspace with a golden set and a
// config pointing at both.
type evalEnv struct {
	t      *testing.T
	dir    string
	url    string
	models *llmfake.Server
	server *httptest.Server // the reference server's
}

const evalTasks = `version: 1
cases:
  - id: weather
    prompt: What's the weather in Seattle, WA?
    expect_tool: get_weather
    expect_args: {location: "Seattle, WA"}
    arg_match: {location: semantic}
    rubric: The answer gives the weather in Seattle.
  - id: invoices
    prompt: List the open invoices of customer C1234.
    expect_tool: search_invoices
    expect_args: {customer_id: C1234, status: open}
  - id: hello
    prompt: Just say hello.
    expect_tool: null
`

// sensible answers like a model that gets the example right: the judge
// passes everything.
func sensible(r *llmfake.Request) llmfake.Reply {
	switch {
	case r.Output != nil:
		return llmfake.Verdict(`{"verdict":"pass","reason":"the weather was given"}`)
	case len(r.Results()) > 0:
		return llmfake.Text("Here is what the tool said.")
	case strings.Contains(r.LastUserText(), "weather"):
		return llmfake.Tool("get_weather", `{"location":"Seattle, WA"}`)
	case strings.Contains(r.LastUserText(), "invoices"):
		return llmfake.Tool("search_invoices", `{"customer_id":"C1234","status":"open"}`)
	}
	return llmfake.Text("Hello!")
}

func newEvalEnv(t *testing.T, extraConfig string) *evalEnv {
	t.Helper()
	return newEvalEnvWith(t, extraConfig, sensible)
}

// newEvalEnvWith is newEvalEnv with models that answer as model does.
func newEvalEnvWith(t *testing.T, extraConfig string, model func(*llmfake.Request) llmfake.Reply) *evalEnv {
	t.Helper()
	return newEvalEnvOpts(t, extraConfig, llmfake.Options{Default: model})
}

func newEvalEnvOpts(t *testing.T, extraConfig string, fake llmfake.Options) *evalEnv {
	t.Helper()
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	e := &evalEnv{t: t, dir: t.TempDir(), url: hs.URL + "/mcp", models: llmfake.New(t, fake), server: hs}
	cfg := `golden: tasks.yaml
models:
  default: [openai:gpt-5-mini, anthropic:claude-sonnet-4-5]
endpoints:
  openai: {base-url: "` + e.models.URL + `/v1"}
  anthropic: {base-url: "` + e.models.URL + `"}
eval:
  judge: anthropic:claude-haiku-4-5
  runs: 2
  cache-dir: cache
` + extraConfig
	for name, body := range map[string]string{"tasks.yaml": evalTasks, "mcp-eval.yaml": cfg} {
		if err := os.WriteFile(filepath.Join(e.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *evalEnv) run(args ...string) (int, string, string) {
	e.t.Helper()
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, LookupEnv: e.models.LookupEnv}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := c.Main(ctx, args)
	regate(e.t, code, args, c.LookupEnv)
	return code, out.String(), errb.String()
}

func (e *evalEnv) path(name string) string { return filepath.Join(e.dir, name) }

func TestEvalRunsEveryModelThroughTheWireFormatsAndReusesResults(t *testing.T) {
	e := newEvalEnv(t, "")
	// One run at a time, so that which verdicts come from the cache is
	// deterministic.
	code, out, stderr := e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--out", e.path("report.json"), "--markdown", e.path("summary.md"), "--concurrency", "1")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, w := range []string{"spend preview: 12 runs (0 from the cache)", "openai:gpt-5-mini", "anthropic:claude-sonnet-4-5", "verdict: PASS"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	rep, err := report.Load(e.path("report.json"))
	if err != nil {
		t.Fatal(err)
	}
	b := rep.Behavior
	if len(rep.Models) != 2 || len(b.Results) != 6 || b.JudgeModel != "anthropic:claude-haiku-4-5" || b.RubricHash == "" || b.RunsPerCase != 2 {
		t.Fatalf("models %+v, %d results, judge %q rubric %q", rep.Models, len(b.Results), b.JudgeModel, b.RubricHash)
	}
	for _, r := range b.Results {
		if r.Passed.K != 2 || r.Passed.N != 2 {
			t.Errorf("%s × %s passed %d/%d, want 2/2 (notes %q)", r.Case, r.Model, r.Passed.K, r.Passed.N, r.Notes)
		}
	}
	// Each case names its file and the line it starts on (an annotation
	// points there): "weather" is on line 3 of tasks.yaml.
	if c := b.Cases[0]; filepath.Base(c.Source) != "tasks.yaml" || c.Line != 3 {
		t.Errorf("case %s is at %s:%d, want tasks.yaml:3", c.ID, c.Source, c.Line)
	}
	if rep.Models[0].Served != llmfake.ServedModel("gpt-5-mini") || rep.Models[1].Provider != "anthropic" {
		t.Errorf("models %+v: want the served ids the provider answered with", rep.Models)
	}
	md, _ := os.ReadFile(e.path("summary.md"))
	for _, col := range []string{"`openai:gpt-5-mini`", "`anthropic:claude-sonnet-4-5`", "judge `anthropic:claude-haiku-4-5`"} {
		if !bytes.Contains(md, []byte(col)) {
			t.Errorf("the Markdown matrix lacks %s:\n%s", col, md)
		}
	}
	made := len(e.models.Requests())
	// 2 models × (weather 2 calls + invoices 2 + hello 1) × 2 runs = 20
	// model calls, and one judge call: the four weather trajectories are
	// the same calls, results and answers, so the verdict is reused.
	if made != 21 {
		t.Errorf("%d provider requests, want 21", made)
	}

	// The same suite again: nothing is sent.
	code, out, _ = e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--out", e.path("report2.json"))
	if code != ExitOK || len(e.models.Requests()) != made {
		t.Fatalf("re-run: exit %d, %d new provider requests; want 0\n%s", code, len(e.models.Requests())-made, out)
	}
	if !strings.Contains(out, "12 runs (12 from the cache) → ≈ 0 provider calls") || !strings.Contains(out, "12 of 12 runs reused from the cache") {
		t.Errorf("the re-run does not say it reused everything:\n%s", out)
	}
	rep2, _ := report.Load(e.path("report2.json"))
	if rep2.Behavior.Results[0].Reused != 2 || rep2.Behavior.Results[0].Runs[0].CachedAt == nil {
		t.Errorf("reused runs are not marked: %+v", rep2.Behavior.Results[0])
	}

	// mcp-eval report renders the stored matrix.
	code, out, _ = e.run("report", "--in", e.path("report2.json"), "--format", "markdown")
	if code != ExitOK || !strings.Contains(out, "| `weather` |") || !strings.Contains(out, "`anthropic:claude-sonnet-4-5`") {
		t.Errorf("report --format markdown: exit %d\n%s", code, out)
	}

	// --fresh calls again, and judges every run anew: 20 + 4.
	e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--out", e.path("report3.json"), "--fresh")
	if n := len(e.models.Requests()) - made; n != 24 {
		t.Errorf("--fresh made %d requests, want 24", n)
	}
}

func TestEvalPreviewCallsNoModel(t *testing.T) {
	e := newEvalEnv(t, "")
	code, out, stderr := e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--preview", "--out", e.path("r.json"))
	if code != ExitOK || len(e.models.Requests()) != 0 || !strings.Contains(out, "spend preview: 12 runs") {
		t.Fatalf("exit %d, %d requests\n%s%s", code, len(e.models.Requests()), out, stderr)
	}
	if _, err := os.Stat(e.path("r.json")); err == nil {
		t.Errorf("--preview wrote a report")
	}
	// gpt-5-mini and claude-sonnet-4-5 are priced, claude-haiku-4-5 too.
	if !strings.Contains(out, "≈ $") {
		t.Errorf("the preview has no cost: %s", out)
	}
}

func TestEvalBudgetLeavesTheRestInconclusive(t *testing.T) {
	e := newEvalEnv(t, "")
	args := []string{"eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--out", e.path("r.json"), "--max-tokens", "150", "--concurrency", "1"}
	code, out, _ := e.run(args...)
	if code != ExitOK || !strings.Contains(out, "budget reached") || !strings.Contains(out, "verdict: INCONCLUSIVE") {
		t.Fatalf("exit %d; want 0 with the budget reached and the verdict inconclusive:\n%s", code, out)
	}
	rep, _ := report.Load(e.path("r.json"))
	if rep.Spend == nil || !rep.Spend.Reached || len(rep.Behavior.Inconclusive) == 0 {
		t.Fatalf("spend %+v, inconclusive %+v", rep.Spend, rep.Behavior.Inconclusive)
	}
	if code, _, _ := e.run(append(args, "--fail-on-inconclusive", "--fresh")...); code != ExitFindings {
		t.Errorf("--fail-on-inconclusive: exit %d, want 1", code)
	}
}

func TestEvalUsageErrors(t *testing.T) {
	e := newEvalEnv(t, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--url", "http://127.0.0.1:1/mcp"}, "no golden set"},
		{[]string{"eval", "--golden", e.path("tasks.yaml")}, "no server to test"},
		{[]string{"eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--models", "frob:x"}, `unknown endpoint "frob"`},
		{[]string{"eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--models", "openai-compatible:m@http://127.0.0.1:1/v1", "--max-usd", "1"}, "no price is known for openai-compatible:m@http://127.0.0.1:1/v1"},
		{[]string{"eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--runs", "-1"}, "--runs must not be negative"},
		{[]string{"eval", "--golden", e.path("nope.yaml"), "--url", e.url}, "golden set"},
	} {
		code, _, stderr := e.run(tc.args...)
		if code != ExitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 mentioning %q", tc.args[1:], code, stderr, tc.want)
		}
	}
	if len(e.models.Requests()) != 0 {
		t.Errorf("a usage error called a model")
	}
}

func TestEvalMissingKeyIsNamedNeverShown(t *testing.T) {
	e := newEvalEnv(t, "")
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	code := c.Main(context.Background(), []string{"eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url})
	if code != ExitError || !strings.Contains(errb.String(), "OPENAI_API_KEY") {
		t.Fatalf("exit %d, stderr %q; want the missing variable named", code, errb.String())
	}
	if strings.Contains(out.String()+errb.String(), llmfake.DefaultKey) {
		t.Fatalf("a key was printed")
	}
}

func TestEvalWithoutModelsRunsTheBaselineUngated(t *testing.T) {
	e := newEvalEnv(t, "")
	code, out, stderr := e.run("eval", "--golden", e.path("tasks.yaml"), "--url", e.url, "--out", e.path("r.json"), "--cache-dir", e.path("c"), "--runs", "1")
	if code != ExitOK || !strings.Contains(out, "baseline:lexical (baseline, no LLM)") || !strings.Contains(out, "shown, not gated") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	rep, _ := report.Load(e.path("r.json"))
	if len(rep.Models) != 1 || rep.Models[0].Provider != "baseline, no LLM" || len(e.models.Requests()) != 0 {
		t.Errorf("models %+v, %d provider requests; want the labelled baseline and none", rep.Models, len(e.models.Requests()))
	}
	for _, it := range rep.Gate.Items {
		if it.Layer == 1 && it.Status != report.ItemInfo {
			t.Errorf("the baseline was gated: %+v", it)
		}
	}
}

// Every file a command writes, cache entries included, is 0644 and every
// directory it makes 0755, whatever the umask: a report is read by the
// next step of a workflow, which may run as another user.
func TestEveryCommandWritesReadableFiles(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	e := newEvalEnv(t, "")
	outs := func(prefix string) []string {
		return []string{"--out", e.path(prefix + "/r.json"), "--junit", e.path(prefix + "/r.xml"), "--markdown", e.path(prefix + "/r.md")}
	}
	for _, args := range [][]string{
		append([]string{"check", "--url", e.url, "--runs", "1", "--html", e.path("check/r.html")}, outs("check")...),
		append([]string{"eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--cache-dir", e.path("eval/cache")}, outs("eval")...),
		append([]string{"run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "0,1,3", "--conformance-runs", "1", "--html", e.path("run/r.html")}, outs("run")...),
	} {
		if code, out, errOut := e.run(args...); code == ExitError {
			t.Fatalf("%s: exit 2\n%s\n%s", args[0], out, errOut)
		}
	}
	n := 0
	for _, top := range []string{"check", "eval", "run", "cache"} {
		filepath.WalkDir(e.path(top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Error(err)
				return nil
			}
			info, _ := d.Info()
			want := atomicfile.FileMode
			if d.IsDir() {
				want = atomicfile.DirMode
			}
			if info.Mode().Perm() != want {
				t.Errorf("%s: mode %v, want %v", p, info.Mode().Perm(), want)
			}
			n++
			return nil
		})
	}
	if n < 15 {
		t.Errorf("only %d files and directories were written", n)
	}
}

// The cost gates are flags of run and eval (and gate) that override
// mcp-eval.yaml, which may write them as the flags do (10%).
func TestCostGateFlagsOverrideTheFile(t *testing.T) {
	e := newEvalEnv(t, "gate:\n  max-cost-increase: 10%\n  max-cost-per-run: 1000\n")
	base := []string{"--config", e.path("mcp-eval.yaml"), "--url", e.url, "--runs", "1", "--concurrency", "1"}
	policy := func(name string) report.GatePolicy {
		t.Helper()
		r, err := report.Load(e.path(name))
		if err != nil || r.Gate == nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r.Gate.Policy
	}
	// The file alone: 10% is read as 0.1.
	if code, out, errOut := e.run(append([]string{"eval", "--out", e.path("file.json")}, base...)...); code != ExitOK {
		t.Fatalf("eval: exit %d\n%s\n%s", code, out, errOut)
	}
	if p := policy("file.json"); p.MaxCostIncrease == nil || *p.MaxCostIncrease != 0.1 || p.MaxCostPerRunUSD == nil || *p.MaxCostPerRunUSD != 1000 {
		t.Fatalf("from the file: %+v", p)
	}
	// The flag caps the run below its cost: the gate fails it.
	code, out, _ := e.run(append([]string{"eval", "--out", e.path("capped.json"), "--max-cost-per-run", "$0.000001", "--max-cost-increase", "25%", "--fresh"}, base...)...)
	if code != ExitFindings || !strings.Contains(out, "cost of the run") {
		t.Errorf("eval --max-cost-per-run $0.000001: exit %d, want 1 naming the run cost\n%s", code, out)
	}
	if p := policy("capped.json"); *p.MaxCostIncrease != 0.25 || *p.MaxCostPerRunUSD != 0.000001 {
		t.Errorf("flags over the file: %+v", p)
	}
	// run takes them too.
	if code, out, errOut := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "0", "--conformance-runs", "1", "--max-cost-increase", "0.5", "--out", e.path("run.json")); code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	if p := policy("run.json"); *p.MaxCostIncrease != 0.5 || *p.MaxCostPerRunUSD != 1000 {
		t.Errorf("run --max-cost-increase 0.5: %+v", p)
	}
	// gate applies them over the recorded policy.
	if code, out, _ := e.run("gate", "--report", e.path("file.json"), "--max-cost-per-run", "0.000001", "--out", e.path("regated.json")); code != ExitFindings || !strings.Contains(out, "max-cost-per-run $1e-06") {
		t.Errorf("gate --max-cost-per-run: exit %d\n%s", code, out)
	}
	// Bad values name the flag and what to write, before a model is called.
	before := len(e.models.Requests())
	for _, cmd := range []string{"eval", "run", "gate"} {
		for _, bad := range [][2]string{{"max-cost-increase", "10%%"}, {"max-cost-increase", "-5%"}, {"max-cost-increase", "NaN"}, {"max-cost-per-run", "abc"}, {"max-cost-per-run", "-1"}} {
			args := append([]string{cmd, "--" + bad[0], bad[1]}, base...)
			if cmd == "gate" {
				args = []string{cmd, "--report", e.path("file.json"), "--" + bad[0], bad[1], "--out", e.path("x.json")}
			}
			code, _, stderr := e.run(args...)
			if code != ExitError || !strings.Contains(stderr, "--"+bad[0]) || !strings.ContainsAny(stderr, "$%") {
				t.Errorf("%s --%s %s: exit %d, stderr %q; want 2 naming the flag and the forms", cmd, bad[0], bad[1], code, stderr)
			}
		}
	}
	if len(e.models.Requests()) != before {
		t.Error("a bad cost flag still called a model")
	}
}

// A model that takes get_weather for search_invoices: the terminal, after
// the Layer 1 matrix, and the HTML say which tool it took for which.
func TestEvalShowsWhichToolAModelTookForWhich(t *testing.T) {
	confused := func(r *llmfake.Request) llmfake.Reply {
		if r.Output == nil && len(r.Results()) == 0 && strings.Contains(r.Model, "gpt-5-mini") && strings.Contains(r.LastUserText(), "invoices") {
			return llmfake.Tool("get_weather", `{"location":"C1234"}`)
		}
		return sensible(r)
	}
	e := newEvalEnvWith(t, "", confused)
	code, out, errOut := e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--out", e.path("r.json"), "--html", e.path("r.html"))
	if code == ExitError {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	rep, err := report.Load(e.path("r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cells []report.ConfusionCell
	for _, c := range rep.Behavior.Confusion {
		if c.Model == "openai:gpt-5-mini" {
			cells = c.Cells
		}
	}
	found := false
	for _, c := range cells {
		found = found || (c.Expected == "search_invoices" && c.Chosen == "get_weather" && c.Count == 2)
	}
	if !found {
		t.Fatalf("the report's confusion for openai:gpt-5-mini lacks search_invoices → get_weather ×2: %+v", cells)
	}
	matrix := strings.Index(out, "== Layer 1")
	conf := strings.Index(out, "confusions (expected tool → tool chosen")
	if matrix < 0 || conf < matrix {
		t.Fatalf("no confusions after the Layer 1 matrix:\n%s", out)
	}
	for _, want := range []string{"openai:gpt-5-mini: 2 of", "search_invoices → get_weather ×2", "anthropic:claude-sonnet-4-5: no tool taken for another"} {
		if !strings.Contains(out[conf:], want) {
			t.Errorf("the terminal's confusions lack %q:\n%s", want, out[conf:])
		}
	}
	if strings.Contains(out[conf:], "get_weather     → get_weather") {
		t.Errorf("the diagonal is shown:\n%s", out[conf:])
	}
	page, _ := os.ReadFile(e.path("r.html"))
	for _, want := range []string{`id="confusions"`, "<td><code>search_invoices</code></td><td><code>get_weather</code></td><td class=\"num\">2</td>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
}

// An identical rerun passes the cost gate whatever the cache replays: the
// read-only cases come from the cache, a case calling send_email (not
// read-only) is made again, and cost per case counts both. Before, it was
// computed over the runs made again alone, and a user's identical rerun
// failed max-cost-increase 25% with +26%.
func TestIdenticalRerunPassesTheCostGate(t *testing.T) {
	email := func(r *llmfake.Request) llmfake.Reply {
		if r.Output == nil && len(r.Results()) == 0 && strings.Contains(r.LastUserText(), "Email") {
			return llmfake.Tool("send_email", `{"to":"bob@example.com","subject":"Hi","body":"Hello Bob"}`)
		}
		return sensible(r)
	}
	e := newEvalEnvWith(t, "", email)
	tasks := evalTasks + `  - id: email
    prompt: Email bob@example.com with the subject Hi and the body Hello Bob.
    expect_tool: send_email
    inputs: {confirm: {action: accept, content: {confirm: true}}}
`
	if err := os.WriteFile(e.path("tasks.yaml"), []byte(tasks), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--layers", "1,3", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--runs", "2", "--concurrency", "1"}
	if code, out, errOut := e.run(append(args, "--out", e.path("base.json"))...); code != ExitOK {
		t.Fatalf("first run: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := e.run(append(args, "--out", e.path("again.json"), "--baseline", e.path("base.json"), "--max-cost-increase", "1%")...)
	if code != ExitOK {
		t.Fatalf("the identical rerun: exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	rep, err := report.Load(e.path("again.json"))
	if err != nil {
		t.Fatal(err)
	}
	compared, reused := 0, 0
	for _, it := range rep.Gate.Items {
		if it.Kind == report.KindCost {
			if it.Status != report.ItemPass || it.BaselineValue == nil {
				t.Errorf("cost item %s: %s (%s), want a pass against the baseline", it.Model, it.Status, it.Reason)
			}
			compared++
		}
	}
	if rep.Telemetry == nil {
		t.Fatal("no Layer 3 section")
	}
	for _, u := range rep.Telemetry.Usage {
		reused += u.ReusedRuns
	}
	if compared == 0 || reused == 0 {
		t.Errorf("%d cost items, %d reused runs: the test tests nothing", compared, reused)
	}
}

// A server that stops answering in the middle of Layer 1 stops every
// model's cases alike: the comment says so once, naming the server as
// what to fix, not once per model and tool.
func TestEvalServerLostMidRunIsOneCause(t *testing.T) {
	var e *evalEnv
	var once sync.Once
	e = newEvalEnvWith(t, "", func(r *llmfake.Request) llmfake.Reply {
		if r.Output == nil && len(r.Results()) == 0 && strings.Contains(r.LastUserText(), "invoices") {
			// The server goes away before the first invoices call: new
			// connections are refused, kept ones closed.
			once.Do(func() {
				e.server.Listener.Close()
				e.server.CloseClientConnections()
			})
		}
		return sensible(r)
	})
	code, out, stderr := e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--out", e.path("report.json"), "--markdown", e.path("summary.md"), "--concurrency", "1")
	if code != ExitError {
		t.Fatalf("exit %d, want 2 (runs not judged)\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	rep, err := report.Load(e.path("report.json"))
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]bool{}
	for _, r := range rep.Behavior.Results {
		for _, run := range r.Runs {
			if run.Outcome == report.RunError && len(run.Reasons) > 0 && strings.HasPrefix(run.Reasons[0], "error: "+report.ServerLost+": calling tool ") {
				models[r.Model] = true
			}
		}
	}
	if len(models) != 2 {
		t.Fatalf("runs lost with the server on %d models, want both: %+v", len(models), rep.Behavior.Results)
	}
	md, _ := os.ReadFile(e.path("summary.md"))
	comment := string(md)
	if n := strings.Count(comment, "the server stopped answering"); n < 2 {
		t.Errorf("the comment names the lost server %d times, want the summary line and its one item:\n%s", n, comment)
	}
	if !strings.Contains(comment, "errored on 2 models") || strings.Contains(comment, "errored on this model for the reason below") {
		t.Errorf("the lost server is not one item over both models:\n%s", comment)
	}
	for _, it := range rep.Gate.Items {
		if it.Kind == report.KindTool && it.Layer == 1 {
			t.Errorf("a tool is said to answer only errors, from calls lost with the server: %+v", it)
		}
	}
	att := render.BuildAttention(rep)
	errored := 0
	for _, it := range att.Items {
		if it.Status == report.ItemError {
			errored++
		}
	}
	if errored != 1 {
		t.Errorf("%d items not judged, want the one lost server: %+v", errored, att.Items)
	}
}
