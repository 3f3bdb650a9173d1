package cli

import (
	"bytes"
	"context"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/action"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
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
	pl, err := pipeline.Resolve(s, env)
	if err != nil {
		r.Error("mcp-eval: settings", err.Error())
		return ExitError
	}
	plan.Baseline.History = pl.Policy.HistoryDepth
	action.UseBaseline(pl, r.Baseline(ctx, plan, action.ValidReport, action.AcceptBaseline(pl.Layers)))
	rep, err := pipeline.Run(ctx, pl)
	if err != nil {
		r.Error("mcp-eval", err.Error())
		return ExitError
	}
	c.printReport(rep, pl.Outputs, false)
	var md bytes.Buffer
	if err := render.Markdown(&md, rep, render.MarkdownOptions{RunURL: plan.RunURL}); err != nil {
		r.Error("mcp-eval: summary", err.Error())
		return ExitError
	}
	if _, err := r.Publish(ctx, plan, action.ResultOf(rep, pl.Outputs.Report, md.String())); err != nil {
		fmt.Fprintln(c.Stderr, "mcp-eval action:", err)
		return ExitError
	}
	return exitFor(rep)
}
