package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

const gateExamples = `  mcp-eval gate --report report.json --baseline green.json
  mcp-eval gate --report report.json --baseline green.json --max-drop 0.02 --history .mcp-eval/history
  mcp-eval gate --report report.json --max-drop 2% --fail-on-inconclusive --out gated.json
  mcp-eval gate --report report.json --baseline green.json --max-cost-increase 10% --max-cost-per-run 5
A report gated before is gated again under the policy it records; flags given override its fields.
Its waivers are judged as on the day it was first gated, so one that ran out since changes nothing.
Method and error rates: docs/gate.md
`

func runGate(_ context.Context, c *Command, args []string) int {
	var (
		newPath, basePath, out            string
		maxDrop, costIncrease, costPerRun string
		toolTokens, toolTokensInc, lint   string
		failOnInconclusive, failOnLegacy  bool
		historyDepth                      int
		history                           multiFlag
	)
	def := gate.DefaultPolicy()
	fs := c.newFlagSet("gate", "--report FILE [--baseline FILE] [flags]", gateExamples)
	fs.StringVar(&newPath, "report", "", "the report to gate (`FILE`); the verdict is written into it unless --out is given")
	fs.StringVar(&basePath, "baseline", "", "the report of the last green run (`FILE`); without it only the floors apply")
	fs.StringVar(&maxDrop, "max-drop", strconv.FormatFloat(def.MaxDrop, 'g', -1, 64), "largest drop of a suite score that is not a regression: a fraction (0.02) or points (2%)")
	fs.BoolVar(&failOnInconclusive, "fail-on-inconclusive", false, "exit 1 when the verdict is inconclusive (default: exit 0 with a warning)")
	fs.BoolVar(&failOnLegacy, "fail-on-legacy", false, "fail a server that speaks legacy MCP only, whatever the baseline (as mcp-eval check does)")
	fs.StringVar(&costIncrease, "max-cost-increase", "", "largest rise of a model's cost per case over the baseline: a fraction (0.25) or a percentage (25%); empty: not gated")
	fs.StringVar(&costPerRun, "max-cost-per-run", "", "most the run's model calls may cost, in `USD` (5 or $2.50); empty: no cap")
	fs.StringVar(&toolTokens, "max-tool-tokens", "", "most `TOKENS` the tools array may cost in every model request; empty: not gated")
	fs.StringVar(&toolTokensInc, "max-tool-tokens-increase", "", "largest rise of the tools array's tokens over the baseline: a fraction (0.1) or a percentage (10%); empty: not gated")
	fs.StringVar(&lint, "lint", "", "what a description-lint finding does: off, warn or fail (default: as recorded, else warn)")
	fs.Var(&history, "history", "earlier green reports for drift and slow-slide warnings: a `DIR` of *.json or a FILE (repeatable)")
	fs.IntVar(&historyDepth, "history-depth", def.HistoryDepth, "how many of the newest green history reports to walk")
	fs.StringVar(&out, "out", "", "write the gated report to `FILE` instead of back into --report")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "mcp-eval gate: "+format+"\n", a...)
		return ExitError
	}
	// The policy first, before any report is read (like k6 thresholds): a
	// typo in a flag is a usage error, not a verdict.
	if newPath == "" {
		return fail("--report is required: the report to gate (see --help)")
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	// override sets the fields given as flags; the rest stay as recorded.
	override := func(p *gate.Policy) error {
		var err error
		if given["max-drop"] {
			if p.MaxDrop, err = gate.ParseMaxDrop(maxDrop); err != nil {
				return err
			}
		}
		if given["fail-on-inconclusive"] {
			p.FailOnInconclusive = failOnInconclusive
		}
		if given["fail-on-legacy"] {
			p.FailOnLegacy = failOnLegacy
		}
		if given["history-depth"] {
			p.HistoryDepth = historyDepth
		}
		// An empty value turns the gate off: the recorded policy may
		// have set it.
		if given["max-cost-increase"] {
			if p.MaxCostIncrease, err = costFlag("max-cost-increase", costIncrease, gate.ParseCostIncrease); err != nil {
				return err
			}
		}
		if given["max-cost-per-run"] {
			if p.MaxCostPerRun, err = costFlag("max-cost-per-run", costPerRun, gate.ParseUSD); err != nil {
				return err
			}
		}
		if given["max-tool-tokens"] {
			if p.MaxToolTokens, err = tokensFlag(toolTokens); err != nil {
				return err
			}
		}
		if given["max-tool-tokens-increase"] {
			if p.MaxToolTokensIncrease, err = costFlag("max-tool-tokens-increase", toolTokensInc, gate.ParseToolTokensIncrease); err != nil {
				return err
			}
		}
		if given["lint"] {
			p.Lint = lint
		}
		return p.Validate()
	}
	probe := def
	if err := override(&probe); err != nil {
		return fail("%v", err)
	}
	ws := workspace(c)
	rep, err := report.Load(newPath)
	if err != nil {
		return fail("cannot gate %s: %s", newPath, sanitizeText(err.Error()))
	}
	// Gating a report again must give the verdict and exit code of the
	// command that wrote it, so its recorded policy is the starting point.
	p := def
	if rep.Gate != nil {
		p = gate.PolicyFromReport(rep.Gate.Policy)
	}
	if err := override(&p); err != nil {
		if rep.Gate == nil {
			return fail("%v", err)
		}
		return fail("the policy recorded in %s cannot be enforced: %v", sanitize(newPath), err)
	}
	if basePath == "" && rep.Gate != nil && rep.Gate.Baseline != nil {
		fmt.Fprintf(c.Stderr, "mcp-eval gate: warning: %s was gated against %s; without --baseline only the floors apply\n", sanitize(newPath), sanitize(rep.Gate.Baseline.Path))
	}
	in := gate.Input{New: rep, Now: time.Now()}
	if rep.Gate != nil {
		// Its waivers as on the day it was gated: the same verdict.
		in.WaiversOn = rep.Gate.EvaluatedAt
	}
	if basePath == "" {
		in.BaselineNote = "no baseline given (--baseline FILE compares with the last green run)"
	} else if base, err := report.Load(basePath); err != nil {
		// A broken baseline must not turn a run red or block it: warn and
		// fall back to the floors (issue 4, "Bad input").
		fmt.Fprintf(c.Stderr, "mcp-eval gate: warning: baseline %s is unusable, gating on floors only: %s\n", sanitize(basePath), sanitizeText(pipeline.Brief(err)))
		in.BaselineNote = fmt.Sprintf("baseline %s is unusable (%s)", report.RelPath(ws, abs(basePath)), pipeline.Brief(err))
	} else {
		in.Baseline, in.BaselineRef = base, pipeline.Ref(ws, basePath, base)
	}
	for _, h := range history {
		in.History = append(in.History, c.loadHistory(ws, h)...)
	}
	rep.Gate = gate.Evaluate(in, p)
	if err := c.redact.JSON(rep); err != nil {
		return fail("%v", err)
	}
	dest := newPath
	if out != "" {
		dest = out
	}
	if err := saveReport(dest, rep); err != nil {
		return fail("%v", err)
	}
	render.GateText(c.Stdout, rep)
	switch rep.Gate.Verdict {
	case report.GateInconclusive:
		fmt.Fprintln(c.Stderr, "mcp-eval gate: warning: the verdict is inconclusive: a real drop not clearly beyond max-drop, or runs left undecided; more runs or cases would tell")
	case report.GateError:
		if rep.Run.Untested != "" {
			fmt.Fprintln(c.Stderr, "mcp-eval gate: the run that wrote this report could not test the server (run.untested says why): nothing is judged; exit 2")
			break
		}
		fmt.Fprintln(c.Stderr, "mcp-eval gate: nothing failed, but runs the floors need errored and were not judged (the run's deadline, a server that exited or stopped answering, a provider that could not be reached: the items say which); exit 2")
	}
	// The same mapping as the command that wrote the report, from the
	// gate section just written.
	return exitFor(rep)
}

// loadHistory reads one --history argument as pipeline.LoadHistory
// does, with its warnings on stderr.
func (c *Command) loadHistory(ws, arg string) []gate.Historic {
	return pipeline.LoadHistory(ws, arg, func(msg string) {
		fmt.Fprintf(c.Stderr, "mcp-eval gate: warning: %s\n", sanitizeText(msg))
	})
}

// workspace is where report paths are relative to: GITHUB_WORKSPACE on a
// runner, else the working directory.
func workspace(c *Command) string {
	if c.LookupEnv != nil {
		if ws, ok := c.LookupEnv("GITHUB_WORKSPACE"); ok && ws != "" {
			return ws
		}
	}
	wd, _ := os.Getwd()
	return wd
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
