package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/draft"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonschema"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/target"
)

// listTools lists a server's tools through the product's own opener, as
// the reference the draft is judged against.
func listTools(t *testing.T, tg target.Target) []mcpclient.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := tg.Connect(ctx, false, mcpclient.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lt, err := cl.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return lt.Tools
}

// checkDraft is what the issue says a draft must be: it loads, every
// expect_args validates against its tool's inputSchema, every tool has a
// case, there are at least four negatives; plus the header and a comment
// above every case.
func checkDraft(t *testing.T, path string, tools []mcpclient.Tool) *golden.Set {
	t.Helper()
	set, err := golden.Load(path)
	if err != nil {
		t.Fatalf("the draft does not load: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if !strings.HasPrefix(text, "# DRAFT golden set") {
		t.Errorf("no draft header:\n%s", text)
	}
	if n, commented := len(regexp.MustCompile(`(?m)^  - id: `).FindAllString(text, -1)), len(regexp.MustCompile(`(?m)^  # .*\n  - id: `).FindAllString(text, -1)); n != commented || n != len(set.Cases) {
		t.Errorf("%d cases, %d with a comment above saying how it was made", n, commented)
	}
	byName := map[string]mcpclient.Tool{}
	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range tools {
		byName[tool.Name] = tool
		s, err := jsonschema.Compile(tool.InputSchema, jsonschema.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		schemas[tool.Name] = s
	}
	covered := map[string]bool{}
	negatives := 0
	for _, c := range set.Cases {
		if c.Negative {
			negatives++
			continue
		}
		todo := slices.Contains(c.Tags, draft.TagNeedsValue)
		steps := c.Steps()
		for i, st := range steps {
			covered[st.Tool] = true
			s := schemas[st.Tool]
			if s == nil {
				t.Errorf("%s names %s, which the server does not list", c.ID, st.Tool)
				continue
			}
			if todo {
				continue
			}
			args := map[string]any{}
			for k, v := range st.Args {
				args[k] = v
			}
			if i > 0 {
				// A chain's later step leaves out what the earlier
				// tool's outputSchema gives by name.
				var out struct {
					Properties map[string]json.RawMessage `json:"properties"`
				}
				_ = json.Unmarshal(byName[steps[i-1].Tool].OutputSchema, &out)
				for name, ps := range out.Properties {
					if _, has := args[name]; !has {
						var v any = "from-the-previous-result"
						if strings.Contains(string(ps), `"integer"`) || strings.Contains(string(ps), `"number"`) {
							v = 1
						}
						args[name] = v
					}
				}
			}
			if err := s.ValidateAny(args); err != nil {
				t.Errorf("%s step %d: args %v do not validate against %s's inputSchema: %v", c.ID, i+1, st.Args, st.Tool, err)
			}
		}
	}
	for _, tool := range tools {
		if !covered[tool.Name] {
			t.Errorf("no case for tool %s", tool.Name)
		}
	}
	if negatives < 4 {
		t.Errorf("%d negative cases, want at least 4", negatives)
	}
	return set
}

// draftModel answers like a model that reads the draft: the call each
// case expects, no call for a negative, a pass from the judge.
func draftModel(cases *[]golden.Case) func(*llmfake.Request) llmfake.Reply {
	return func(r *llmfake.Request) llmfake.Reply {
		if r.Output != nil {
			return llmfake.Verdict(`{"verdict":"pass","reason":"as asked"}`)
		}
		if len(r.Results()) > 0 {
			return llmfake.Text("Done.")
		}
		for _, c := range *cases {
			if c.Prompt != r.LastUserText() || c.Negative {
				continue
			}
			st := c.Steps()[0]
			args, _ := json.Marshal(st.Args)
			if st.Args == nil {
				args = []byte("{}")
			}
			return llmfake.Tool(st.Tool, string(args))
		}
		return llmfake.Text("Hello! Nothing to look up here.")
	}
}

func TestGoldenInitDraftsTheReferenceServerAndTheDraftRunsThroughEval(t *testing.T) {
	var cases []golden.Case
	e := newEvalEnvWith(t, "", draftModel(&cases))
	out := e.path("golden/tasks.yaml")
	code, stdout, stderr := e.run("golden", "init", "--url", e.url, "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "wrote "+out) || !strings.Contains(stdout, "mcp-eval eval --golden "+out+" --url "+e.url) {
		t.Errorf("stdout:\n%s", stdout)
	}
	tools := listTools(t, target.Target{URL: e.url})
	set := checkDraft(t, out, tools)
	cases = set.Cases

	// The draft runs through eval with no edit; a model that does what
	// the draft asks passes every case but send_email's: its
	// confirmation (an MRTR input request) needs inputs, which no schema
	// tells the draft about.
	code, stdout, stderr = e.run("eval", "--config", e.path("mcp-eval.yaml"), "--golden", out, "--url", e.url, "--runs", "1", "--out", e.path("report.json"))
	if code == ExitError {
		t.Fatalf("eval exit %d\n%s\n%s", code, stdout, stderr)
	}
	rep, err := report.Load(e.path("report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Behavior.Cases) != len(set.Cases) {
		t.Fatalf("report has %d cases, the draft %d", len(rep.Behavior.Cases), len(set.Cases))
	}
	for _, r := range rep.Behavior.Results {
		if r.Passed.K != r.Passed.N && r.Case != "send_email" {
			t.Errorf("%s × %s: %d/%d with a model that follows the draft: %v", r.Case, r.Model, r.Passed.K, r.Passed.N, r.Notes)
		}
	}
}

func TestGoldenInitNeverOverwritesWithoutForce(t *testing.T) {
	e := newEvalEnv(t, "")
	out := e.path("tasks.yaml") // the env's own golden set
	before, _ := os.ReadFile(out)
	code, _, stderr := e.run("golden", "init", "--url", e.url, "--out", out)
	if code != ExitError || !strings.Contains(stderr, "already exists") || !strings.Contains(stderr, "--force") {
		t.Fatalf("exit %d, %q", code, stderr)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Fatal("the file was changed")
	}
	code, _, stderr = e.run("golden", "init", "--url", e.url, "--out", out, "--force")
	if code != ExitOK {
		t.Fatalf("--force: exit %d, %q", code, stderr)
	}
	if after, _ := os.ReadFile(out); !strings.HasPrefix(string(after), "# DRAFT") {
		t.Fatalf("--force did not write the draft:\n%s", after)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"golden", "init", "--url", e.url}, "--out golden/tasks.yaml"},
		{[]string{"golden", "init", "--url", e.url, "--out", e.dir}, "is a directory"},
		{[]string{"golden", "new"}, "the one command is init"},
		{[]string{"golden", "init", "--out", e.path("x.yaml")}, "--url"},
	} {
		code, _, stderr := e.run(tc.args...)
		if code != ExitError || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestGoldenInitWithAModelDraftsPromptsAndMarksWhatItFails(t *testing.T) {
	values := regexp.MustCompile(`Values to mention: (.*)`)
	// The model words every prompt keeping the values, then, when the
	// cases run, calls no tool: every positive case fails, every
	// negative passes.
	e := newEvalEnvWith(t, "", func(r *llmfake.Request) llmfake.Reply {
		if strings.Contains(r.System, "You write test prompts") {
			var vals []string
			if m := values.FindStringSubmatch(r.LastUserText()); m != nil {
				for _, kv := range strings.Split(m[1], "; ") {
					_, v, _ := strings.Cut(kv, " = ")
					vals = append(vals, strings.Trim(v, `"`))
				}
			}
			p, _ := json.Marshal(map[string]string{"prompt": "Hey, can you sort this out for me: " + strings.Join(vals, ", ") + "?"})
			return llmfake.Verdict(string(p))
		}
		if r.Output != nil {
			return llmfake.Verdict(`{"verdict":"pass","reason":"fine"}`)
		}
		return llmfake.Text("I would rather not.")
	})
	out := e.path("golden/tasks.yaml")
	code, stdout, stderr := e.run("golden", "init", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--out", out, "--models", "openai:gpt-5-mini")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The draft's run warns about the file the user gets, not the
	// temporary copy it ran.
	if strings.Contains(stdout+stderr, "mcp-eval-golden-init-") {
		t.Errorf("a message names the temporary copy of the draft:\n%s\n%s", stdout, stderr)
	}
	set := checkDraft(t, out, listTools(t, target.Target{URL: e.url}))
	data, _ := os.ReadFile(out)
	drafted := 0
	for _, c := range set.Cases {
		failing := slices.Contains(c.Tags, draft.TagFailsDrafts)
		if c.Negative == failing {
			t.Errorf("%s (negative %v) tagged %v", c.ID, c.Negative, c.Tags)
		}
		if slices.Contains(c.Tags, draft.TagModel) {
			drafted++
			if !strings.HasPrefix(c.Prompt, "Hey, can you sort this out") {
				t.Errorf("%s: model-drafted but prompt %q", c.ID, c.Prompt)
			}
		}
	}
	if drafted == 0 {
		t.Errorf("no prompt was drafted by the model:\n%s", data)
	}
	if !strings.Contains(string(data), "# openai:gpt-5-mini already fails this case (one run when drafted)") {
		t.Errorf("no mark of the failing model:\n%s", data)
	}
	if !strings.Contains(stdout, "already failed by a model") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// A model that answers, but not with the JSON asked for, leaves the
// template prompts: the draft is written and run, with a warning, not an
// error that blames the key and the model name (a user's trial).
func TestGoldenInitKeepsTemplatePromptsWhenTheModelWritesNoJSON(t *testing.T) {
	e := newEvalEnvWith(t, "", func(r *llmfake.Request) llmfake.Reply {
		if strings.Contains(r.System, "You write test prompts") {
			return llmfake.Verdict("Sure! Here is a prompt: sort this out for me.")
		}
		if r.Output != nil {
			return llmfake.Verdict(`{"verdict":"pass","reason":"fine"}`)
		}
		return llmfake.Text("I would rather not.")
	})
	out := e.path("golden/tasks.yaml")
	code, stdout, stderr := e.run("golden", "init", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--out", out, "--models", "openai:gpt-5-mini")
	if code != ExitOK {
		t.Fatalf("exit %d, want the draft written\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "the template prompts stay") || strings.Contains(stderr, "check the key") {
		t.Errorf("stderr %q: want a warning that the template prompts stay, not advice about the key", stderr)
	}
	set := checkDraft(t, out, listTools(t, target.Target{URL: e.url}))
	for _, c := range set.Cases {
		if slices.Contains(c.Tags, draft.TagModel) {
			t.Errorf("%s: tagged as drafted by the model, whose answers were no JSON", c.ID)
		}
	}
}

// TestGoldenInitOnRealServers drafts the interop servers (other SDKs,
// installed by scripts/setup-interop.sh) and runs each draft through eval
// with the no-LLM baseline.
func TestGoldenInitOnRealServers(t *testing.T) {
	for _, name := range []string{"ts-v2-stdio", "go-sdk-stdio", "mcp-go-stdio", "mcp-go-http", "ts-v2-http", "everything-stdio"} {
		t.Run(name, func(t *testing.T) {
			tg, ok := interopTarget(t, name)
			if !ok {
				return
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "golden", "tasks.yaml")
			reportPath := filepath.Join(dir, "report.json")
			var server []string
			var tt target.Target
			if tg.url != "" {
				server, tt = []string{"--url", tg.url}, target.Target{URL: tg.url}
			} else {
				server, tt = []string{"--cwd", tg.dir, "--cmd", quoteArgv(tg.argv)}, target.Target{Argv: tg.argv, Dir: tg.dir, Env: os.Environ()}
			}
			code, stdout, stderr := run(t, append([]string{"golden", "init", "--out", out}, server...)...)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			set := checkDraft(t, out, listTools(t, tt))
			code, stdout, stderr = run(t, append([]string{"eval", "--golden", out, "--runs", "1", "--out", reportPath, "--cache-dir", filepath.Join(dir, "cache")}, server...)...)
			if code == ExitError {
				t.Fatalf("eval of the draft: exit %d\n%s\n%s", code, stdout, stderr)
			}
			rep, err := report.Load(reportPath)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Behavior.Cases) != len(set.Cases) {
				t.Errorf("report has %d cases, the draft %d", len(rep.Behavior.Cases), len(set.Cases))
			}
		})
	}
}

type interopServer struct {
	url  string
	argv []string
	dir  string
}

func interopTarget(t *testing.T, name string) (interopServer, bool) {
	t.Helper()
	tg, ok := interop.Lookup(name)
	if !ok {
		t.Fatalf("no interop target %s", name)
	}
	if tg.Transport == interop.HTTP {
		return interopServer{url: tg.StartHTTP(t)}, true
	}
	tg.Require(t)
	argv, dir, err := tg.Command()
	if err != nil {
		t.Fatal(err)
	}
	return interopServer{argv: argv, dir: dir}, true
}
