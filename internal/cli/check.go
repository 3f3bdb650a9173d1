package cli

import (
	"cmp"
	"context"

	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
)

const checkExamples = `  mcp-eval check --cmd "go run ./golden-examples/cmd/example-server"
  mcp-eval check --url http://127.0.0.1:3000/mcp --out report.json --junit conformance.xml
  mcp-eval check --cmd "node dist/server.js" --call-tool create_issue --runs 3
  mcp-eval check --url http://127.0.0.1:3000/mcp --only DISC,TOOL-3 -v
`

// runCheck is Layer 0 alone, and a legacy server fails it: check exists
// to say whether the server speaks 2026-07-28. Like run, it reads
// mcp-eval.yaml in the current directory when --config names no other
// (its help said so, and a user's `mcp-eval check` beside the file that
// names the server was told to set server.url there).
func runCheck(ctx context.Context, c *Command, args []string) int {
	var f planFlags
	var runs, lanes int
	var jsonOut string
	fs := c.newFlagSet("check", "(--url URL | --cmd \"server args…\") [flags]", checkExamples)
	f.register(fs, flagsServer|flagsConfig|flagsLayer0|flagsGate|flagsOutput)
	// check has no cases: --runs and --concurrency are its MUST checks'.
	fs.IntVar(&runs, "runs", 0, "runs of each MUST check, as --conformance-runs")
	fs.IntVar(&lanes, "concurrency", 0, "check runs in flight, as --conformance-concurrency")
	fs.StringVar(&jsonOut, "json", "", "deprecated: use --out `FILE` (writes the same report.json)")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	if jsonOut != "" && f.s.Report != "" {
		c.errorf("check", "--json is the old name of --out: give one of them")
		return ExitError
	}
	if jsonOut != "" {
		c.warnf("check", "--json is deprecated; use --out %s (the same report.json)", jsonOut)
		f.s.Report = jsonOut
	}
	for _, n := range []struct {
		name   string
		v, max int
	}{{"runs", runs, 100}, {"concurrency", lanes, 64}} {
		if n.v < 0 || n.v > n.max || (n.v == 0 && f.isSet(n.name)) {
			c.errorf("check", "--%s must be 1..%d, not %d", n.name, n.max, n.v)
			return ExitError
		}
	}
	f.s.ConformanceRuns, f.s.ConformanceConcurrency = cmp.Or(f.s.ConformanceRuns, runs), cmp.Or(f.s.ConformanceConcurrency, lanes)
	force := pipeline.Settings{Layers: []string{pipeline.Conformance}, FailOnLegacy: ptr(true)}
	return c.execute(ctx, evaluation{name: "check", autoFile: true, force: force}, &f)
}
