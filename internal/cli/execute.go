package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// evaluation is what a command chose: its defaults (the weakest source),
// whether it reads mcp-eval.yaml when --config is not given, and what it
// forces whatever the other sources say (the layers of eval and check).
type evaluation struct {
	name     string
	defaults pipeline.Settings
	autoFile bool
	force    pipeline.Settings
	// needGolden makes a missing golden set an error rather than a note.
	needGolden bool
}

// withFile stacks defaults < the configuration file < the flags: the file
// --config names, else, when auto, mcp-eval.yaml in the current directory
// if there is one.
func (f *planFlags) withFile(defaults pipeline.Settings, auto bool) (pipeline.Settings, error) {
	flags, err := f.settings()
	if err != nil {
		return pipeline.Settings{}, err
	}
	s := defaults
	path := f.config
	if path == "" && auto {
		if _, err := os.Stat(config.DefaultFile); err == nil {
			path = config.DefaultFile
		}
	}
	if path != "" {
		file, err := pipeline.LoadConfig(path)
		if err != nil {
			return pipeline.Settings{}, err
		}
		s = s.Overlay(file)
	}
	return s.Overlay(flags), nil
}

// execute stacks defaults < mcp-eval.yaml < flags < what the command forces,
// runs the pipeline, prints the result and returns the exit code.
func (c *Command) execute(ctx context.Context, e evaluation, f *planFlags) int {
	fail := func(err error) int {
		fmt.Fprintf(c.Stderr, "mcp-eval %s: %s\n", e.name, sanitizeText(explain(err)))
		return ExitError
	}
	s, err := f.withFile(e.defaults, e.autoFile)
	if err != nil {
		return fail(err)
	}
	plan, err := pipeline.Resolve(s.Overlay(e.force), c.env())
	if err != nil {
		return fail(err)
	}
	if e.needGolden && plan.Behavior.Golden == "" {
		return fail(errors.New("no golden set: pass --golden FILE, or set golden: in mcp-eval.yaml (docs/behavior.md)"))
	}
	rep, err := pipeline.Run(ctx, plan)
	if errors.Is(err, pipeline.ErrPreviewOnly) {
		return ExitOK
	}
	if rep == nil && err != nil {
		return fail(err)
	}
	c.printReport(rep, plan.Outputs, f.verbose)
	if err != nil {
		return fail(err)
	}
	return exitFor(rep)
}

// env is the pipeline's view of this process.
func (c *Command) env() pipeline.Env {
	return pipeline.Env{LookupEnv: c.LookupEnv, Environ: c.Environ, Workspace: workspace(c), Redact: c.redact,
		Stdout: c.Stdout, Stderr: c.Stderr, ServerUser: c.ServerUser}
}

// printReport shows a run's report on the terminal: what each layer that
// ran found (Layer 0's findings, Layer 1's matrix, Layer 2's rates,
// Layer 3's latency and cost), the verdict and where the files went. Of
// a run that could test nothing only the files: its error, with what to
// do, is the command's to print.
func (c *Command) printReport(rep *report.Report, outs pipeline.Outputs, verbose bool) {
	if rep.Run.Untested != "" {
		c.printOutputs(outs)
		return
	}
	if rep.Conformance != nil {
		render.ReportText(c.Stdout, rep, render.TextOptions{Verbose: verbose, Only: []render.Section{render.SectionConformance}})
		fmt.Fprintln(c.Stdout)
	}
	matrixText(c.Stdout, rep)
	if rep.Resilience != nil || rep.Telemetry != nil {
		render.ReportText(c.Stdout, rep, render.TextOptions{Only: []render.Section{render.SectionResilience, render.SectionTelemetry}, Banners: true})
		fmt.Fprintln(c.Stdout)
		for _, l := range render.LayerSummaries(rep) {
			fmt.Fprintln(c.Stdout, l)
		}
	}
	spendText(c.Stdout, rep)
	render.GateText(c.Stdout, rep)
	c.printOutputs(outs)
}

// printOutputs says where the run's files went.
func (c *Command) printOutputs(outs pipeline.Outputs) {
	for _, o := range []struct{ name, path string }{{"report", outs.Report}, {"html", outs.HTML}, {"junit", outs.JUnit}, {"markdown", outs.Markdown}} {
		if o.path != "" {
			fmt.Fprintf(c.Stdout, "%s: %s\n", o.name, report.RelPath(workspace(c), abs(o.path)))
		}
	}
}

// exitFor maps a gated report to the exit code, from the report alone, so
// that `mcp-eval gate` on a report gives the exit code of the command that
// wrote it: 1 for a failing verdict (and for inconclusive when the
// recorded policy says so), 2 for a cancelled run or one with runs the
// harness could not judge (it did not finish its job: neither a pass nor
// a regression), 0 otherwise.
func exitFor(rep *report.Report) int {
	if rep.Gate == nil {
		return ExitOK
	}
	switch rep.Gate.Verdict {
	case report.GateFail:
		return ExitFindings
	case report.GateCancelled, report.GateError:
		return ExitError
	case report.GateInconclusive:
		if rep.Gate.Policy.FailOnInconclusive {
			return ExitFindings
		}
	}
	return ExitOK
}

// warnf prints a warning of a command.
func (c *Command) warnf(cmd, format string, a ...any) {
	fmt.Fprintf(c.Stderr, "mcp-eval %s: warning: %s\n", cmd, sanitizeText(fmt.Sprintf(format, a...)))
}

// errorf prints a command's error.
func (c *Command) errorf(cmd, format string, a ...any) {
	fmt.Fprintf(c.Stderr, "mcp-eval %s: %s\n", cmd, sanitizeText(fmt.Sprintf(format, a...)))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// saveReport writes a report.json atomically (atomicfile: 0644).
func saveReport(path string, rep *report.Report) error {
	data, err := report.Marshal(rep)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, data)
}
