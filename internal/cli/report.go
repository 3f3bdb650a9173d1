package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
	"github.com/mcp-eval/mcp-eval-action/pkg/render"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

const reportExamples = `  mcp-eval report --in report.json
  mcp-eval report --in report.json --format markdown --marker "<!-- mcp-eval:ci -->" --run-url https://github.com/o/r/actions/runs/1
  mcp-eval report --in report.json --format junit --out mcp-eval.xml
  mcp-eval report --in report.json --format json   # validated, normalised copy
  mcp-eval report --in report.json --format html --out report.html   # one self-contained page, readable offline
  mcp-eval report merge shard-*/report.json --out report.json   # the shards of a --shard i/n run, gated once (report merge --help)
`

// reportFormats are the formats of `mcp-eval report`, in the order help
// lists them.
func reportFormats() []string { return []string{"text", "markdown", "junit", "json", "html"} }

func runReport(ctx context.Context, c *Command, args []string) int {
	if len(args) > 0 && args[0] == "merge" {
		return runReportMerge(ctx, c, args[1:])
	}
	var (
		in, format, out, marker, runURL string
		maxBytes                        int
		verbose                         bool
	)
	fs := c.newFlagSet("report", "--in FILE [--format "+strings.Join(reportFormats(), "|")+"] [flags]", reportExamples)
	fs.StringVar(&in, "in", "", "the report.json to render (`FILE`)")
	fs.StringVar(&format, "format", "text", "output format: "+strings.Join(reportFormats(), ", "))
	fs.StringVar(&out, "out", "", "write to `FILE` instead of standard output")
	fs.StringVar(&marker, "marker", "", "markdown: hidden first line that finds the sticky PR comment again, e.g. \"<!-- mcp-eval:ci -->\"")
	fs.StringVar(&runURL, "run-url", "", "markdown: link to the workflow run (default: from GITHUB_SERVER_URL and the report's repository and run id)")
	fs.IntVar(&maxBytes, "max-bytes", render.DefaultMaxBytes, "markdown: cut the body to this many bytes, with a note (GitHub's comment limit is 65536 characters)")
	fs.BoolVar(&verbose, "v", false, "text: list passing checks too")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "mcp-eval report: "+format+"\n", a...)
		return ExitError
	}
	if in == "" {
		return fail("--in is required: the report.json to render (see --help)")
	}
	known := false
	for _, f := range reportFormats() {
		known = known || f == format
	}
	if !known {
		return fail("--format %q is not supported: use one of %s", format, strings.Join(reportFormats(), ", "))
	}
	if maxBytes < 1024 {
		return fail("--max-bytes %d is too small: use at least 1024", maxBytes)
	}
	rep, err := report.Load(in)
	if err != nil {
		return fail("%s", sanitizeText(err.Error()))
	}
	// A report from elsewhere may hold a secret this run knows (an older
	// harness, a hand-made file): it is rendered redacted too.
	if err := c.redact.JSON(rep); err != nil {
		return fail("%v", err)
	}
	if runURL == "" {
		runURL = c.defaultRunURL(rep)
	}
	write := func(w io.Writer) error {
		switch format {
		case "markdown":
			return render.Markdown(w, rep, render.MarkdownOptions{Marker: marker, RunURL: runURL, MaxBytes: maxBytes})
		case "junit":
			return render.ReportJUnit(w, rep)
		case "json":
			return render.ReportJSON(w, rep)
		case "html":
			return render.HTML(w, rep, render.HTMLOptions{})
		}
		render.ReportText(w, rep, render.TextOptions{Verbose: verbose})
		return nil
	}
	if out == "" {
		err = write(c.Stdout)
	} else {
		err = atomicfile.Write(out, write)
	}
	if err != nil {
		return fail("%v", err)
	}
	return ExitOK
}

// defaultRunURL links the run that made the report when the environment
// says which GitHub it ran on.
func (c *Command) defaultRunURL(rep *report.Report) string {
	if c.LookupEnv == nil || rep.Run.Repository == "" || rep.Run.WorkflowRunID == 0 {
		return ""
	}
	server, ok := c.LookupEnv("GITHUB_SERVER_URL")
	if !ok || server == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s/actions/runs/%d", strings.TrimSuffix(server, "/"), rep.Run.Repository, rep.Run.WorkflowRunID)
}
