package action

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/github"
)

// Verdicts.
const (
	VerdictPass         = "pass"
	VerdictFail         = "fail"
	VerdictInconclusive = "inconclusive"
	// VerdictCancelled: the job was cancelled mid-run. No annotation, and
	// the PR comment keeps the last real result.
	VerdictCancelled = "cancelled"
	// VerdictError: runs the harness could not judge and nothing failed;
	// not passed (the step exits 2).
	VerdictError = "error"
)

// Result is what the CLI hands over once the run is gated and rendered.
type Result struct {
	Verdict string // VerdictPass, VerdictFail, VerdictInconclusive, VerdictCancelled or VerdictError
	Passed  bool
	// ReportPath is report.json's path; made workspace-relative for the output.
	ReportPath string
	// MarkdownBody is render.Markdown's output: the job summary and the PR
	// comment (the marker is added here). Its untrusted parts must already
	// be escaped by the renderer.
	MarkdownBody string
	// SummaryBody is the long form for the job summary (render.Markdown
	// with Long); empty means MarkdownBody serves both.
	SummaryBody string
	// Annotations for failed MUST checks and regressions, most important first.
	Annotations []Annotation
	// Scores by layer name (conformance, behavior, resilience, telemetry):
	// numbers like "0.93" or counts like "41/43". Each becomes output
	// score-<name>.
	Scores map[string]string
}

// Annotation is one ::error / ::warning / ::notice line.
type Annotation struct {
	Level   string // "error" (default), "warning" or "notice"
	File    string // workspace-relative, optional
	Line    int    // 1-based, optional
	EndLine int
	Title   string // e.g. the check id
	Message string // may hold server text: it is escaped
}

// maxAnnotations: GitHub shows about 10 annotations of each level per
// step; more only hide each other. The worst 10 are shown (the caller
// orders them), then a count; the rest is in the summary.
const maxAnnotations = 10

// Published says what Publish did.
type Published struct {
	Comment string // github.Comment* action, or "failed"
	// Warnings raised while publishing (already logged).
	Warnings []string
}

// scoreValue accepts a score output: a number or k/N, at most 32 bytes,
// an optional '-' and a digit first, then digits and . / % + -.
func scoreValue(s string) bool {
	rest := strings.TrimPrefix(s, "-")
	if len(s) > 32 || rest == "" || rest[0] < '0' || rest[0] > '9' {
		return false
	}
	for i := 1; i < len(rest); i++ {
		if c := rest[i]; (c < '0' || c > '9') && !strings.ContainsRune("./%+-", rune(c)) {
			return false
		}
	}
	return true
}

// Publish writes the outputs, the job summary and the annotations, and
// upserts the PR comment. Only a failure to write the runner's files is an
// error; a comment that cannot be posted (a fork's read-only token, an API
// failure) is a warning and never changes the verdict.
func (r *Runner) Publish(ctx context.Context, p Plan, res Result) (Published, error) {
	var pub Published
	switch res.Verdict {
	case VerdictPass, VerdictFail, VerdictInconclusive, VerdictCancelled, VerdictError:
	default:
		return pub, fmt.Errorf("publish: verdict %q is not pass, fail, inconclusive, cancelled or error", res.Verdict)
	}

	r.annotate(res.Annotations)

	var errs []error
	if err := appendFile("GITHUB_STEP_SUMMARY", r.Getenv("GITHUB_STEP_SUMMARY"), capSummary(r.scrub(orBody(res.SummaryBody, res.MarkdownBody)))+"\n"); err != nil {
		errs = append(errs, err)
	}

	pub.Comment = r.comment(ctx, p, res, &pub)

	outputs := [][2]string{
		{"verdict", res.Verdict},
		{"passed", strconv.FormatBool(res.Passed)},
		{"report-path", ""},
		{"comment", pub.Comment},
	}
	if res.ReportPath != "" {
		rel := p.RelPath(res.ReportPath)
		if outputValue(rel) {
			outputs[2][1] = rel
		} else {
			pub.Warnings = append(pub.Warnings, "output report-path left empty: the path is not a single printable line")
		}
	}
	for _, name := range scoreNames {
		v, ok := res.Scores[name]
		if !ok {
			continue
		}
		if v != "" && !scoreValue(v) {
			// The value itself is not repeated: it may be anything.
			pub.Warnings = append(pub.Warnings, fmt.Sprintf("output score-%s left empty: the value is not a number or k/N", name))
			continue
		}
		outputs = append(outputs, [2]string{"score-" + name, v})
	}
	for _, name := range slices.Sorted(maps.Keys(res.Scores)) {
		if !slices.Contains(scoreNames, name) {
			pub.Warnings = append(pub.Warnings, fmt.Sprintf("score %q has no output; outputs exist for %s", name, strings.Join(scoreNames, ", ")))
		}
	}
	text, err := formatOutputs(outputs)
	if err == nil {
		err = appendFile("GITHUB_OUTPUT", r.Getenv("GITHUB_OUTPUT"), text)
	}
	if err != nil {
		errs = append(errs, err)
	}
	for i, w := range pub.Warnings {
		pub.Warnings[i] = r.scrub(w)
		r.Warning("mcp-eval", w)
	}
	return pub, errors.Join(errs...)
}

