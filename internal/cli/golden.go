package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/draft"
	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/spend"
)

const goldenInitExamples = `  mcp-eval golden init --cmd "node dist/server.js" --out golden/tasks.yaml
  mcp-eval golden init --url http://127.0.0.1:3000/mcp --out golden/tasks.yaml --force
  mcp-eval golden init --cmd "./server" --models openai:gpt-5-mini --out golden/tasks.yaml   # a model words the prompts, then runs each case once

Without --models the prompts come from the tools' descriptions and schemas (no key needed).
With --models the first model drafts the prompts and every model runs each case once;
a case a model already fails is tagged fails-at-draft. Docs: docs/golden-format.md (Drafting a set).
`

func runGolden(ctx context.Context, c *Command, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w := c.Stdout
		if len(args) == 0 {
			w = c.Stderr
		}
		fmt.Fprintf(w, "Usage: mcp-eval golden init (--url URL | --cmd \"…\") --out FILE [--models M] [--force]\n\nCommands:\n  init       draft a golden set from the server's own tools (docs/golden-format.md)\n")
		if len(args) == 0 {
			return ExitError
		}
		return ExitOK
	}
	if args[0] != "init" {
		fmt.Fprintf(c.Stderr, "mcp-eval golden: unknown command %q (the one command is init: mcp-eval golden init --help)\n", args[0])
		return ExitError
	}
	return runGoldenInit(ctx, c, args[1:])
}

func runGoldenInit(ctx context.Context, c *Command, args []string) int {
	var f planFlags
	var out, models string
	var force bool
	fs := c.newFlagSet("golden init", "(--url URL | --cmd \"…\") --out FILE [--models M1,M2] [--force] [flags]", goldenInitExamples)
	f.register(fs, flagsServer|flagsConfig)
	fs.StringVar(&out, "out", "", "golden file to write, e.g. golden/tasks.yaml")
	fs.StringVar(&models, "models", "", "comma list of models: the first words the prompts, each runs every drafted case once (default: none, prompts from the schemas)")
	fs.BoolVar(&force, "force", false, "overwrite --out when it exists")
	if code := c.parse(fs, args); code >= 0 {
		return code
	}
	fail := func(format string, a ...any) int {
		c.errorf("golden init", format, a...)
		return ExitError
	}
	if out == "" {
		return fail("name the file to write: --out golden/tasks.yaml")
	}
	if info, err := os.Stat(out); err == nil {
		if info.IsDir() {
			return fail("--out %s is a directory; name a file in it, e.g. --out %s", out, filepath.Join(out, "tasks.yaml"))
		}
		if !force {
			return fail("%s already exists; golden init never overwrites a file: pass --force to replace it, or choose another --out", out)
		}
	}
	flags, err := f.settings()
	if err != nil {
		return fail("%v", err)
	}
	var s pipeline.Settings
	path := f.config
	if path == "" && fileExists(config.DefaultFile) {
		path = config.DefaultFile
	}
	if path != "" {
		file, err := pipeline.LoadConfig(path)
		if err != nil {
			return fail("%s", explain(err))
		}
		s = s.Overlay(file)
	}
	s = s.Overlay(flags)
	var specs []string
	if strings.TrimSpace(models) != "" && models != "none" {
		specs = splitList(models)
		// Models make it a Layer 1 run: its deadline (30m by default,
		// --timeout otherwise) covers the drafting and the one run.
		s = s.Overlay(pipeline.Settings{Models: specs, Layers: []string{pipeline.Behavior}})
	}
	pl, err := pipeline.Resolve(s, c.env())
	if err != nil {
		return fail("%s", explain(err))
	}
	if pl.ServerUserNote != "" {
		fmt.Fprintln(c.Stderr, "mcp-eval: note:", pl.ServerUserNote)
	}
	runCtx, cancel := context.WithTimeout(ctx, pl.Timeout)
	defer cancel()
	cl, err := pl.Connect(runCtx, nil)
	if err != nil {
		return fail("%s: %s", pl.TargetDesc, explain(err))
	}
	lt, err := cl.ListTools(runCtx)
	cl.Close()
	if err != nil {
		return fail("listing the tools of %s: %s (run mcp-eval probe with the same flags to see what the server answers)", pl.TargetDesc, explain(err))
	}
	d, err := draft.Build(lt.Tools, draft.Options{Source: pl.TargetDesc})
	if err != nil {
		return fail("%s: %v", pl.TargetDesc, err)
	}
	if lt.List != nil && lt.List.Truncated {
		d.Notes = append(d.Notes, "tools/list was cut short (too many pages, or a cursor that repeats): the draft covers the tools listed before that")
	}
	for _, dt := range lt.Dropped {
		d.Notes = append(d.Notes, fmt.Sprintf("tool %s left out: %s", dt.Name, dt.Reason))
	}
	if len(specs) > 0 {
		if code := c.draftWithModels(ctx, pl, s, specs, d, out); code >= 0 {
			return code
		}
	}
	data, err := d.YAML()
	if err != nil {
		return fail("writing the draft: %v", err)
	}
	// The file is an output like any other: no secret of the run (a
	// header, a key) goes into it, whatever a server or model echoed.
	data = []byte(c.redact.String(string(data)))
	set, err := d.Check(out, data)
	if err != nil {
		return fail("%v", err)
	}
	if dir := filepath.Dir(out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fail("creating %s: %v", dir, err)
		}
	}
	if !force && fileExists(out) {
		return fail("%s appeared while the draft was made; pass --force to replace it", out)
	}
	if err := atomicfile.WriteBytes(out, data); err != nil {
		return fail("writing %s: %v", out, err)
	}
	server := pl.Target.Describe() // in a sentence: "http http://…" read as a typo
	if pl.Target.Kind() == "stdio" {
		server += " (stdio)"
	}
	c.printDraft(d, set.Cases, out, server, f.s)
	return ExitOK
}

