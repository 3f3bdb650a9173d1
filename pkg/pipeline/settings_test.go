package pipeline

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/redact"
)

// Sources stack in one order: the command's defaults < mcp-eval.yaml < the
// action's inputs < flags; a later source wins only where it says
// something.
func TestOverlayPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp-eval.yaml")
	os.WriteFile(cfg, []byte("server:\n  command: ./srv --stdio\n  env: {A: b}\nconformance:\n  runs: 3\n  call-tools: [t1]\neval:\n  runs: 2\n  judge: openai:j\ngolden: g.yaml\noutput:\n  report: out/r.json\n"), 0o644)
	file, err := LoadConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defaults := Settings{Report: "report.json", Timeout: time.Minute, Runs: 5}
	inputs := Settings{Runs: 4, Notes: []string{"from the event"}}
	flags := Settings{ConformanceRuns: 7, CallTools: []string{"t2"}}
	s := defaults.Overlay(file).Overlay(inputs).Overlay(flags)
	want := map[string]any{
		"Command": "./srv --stdio", "Cwd": dir, "ServerEnv": []string{"A=b"},
		"ConformanceRuns": 7, "Runs": 4, "Judge": "openai:j", "Timeout": time.Minute,
		"Golden": filepath.Join(dir, "g.yaml"), "Report": filepath.Join(dir, "out", "r.json"),
		"CallTools": []string{"t1", "t2"}, "Notes": []string{"from the event"},
	}
	v := reflect.ValueOf(s)
	for name, w := range want {
		if got := v.FieldByName(name).Interface(); !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %#v, want %#v", name, got, w)
		}
	}
	if len(file.CallTools) != 1 {
		t.Errorf("Overlay wrote into the file's settings: %q", file.CallTools)
	}
}

// A source that names a server names all of it: --url on the command line
// is not mixed with the file's stdio command, environment or build.
func TestOverlayReplacesTheWholeServer(t *testing.T) {
	file := Settings{Command: "./srv", Cwd: "/repo", ServerEnv: []string{"K=v"}, Build: "make", User: "current"}
	s := file.Overlay(Settings{URL: "http://127.0.0.1:9/mcp"})
	if s.Command != "" || s.Cwd != "" || s.ServerEnv != nil || s.Build != "" || s.URL == "" {
		t.Fatalf("mixed servers: %+v", s)
	}
	if s.User != "current" {
		t.Errorf("the user policy is not part of the server's address: %q", s.User)
	}
	if file := (Settings{Command: "./srv", ServerFrom: "server.command in mcp-eval.yaml"}); file.Overlay(Settings{URL: "http://x/mcp"}).ServerFrom != "" {
		t.Error("a flag's server is said to come from the file")
	}
	if _, err := Resolve(s, Env{Redact: &redact.Redactor{}}); err != nil {
		t.Fatalf("resolve: %v", err)
	}
}

// Resolve says which setting is wrong and what to do.
func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want string
	}{
		{Settings{}, "name the server under test"},
		{Settings{URL: "http://x/mcp", Command: "srv"}, "exclusive"},
		{Settings{Command: "srv", Headers: []string{"A: b"}}, "only applies to a --url server"},
		{Settings{URL: "http://x/mcp", Headers: []string{"nocolon"}}, "invalid --header"},
		{Settings{Command: "srv", ConformanceRuns: 101}, "--conformance-runs"},
		{Settings{Command: "srv", Runs: 101}, "runs per case must be 1..100"},
		{Settings{Command: "srv", Only: []string{"DISC-99"}}, "--only"},
		{Settings{Command: "srv", Layers: []string{"4"}}, "unknown layer"},
		{Settings{Command: "srv", User: "nobody"}, "server user"},
		{Settings{URL: "http://x/mcp", Headers: []string{"Authorization: Bearer ${NO_SUCH_VAR_X}"}}, "NO_SUCH_VAR_X"},
	} {
		_, err := Resolve(tc.s, Env{Redact: &redact.Redactor{}, LookupEnv: func(string) (string, bool) { return "", false }})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want one mentioning %q", tc.s, err, tc.want)
		}
	}
}

