package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
)

// The action end to end, as the runner runs it: the built binary with
// INPUT_* variables (hyphenated names included), an event payload file,
// the runner's output and summary files, and GITHUB_API_URL pointing at a
// fake of the REST API.
type actionEnv struct {
	t       *testing.T
	bin     string
	server  string
	gh      *fakegithub.Server
	ws      string
	outputs string
	summary string
	extra   []string // more environment, e.g. model keys
}

func buildBinaries(t *testing.T) (bin, server string) {
	t.Helper()
	dir := reachableTempDir(t)
	bin, server = filepath.Join(dir, "mcp-eval"), filepath.Join(dir, "example-server")
	for out, pkg := range map[string]string{bin: "github.com/mcp-eval/mcp-eval-action/cmd/mcp-eval", server: "github.com/mcp-eval/mcp-eval-action/golden-examples/cmd/example-server"} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, b)
		}
	}
	return bin, server
}

func (e *actionEnv) run(event string, inputs map[string]string) (code int, stdout string) {
	e.t.Helper()
	cmd, out := e.start(event, inputs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		e.t.Fatalf("mcp-eval action did not finish:\n%s", out.String())
	}
	return e.finish(cmd, out)
}

// start starts `mcp-eval action` as the runner would for event; the
// caller waits for it and calls finish.
func (e *actionEnv) start(event string, inputs map[string]string) (*exec.Cmd, *bytes.Buffer) {
	e.t.Helper()
	e.outputs = filepath.Join(e.ws, "gh-output-"+event)
	e.summary = filepath.Join(e.ws, "gh-summary-"+event)
	for _, f := range []string{e.outputs, e.summary} {
		os.WriteFile(f, nil, 0o644)
	}
	eventFile := map[string]string{"push": "push.json", "schedule": "schedule.json", "pull_request": "pull_request_labeled_run-evals.json", "pull_request_opened": "pull_request_opened.json"}[event]
	evPath, _ := filepath.Abs(filepath.Join("..", "..", "pkg", "action", "testdata", "events", eventFile))
	name := event
	if strings.HasPrefix(event, "pull_request") {
		name = "pull_request"
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=" + name, "GITHUB_EVENT_PATH=" + evPath,
		"GITHUB_OUTPUT=" + e.outputs, "GITHUB_STEP_SUMMARY=" + e.summary, "GITHUB_WORKSPACE=" + e.ws,
		"GITHUB_API_URL=" + e.gh.APIURL(), "GITHUB_SERVER_URL=https://github.example", "GITHUB_REPOSITORY=octo/server",
		"GITHUB_WORKFLOW_REF=octo/server/.github/workflows/evals.yml@refs/heads/main", "GITHUB_RUN_ID=777", "GITHUB_SHA=0123456789abcdef0123456789abcdef01234567",
		"INPUT_GITHUB-TOKEN=ghs_canarytoken_e2e", "INPUT_BASELINE-ARTIFACT=mcp-eval-report", "INPUT_COMMENT=true", "INPUT_LAYERS=auto",
	}
	env = append(env, e.extra...)
	for k, v := range inputs {
		env = append(env, "INPUT_"+strings.ToUpper(k)+"="+v)
	}
	cmd := exec.Command(e.bin, "action")
	cmd.Env, cmd.Dir = env, e.ws
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd, out
}

