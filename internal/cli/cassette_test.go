package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/cassette"
	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// noKeys is an environment without a single model key: a fork's.
func noKeys(string) (string, bool) { return "", false }

// runWith runs mcp-eval with lookup as its environment.
func (e *evalEnv) runWith(lookup func(string) (string, bool), args ...string) (int, string, string) {
	e.t.Helper()
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, LookupEnv: lookup}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := c.Main(ctx, args)
	regate(e.t, code, args, lookup)
	return code, out.String(), errb.String()
}

// serveRef serves a reference server over HTTP and returns its /mcp URL.
func serveRef(t *testing.T, opts refserver.Options) string {
	srv := refserver.New(opts)
	t.Cleanup(srv.Close)
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

func passed(rep *report.Report) map[string]report.Count {
	out := map[string]report.Count{}
	for _, r := range rep.Behavior.Results {
		out[r.Case+" × "+r.Model] = r.Passed
	}
	return out
}

func TestCassetteRecordsAndReplaysWithoutAModelOrAKey(t *testing.T) {
	e := newEvalEnv(t, "")
	tape := e.path("tape")
	code, out, stderr := e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--record", tape, "--out", e.path("recorded.json"))
	if code != ExitOK {
		t.Fatalf("record: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	recorded, err := report.Load(e.path("recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	calls := len(e.models.Requests())
	if recorded.Replay != nil || calls == 0 {
		t.Fatalf("a recording calls the models (%d calls) and is not replayed (%+v)", calls, recorded.Replay)
	}
	data, err := os.ReadFile(filepath.Join(tape, cassette.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(e.models.URL)) || bytes.Contains(data, []byte("fake-key")) {
		t.Errorf("the cassette holds an endpoint or a key")
	}
	if !strings.Contains(strings.Join(recorded.Gate.Notes, "\n"), "cassette recorded: ") {
		t.Errorf("the recording's notes do not say what was recorded: %q", recorded.Gate.Notes)
	}

	// The model is down and there is no key: the cassette answers.
	e.models.Close()
	code, out, stderr = e.runWith(noKeys, "eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--replay", tape, "--out", e.path("replayed.json"),
		"--markdown", e.path("replayed.md"), "--html", e.path("replayed.html"), "--junit", e.path("replayed.xml"))
	if code != ExitOK {
		t.Fatalf("replay: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if n := len(e.models.Requests()); n != calls {
		t.Errorf("the replay called the model %d times", n-calls)
	}
	replayed, err := report.Load(e.path("replayed.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := replayed.Replay
	if r == nil || len(r.Stale) != 0 || r.Answered != calls || !strings.HasPrefix(r.Hash, "sha256:") {
		t.Fatalf("replay section %+v: want every one of the %d recorded calls answered, none stale", r, calls)
	}
	want, got := passed(recorded), passed(replayed)
	if len(want) != 6 || len(got) != len(want) {
		t.Fatalf("results recorded %v, replayed %v", want, got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: recorded %d/%d, replayed %d/%d", k, w.K, w.N, got[k].K, got[k].N)
		}
	}
	// Every surface says so, and that nothing was spent.
	if !strings.Contains(out, "spend preview: 12 runs replayed from the cassette → no provider call, nothing spent") || !strings.Contains(out, "spend: nothing: replayed from the cassette; the recording's") {
		t.Errorf("the terminal speaks of spending on a replay:\n%s", out)
	}
	if md, _ := os.ReadFile(e.path("replayed.md")); !bytes.Contains(md, []byte("**Run cost: nothing**, replayed from the cassette")) {
		t.Errorf("the comment speaks of spending on a replay:\n%s", md)
	}
	if !strings.Contains(out, "2 runs each, replayed from the cassette") || !strings.Contains(out, "replayed: Layers 1 and 2 are the recorded model answers") {
		t.Errorf("the terminal does not say the results are replayed:\n%s", out)
	}
	for file, want := range map[string]string{"replayed.md": "> [!IMPORTANT]\n> replayed\\: Layers 1 and 2 are the recorded model answers", "replayed.html": "<dt>Replayed</dt>",
		"replayed.xml": "behaviour openai:gpt-5-mini · replayed"} {
		if b, _ := os.ReadFile(e.path(file)); !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s lacks %q:\n%s", file, want, b)
		}
	}

	// The replay is the replay baseline: a second replay of the same
	// cassette is compared with it; the live recording is not.
	code, _, stderr = e.runWith(noKeys, "eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--replay", tape, "--baseline", e.path("replayed.json"), "--out", e.path("again.json"))
	again, err := report.Load(e.path("again.json"))
	if err != nil || code != ExitOK || again.Gate.Baseline == nil {
		t.Fatalf("replay against the replay baseline: exit %d, %v, gate %+v\n%s", code, err, again.Gate, stderr)
	}
	code, _, stderr = e.runWith(noKeys, "eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--replay", tape, "--baseline", e.path("recorded.json"), "--out", e.path("live-base.json"))
	lb, err := report.Load(e.path("live-base.json"))
	if err != nil || code != ExitOK {
		t.Fatalf("replay against the live baseline: exit %d, %v\n%s", code, err, stderr)
	}
	if lb.Gate.Baseline != nil || !strings.Contains(lb.Gate.BaselineNote, "was not replayed") || !strings.Contains(lb.Gate.BaselineNote, "floors only") {
		t.Errorf("a live baseline was used for a replayed run: baseline %+v, note %q", lb.Gate.Baseline, lb.Gate.BaselineNote)
	}
	if notes := strings.Join(lb.Gate.Notes, "\n"); strings.Contains(notes, "has no Layer 1 results") {
		t.Errorf("the gate says the live baseline has no Layer 1 results; it has, set aside: %q", notes)
	}

	// The server's tool description changed: the first request of every
	// run differs from the recorded one, and replay says so instead of
	// answering.
	changed := serveRef(t, refserver.Options{Describe: map[string]string{"get_weather": "Get today's weather for a city."}})
	code, out, stderr = e.runWith(noKeys, "eval", "--config", e.path("mcp-eval.yaml"), "--url", changed, "--replay", tape, "--out", e.path("stale.json"))
	if code == ExitError {
		t.Fatalf("stale replay: harness error\nstdout:\n%s\nstderr:\n%s", out, stderr)
	}
	stale, err := report.Load(e.path("stale.json"))
	if err != nil {
		t.Fatal(err)
	}
	if stale.Replay == nil || len(stale.Replay.Stale) == 0 {
		t.Fatalf("no stale turn reported: %+v", stale.Replay)
	}
	for _, s := range stale.Replay.Stale {
		if s.Turn != 1 || s.Judge || !strings.Contains(s.Diff, "Get today's weather") || !strings.Contains(s.Diff, "Tools[0].Description") {
			t.Errorf("stale %+v: want turn 1, the changed description in the diff", s)
		}
	}
	var item *report.GateItem
	for i, it := range stale.Gate.Items {
		if it.Kind == report.KindCassette && it.Subject == "weather" {
			item = &stale.Gate.Items[i]
			break
		}
	}
	if item == nil || item.Status != report.ItemInconclusive || !strings.Contains(item.Reason, "cassette stale at case weather, run 1, turn 1") {
		t.Errorf("gate item %+v: want the stale turn named", item)
	}
	// Not measured, not failed: no answer was invented, and the runs
	// count in no score.
	if len(stale.Behavior.Results) != 0 || len(stale.Behavior.Inconclusive) != 6 || stale.Gate.Verdict != report.GateInconclusive {
		t.Errorf("results %+v, inconclusive %+v, verdict %s: want every case × model inconclusive", stale.Behavior.Results, stale.Behavior.Inconclusive, stale.Gate.Verdict)
	}
	for _, inc := range stale.Behavior.Inconclusive {
		if inc.Runs != 2 || !strings.Contains(inc.Reason, "cassette stale at case "+inc.Case) {
			t.Errorf("inconclusive %+v: want both runs, stale", inc)
		}
	}
	if n := len(e.models.Requests()); n != calls {
		t.Errorf("the stale replay called the model %d times", n-calls)
	}
}

func TestCassetteDebugDump(t *testing.T) {
	if os.Getenv("CASS_DEBUG") == "" {
		t.Skip()
	}
	e := newEvalEnv(t, "")
	tape := e.path("tape")
	e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--record", tape, "--out", e.path("recorded.json"))
	e.models.Close()
	changed := serveRef(t, refserver.Options{Describe: map[string]string{"get_weather": "Get today's weather for a city."}})
	_, out, _ := e.runWith(noKeys, "eval", "--config", e.path("mcp-eval.yaml"), "--url", changed, "--replay", tape, "--out", e.path("stale.json"), "--markdown", e.path("s.md"))
	b, _ := os.ReadFile(e.path("stale.json"))
	md, _ := os.ReadFile(e.path("s.md"))
	c, _ := os.ReadFile(filepath.Join(tape, cassette.FileName))
	t.Logf("%s\n%s\n%s\n%d bytes cassette\n%s", out, b, md, len(c), c[:3000])
}

func TestCassetteDebugAll(t *testing.T) {
	if os.Getenv("CASS_DEBUG") == "" {
		t.Skip()
	}
	e := newEvalEnv(t, "")
	tape := e.path("tape")
	code, out, _ := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "all", "--record", tape, "--out", e.path("recorded.json"))
	t.Logf("rec %d %s", code, out)
	e.models.Close()
	code, out, _ = e.runWith(noKeys, "run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "all", "--replay", tape, "--out", e.path("replayed.json"), "--markdown", e.path("s.md"))
	t.Logf("rep %d %s", code, out)
	c, _ := os.ReadFile(filepath.Join(tape, cassette.FileName))
	t.Logf("%d bytes cassette", len(c))
}

// A fork's pull request has no model key: with layers auto and a
// committed cassette (eval.cassette), the action replays Layers 1 and 2
// from it instead of skipping them.
func TestForkPullRequestReplaysTheCommittedCassette(t *testing.T) {
	e := newEvalEnv(t, "  cassette: tape\n")
	code, out, stderr := e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--record", e.path("tape"), "--out", e.path("recorded.json"))
	if code != ExitOK {
		t.Fatalf("record: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	recorded, err := report.Load(e.path("recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	calls := len(e.models.Requests())
	e.models.Close()

	gh := fakegithub.New("octo", "server")
	t.Cleanup(gh.Close)
	evPath, _ := filepath.Abs(filepath.Join("..", "..", "pkg", "action", "testdata", "events", "pull_request_fork.json"))
	env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": evPath,
		"GITHUB_OUTPUT": e.path("gh-output"), "GITHUB_STEP_SUMMARY": e.path("gh-summary"), "GITHUB_WORKSPACE": e.dir,
		"GITHUB_API_URL": gh.APIURL(), "GITHUB_REPOSITORY": "octo/server", "GITHUB_RUN_ID": "779", "GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567",
		"INPUT_GITHUB-TOKEN": "ghs_fork_readonly", "INPUT_CONFIG": "mcp-eval.yaml", "INPUT_COMMENT": "false", "INPUT_LAYERS": "auto", "INPUT_SERVER-URL": e.url}
	for _, f := range []string{"gh-output", "gh-summary"} {
		os.WriteFile(e.path(f), nil, 0o644)
	}
	var stdout, errb bytes.Buffer
	c := &Command{Stdout: &stdout, Stderr: &errb, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if code := c.Main(ctx, []string{"action"}); code == ExitError {
		t.Fatalf("action: exit %d\n%s\n%s", code, stdout.String(), errb.String())
	}
	rep, err := report.Load(filepath.Join(e.dir, "report.json"))
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, stdout.String(), errb.String())
	}
	if rep.Conformance == nil || rep.Behavior == nil || rep.Replay == nil || len(rep.Replay.Stale) != 0 || rep.Replay.Answered != calls {
		t.Fatalf("fork run: conformance %v, behaviour %v, replay %+v: want Layer 0 and Layer 1 replayed, all %d calls answered", rep.Conformance != nil, rep.Behavior != nil, rep.Replay, calls)
	}
	want, got := passed(recorded), passed(rep)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: recorded %d/%d, replayed on the fork %d/%d", k, w.K, w.N, got[k].K, got[k].N)
		}
	}
	notes := strings.Join(rep.Gate.Notes, "\n")
	for _, w := range []string{"replayed from the committed cassette", `layer "resilience" was not replayed`} {
		if !strings.Contains(notes, w) {
			t.Errorf("notes lack %q:\n%s", w, notes)
		}
	}
	if sum, _ := os.ReadFile(e.path("gh-summary")); !bytes.Contains(sum, []byte("recorded model answers")) {
		t.Errorf("the job summary does not say the results are replayed:\n%s", sum)
	}
}

// A changed tool result changes only the request after it: the weather
// case goes stale at turn 2, with the result in the diff, and the cases
// that never call the tool replay as recorded.
func TestCassetteGoesStaleAtTheTurnAfterAChangedResult(t *testing.T) {
	e := newEvalEnv(t, "  stubs: {get_weather: \"sunny, 20 C\"}\n")
	tape := e.path("tape")
	if code, out, stderr := e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--record", tape, "--out", e.path("recorded.json")); code != ExitOK {
		t.Fatalf("record: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	recorded, err := report.Load(e.path("recorded.json"))
	if err != nil {
		t.Fatal(err)
	}
	e.models.Close()
	cfg, _ := os.ReadFile(e.path("mcp-eval.yaml"))
	if err := os.WriteFile(e.path("mcp-eval.yaml"), bytes.Replace(cfg, []byte("sunny, 20 C"), []byte("rainy, 9 C"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := e.runWith(noKeys, "eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--replay", tape, "--out", e.path("stale.json"))
	if code == ExitError {
		t.Fatalf("replay: harness error\nstdout:\n%s\nstderr:\n%s", out, stderr)
	}
	rep, err := report.Load(e.path("stale.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Replay.Stale) != 4 {
		t.Fatalf("stale %+v: want the weather case's 2 runs × 2 models", rep.Replay.Stale)
	}
	for _, s := range rep.Replay.Stale {
		if s.Case != "weather" || s.Turn != 2 || !strings.Contains(s.Diff, `Messages[2].Results[0].Content: recorded "sunny, 20 C", now "rainy, 9 C"`) {
			t.Errorf("stale %+v: want weather at turn 2, the result in the diff", s)
		}
	}
	want, got := passed(recorded), passed(rep)
	for k, w := range want {
		if strings.HasPrefix(k, "weather") {
			if _, ok := got[k]; ok {
				t.Errorf("%s was measured from a stale cassette: %+v", k, got[k])
			}
		} else if got[k] != w {
			t.Errorf("%s: recorded %d/%d, replayed %d/%d", k, w.K, w.N, got[k].K, got[k].N)
		}
	}
}

func TestRecordAndReplayAreExclusive(t *testing.T) {
	e := newEvalEnv(t, "")
	code, _, stderr := e.run("eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--record", e.path("a"), "--replay", e.path("b"))
	if code != ExitError || !strings.Contains(stderr, "--record and --replay") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = e.runWith(noKeys, "eval", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--replay", e.path("missing"))
	if code != ExitError || !strings.Contains(stderr, "record one with --record") {
		t.Errorf("missing cassette: exit %d, stderr %q", code, stderr)
	}
}