func (r *Runner) annotate(anns []Annotation) {
	shown := 0
	dropped := map[string]int{}
	for _, a := range anns {
		level := a.Level
		switch level {
		case "":
			level = "error"
		case "error", "warning", "notice":
		default:
			level = "warning"
		}
		if shown >= maxAnnotations {
			dropped[level]++
			continue
		}
		shown++
		props := map[string]string{"file": a.File, "title": a.Title}
		if a.Line > 0 {
			props["line"] = strconv.Itoa(a.Line)
			if a.EndLine >= a.Line {
				props["endLine"] = strconv.Itoa(a.EndLine)
			}
		}
		_ = WriteCommand(r.Stdout, level, props, r.scrub(a.Message))
	}
	if n := dropped["error"] + dropped["warning"] + dropped["notice"]; n > 0 {
		var parts []string
		for _, l := range []string{"error", "warning", "notice"} {
			if dropped[l] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s(s)", dropped[l], l))
			}
		}
		r.Notice("mcp-eval", fmt.Sprintf("%d more annotation(s) not shown (%s); the job summary lists every finding", n, strings.Join(parts, ", ")))
	}
}

// comment upserts the sticky comment and returns the action taken.
func (r *Runner) comment(ctx context.Context, p Plan, res Result, pub *Published) string {
	warn := func(msg string) string {
		pub.Warnings = append(pub.Warnings, msg)
		return "failed"
	}
	if res.Verdict == VerdictCancelled {
		// A cancelled run has nothing to say over the last real result
		// (often the run of the newer push that cancelled this one).
		if p.Comment.PR > 0 {
			r.logf("mcp-eval: PR comment left as it was: the run was cancelled")
		}
		return github.CommentSkipped
	}
	if p.Comment.PR <= 0 {
		if isPullRequest(p.Event) && p.Inputs.Comment && !p.Inputs.HasToken {
			pub.Warnings = append(pub.Warnings, "PR comment skipped: no github-token (the default is ${{ github.token }}; an empty value turns it off). The verdict is unchanged; the job summary has the report")
		}
		return github.CommentSkipped
	}
	c, err := r.client()
	if err != nil {
		return warn("PR comment not posted: " + err.Error())
	}
	owner, repo, _ := strings.Cut(p.Repository, "/")
	body := res.MarkdownBody
	if p.RunURL != "" && !strings.Contains(body, p.RunURL) {
		body += "\n\n[Workflow run](" + p.RunURL + ")\n"
	}
	action, err := c.UpsertComment(ctx, owner, repo, p.Comment.PR, p.Comment.Marker, r.scrub(body))
	switch {
	case github.IsReadOnly(err):
		return warn("PR comment not posted: the token is read-only here (pull requests from forks always get one). The verdict is unchanged; the job summary has the report. Details: " + err.Error())
	case err != nil:
		return warn("PR comment not posted; the verdict is unchanged: " + err.Error())
	}
	r.logf("mcp-eval: PR comment %s on #%d", action, p.Comment.PR)
	return action
}

func orBody(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
