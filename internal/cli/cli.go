// Package cli is the mcp-eval command line: flag parsing, wiring and output.
// It holds no evaluation logic; each subcommand drives library packages.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/mcp-eval/mcp-eval-action/pkg/didyoumean"
	"io"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/redact"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Exit codes. "Found problems" and "could not check" are different answers.
const (
	ExitOK       = 0 // the command did what it was asked and found nothing wrong
	ExitFindings = 1 // the server (or report) has problems the command exists to find
	ExitError    = 2 // bad usage, or the harness could not do its job (server unreachable, …)
)

// Command is the CLI with its streams injected, so tests drive it in-process.
type Command struct {
	Stdout io.Writer
	Stderr io.Writer
	// LookupEnv reads the harness's environment (os.LookupEnv in main).
	LookupEnv func(string) (string, bool)
	// Environ lists it (os.Environ in main); the action uses it to reject
	// unknown INPUT_* variables. Optional.
	Environ func() []string
	// ServerUser, when set, decides who a --cmd server runs as instead of
	// the server-user policy: a test that must run a server as root
	// returns nil from it.
	ServerUser func() *transport.RunAs

	// redact takes the run's secrets out of everything written; Main
	// sets it up.
	redact *redact.Redactor
	// helps are the help texts of the flag sets made so far.
	helps []helpText
}

type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, c *Command, args []string) int
}

// subcommands is the command table; later layers add check, eval, gate,
// report and action here.
func subcommands() []subcommand {
	return []subcommand{
		{"run", "the main job: run the selected layers from mcp-eval.yaml, gate against the baseline, write report.json", runRun},
		{"probe", "connect to a server and show its era, identity, capabilities and tools", runProbe},
		{"check", "Layer 0: check a server against every observable rule of MCP 2026-07-28 (no LLM, deterministic)", runCheck},
		{"eval", "Layer 1: run a golden set through models (or the no-LLM baseline) against the server; scores, matrix, cache, budget", runEval},
		{"action", "the GitHub Action's entry point (reads INPUT_* and GITHUB_* variables; see docs/action.md)", runAction},
		{"golden", "golden init: draft a golden set from the server's own tools, ready to review and run", runGolden},
		{"migrate", "find in a repository's code what MCP 2026-07-28 removes or renumbers, with the fix", runMigrate},
		{"report", "render a report.json as text, Markdown (PR comment, job summary), JUnit XML or JSON", runReport},
		{"gate", "judge a report against the last green run: pass, fail or inconclusive (docs/gate.md)", runGate},
	}
}

const usageHead = `mcp-eval tests MCP servers: protocol conformance (2026-07-28), model behaviour, resilience and cost.

Usage:
  mcp-eval <command> [flags]

Commands:
`

const usageTail = `
Run "mcp-eval <command> --help" for a command's flags and examples.
Docs: README.md in https://github.com/mcp-eval/mcp-eval-action
`

// Main runs the CLI and returns the exit code. Everything it writes to
// Stdout and Stderr passes through the run's redactor (see redact.go),
// whatever the command.
func (c *Command) Main(ctx context.Context, args []string) int {
	run := *c
	run.redact = redact.FromEnv(c.Environ, c.LookupEnv)
	stdout := redact.NewWriter(c.Stdout, run.redact)
	stderr := redact.NewWriter(c.Stderr, run.redact)
	run.Stdout, run.Stderr = stdout, stderr
	defer stdout.Flush()
	defer stderr.Flush()
	return run.main(ctx, args)
}

func (c *Command) main(ctx context.Context, args []string) int {
	if len(args) == 0 {
		c.usage(c.Stderr)
		return ExitError
	}
	switch args[0] {
	case "-h", "--help", "help":
		c.usage(c.Stdout)
		return ExitOK
	case "version", "--version":
		fmt.Fprintln(c.Stdout, "mcp-eval", Version)
		return ExitOK
	}
	for _, sc := range subcommands() {
		if sc.name == args[0] {
			return sc.run(ctx, c, args[1:])
		}
	}
	var names []string
	for _, sc := range subcommands() {
		names = append(names, sc.name)
	}
	if near, ok := didyoumean.Nearest(args[0], names); ok {
		fmt.Fprintf(c.Stderr, "mcp-eval: unknown command %q (did you mean %q?)\n\n", args[0], near)
	} else {
		fmt.Fprintf(c.Stderr, "mcp-eval: unknown command %q\n\n", args[0])
	}
	c.usage(c.Stderr)
	return ExitError
}

// Version is the harness version.
const Version = pipeline.HarnessVersion

func (c *Command) usage(w io.Writer) {
	fmt.Fprint(w, usageHead)
	for _, sc := range subcommands() {
		fmt.Fprintf(w, "  %-10s %s\n", sc.name, sc.summary)
	}
	fmt.Fprint(w, usageTail)
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints help text with examples.
func (c *Command) newFlagSet(name, synopsis, examples string) *flag.FlagSet {
	fs := flag.NewFlagSet("mcp-eval "+name, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	// The flag package calls Usage on -h and on a bad flag; parse prints
	// the help once, to stdout for -h and to stderr after an error.
	fs.Usage = func() {}
	c.helps = append(c.helps, helpText{fs, func(w io.Writer) {
		fmt.Fprintf(w, "Usage: mcp-eval %s %s\n\nFlags:\n", name, synopsis)
		out := fs.Output()
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(out)
		if examples != "" {
			fmt.Fprintf(w, "\nExamples:\n%s", examples)
		}
	}})
	return fs
}

// helpText is a flag set's help.
type helpText struct {
	fs    *flag.FlagSet
	print func(io.Writer)
}

func (c *Command) help(fs *flag.FlagSet, w io.Writer) {
	for _, h := range c.helps {
		if h.fs == fs {
			h.print(w)
		}
	}
}

// parse parses flags; it returns the exit code to use when parsing ended
// the command (help or a usage error), or -1 to go on.
func (c *Command) parse(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help(fs, c.Stdout)
			return ExitOK
		}
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
			var known []string
			fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
			if near, ok := didyoumean.Nearest(strings.TrimPrefix(name, "-"), known); ok {
				fmt.Fprintf(c.Stderr, "did you mean --%s?\n", near)
			}
		}
		fmt.Fprintf(c.Stderr, "run \"%s --help\" for its flags and examples\n", fs.Name())
		return ExitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "%s: unexpected argument %q (quote the server command: --cmd \"node server.js\")\n", fs.Name(), fs.Arg(0))
		return ExitError
	}
	return -1
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// sanitize and sanitizeText make server text safe for a terminal and a CI
// log (render.TermLine).
func sanitize(s string) string     { return render.TermLine(s) }
func sanitizeText(s string) string { return render.TermText(s) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
