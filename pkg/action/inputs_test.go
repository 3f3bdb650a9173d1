package action

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func inputEnv(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParseInputsReadsHyphenatedNames(t *testing.T) {
	in, err := ParseInputs(inputEnv(map[string]string{
		"INPUT_SERVER-URL":               " http://svc:3000/mcp ",
		"INPUT_GOLDEN":                   "evals/golden.yaml",
		"INPUT_LAYERS":                   "0,behavior",
		"INPUT_MAX-DROP":                 "0.05",
		"INPUT_RUNS":                     "3",
		"INPUT_MODELS":                   "openai:gpt-5-mini, anthropic:claude-sonnet-4-5",
		"INPUT_BASELINE-ARTIFACT":        "evals-report",
		"INPUT_GITHUB-TOKEN":             canary,
		"INPUT_COMMENT":                  "False",
		"INPUT_CONFIG":                   "ci/mcp-eval.yaml",
		"INPUT_SERVER-USER":              "current",
		"INPUT_MAX-COST-INCREASE":        "25%",
		"INPUT_MAX-COST-PER-RUN":         "$2.50",
		"INPUT_MAX-TOOL-TOKENS":          "8000",
		"INPUT_MAX-TOOL-TOKENS-INCREASE": "10%",
		"INPUT_LINT":                     "fail",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if in.ServerURL != "http://svc:3000/mcp" || in.Golden != "evals/golden.yaml" || in.AutoLayers ||
		!reflect.DeepEqual(in.Layers, []Layer{0, 1}) || in.MaxDrop == nil || *in.MaxDrop != 0.05 || in.Runs != 3 ||
		!reflect.DeepEqual(in.Models, []string{"openai:gpt-5-mini", "anthropic:claude-sonnet-4-5"}) ||
		in.BaselineArtifact != "evals-report" || !in.HasToken || in.Comment || in.Config != "ci/mcp-eval.yaml" || in.ServerUser != "current" ||
		in.MaxCostIncrease == nil || *in.MaxCostIncrease != 0.25 || in.MaxCostPerRun == nil || *in.MaxCostPerRun != 2.5 ||
		in.MaxToolTokens == nil || *in.MaxToolTokens != 8000 || in.MaxToolTokensInc == nil || *in.MaxToolTokensInc != 0.1 || in.Lint != "fail" {
		t.Errorf("inputs = %+v", in)
	}
}

func TestParseInputsDefaults(t *testing.T) {
	in, err := ParseInputs(inputEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !in.AutoLayers || in.MaxDrop != nil || in.Runs != 0 || in.BaselineArtifact != DefaultArtifact || !in.Comment || in.HasToken || in.ServerUser != "" || in.MaxCostIncrease != nil || in.MaxCostPerRun != nil {
		t.Errorf("defaults = %+v", in)
	}
}

// The max-drop input takes what --max-drop and gate.max-drop take.
func TestParseInputsMaxDropForms(t *testing.T) {
	for v, want := range map[string]float64{"0.02": 0.02, "2%": 0.02, " 5 % ": 0.05, "0": 0, "0.999": 0.999} {
		in, err := ParseInputs(inputEnv(map[string]string{"INPUT_SERVER-URL": "http://a/mcp", "INPUT_MAX-DROP": v}))
		if err != nil || in.MaxDrop == nil || math.Abs(*in.MaxDrop-want) > 1e-12 {
			t.Errorf("max-drop %q: %v, %v; want %v", v, in.MaxDrop, err, want)
		}
	}
}

func TestParseInputsNamesTheInputAtFault(t *testing.T) {
	tests := []struct {
		vars map[string]string
		want []string
	}{
		{map[string]string{"INPUT_SERVER-URL": "http://a/mcp", "INPUT_SERVER-COMMAND": "node s.js"}, []string{`input "server-url"`, "server-command", "exactly one"}},
		{map[string]string{"INPUT_SERVER-URL": "localhost:3000"}, []string{`input "server-url"`, "not an http(s) URL"}},
		{map[string]string{"INPUT_LAYERS": "0,5"}, []string{`input "layers"`, `unknown layer "5"`}},
		{map[string]string{"INPUT_MAX-DROP": "1"}, []string{`input "max-drop"`, "out of range", "[0, 1)", "2%"}},
		{map[string]string{"INPUT_MAX-DROP": "100%"}, []string{`input "max-drop"`, "out of range"}},
		{map[string]string{"INPUT_MAX-DROP": "1.5"}, []string{`input "max-drop"`, "out of range"}},
		{map[string]string{"INPUT_MAX-DROP": "-0.01"}, []string{`input "max-drop"`, "out of range"}},
		{map[string]string{"INPUT_MAX-DROP": "NaN"}, []string{`input "max-drop"`, "not a number"}},
		{map[string]string{"INPUT_MAX-DROP": "Inf"}, []string{`input "max-drop"`, "not a number"}},
		{map[string]string{"INPUT_MAX-DROP": "two"}, []string{`input "max-drop"`, "not a number", "0.02"}},
		{map[string]string{"INPUT_MAX-COST-INCREASE": "10%%"}, []string{`input "max-cost-increase"`, `"10%%" is not a number`, "25%"}},
		{map[string]string{"INPUT_MAX-COST-INCREASE": "-5%"}, []string{`input "max-cost-increase"`, "out of range", "0.25"}},
		{map[string]string{"INPUT_MAX-COST-INCREASE": "NaN"}, []string{`input "max-cost-increase"`}},
		{map[string]string{"INPUT_MAX-COST-PER-RUN": "abc"}, []string{`input "max-cost-per-run"`, "$2.50"}},
		{map[string]string{"INPUT_MAX-COST-PER-RUN": "-1"}, []string{`input "max-cost-per-run"`, "out of range"}},
		{map[string]string{"INPUT_MAX-TOOL-TOKENS": "lots"}, []string{`input "max-tool-tokens"`, "whole number of tokens"}},
		{map[string]string{"INPUT_MAX-TOOL-TOKENS-INCREASE": "x"}, []string{`input "max-tool-tokens-increase"`, "a percentage like 25%"}},
		{map[string]string{"INPUT_LINT": "loud"}, []string{`input "lint"`, "off, warn or fail"}},
		{map[string]string{"INPUT_RUNS": "0"}, []string{`input "runs"`, "1 to 100"}},
		{map[string]string{"INPUT_RUNS": "five"}, []string{`input "runs"`}},
		{map[string]string{"INPUT_MODELS": "a,,b"}, []string{`input "models"`}},
		{map[string]string{"INPUT_COMMENT": "yes"}, []string{`input "comment"`, "true or false"}},
		{map[string]string{"INPUT_BASELINE-ARTIFACT": "a/b"}, []string{`input "baseline-artifact"`}},
		{map[string]string{"INPUT_BASELINE": "base.json", "INPUT_BASELINE-ARTIFACT": "other"}, []string{`input "baseline"`, "not both"}},
		{map[string]string{"INPUT_SERVER-COMMAND": "node a.js\nrm -rf /"}, []string{`input "server-command"`, "one line"}},
		{map[string]string{"INPUT_SERVER-USER": "root"}, []string{`input "server-user"`, "auto, unprivileged or current"}},
	}
	for _, tt := range tests {
		_, err := ParseInputs(inputEnv(tt.vars))
		if err == nil {
			t.Errorf("%v: no error", tt.vars)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", tt.vars, err, w)
			}
		}
	}
	// Every problem at once.
	_, err := ParseInputs(inputEnv(map[string]string{"INPUT_RUNS": "x", "INPUT_COMMENT": "maybe"}))
	if err == nil || !strings.Contains(err.Error(), `"runs"`) || !strings.Contains(err.Error(), `"comment"`) {
		t.Errorf("err = %v", err)
	}
}

func TestUnknownInputs(t *testing.T) {
	got := UnknownInputs([]string{"INPUT_MAX_DROP=0.1", "INPUT_LAYERS=auto", "INPUT_WHATEVER=1", "PATH=/bin"})
	want := []string{`unknown input "max_drop"; did you mean "max-drop"?`, `unknown input "whatever"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
}

func TestGitHubTokenFallsBackToTheEnvironment(t *testing.T) {
	if !reflect.DeepEqual(token(inputEnv(map[string]string{"GITHUB_TOKEN": "x"})), "x") {
		t.Error("GITHUB_TOKEN is not used when github-token is empty")
	}
}

func TestRecordAndReplayInputs(t *testing.T) {
	base := map[string]string{"INPUT_SERVER-URL": "http://svc:3000/mcp", "GITHUB_WORKSPACE": "/ws"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	p, err := PlanFromEnv(inputEnv(with(map[string]string{"INPUT_REPLAY": ".mcp-eval/cassette"})))
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Settings(); s.Replay != "/ws/.mcp-eval/cassette" || s.Record != "" || s.ForkReplay {
		t.Errorf("settings record %q replay %q fork %v", s.Record, s.Replay, s.ForkReplay)
	}
	// Errors name the input the server came from.
	if s := p.Settings(); s.ServerFrom != "the server-url input" {
		t.Errorf("the server came from %q, want the server-url input", s.ServerFrom)
	}
	if _, err := ParseInputs(inputEnv(with(map[string]string{"INPUT_RECORD": "a", "INPUT_REPLAY": "b"}))); err == nil || !strings.Contains(err.Error(), "record") {
		t.Errorf("record and replay together: %v", err)
	}
	if _, err := ParseInputs(inputEnv(with(map[string]string{"INPUT_RECORD": "tape\nx"}))); err == nil || !strings.Contains(err.Error(), "record") {
		t.Errorf("a record path of two lines: %v", err)
	}
}
