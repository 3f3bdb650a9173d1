package action

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/github"
)

// Runner is the action's I/O: environment in, workflow commands and runner
// files out. Its zero value is not usable: set Getenv and Stdout.
type Runner struct {
	// Getenv reads the runner's environment (os.Getenv in main).
	Getenv func(string) string
	// Environ lists it (os.Environ); when set, Plan rejects unknown
	// INPUT_* variables. Optional.
	Environ func() []string
	// Stdout receives workflow commands (::notice:: and the like).
	Stdout io.Writer
	// HTTPClient carries GitHub API calls; nil uses pkg/github's default.
	HTTPClient *http.Client
}

// Plan is PlanFromEnv plus the unknown-input check.
func (r *Runner) Plan() (Plan, error) {
	var errs []error
	if r.Environ != nil {
		for _, msg := range UnknownInputs(r.Environ()) {
			errs = append(errs, errors.New(msg))
		}
	}
	p, err := PlanFromEnv(r.Getenv)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return Plan{}, errors.Join(errs...)
	}
	return p, nil
}

// Announce logs the plan: what runs, against which baseline, and why. The
// notes (a fork's skipped layers) are notices: neutral, never a failure.
func (r *Runner) Announce(p Plan) {
	trig := string(p.Trigger)
	if p.Schedule != "" {
		trig += " (" + p.Schedule + ")"
	}
	r.logf("mcp-eval: event %s, trigger %s, layers %s", orDash(p.Event), trig, joinLayers(p.Layers))
	if len(p.Models) > 0 {
		r.logf("mcp-eval: models %s", strings.Join(p.Models, ", "))
	}
	switch p.Baseline.Kind {
	case BaselineFile:
		r.logf("mcp-eval: baseline from file %s", p.Baseline.Path)
	case BaselineArtifact:
		r.logf("mcp-eval: baseline from artifact %q of the last green run of %s", p.Baseline.Artifact, p.Baseline.WorkflowFile)
	default:
		r.logf("mcp-eval: no baseline: %s", p.Baseline.Why)
	}
	if p.Comment.PR > 0 {
		r.logf("mcp-eval: will comment on pull request #%d", p.Comment.PR)
	}
	for _, n := range p.Notes {
		r.Notice("mcp-eval", n)
	}
}

// Notice, Warning and Error write a workflow-command annotation with
// escaped title and message.
func (r *Runner) Notice(title, msg string)  { r.command("notice", title, msg) }
func (r *Runner) Warning(title, msg string) { r.command("warning", title, msg) }
func (r *Runner) Error(title, msg string)   { r.command("error", title, msg) }

func (r *Runner) command(level, title, msg string) {
	_ = WriteCommand(r.Stdout, level, map[string]string{"title": title}, r.scrub(msg))
}

// logf writes a plain log line built from our own text; anything untrusted
// goes through EchoUntrusted instead.
func (r *Runner) logf(format string, args ...any) {
	fmt.Fprintln(r.Stdout, escapeLeadingColons(r.scrub(fmt.Sprintf(format, args...))))
}

// scrub removes the token from text bound for the log, as a last guard.
func (r *Runner) scrub(s string) string {
	if t := token(r.Getenv); t != "" {
		s = strings.ReplaceAll(s, t, "***")
	}
	return s
}

// client builds the GitHub API client from GITHUB_API_URL and the token.
func (r *Runner) client() (*github.Client, error) {
	return github.New(github.Options{
		APIURL:     r.Getenv("GITHUB_API_URL"),
		Token:      token(r.Getenv),
		HTTPClient: r.HTTPClient,
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