// draftWithModels has the first model word the prompts, then runs the
// draft once per model through Layer 1 (the pipeline, as `eval` would) and
// marks the cases a model already fails. It returns -1 to go on.
func (c *Command) draftWithModels(ctx context.Context, pl *pipeline.Plan, s pipeline.Settings, specs []string, d *draft.Draft, out string) int {
	lookup := c.LookupEnv
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	model, err := llm.New(specs[0], pl.Behavior.Endpoints, lookup, llm.Options{})
	if err != nil {
		c.errorf("golden init", "--models %s: %s", specs[0], explain(err))
		return ExitError
	}
	rctx, cancel := context.WithTimeout(ctx, pl.Timeout)
	defer cancel()
	// Drafting spends from the run's budget: what the prompts cost is
	// taken off the cap the run-once step gets.
	meter := spend.NewMeter(pl.Behavior.Budget, pl.Prices, nil)
	err = draft.Rewrite(rctx, model, meter, d)
	used := meter.Used()
	fmt.Fprintf(c.Stdout, "drafting the prompts: %d model calls, %d tokens%s\n", used.Calls, used.Tokens, usdText(used))
	switch {
	case errors.Is(err, llm.ErrInvalidOutput):
		// The model was reached and answered, only not in the JSON asked
		// for: the key and the name are fine, and the schema's prompts
		// still make a draft.
		fmt.Fprintf(c.Stderr, "mcp-eval golden init: warning: %s: the template prompts stay (a model that answers with structured output words them)\n", sanitizeText(err.Error()))
	case err != nil:
		c.errorf("golden init", "%s (check the key and the model name, or leave out --models to draft from the schemas)", explain(err))
		return ExitError
	}
	data, err := d.YAML()
	if err != nil {
		c.errorf("golden init", "writing the draft: %v", err)
		return ExitError
	}
	if _, err := d.Check(out, data); err != nil {
		c.errorf("golden init", "%v", err)
		return ExitError
	}
	tmp, err := os.MkdirTemp("", "mcp-eval-golden-init-")
	if err != nil {
		c.errorf("golden init", "%v", err)
		return ExitError
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "draft.yaml")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		c.errorf("golden init", "%v", err)
		return ExitError
	}
	// One run per case and model, nothing reused, no report: this only
	// asks whether a model already fails a case.
	run := s.Overlay(pipeline.Settings{Layers: []string{pipeline.Behavior}, Golden: file, GoldenShown: out, Runs: 1, CacheDir: filepath.Join(tmp, "cache"),
		Reuse: ptr(behavior.ReuseNothing)})
	if reached := meter.Reached(); reached != "" {
		c.warnf("golden init", "the budget was reached while drafting (%s): the drafted cases were not run", reached)
		return -1
	}
	if b := pl.Behavior.Budget; b.MaxTokens > 0 {
		run.MaxTokens = b.MaxTokens - used.Tokens
	}
	if b := pl.Behavior.Budget; b.MaxUSD > 0 && used.USD != nil {
		run.MaxUSD = b.MaxUSD - *used.USD
	}
	run.Report, run.JUnit, run.Markdown, run.HTML, run.Baseline = "", "", "", "", ""
	rp, err := pipeline.Resolve(run, c.env())
	if err != nil {
		c.errorf("golden init", "running the draft once: %s", explain(err))
		return ExitError
	}
	fmt.Fprintf(c.Stdout, "running each drafted case once per model (%s) to mark the ones a model already fails\n", strings.Join(specs, ", "))
	rep, err := pipeline.Run(ctx, rp)
	if rep == nil || rep.Behavior == nil {
		if err == nil {
			err = errors.New("Layer 1 did not run")
		}
		c.errorf("golden init", "running the draft once: %s", explain(err))
		return ExitError
	}
	if err != nil {
		c.warnf("golden init", "running the draft once: %s", explain(err))
	}
	for _, r := range rep.Behavior.Results {
		note := ""
		if len(r.Notes) > 0 {
			note = r.Notes[0]
		}
		switch {
		case r.Errors > 0:
			d.Unrun(r.Case, r.Model, note)
		case r.Passed.N > 0 && r.Passed.K < r.Passed.N:
			d.Mark(r.Case, r.Model, note)
		}
	}
	return -1
}

