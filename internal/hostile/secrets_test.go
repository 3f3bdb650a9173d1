package hostile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
)

// Canaries, one per way a secret reaches mcp-eval. Each is long and
// unique, so finding one anywhere is a leak.
const (
	canaryEnvKey     = "canary-OPENAI-sk-5f1e9a0c7d"     // harness env: a model key
	canaryEnvToken   = "canary-GITHUB_TOKEN-ghs-8b2d41"  // harness env: a token
	canaryFlagHeader = "canary-flag-header-c3a7e91f"     // --header Authorization
	canaryFlagEnv    = "canary-flag-server-env-2e6b0d"   // --server-env API_KEY
	canaryConfHeader = "canary-config-header-91fd3a"     // mcp-eval.yaml server.headers ${MCP_TOKEN}
	canaryConfEnv    = "canary-config-server-env-7c40be" // mcp-eval.yaml server.env
	canaryInputToken = "canary-input-github-token-d08f5" // action input github-token
	canaryPassEnv    = "canary-pass-env-db-password-4a9" // --pass-env DB_PASSWORD
)

var allCanaries = []string{canaryEnvKey, canaryEnvToken, canaryFlagHeader, canaryFlagEnv, canaryConfHeader, canaryConfEnv, canaryInputToken, canaryPassEnv}

// harnessSecrets are secrets of the harness that no server is given: a
// server must not even be able to read them.
var harnessSecrets = []string{canaryEnvKey, canaryEnvToken, canaryInputToken}

// outputs gathers every file a run wrote in dir (reports, JUnit, Markdown,
// the runner's summary and outputs) and the streams.
func outputs(t *testing.T, dir string, streams ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, s := range streams {
		out["stream "+string(rune('0'+i))] = s
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), "loot") || d.Name() == "mcp-eval.yaml" {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil {
			out[p] = string(b)
		}
		return nil
	})
	return out
}

func assertNoCanary(t *testing.T, outs map[string]string) {
	t.Helper()
	for name, s := range outs {
		for _, c := range allCanaries {
			if strings.Contains(s, c) {
				i := strings.Index(s, c)
				t.Errorf("secret %s leaked into %s: …%s…", c, name, s[max(0, i-120):min(len(s), i+len(c)+40)])
			}
		}
	}
}

// lootOf reads what the secrets probe could read (HOSTILE_OUT).
func lootOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the secrets probe wrote nothing: %v", err)
	}
	return string(b)
}

func assertServerCouldNotRead(t *testing.T, loot string) {
	t.Helper()
	for _, c := range harnessSecrets {
		if strings.Contains(loot, c) {
			t.Errorf("the server could read the harness's secret %s:\n%s", c, tail(loot))
		}
	}
	if strings.Contains(loot, "INPUT_") {
		t.Errorf("the server saw INPUT_* variables:\n%s", tail(loot))
	}
}