// finish checks a finished action's log and returns its exit code.
func (e *actionEnv) finish(cmd *exec.Cmd, out *bytes.Buffer) (code int, stdout string) {
	e.t.Helper()
	if strings.Contains(out.String(), "ghs_canarytoken_e2e") {
		e.t.Fatalf("the token leaked into the log:\n%s", out.String())
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// output reads one output from the GITHUB_OUTPUT file, in either of the
// runner's forms: name=value, or name<<DELIM / value / DELIM.
func (e *actionEnv) output(name string) string {
	b, _ := os.ReadFile(e.outputs)
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if v, ok := strings.CutPrefix(l, name+"="); ok {
			return v
		}
		if delim, ok := strings.CutPrefix(l, name+"<<"); ok && i+2 < len(lines) && lines[i+2] == delim {
			return lines[i+1]
		}
	}
	return ""
}

func TestActionEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds binaries")
	}
	bin, server := buildBinaries(t)
	gh := fakegithub.New("octo", "server")
	defer gh.Close()
	e := &actionEnv{t: t, bin: bin, server: server, gh: gh, ws: reachableTempDir(t)}

	// 1. A push on main: Layer 0 only, no baseline yet (floors), no comment.
	code, log := e.run("push", map[string]string{"server-command": server, "max-cost-increase": "25%", "max-cost-per-run": "$5"})
	if code != 0 || e.output("verdict") != "pass" || e.output("report-path") != "report.json" {
		t.Fatalf("push: exit %d, verdict %q, report-path %q\n%s", code, e.output("verdict"), e.output("report-path"), log)
	}
	if sum, _ := os.ReadFile(e.summary); !bytes.Contains(sum, []byte("PASS")) && !bytes.Contains(sum, []byte("pass")) {
		t.Fatalf("summary lacks the verdict:\n%s", sum)
	}
	green, err := os.ReadFile(filepath.Join(e.ws, "report.json"))
	if err != nil {
		t.Fatal(err)
	}

	// That report becomes the last green run's artifact.
	gh.Runs = append(gh.Runs, fakegithub.Run{ID: 41, Number: 41, Workflow: "evals.yml", Event: "push", Branch: "main", HeadRepo: "octo/server", Conclusion: "success", HeadSHA: "abc", Created: time.Now().Add(-time.Hour)})
	gh.Artifacts = append(gh.Artifacts, fakegithub.Artifact{ID: 501, RunID: 41, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(string(green))})

	// 2. A pull request labelled run-evals: all layers selected, compared
	// with the baseline, one sticky comment.
	code, log = e.run("pull_request", map[string]string{"server-command": server})
	if code != 0 || e.output("verdict") != "pass" {
		t.Fatalf("labelled PR: exit %d verdict %q\n%s", code, e.output("verdict"), log)
	}
	comments := gh.CommentsOn(42)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "<!--") || !strings.Contains(comments[0].Body, "no golden set is configured") {
		t.Fatalf("comments on PR 42: %+v", comments)
	}
	if gh.BlobAuthCount() != 0 {
		t.Fatal("the artifact download carried the token")
	}

	// 3. The same PR again, the server now broken: a regression, exit 1,
	// an error annotation naming the check, the same comment edited.
	code, log = e.run("pull_request", map[string]string{"server-command": server + " --break DISC-2"})
	if code != 1 || e.output("verdict") != "fail" || !strings.Contains(log, "::error") || !strings.Contains(log, "DISC-2") {
		t.Fatalf("regression: exit %d verdict %q\n%s", code, e.output("verdict"), log)
	}
	if c := gh.CommentsOn(42); len(c) != 1 || !strings.Contains(c[0].Body, "DISC-2") {
		t.Fatalf("the sticky comment was not updated in place: %+v", c)
	}

	// 3b. The same PR, the server now failing to start: exit 2, verdict
	// error, and the sticky comment says so instead of keeping the last
	// run's verdict; report.json is written for the upload step.
	code, log = e.run("pull_request", map[string]string{"server-command": filepath.Join(e.ws, "no-such-server")})
	if code != 2 || e.output("verdict") != "error" || !strings.Contains(log, "::error") {
		t.Fatalf("a server that cannot start: exit %d verdict %q\n%s", code, e.output("verdict"), log)
	}
	if c := gh.CommentsOn(42); len(c) != 1 || !strings.Contains(c[0].Body, "the server could not be tested") || strings.Contains(c[0].Body, "DISC-2") {
		t.Fatalf("the sticky comment does not say the server could not be tested: %+v", c)
	}
	var untested struct {
		Run struct{ Untested string }
	}
	if b, err := os.ReadFile(filepath.Join(e.ws, "report.json")); err != nil || json.Unmarshal(b, &untested) != nil || !strings.Contains(untested.Run.Untested, "no-such-server") {
		t.Fatalf("report.json of a server that cannot start: %v %+v", err, untested)
	}

	// 4. A read-only token (a fork's): the comment is skipped with a
	// warning and the verdict stands.
	gh.ReadOnly = true
	code, log = e.run("pull_request", map[string]string{"server-command": server})
	if code != 0 || !strings.Contains(log, "::warning") {
		t.Fatalf("read-only token: exit %d\n%s", code, log)
	}

	// 5. Bad input: a message naming the input, exit 2.
	code, log = e.run("schedule", map[string]string{"server-command": server, "max-drop": "lots"})
	if code != 2 || !strings.Contains(log, "max-drop") {
		t.Fatalf("bad input: exit %d\n%s", code, log)
	}
	var rep map[string]any
	if err := json.Unmarshal(green, &rep); err != nil || rep["schemaVersion"] == nil {
		t.Fatalf("report.json: %v", err)
	}
	// The cost gate inputs reach the policy the report records.
	policy := rep["gate"].(map[string]any)["policy"].(map[string]any)
	if policy["maxCostIncrease"] != 0.25 || policy["maxCostPerRunUSD"] != 5.0 {
		t.Errorf("inputs max-cost-increase 25%%, max-cost-per-run $5: recorded policy %v", policy)
	}
	code, log = e.run("push", map[string]string{"server-command": server, "max-cost-increase": "10%%"})
	if code != 2 || !strings.Contains(log, `input "max-cost-increase"`) || !strings.Contains(log, "25%") {
		t.Fatalf("bad cost input: exit %d\n%s", code, log)
	}
}
