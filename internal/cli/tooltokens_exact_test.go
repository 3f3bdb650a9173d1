package cli

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm/llmfake"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// countRequests are the fake's token-counting requests.
func countRequests(f *llmfake.Server) []*llmfake.Request {
	var out []*llmfake.Request
	for _, r := range f.Requests() {
		if r.Count {
			out = append(out, r)
		}
	}
	return out
}

// exactByModel indexes a report's exact counts.
func exactByModel(t *testing.T, path string) (*report.Report, map[string]report.ToolTokenExact) {
	t.Helper()
	rep, err := report.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ToolTokens == nil || rep.ToolTokens.Primary() == nil {
		t.Fatalf("no toolTokens in %s", path)
	}
	m := map[string]report.ToolTokenExact{}
	for _, e := range rep.ToolTokens.Exact {
		m[e.Model] = e
	}
	return rep, m
}

// tool-tokens: exact on a run holding both providers' keys: each model's
// provider is asked, at its counting endpoint, for the tools' share, and
// the report holds that figure beside the embedded estimate; the terminal
// shows both, labelled. The counts are the fake's own answers, so a wrong
// body (a max_tokens on count_tokens, a store on input_tokens) would
// have been refused instead.
func TestToolTokensExactFromEachProvider(t *testing.T) {
	e := newEvalEnv(t, "conformance:\n  tool-tokens: exact\n")
	code, out, stderr := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "0,1",
		"--conformance-runs", "1", "--out", e.path("exact.json"), "--markdown", e.path("exact.md"), "--html", e.path("exact.html"))
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	rep, exact := exactByModel(t, e.path("exact.json"))
	counts := countRequests(e.models)
	if len(counts) != 4 {
		t.Fatalf("%d counting requests, want 2 per model", len(counts))
	}
	// In order: a model's count with tools, then without.
	want := map[string]struct {
		provider, endpoint string
		with, without      *llmfake.Request
	}{
		"openai:gpt-5-mini":           {"openai", "POST /v1/responses/input_tokens", counts[0], counts[1]},
		"anthropic:claude-sonnet-4-5": {"anthropic", "POST /v1/messages/count_tokens", counts[2], counts[3]},
	}
	if len(exact) != len(want) || rep.ToolTokens.ExactMethod != report.ExactMethod {
		t.Fatalf("exact %+v, method %q", rep.ToolTokens.Exact, rep.ToolTokens.ExactMethod)
	}
	for model, w := range want {
		got := exact[model]
		if got.Provider != w.provider || got.Endpoint != w.endpoint || got.Tokens == nil || got.Note != "" {
			t.Fatalf("%s: %+v", model, got)
		}
		if len(w.with.Tools) == 0 || len(w.without.Tools) != 0 || w.with.Model != strings.SplitN(model, ":", 2)[1] {
			t.Fatalf("%s: the counts sent %d and %d tools for model %q", model, len(w.with.Tools), len(w.without.Tools), w.with.Model)
		}
		if *got.Tokens != w.with.Counted-w.without.Counted || got.WithTools != w.with.Counted || got.WithoutTools != w.without.Counted {
			t.Errorf("%s: tokens %d (%d−%d), the provider answered %d and %d", model, *got.Tokens, got.WithTools, got.WithoutTools, w.with.Counted, w.without.Counted)
		}
		if got.Encoding != "o200k_base" || got.Estimate != rep.ToolTokens.Primary().Total {
			t.Errorf("%s: estimate %d %s beside it, want the o200k_base total %d", model, got.Estimate, got.Encoding, rep.ToolTokens.Primary().Total)
		}
	}
	if a := exact["anthropic:claude-sonnet-4-5"]; *a.Tokens <= llmfake.ToolPreambleTokens {
		t.Errorf("anthropic's share %d does not hold the tool preamble it counts", *a.Tokens)
	}
	for _, w := range []string{"exact (provider)", "o200k_base estimate", "anthropic:claude-sonnet-4-5"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	for _, f := range []string{"exact.md", "exact.html"} {
		b := readFile(t, e.path(f))
		if !strings.Contains(b, "exact (provider)") || !strings.Contains(b, "POST /v1/messages/count_tokens") || !strings.Contains(b, "o200k_base estimate") && !strings.Contains(b, `o200k\_base estimate`) {
			t.Errorf("%s does not show the exact counts:\n%.3000s", f, b)
		}
	}
}

// Without the opt-in no counting endpoint is called; with it but no key
// (a replay on a fork), none is called either and each model says why;
// a provider's refusal is a note and the run still passes.
func TestToolTokensExactOnlyWithOptInAndKey(t *testing.T) {
	e := newEvalEnvOpts(t, "", llmfake.Options{Default: sensible, Count: func(r *llmfake.Request) llmfake.Reply {
		if r.Dialect == llmfake.Messages {
			return llmfake.Reply{Status: http.StatusBadRequest, Message: "counting is not supported for this model"}
		}
		return llmfake.Reply{}
	}})
	tape := e.path("tape")
	code, out, stderr := e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "0,1",
		"--conformance-runs", "1", "--record", tape, "--out", e.path("estimate.json"))
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if n := len(countRequests(e.models)); n != 0 {
		t.Fatalf("%d counting requests without tool-tokens: exact", n)
	}
	if rep, exact := exactByModel(t, e.path("estimate.json")); len(exact) != 0 || rep.ToolTokens.ExactMethod != "" || strings.Contains(out, "exact (provider)") {
		t.Fatalf("exact counts without the opt-in: %+v", rep.ToolTokens)
	}

	// Opted in, no key: the cassette answers the models, nobody counts.
	code, out, stderr = e.runWith(noKeys, "run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "0,1",
		"--conformance-runs", "1", "--replay", tape, "--tool-tokens", "exact", "--out", e.path("nokey.json"))
	if code != ExitOK {
		t.Fatalf("replay: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if n := len(countRequests(e.models)); n != 0 {
		t.Fatalf("%d counting requests without a key", n)
	}
	_, exact := exactByModel(t, e.path("nokey.json"))
	for model, env := range map[string]string{"openai:gpt-5-mini": "OPENAI_API_KEY", "anthropic:claude-sonnet-4-5": "ANTHROPIC_API_KEY"} {
		if x := exact[model]; x.Tokens != nil || !strings.Contains(x.Note, env+" is not set") {
			t.Errorf("%s without its key: %+v", model, x)
		}
	}

	// Opted in with keys: Anthropic refuses, OpenAI counts; the run passes.
	code, out, stderr = e.run("run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "0,1",
		"--conformance-runs", "1", "--tool-tokens", "exact", "--out", e.path("refused.json"))
	if code != ExitOK {
		t.Fatalf("a refused count failed the run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	rep, exact := exactByModel(t, e.path("refused.json"))
	if a := exact["anthropic:claude-sonnet-4-5"]; a.Tokens != nil || !strings.Contains(a.Note, "HTTP 400") || !strings.Contains(a.Note, "counting is not supported") {
		t.Errorf("anthropic's refusal: %+v", a)
	}
	if o := exact["openai:gpt-5-mini"]; o.Tokens == nil || *o.Tokens <= 0 {
		t.Errorf("openai's count: %+v", o)
	}
	if rep.Gate.Verdict != report.GatePass || strings.Contains(out+stderr, llmfake.DefaultKey) {
		t.Errorf("verdict %s; the key printed: %v", rep.Gate.Verdict, strings.Contains(out+stderr, llmfake.DefaultKey))
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
