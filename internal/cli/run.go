package cli

import (
	"context"

	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
)

const runExamples = `  mcp-eval run                                   # reads ./mcp-eval.yaml
  mcp-eval run --config golden-examples/mcp-eval.yaml
  mcp-eval run --cmd "node dist/server.js" --baseline green.json --out report.json
  mcp-eval run --baseline green.json --history .mcp-eval/history --html report.html   # with trends
  mcp-eval run --layers all --models openai:gpt-5-mini --runs 5 --conformance-runs 3
`

// runRun is the main job: the layers mcp-eval.yaml (or --layers) selects,
// gated against the baseline, report.json written.
func runRun(ctx context.Context, c *Command, args []string) int {
	var f planFlags
	fs := c.newFlagSet("run", "[--config mcp-eval.yaml] [flags]", runExamples)
	f.register(fs, flagsServer|flagsConfig|flagsLayers|flagsLayer0|flagsLayer1|flagsGate|flagsOutput)
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	return c.execute(ctx, evaluation{name: "run", autoFile: true, defaults: pipeline.Settings{Report: "report.json"}}, &f)
}
