package cli

import (
	"context"

	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
)

const evalExamples = `  mcp-eval eval --golden golden/tasks.yaml --cmd "node dist/server.js"        # no key: the baseline, no LLM
  mcp-eval eval --golden golden/tasks.yaml --models openai:gpt-5-mini,anthropic:claude-sonnet-4-5 --runs 5 --url http://127.0.0.1:3000/mcp
  mcp-eval eval --config mcp-eval.yaml --judge anthropic:claude-haiku-4-5 --max-usd 2
  mcp-eval eval --config mcp-eval.yaml --preview                               # the spend preview, no call
  mcp-eval eval --golden tasks.yaml --models openai-compatible:llama3.1@http://localhost:11434/v1 --cmd "./server" --fresh

Models: openai:MODEL (Responses API, key in OPENAI_API_KEY), anthropic:MODEL (ANTHROPIC_API_KEY),
openai-compatible:MODEL@BASE_URL (Chat Completions; OPENAI_COMPATIBLE_API_KEY if the server wants one),
or ENDPOINT:MODEL for an endpoints: entry of mcp-eval.yaml. Keys are read from the environment only.
With no model, the built-in lexical selector runs (labelled "baseline, no LLM"). Docs: docs/behavior.md.
`

// runEval is Layer 1 alone, whatever the config's layers say.
func runEval(ctx context.Context, c *Command, args []string) int {
	var f planFlags
	var preview bool
	fs := c.newFlagSet("eval", "--golden FILE [--models M1,M2] [--runs N] (--url URL | --cmd \"…\") [flags]", evalExamples)
	f.register(fs, flagsServer|flagsConfig|flagsLayer1|flagsGate|flagsOutput)
	fs.BoolVar(&preview, "preview", false, "print the spend preview and exit without calling a model")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	force := pipeline.Settings{Layers: []string{pipeline.Behavior}, PreviewOnly: preview}
	return c.execute(ctx, evaluation{name: "eval", autoFile: true, defaults: pipeline.Settings{Report: "report.json"}, force: force, needGolden: true}, &f)
}
