package cli

import (
	"bytes"
	"cmp"
	"context"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/action"
	"github.com/mcp-eval/mcp-eval-action/pkg/merge"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// runAction is the GitHub Action's entry point (docs/action.md, "the
// mcp-eval action contract"): the action's defaults < mcp-eval.yaml <
// inputs and event, the same pipeline as run, then outputs, summary,
// annotations and the sticky comment.
func runAction(ctx context.Context, c *Command, args []string) int {
	fs := c.newFlagSet("action", "", "  (run by action.yml and host/action.yml; reads INPUT_* and GITHUB_* variables)\n")
	prices := fs.String("prices", "", "price override `FILE`, over the prices input and pricing.file")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	r := &action.Runner{Getenv: func(k string) string { v, _ := c.LookupEnv(k); return v }, Environ: c.Environ, Stdout: c.Stdout}
	plan, err := r.Plan()
	if err != nil {
		r.Error("mcp-eval: invalid input", err.Error())
		return ExitError
	}
	r.Announce(plan)
	if plan.Workspace == "" {
		plan.Workspace = workspace(c)
	}
	s := plan.Defaults()
	if path := plan.ConfigPath(fileExists); path != "" {
		file, err := pipeline.LoadConfig(path)
		if err != nil {
			r.Error("mcp-eval: config", err.Error())
			return ExitError
		}
		s = s.Overlay(file)
	}
	env := c.env()
	env.Workspace, env.InAction = plan.Workspace, true
	s = s.Overlay(plan.Settings())
	if *prices != "" {
		s.Prices, s.PricesFrom = *prices, "--prices"
	}
	var (
		rep  *report.Report
		outs pipeline.Outputs
	)
	if plan.Inputs.MergeShards {
		// The final job of a sharded run: nothing is run, the shards'
		// reports are merged and gated once, and the comment is made once.
		shards, err := r.ShardReports(ctx, plan)
		if err != nil {
			r.Error("mcp-eval: shard merge", err.Error())
			return ExitError
		}
		var pl pipeline.Plan
		action.UseBaseline(&pl, r.Baseline(ctx, plan, action.ValidReport, action.AcceptBaseline(action.ShardLayers(shards), shardReplay(shards))))
		outs = pipeline.Outputs{Report: s.Report, JUnit: s.JUnit, Markdown: s.Markdown, HTML: s.HTML, RunURL: s.RunURL}
		rep, err = pipeline.MergeShards(pipeline.MergeInput{Shards: shards, BaselineReport: pl.Baseline, BaselineRef: pl.BaselineRef,
			BaselineNote: cmp.Or(pl.BaselineNote, "no baseline"), Env: env, Outputs: outs})
		if err != nil {
			r.Error("mcp-eval: shard merge", err.Error())
			return ExitError
		}
	} else {
		pl, err := pipeline.Resolve(s, env)
		if err != nil {
			r.Error("mcp-eval: settings", err.Error())
			return ExitError
		}
		plan.Baseline.History = pl.Policy.HistoryDepth
		replay, err := pl.ReplayHash()
		if err != nil {
			r.Error("mcp-eval: settings", err.Error())
			return ExitError
		}
		action.UseBaseline(pl, r.Baseline(ctx, plan, action.ValidReport, action.AcceptBaseline(pl.Layers, replay)))
		if rep, err = pipeline.Run(ctx, pl); err != nil {
			r.Error("mcp-eval", err.Error())
			if rep == nil || rep.Run.Untested == "" {
				// A report with an error beside it is one whose files
				// could not be written: not one to publish as if they
				// were.
				return ExitError
			}
			// A run that could test nothing (Run.Untested) still replaces
			// the PR's comment, which would go on showing the last run's
			// verdict; its verdict, error, gives the exit.
		}
		outs = pl.Outputs
	}
	c.printReport(rep, outs, false)
	// The comment is the short form a reviewer reads; the job summary the
	// long one, with every item, the trajectories and the confusions.
	var md, long bytes.Buffer
	opts := render.MarkdownOptions{RunURL: plan.RunURL, Artifact: action.DefaultArtifact}
	if err := render.Markdown(&md, rep, opts); err != nil {
		r.Error("mcp-eval: summary", err.Error())
		return ExitError
	}
	opts.Long = true
	if err := render.Markdown(&long, rep, opts); err != nil {
		r.Error("mcp-eval: summary", err.Error())
		return ExitError
	}
	res := action.ResultOf(rep, outs.Report, md.String())
	res.SummaryBody = long.String()
	if _, err := r.Publish(ctx, plan, res); err != nil {
		fmt.Fprintln(c.Stderr, "mcp-eval action:", err)
		return ExitError
	}
	return exitFor(rep)
}

// shardReplay is the cassette the shards replayed ("" live): report merge
// refuses shards that differ in it.
func shardReplay(shards []merge.Shard) string {
	for _, sh := range shards {
		if sh.Report != nil && sh.Report.Replay != nil {
			return sh.Report.Replay.Hash
		}
	}
	return ""
}
