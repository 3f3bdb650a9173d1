package action

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
)

// canary is the token every test seeds; it must never show up anywhere.
const canary = "ghs_CANARY_5ecret_T0ken_do_not_print"

// runnerEnv emulates what the runner gives a step: INPUT_* variables (with
// hyphens), GITHUB_* variables, the event file, and the output and summary
// files, plus a fake GitHub API.
type runnerEnv struct {
	t      *testing.T
	vars   map[string]string
	dir    string
	fake   *fakegithub.Server
	mu     sync.Mutex
	stdout bytes.Buffer
}

func newRunnerEnv(t *testing.T, eventName, fixture string) *runnerEnv {
	t.Helper()
	dir := t.TempDir()
	fake := fakegithub.New("octo", "server")
	fake.Token = canary
	t.Cleanup(fake.Close)
	e := &runnerEnv{t: t, dir: dir, fake: fake, vars: map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_REPOSITORY":   "octo/server",
		"GITHUB_RUN_ID":       "999",
		"GITHUB_SHA":          "2222222222222222222222222222222222222222",
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_API_URL":      fake.APIURL(),
		"GITHUB_WORKFLOW":     "evals",
		"GITHUB_WORKFLOW_REF": "octo/server/.github/workflows/evals.yml@refs/heads/main",
		"GITHUB_WORKSPACE":    dir,
		"GITHUB_OUTPUT":       filepath.Join(dir, "output.txt"),
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"),
		"GITHUB_EVENT_NAME":   eventName,
		"INPUT_GITHUB-TOKEN":  canary,
		"INPUT_COMMENT":       "true",
		"INPUT_LAYERS":        "auto",
		"INPUT_SERVER-URL":    "http://172.17.0.1:3000/mcp",
	}}
	if fixture != "" {
		abs, err := filepath.Abs(filepath.Join("testdata", "events", fixture))
		if err != nil {
			t.Fatal(err)
		}
		e.vars["GITHUB_EVENT_PATH"] = abs
	}
	return e
}

func (e *runnerEnv) getenv(k string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.vars[k]
}

func (e *runnerEnv) set(k, v string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.vars[k] = v
}

func (e *runnerEnv) environ() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	return out
}

func (e *runnerEnv) runner() *Runner {
	return &Runner{Getenv: e.getenv, Environ: e.environ, Stdout: &e.stdout}
}

func (e *runnerEnv) plan() Plan {
	e.t.Helper()
	p, err := e.runner().Plan()
	if err != nil {
		e.t.Fatalf("plan: %v", err)
	}
	return p
}

func (e *runnerEnv) file(name string) string {
	b, err := os.ReadFile(filepath.Join(e.dir, name))
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	return string(b)
}

// outputs parses GITHUB_OUTPUT's heredoc blocks (name<<DELIM / value / DELIM).
func (e *runnerEnv) outputs() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	lines := strings.Split(e.file("output.txt"), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		if len(val) != 1 {
			e.t.Errorf("output %s has %d lines", name, len(val))
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}