// The deadline follows the layers when no source sets one, and the
// models of a trigger come from the file's lists.
func TestResolveDefaults(t *testing.T) {
	env := Env{Redact: &redact.Redactor{}}
	p, err := Resolve(Settings{Command: "srv"}, env)
	if err != nil || p.Timeout != DefaultTimeout || p.Conformance.Runs != DefaultConformanceRuns {
		t.Fatalf("%v %+v", err, p)
	}
	p, err = Resolve(Settings{Command: "srv", Layers: []string{"0,1"}, Models: []string{"none"}}, env)
	if err != nil || p.Timeout != DefaultModelRunTimeout || p.Behavior.Models != nil {
		t.Fatalf("%v timeout %v models %q", err, p.Timeout, p.Behavior.Models)
	}
}

// A variable an endpoint's key-env names is a secret whatever its name:
// as root it makes auto drop privileges, and the reason names it.
func TestKeyEnvMakesAutoDrop(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root drops privileges")
	}
	lookup := func(k string) (string, bool) { return "abc123456", k == "MY_LLM" }
	p, err := Resolve(Settings{Command: "srv", KeyEnvs: []string{"MY_LLM"}}, Env{Redact: &redact.Redactor{}, LookupEnv: lookup})
	if err != nil || p.Target.RunAs == nil || !strings.Contains(p.Target.Why, "MY_LLM") {
		t.Fatalf("%v: runs as %v, why %q", err, p.Target.RunAs, p.Target.Why)
	}
	p, err = Resolve(Settings{Command: "srv"}, Env{Redact: &redact.Redactor{}, LookupEnv: lookup})
	if err != nil || p.Target.RunAs != nil {
		t.Fatalf("%v: without key-env MY_LLM is no secret, yet runs as %v", err, p.Target.RunAs)
	}
}

// A golden set named where nothing chose the layers runs nothing: a note
// says so (and whether the file is there), not a silent Layer 0 pass.
func TestGoldenWithoutLayersIsNoted(t *testing.T) {
	env := Env{Redact: &redact.Redactor{}}
	p, err := Resolve(Settings{Command: "srv", Golden: filepath.Join(t.TempDir(), "taks.yaml")}, env)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Join(p.Notes, "\n"); !strings.Contains(n, "no layer that runs it") || !strings.Contains(n, "cannot be read") {
		t.Errorf("notes %q", p.Notes)
	}
	for _, layers := range [][]string{{"0,1"}, {"conformance"}} {
		p, err := Resolve(Settings{Command: "srv", Golden: "tasks.yaml", Layers: layers, Models: []string{"none"}}, env)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Join(p.Notes, "\n"); strings.Contains(n, "no layer that runs it") {
			t.Errorf("layers %q chosen: notes %q", layers, p.Notes)
		}
	}
}

// The file's model specs are checked when it is read, at their lines and
// with its other problems: a mistyped endpoint was said at run time, once
// a run, with no line.
func TestLoadConfigChecksModelSpecs(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcp-eval.yaml")
	os.WriteFile(cfg, []byte("models:\n  default: [fake:a, fak:b]\n  weekly:\n    - openai:gpt-5\n    - gpt-5-mini\nendpoints:\n  fake: {base-url: \"http://127.0.0.1:9/v1\"}\neval:\n  judge: antropic:claude\n"), 0o644)
	_, err := LoadConfig(cfg)
	if err == nil {
		t.Fatal("LoadConfig accepted unknown endpoints")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		`mcp-eval.yaml:2: models.default: model fak:b: unknown endpoint "fak": did you mean fake:b?`,
		`mcp-eval.yaml:5: models.weekly: model "gpt-5-mini" has no endpoint prefix`,
		`mcp-eval.yaml:9: eval.judge: model antropic:claude: unknown endpoint "antropic": did you mean anthropic:claude?`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("problem %d: %q, want %q", i+1, lines[i], w)
		}
	}
	s, err := LoadConfig(writeConfig(t, "server:\n  url: http://x/mcp\nmodels:\n  default: [fake:a]\nendpoints:\n  fake: {base-url: \"http://127.0.0.1:9/v1\"}\neval:\n  judge: none\n"))
	if err != nil || s.ServerFrom != "server.url in mcp-eval.yaml" {
		t.Errorf("a good file: %v, server from %q", err, s.ServerFrom)
	}
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mcp-eval.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