// The canaries go in through every path (the harness's environment,
// command-line flags, mcp-eval.yaml, action inputs); the server, which is
// handed some of them on purpose, echoes everything it sees into tool
// descriptions, error messages, a response header and stderr. None may
// come out in report.json, JUnit, Markdown, the job summary, the PR
// comment, the outputs, stdout or stderr.
func TestSecretsNeverLeak(t *testing.T) {
	harnessEnv := baseEnv("OPENAI_API_KEY="+canaryEnvKey, "GITHUB_TOKEN="+canaryEnvToken, "MCP_TOKEN="+canaryConfHeader, "DB_PASSWORD="+canaryPassEnv)

	t.Run("check-stdio", func(t *testing.T) {
		dir := reachableDir(t)
		loot := filepath.Join(dir, "loot")
		r := runMCPEval(t, defaultDeadline, dir, harnessEnv, "check", "--runs", "1", "--cmd", bin.server+" --behaviour secrets-probe",
			"--server-env", "API_KEY="+canaryFlagEnv, "--server-env", "HOSTILE_OUT="+loot, "--pass-env", "DB_PASSWORD",
			"--out", filepath.Join(dir, "check.json"), "--junit", filepath.Join(dir, "check.xml"))
		noPanic(t, r)
		l := lootOf(t, loot)
		assertServerCouldNotRead(t, l)
		if !strings.Contains(l, canaryFlagEnv) || !strings.Contains(l, canaryPassEnv) {
			t.Fatalf("control: the server should have been given API_KEY and DB_PASSWORD to echo:\n%s", tail(l))
		}
		l0 := readCheckJSON(t, filepath.Join(dir, "check.json"))
		renderedSafely(t, dir, l0)
		outs := outputs(t, dir, r.stdout, r.stderr)
		assertNoCanary(t, outs)
		if !strings.Contains(outs[filepath.Join(dir, "check.json")], "***") {
			t.Error("control: the report should show where a secret was taken out")
		}
	})

	t.Run("check-http", func(t *testing.T) {
		dir := reachableDir(t)
		loot := filepath.Join(dir, "loot")
		url := hostileHTTP(t, "secrets-probe", baseEnv("HOSTILE_OUT="+loot))
		r := runMCPEval(t, defaultDeadline, dir, harnessEnv, "check", "--runs", "1", "--url", url, "--header", "Authorization: Bearer "+canaryFlagHeader,
			"--out", filepath.Join(dir, "check.json"), "--junit", filepath.Join(dir, "check.xml"))
		noPanic(t, r)
		if !strings.Contains(lootOf(t, loot), canaryFlagHeader) {
			t.Fatal("control: the server should have received the header to echo")
		}
		renderedSafely(t, dir, readCheckJSON(t, filepath.Join(dir, "check.json")))
		assertNoCanary(t, outputs(t, dir, r.stdout, r.stderr))
	})

	// A server that cannot be tested at all: the harness error quotes its
	// stderr, where it printed the key it was given.
	t.Run("harness-error", func(t *testing.T) {
		dir := reachableDir(t)
		r := runMCPEval(t, defaultDeadline, dir, harnessEnv, "check", "--cmd", `sh -c "echo fatal: bad key $API_KEY >&2; exit 3"`, "--server-env", "API_KEY="+canaryFlagEnv)
		noPanic(t, r)
		if r.code != 2 || !strings.Contains(r.stderr, "fatal: bad key ***") {
			t.Fatalf("want a harness error quoting the redacted stderr, got exit %d:\n%s", r.code, r.stderr)
		}
		assertNoCanary(t, outputs(t, dir, r.stdout, r.stderr))
	})

	t.Run("run-config", func(t *testing.T) {
		for _, transport := range []string{"http", "stdio"} {
			dir := reachableDir(t)
			loot := filepath.Join(dir, "loot")
			server := "  url: " + hostileHTTP(t, "secrets-probe", baseEnv("HOSTILE_OUT="+loot)) + "\n  headers:\n    Authorization: Bearer ${MCP_TOKEN}\n"
			if transport == "stdio" {
				server = "  command: " + bin.server + " --behaviour secrets-probe\n  env:\n    SERVICE_TOKEN: " + canaryConfEnv + "\n    HOSTILE_OUT: " + loot + "\n"
			}
			cfg := "server:\n" + server + "conformance:\n  runs: 1\noutput:\n  report: report.json\n  junit: junit.xml\n  markdown: summary.md\n"
			if err := os.WriteFile(filepath.Join(dir, "mcp-eval.yaml"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			r := runMCPEval(t, defaultDeadline, dir, harnessEnv, "run", "--config", filepath.Join(dir, "mcp-eval.yaml"))
			noPanic(t, r)
			if r.code == 2 {
				t.Fatalf("%s: run could not test the server: %s", transport, r.stderr)
			}
			l := lootOf(t, loot)
			assertServerCouldNotRead(t, l)
			if want := map[string]string{"http": canaryConfHeader, "stdio": canaryConfEnv}[transport]; !strings.Contains(l, want) {
				t.Fatalf("%s control: the server should have been given %s to echo", transport, want)
			}
			r2 := runMCPEval(t, 30*time.Second, dir, harnessEnv, "report", "--in", filepath.Join(dir, "report.json"), "--format", "markdown")
			assertNoCanary(t, outputs(t, dir, r.stdout, r.stderr, r2.stdout, r2.stderr))
		}
	})

	t.Run("action", func(t *testing.T) {
		ws := reachableDir(t)
		loot := filepath.Join(ws, "loot")
		cfg := "server:\n  command: " + bin.server + " --behaviour secrets-probe\n  env:\n    API_KEY: " + canaryConfEnv + "\n    HOSTILE_OUT: " + loot + "\nconformance:\n  runs: 1\n"
		if err := os.WriteFile(filepath.Join(ws, "mcp-eval.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		a := runAction(t, ws, "pull_request_opened.json", canaryInputToken, "OPENAI_API_KEY="+canaryEnvKey, "GITHUB_TOKEN="+canaryEnvToken)
		assertServerCouldNotRead(t, lootOf(t, loot))
		outs := outputs(t, ws, a.log)
		for i, c := range a.comments {
			outs["comment "+string(rune('0'+i))] = c
		}
		if len(a.comments) != 1 {
			t.Errorf("want one PR comment, got %d", len(a.comments))
		}
		assertNoCanary(t, outs)
	})
}

// actionRun is one run of `mcp-eval action`.
type actionRun struct {
	code     int
	log      string // stdout and stderr: the runner's log
	comments []string
}

// runAction runs the action entry point the way the runner does: INPUT_*
// variables, an event file, the runner's output and summary files, and a
// fake GitHub API that takes the sticky comment.
func runAction(t *testing.T, ws, event, token string, env ...string) actionRun {
	t.Helper()
	gh := fakegithub.New("octo", "server")
	t.Cleanup(gh.Close)
	evPath, err := filepath.Abs(filepath.Join("..", "..", "pkg", "action", "testdata", "events", event))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"gh-output", "gh-summary"} {
		if err := os.WriteFile(filepath.Join(ws, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	full := baseEnv(append([]string{
		"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=pull_request", "GITHUB_EVENT_PATH=" + evPath,
		"GITHUB_OUTPUT=" + filepath.Join(ws, "gh-output"), "GITHUB_STEP_SUMMARY=" + filepath.Join(ws, "gh-summary"), "GITHUB_WORKSPACE=" + ws,
		"GITHUB_API_URL=" + gh.APIURL(), "GITHUB_SERVER_URL=https://github.example", "GITHUB_REPOSITORY=octo/server",
		"GITHUB_WORKFLOW_REF=octo/server/.github/workflows/evals.yml@refs/heads/main", "GITHUB_RUN_ID=777",
		"INPUT_GITHUB-TOKEN=" + token, "INPUT_COMMENT=true", "INPUT_LAYERS=0", "INPUT_BASELINE-ARTIFACT=mcp-eval-report",
	}, env...)...)
	r := runMCPEval(t, defaultDeadline, ws, full, "action")
	noPanic(t, r)
	if r.code == 2 {
		t.Fatalf("the action could not run:\n%s\n%s", r.stdout, r.stderr)
	}
	a := actionRun{code: r.code, log: r.stdout + r.stderr}
	for _, c := range gh.CommentsOn(42) {
		a.comments = append(a.comments, c.Body)
	}
	return a
}

// When mcp-eval runs as root (the Docker action), the server it starts
// runs as uid 65534: it cannot read the harness's environment through
// /proc, yet it can still read its workspace and write its TMPDIR.
func TestServerRunsUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a harness running as root drops the server's privileges")
	}
	ws := reachableDir(t)
	if err := os.WriteFile(filepath.Join(ws, "package.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	loot := filepath.Join(ws, "loot")
	r := runMCPEval(t, defaultDeadline, ws, baseEnv("GITHUB_TOKEN="+canaryEnvToken), "check", "--runs", "1", "--only", "DISC-1",
		"--cmd", bin.server+" --behaviour secrets-probe", "--cwd", ws, "--server-env", "HOSTILE_OUT="+loot)
	noPanic(t, r)
	l := lootOf(t, loot)
	for _, want := range []string{"uid=65534 gid=65534", "tmpdir write: ok", "cwd read: ok"} {
		if !strings.Contains(l, want) {
			t.Errorf("the server's view lacks %q:\n%s", want, tail(l))
		}
	}
	for _, line := range strings.Split(l, "\n") {
		if strings.Contains(line, "/environ:") && !strings.Contains(line, "permission denied") {
			t.Errorf("the server could read another process's environment: %s", line)
		}
	}
	assertServerCouldNotRead(t, l)
}

// Every command starts the server through the one opener, so the server
// under test runs as the same user whichever layer starts it: as root with
// a model key in the environment, uid 65534 for check, probe, eval, run
// (Layers 0 and 1) and the action — and the key stays out of its reach in
// exactly the layers that hold it. --server-user current is the explicit
// way back to root.
func TestEveryCommandStartsTheServerAsTheSameUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a harness running as root drops the server's privileges")
	}
	ws := reachableDir(t)
	golden := "version: 1\ncases:\n  - id: loot\n    prompt: show me the loot\n    expect_tool: loot\n"
	if err := os.WriteFile(filepath.Join(ws, "tasks.yaml"), []byte(golden), 0o644); err != nil {
		t.Fatal(err)
	}
	env := baseEnv("OPENAI_API_KEY=" + canaryEnvToken)
	server := bin.server + " --behaviour secrets-probe"
	for _, tc := range []struct {
		name string
		args []string
		uid  string
	}{
		{"check", []string{"check", "--runs", "1", "--only", "DISC-1"}, "65534"},
		{"probe", []string{"probe"}, "65534"},
		{"eval", []string{"eval", "--golden", "tasks.yaml", "--runs", "1", "--out", "eval.json"}, "65534"},
		{"run", []string{"run", "--layers", "0,1", "--golden", "tasks.yaml", "--runs", "1", "--conformance-runs", "1", "--out", "run.json"}, "65534"},
		{"check-current", []string{"check", "--runs", "1", "--only", "DISC-1", "--server-user", "current"}, "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loot := filepath.Join(ws, "loot-"+tc.name)
			args := append(tc.args, "--cmd", server, "--cwd", ws, "--server-env", "HOSTILE_OUT="+loot)
			r := runMCPEval(t, defaultDeadline, ws, env, args...)
			noPanic(t, r)
			if r.code == 2 {
				t.Fatalf("exit 2:\n%s\n%s", tail(r.stdout), tail(r.stderr))
			}
			l := lootOf(t, loot)
			if !strings.Contains(l, "uid="+tc.uid+" ") {
				t.Errorf("%s started the server as another user than uid %s:\n%s", tc.name, tc.uid, tail(l))
			}
			if tc.uid != "0" && strings.Contains(l, canaryEnvToken) {
				t.Errorf("%s: the server read the model key", tc.name)
			}
		})
	}
	t.Run("action", func(t *testing.T) {
		// The action has no server-env input: env(1) hands the server
		// where to write.
		loot := filepath.Join(ws, "loot-action")
		a := runAction(t, ws, "pull_request_opened.json", "ghs_uid_canary_token", "INPUT_SERVER-COMMAND=env HOSTILE_OUT="+loot+" "+server, "OPENAI_API_KEY="+canaryEnvToken)
		if a.code == 2 {
			t.Fatalf("the action could not run:\n%s", a.log)
		}
		if l := lootOf(t, loot); !strings.Contains(l, "uid=65534 ") || strings.Contains(l, canaryEnvToken) {
			t.Errorf("the action started the server as another user than uid 65534, or it read the key:\n%s", tail(l))
		}
	})
}
