package tokens_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/tokens"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// TestAgainstJSTiktoken counts the tools array of the bundled server and
// of every modern interop server with the embedded tokenizer and with npm
// js-tiktoken (interop/tokenizer), in both encodings: the whole array and
// each tool's element must agree token for token. Skips only when node or
// the package is missing outside CI.
func TestAgainstJSTiktoken(t *testing.T) {
	script := filepath.Join(interop.Root(), "interop", "tokenizer", "count.mjs")
	need(t, script)
	lists := map[string][]mcpclient.Tool{"refserver": refserverTools(t)}
	for _, tg := range interop.Targets() {
		if tg.Era != interop.Modern || tg.Transport != interop.Stdio {
			continue
		}
		if tg.Available() != nil && os.Getenv("CI") != "true" {
			t.Logf("%s not installed: compared without it", tg.Name)
			continue
		}
		lists[tg.Name] = stdioTools(t, tg)
	}
	// Text a tokenizer gets wrong first: non-ASCII, long numbers, runs of
	// spaces and a description a server could send.
	lists["unicode"] = []mcpclient.Tool{{Name: "wetter_abfragen", Description: "Liefert das Wetter für einen Ort — °C/°F, 日本語 auch, emoji 🌧️; ids like 12345678901234",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"ort":{"type":"string","description":"Städtename,    z. B. „Zürich“"}},"required":["ort"]}`)}}
	// Count everything first, then ask node once: it starts slowly.
	type job struct {
		name  string
		c     report.ToolTokenCount
		each  []llm.NamedJSON
		texts []string
	}
	var jobs []job
	m := tokens.NewMeter()
	for name, tools := range lists {
		if len(tools) == 0 {
			t.Fatalf("%s listed no tools", name)
		}
		lt := toLLM(tools)
		got, err := m.ToolSurface(lt, []string{"openai:gpt-4-turbo", "openai:gpt-5-mini"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Counts) != 2 || got.Counts[0].Encoding != tokens.O200kBase || got.Counts[1].Encoding != tokens.Cl100kBase {
			t.Fatalf("%s: counts = %+v, want o200k_base then cl100k_base", name, got.Counts)
		}
		whole, each, err := llm.ToolsArray(lt)
		if err != nil {
			t.Fatal(err)
		}
		texts := []string{string(whole)}
		for _, e := range each {
			texts = append(texts, string(e.JSON))
		}
		for _, c := range got.Counts {
			jobs = append(jobs, job{name: name, c: c, each: each, texts: texts})
		}
	}
	reqs := make([]map[string]any, len(jobs))
	for i, j := range jobs {
		reqs[i] = map[string]any{"encoding": j.c.Encoding, "texts": j.texts}
	}
	answers := jsCount(t, script, reqs)
	for i, j := range jobs {
		want, c := answers[i], j.c
		if len(want) != len(j.texts) {
			t.Fatalf("js-tiktoken answered %d counts for %d texts", len(want), len(j.texts))
		}
		if c.Total != want[0] {
			t.Errorf("%s %s: total %d, js-tiktoken %d", j.name, c.Encoding, c.Total, want[0])
		}
		byName := map[string]int{}
		for _, it := range c.Tools {
			byName[it.Name] = it.Tokens
		}
		for k, e := range j.each {
			if byName[e.Name] != want[k+1] {
				t.Errorf("%s %s: tool %s %d tokens, js-tiktoken %d", j.name, c.Encoding, e.Name, byName[e.Name], want[k+1])
			}
		}
		for k := 1; k < len(c.Tools); k++ {
			if c.Tools[k].Tokens > c.Tools[k-1].Tokens {
				t.Errorf("%s %s: tools not largest first: %+v", j.name, c.Encoding, c.Tools)
			}
		}
		t.Logf("%s %s: %d tokens, %d tools, equal to js-tiktoken", j.name, c.Encoding, c.Total, len(c.Tools))
	}
}

func TestEncodingFor(t *testing.T) {
	for model, want := range map[string]string{
		"openai:gpt-4": tokens.Cl100kBase, "gpt-4-turbo": tokens.Cl100kBase, "azure/gpt-35-turbo": tokens.Cl100kBase, "gpt-3.5-turbo-0125": tokens.Cl100kBase,
		"openai:gpt-4o-mini": tokens.O200kBase, "gpt-4.1": tokens.O200kBase, "openai:gpt-5-mini": tokens.O200kBase, "anthropic:claude-sonnet-4-5": tokens.O200kBase,
	} {
		if got := tokens.EncodingFor(model); got != want {
			t.Errorf("EncodingFor(%q) = %s, want %s", model, got, want)
		}
	}
}

// TestDefaultCountOnly: with no model of the GPT-4/3.5 families, only the
// default encoding is counted, and its models list is empty, not null.
func TestDefaultCountOnly(t *testing.T) {
	got, err := tokens.NewMeter().ToolSurface(toLLM(refserverTools(t)), []string{"anthropic:claude-haiku-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Counts) != 1 || got.Counts[0].Encoding != tokens.O200kBase || got.Primary().Total == 0 {
		t.Fatalf("counts = %+v", got.Counts)
	}
	b, _ := json.Marshal(got)
	if !bytes.Contains(b, []byte(`"models":["anthropic:claude-haiku-4-5"]`)) {
		t.Fatalf("the default count names the models it stands for: %s", b)
	}
	var _ *report.ToolTokenCount = got.Count(tokens.O200kBase)
}

func need(t *testing.T, script string) {
	t.Helper()
	_, errNode := exec.LookPath("node")
	_, errMod := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "js-tiktoken"))
	if errNode == nil && errMod == nil {
		return
	}
	msg := "js-tiktoken is not installed: run bash scripts/setup-interop.sh (needs node and npm)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: the independent tokenizer must run)")
	}
	t.Skip(msg)
}

func jsCount(t *testing.T, script string, reqs []map[string]any) [][]int {
	t.Helper()
	in, _ := json.Marshal(reqs)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("js-tiktoken: %v\n%s", err, stderr.String())
	}
	var n [][]int
	if err := json.Unmarshal(out, &n); err != nil || len(n) != len(reqs) {
		t.Fatalf("js-tiktoken answered %q (%v)", out, err)
	}
	return n
}

func toLLM(tools []mcpclient.Tool) []llm.Tool {
	out := make([]llm.Tool, len(tools))
	for i, tl := range tools {
		out[i] = llm.Tool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema}
	}
	return out
}

func refserverTools(t *testing.T) []mcpclient.Tool {
	t.Helper()
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	tr, err := transport.NewHTTP(transport.HTTPConfig{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	return listTools(t, tr)
}

func stdioTools(t *testing.T, tg interop.Target) []mcpclient.Tool {
	t.Helper()
	argv, dir, err := tg.Command()
	if err != nil {
		t.Fatal(err)
	}
	env, _ := transport.ServerEnv(nil, nil, os.LookupEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := transport.StartStdio(ctx, transport.StdioConfig{Argv: argv, Dir: dir, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	return listTools(t, st)
}

func listTools(t *testing.T, tr transport.Transport) []mcpclient.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := mcpclient.Connect(ctx, tr, mcpclient.Config{Trace: mcpclient.NewTrace()})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.Close()
	ts, err := c.ListTools(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	return ts.Tools
}
