package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

const checkExamples = `  mcp-eval check --cmd "go run ./golden-examples/cmd/example-server"
  mcp-eval check --url http://127.0.0.1:3000/mcp --json report.json --junit conformance.xml
  mcp-eval check --cmd "node dist/server.js" --call-tool create_issue --runs 3
  mcp-eval check --url http://127.0.0.1:3000/mcp --only DISC,TOOL-3 -v
`

func runCheck(ctx context.Context, c *Command, args []string) int {
	var sf serverFlags
	var (
		runs, concurrency int
		callTools, only   multiFlag
		jsonOut, junitOut string
		verbose           bool
	)
	fs := c.newFlagSet("check", "(--url URL | --cmd \"server args…\") [flags]", checkExamples)
	sf.register(fs)
	fs.IntVar(&runs, "runs", 5, "how often each MUST check runs; it passes only at N/N")
	fs.IntVar(&concurrency, "concurrency", 8, "check runs in flight at once")
	fs.Var(&callTools, "call-tool", "allow calling this tool `NAME` although it is not annotated readOnlyHint: true (repeatable; by default only read-only tools are called)")
	fs.Var(&only, "only", "run only these check ids or families, e.g. DISC or TOOL-3 (repeatable, or comma-separated)")
	fs.StringVar(&jsonOut, "json", "", "write the report as JSON to `FILE`")
	fs.StringVar(&junitOut, "junit", "", "write the report as JUnit XML to `FILE`")
	fs.BoolVar(&verbose, "v", false, "list passing checks too")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	if err := sf.validate(); err != nil {
		fmt.Fprintln(c.Stderr, "mcp-eval check:", err)
		return ExitError
	}
	if runs < 1 || runs > 100 || concurrency < 1 || concurrency > 64 {
		fmt.Fprintln(c.Stderr, "mcp-eval check: --runs must be 1..100 and --concurrency 1..64")
		return ExitError
	}
	var onlyIDs []string
	for _, o := range only {
		for _, id := range strings.Split(o, ",") {
			if id = strings.TrimSpace(id); id != "" {
				onlyIDs = append(onlyIDs, id)
			}
		}
	}
	if err := knownIDs(onlyIDs); err != nil {
		fmt.Fprintln(c.Stderr, "mcp-eval check:", err)
		return ExitError
	}
	target, err := sf.conformanceTarget(c)
	if err != nil {
		fmt.Fprintln(c.Stderr, "mcp-eval check:", err)
		return ExitError
	}
	ctx, cancel := context.WithTimeout(ctx, sf.timeout)
	defer cancel()
	rep, err := conformance.Run(ctx, target, conformance.Options{
		Options:   check.Options{Runs: runs, Concurrency: concurrency, Only: onlyIDs},
		CallTools: callTools, RequestTimeout: sf.requestTimeout, ProbeTimeout: sf.probeTimeout,
	})
	if err != nil {
		// Unreachable or not an MCP server: not a verdict on conformance.
		fmt.Fprintf(c.Stderr, "mcp-eval check: could not test %s: %s\n", sanitize(sf.target()), sanitizeText(explain(err)))
		return ExitError
	}
	// The server may have echoed a header or key it was given: every
	// output below is made from the redacted report.
	if err := c.redact.JSON(rep); err != nil {
		fmt.Fprintln(c.Stderr, "mcp-eval check:", err)
		return ExitError
	}
	render.ConformanceText(c.Stdout, rep, render.TextOptions{Verbose: verbose})
	if jsonOut != "" {
		if err := writeFile(jsonOut, func(f *os.File) error {
			enc := json.NewEncoder(f)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		}); err != nil {
			fmt.Fprintln(c.Stderr, "mcp-eval check:", err)
			return ExitError
		}
	}
	if junitOut != "" {
		if err := writeFile(junitOut, func(f *os.File) error { return render.ConformanceJUnit(f, rep) }); err != nil {
			fmt.Fprintln(c.Stderr, "mcp-eval check:", err)
			return ExitError
		}
	}
	if rep.Verdict == conformance.VerdictPass {
		return ExitOK
	}
	return ExitFindings
}

// knownIDs rejects --only values that name no check or family, so a typo
// does not silently run nothing; the registry itself decides.
func knownIDs(ids []string) error {
	if err := conformance.KnownIDs(ids); err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	return nil
}

// conformanceTarget turns the server flags into a conformance target.
func (sf *serverFlags) conformanceTarget(c *Command) (conformance.Target, error) {
	if sf.url != "" {
		h, err := parseHeaders(sf.headers)
		if err != nil {
			return conformance.Target{}, err
		}
		c.redactHeaders(h)
		if _, err := transport.NewHTTP(transport.HTTPConfig{URL: sf.url}); err != nil {
			return conformance.Target{}, err
		}
		return conformance.Target{URL: sf.url, Header: h, MaxMessageBytes: sf.maxResponse}, nil
	}
	argv, err := SplitCommand(sf.cmd)
	if err != nil {
		return conformance.Target{}, err
	}
	env, err := transport.ServerEnv(sf.passEnv, sf.serverEnv, c.LookupEnv)
	if err != nil {
		return conformance.Target{}, err
	}
	c.redact.addServerEnv(env)
	return conformance.Target{Argv: argv, Dir: sf.cwd, Env: env, MaxMessageBytes: sf.maxResponse, RunAs: c.serverUser()}, nil
}

// writeFile writes through a temporary file and renames it, so a reader
// never sees half a report.
func writeFile(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(dirOf(path), ".mcp-eval-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func dirOf(path string) string {
	if i := strings.LastIndex(path, "/"); i >= 0 {
		if i == 0 {
			return "/"
		}
		return path[:i]
	}
	return "."
}
