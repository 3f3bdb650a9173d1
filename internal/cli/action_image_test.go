package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// What the action image must do for the steps around it (issue 18), through
// the built binary as the runner runs it.

// newLayer1ActionEnv is a workspace with mcp-eval.yaml and a golden set
// whose models are the fake, answering as model does.
func newLayer1ActionEnv(t *testing.T, bin, server string, model func(*llmfake.Request) llmfake.Reply) (*actionEnv, *llmfake.Server) {
	t.Helper()
	gh := fakegithub.New("octo", "server")
	t.Cleanup(gh.Close)
	models := llmfake.New(t, llmfake.Options{Default: model})
	e := &actionEnv{t: t, bin: bin, server: server, gh: gh, ws: reachableTempDir(t)}
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"} {
		v, _ := models.LookupEnv(k)
		e.extra = append(e.extra, k+"="+v)
	}
	cfg := `golden: evals/tasks.yaml
models:
  default: [openai:gpt-5-mini]
endpoints:
  openai: {base-url: "` + models.URL + `/v1"}
  anthropic: {base-url: "` + models.URL + `"}
conformance:
  runs: 1
eval:
  judge: anthropic:claude-haiku-4-5
  runs: 1
`
	for name, body := range map[string]string{"evals/tasks.yaml": evalTasks, "mcp-eval.yaml": cfg} {
		p := filepath.Join(e.ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return e, models
}

// A container action writes as root; the next step (actions/upload-artifact,
// actions/cache) reads as the runner's user. Every file the action writes
// into the workspace is 0644 and every directory 0755, whatever the umask,
// and the example workflow caches the directory the cache is written to.
func TestActionWritesFilesTheNextStepCanRead(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	bin, server := buildBinaries(t)
	e, _ := newLayer1ActionEnv(t, bin, server, sensible)
	start := time.Now().Add(-time.Second)
	old := syscall.Umask(0o077) // inherited by the binary
	code, log := e.run("push", map[string]string{"server-command": e.server, "layers": "conformance,behavior"})
	syscall.Umask(old)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	want := map[string]bool{"report.json": false, "report.html": false, "mcp-eval-junit.xml": false, ".mcp-eval-cache": false}
	n := 0
	filepath.WalkDir(e.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		info, _ := d.Info()
		rel, _ := filepath.Rel(e.ws, p)
		// Only what the action wrote: not the test's own inputs and
		// the runner's files.
		if p == e.ws || info.ModTime().Before(start) || strings.HasPrefix(rel, "gh-") || rel == "evals" || rel == "mcp-eval.yaml" || strings.HasPrefix(rel, "evals"+string(filepath.Separator)) {
			return nil
		}
		if _, ok := want[rel]; ok {
			want[rel] = true
		}
		wantMode := atomicfile.FileMode
		if d.IsDir() {
			wantMode = atomicfile.DirMode
		}
		if info.Mode().Perm() != wantMode {
			t.Errorf("%s: mode %v, want %v (umask 077)", rel, info.Mode().Perm(), wantMode)
		}
		n++
		return nil
	})
	for f, seen := range want {
		if !seen {
			t.Errorf("the action wrote no %s into the workspace", f)
		}
	}
	entries, _ := filepath.Glob(filepath.Join(e.ws, ".mcp-eval-cache", "*", "*", "*.json"))
	if len(entries) < 3 {
		t.Errorf("%d cache entries under .mcp-eval-cache, want one per case run and verdict", len(entries))
	}
	if n < 8 {
		t.Errorf("only %d files and directories checked", n)
	}

	// The example workflow carries that directory between runs.
	wf, err := os.ReadFile(filepath.Join("..", "..", "docs", "example-workflow.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wf), "path: .mcp-eval-cache\n") {
		t.Errorf("docs/example-workflow.yml does not cache .mcp-eval-cache, the directory the action writes the cache to")
	}
}

// A cancelled job (SIGTERM from the runner, SIGINT first for the host
// action) mid-run: verdict cancelled, exit 2, no ::error annotation, the
// sticky comment left as the last real run wrote it, and the report never
// becomes a baseline.
func TestActionCancelledMidRun(t *testing.T) {
	// The model answers only after a minute: the run is cancelled while
	// the first case waits for it.
	slow := func(r *llmfake.Request) llmfake.Reply {
		rep := sensible(r)
		rep.Delay = time.Minute
		return rep
	}
	if testing.Short() {
		t.Skip("builds binaries")
	}
	bin, server := buildBinaries(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			e, models := newLayer1ActionEnv(t, bin, server, slow)
			// A real result first: Layer 0 on the pull request, one comment.
			code, log := e.run("pull_request", map[string]string{"server-command": e.server, "layers": "conformance"})
			if code != 0 || e.output("verdict") != "pass" {
				t.Fatalf("first run: exit %d verdict %q\n%s", code, e.output("verdict"), log)
			}
			before := e.gh.CommentsOn(42)
			if len(before) != 1 {
				t.Fatalf("comments after the first run: %+v", before)
			}
			calls := len(e.gh.Calls())

			cmd, out := e.start("pull_request", map[string]string{"server-command": e.server, "layers": "conformance,behavior"})
			deadline := time.Now().Add(90 * time.Second)
			for len(models.Requests()) == 0 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("no model request within 90 s:\n%s", out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			stopped := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running 30 s after %v:\n%s", sig, out.String())
			}
			took := time.Since(stopped)
			code, log = e.finish(cmd, out)
			if code != ExitError {
				t.Errorf("exit %d after %v, want %d\n%s", code, sig, ExitError, log)
			}
			if strings.Contains(log, "::error") {
				t.Errorf("a cancelled run raised annotations:\n%s", log)
			}
			if v, p := e.output("verdict"), e.output("passed"); v != "cancelled" || p != "false" {
				t.Errorf("outputs verdict %q passed %q, want cancelled, false", v, p)
			}
			if c := e.output("comment"); c != "skipped" {
				t.Errorf("output comment %q, want skipped", c)
			}
			for _, c := range e.gh.Calls()[calls:] {
				if strings.HasPrefix(c, "PATCH ") || strings.HasPrefix(c, "POST ") || strings.HasPrefix(c, "DELETE ") {
					t.Errorf("the cancelled run wrote to GitHub: %s", c)
				}
			}
			if after := e.gh.CommentsOn(42); len(after) != 1 || after[0].Body != before[0].Body {
				t.Errorf("the sticky comment changed:\nbefore %+v\nafter  %+v", before, after)
			}
			rep, err := report.Load(filepath.Join(e.ws, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Gate == nil || rep.Gate.Verdict != report.GateCancelled || !strings.Contains(rep.Run.Cancelled, "signal") || rep.Conformance != nil || rep.Behavior != nil {
				t.Errorf("report: gate %+v, run.cancelled %q, layers %v %v", rep.Gate, rep.Run.Cancelled, rep.Conformance != nil, rep.Behavior != nil)
			}
			if sum, _ := os.ReadFile(e.summary); !strings.Contains(string(sum), "CANCELLED") || strings.Contains(string(sum), "FAIL") {
				t.Errorf("job summary:\n%s", sum)
			}
			t.Logf("%v: stopped in %v", sig, took.Round(time.Millisecond))

			// That report, uploaded by a run GitHub calls green, is
			// never the baseline.
			b, _ := os.ReadFile(filepath.Join(e.ws, "report.json"))
			e.gh.Runs = append(e.gh.Runs, fakegithub.Run{ID: 51, Number: 51, Workflow: "evals.yml", Event: "push", Branch: "main", HeadRepo: "octo/server", Conclusion: "success", HeadSHA: "abc", Created: time.Now().Add(-time.Minute)})
			e.gh.Artifacts = append(e.gh.Artifacts, fakegithub.Artifact{ID: 601, RunID: 51, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(string(b))})
			code, log = e.run("push", map[string]string{"server-command": e.server, "layers": "conformance"})
			if code != 0 {
				t.Fatalf("run after the cancelled one: exit %d\n%s", code, log)
			}
			next, err := report.Load(filepath.Join(e.ws, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if next.Gate.Baseline != nil {
				t.Errorf("the cancelled run's report became the baseline: %+v", next.Gate.Baseline)
			}
		})
	}
}

// The max-drop input at its edges: 1 and NaN are refused with the input's
// name before the plan is announced; 2% is the flag's 0.02.
func TestActionMaxDropInputEdges(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	bin, server := buildBinaries(t)
	gh := fakegithub.New("octo", "server")
	defer gh.Close()
	e := &actionEnv{t: t, bin: bin, server: server, gh: gh, ws: reachableTempDir(t)}
	for _, v := range []string{"1", "NaN", "100%", "-0.01", "Inf"} {
		code, log := e.run("push", map[string]string{"server-command": server, "max-drop": v})
		if code != ExitError || !strings.Contains(log, "::error") || !strings.Contains(log, `input "max-drop"`) {
			t.Errorf("max-drop %q: exit %d\n%s", v, code, log)
		}
		if strings.Contains(log, "mcp-eval: event") {
			t.Errorf("max-drop %q: the plan was announced before the input was refused:\n%s", v, log)
		}
	}
	code, log := e.run("push", map[string]string{"server-command": server, "max-drop": "2%"})
	if code != 0 {
		t.Fatalf("max-drop 2%%: exit %d\n%s", code, log)
	}
	rep, err := report.Load(filepath.Join(e.ws, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Gate.Policy.MaxDrop != 0.02 {
		t.Errorf("max-drop 2%%: policy max-drop %v, want 0.02", rep.Gate.Policy.MaxDrop)
	}
}