func (c *Command) printDraft(d *draft.Draft, cases []golden.Case, out, target string, srv pipeline.Settings) {
	var pos, neg, chains, failing, todo int
	for _, dc := range d.Cases {
		switch {
		case dc.Negative:
			neg++
		case len(dc.Steps) > 1:
			chains++
		default:
			pos++
		}
		if len(dc.Todo) > 0 {
			todo++
		}
		for _, t := range dc.Tags {
			if t == draft.TagFailsDrafts {
				failing++
			}
		}
	}
	fmt.Fprintf(c.Stdout, "wrote %s: a draft of %d cases from the tools of %s\n", sanitize(out), len(cases), sanitize(target))
	fmt.Fprintf(c.Stdout, "  %d positive, %d chain, %d negative", pos, chains, neg)
	if todo > 0 {
		fmt.Fprintf(c.Stdout, "; %d with a TODO (a value the draft could not make)", todo)
	}
	if failing > 0 {
		fmt.Fprintf(c.Stdout, "; %d already failed by a model (tag %s)", failing, draft.TagFailsDrafts)
	}
	fmt.Fprintln(c.Stdout)
	for _, n := range d.Notes {
		fmt.Fprintf(c.Stdout, "  note: %s\n", sanitize(n))
	}
	server := ""
	switch {
	case srv.URL != "":
		server = "--url " + srv.URL
	case srv.Command != "":
		server = fmt.Sprintf("--cmd %q", srv.Command)
	}
	fmt.Fprintf(c.Stdout, "review it (the comments say how each case was made), then run it:\n  %s\n", sanitize(strings.TrimSpace("mcp-eval eval --golden "+out+" "+server)))
}

// usdText is ", $X" for spend with a known price, else what is unknown.
func usdText(f report.SpendFigures) string {
	switch {
	case f.USD != nil:
		return fmt.Sprintf(", $%.4f", *f.USD)
	case f.USDUnknown != "":
		return ", cost unknown (" + sanitize(f.USDUnknown) + ")"
	}
	return ""
}
