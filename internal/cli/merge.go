package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/merge"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

const mergeExamples = `  mcp-eval report merge shard-1/report.json shard-2/report.json shard-3/report.json --out report.json
  mcp-eval report merge shards/*/report.json --baseline green.json --out report.json --markdown summary.md
Every shard of the run must be given once; the merged report is gated once, under the shards' policy.
`

// runReportMerge is `mcp-eval report merge`: the shards' reports of one
// run → one gated report, its exit code the verdict's.
func runReportMerge(_ context.Context, c *Command, args []string) int {
	var (
		out, baseline, junit, markdown, html string
		verbose                              bool
	)
	fs := c.newFlagSet("report merge", "SHARD.json… --out FILE [flags]", mergeExamples)
	fs.StringVar(&out, "out", "", "write the merged report to `FILE`")
	fs.StringVar(&baseline, "baseline", "", "the report the shards balanced on and were gated against (`FILE`; default: the path they recorded, when it is there)")
	fs.StringVar(&junit, "junit", "", "also write JUnit XML to `FILE`")
	fs.StringVar(&markdown, "markdown", "", "also write the Markdown summary to `FILE`")
	fs.StringVar(&html, "html", "", "also write the self-contained HTML report to `FILE`")
	fs.BoolVar(&verbose, "v", false, "list passing checks too")
	// Files and flags may come in any order (shell globs put files first).
	var files []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.help(fs, c.Stdout)
				return ExitOK
			}
			fmt.Fprintf(c.Stderr, "run \"%s --help\" for its flags and examples\n", fs.Name())
			return ExitError
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "mcp-eval report merge: "+format+"\n", a...)
		return ExitError
	}
	if len(files) == 0 {
		return fail("name the shards' reports: mcp-eval report merge a.json b.json … --out report.json")
	}
	if out == "" {
		return fail("--out is required: where to write the merged report")
	}
	var shards []merge.Shard
	for _, f := range files {
		r, err := report.Load(f)
		if err != nil {
			return fail("%s", sanitizeText(err.Error()))
		}
		// The name goes into the merged notes and the PR comment: relative
		// to the workspace, and never a runner's absolute temp path.
		name := report.RelPath(workspace(c), abs(f))
		if name == ".." || strings.HasPrefix(name, "../") {
			name = filepath.Base(f)
		}
		shards = append(shards, merge.Shard{Name: name, Report: r})
	}
	// Two shards outside the workspace with one file name
	// (/tmp/s1/report.json, /tmp/s2/report.json): their paths as given,
	// or the notes would merge them into one.
	seen := map[string]int{}
	for _, s := range shards {
		seen[s.Name]++
	}
	for i := range shards {
		if seen[shards[i].Name] > 1 {
			shards[i].Name = files[i]
		}
	}
	rep, err := pipeline.MergeShards(pipeline.MergeInput{Shards: shards, Baseline: baseline, Env: c.env(),
		Outputs: pipeline.Outputs{Report: out, JUnit: junit, Markdown: markdown, HTML: html}})
	if err != nil {
		return fail("%s", sanitizeText(err.Error()))
	}
	render.ReportText(c.Stdout, rep, render.TextOptions{Verbose: verbose})
	return exitFor(rep)
}
