package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/github"
)

// Baseline is what Runner.Baseline found. Report nil means: no baseline,
// gate on the floors only; Note says why (and was logged).
type Baseline struct {
	Report []byte
	// Source is a short human description: "run #41 (URL)" or "file PATH".
	Source string
	// Run is set when the baseline came from an earlier run.
	Run *github.RunInfo
	// Note explains a missing baseline or what was passed over.
	Note string
	// History are the green reports found for trends and drift, newest
	// first, the baseline among them (BaselineArtifact only).
	History []github.Found
}

// maxBaselineFile bounds a local baseline file like an artifact's report.
const maxBaselineFile = github.DefaultMaxReportBytes

// Baseline fetches the plan's baseline. It never fails the run: every
// problem becomes a notice (no baseline yet) or a warning (broken artifact,
// API failure) and a nil Report, so the gate falls back to the floors.
//
// validate checks report.json's structure (schema); a failure is a warning.
// accept says whether a valid report may be the baseline (verdict pass, has
// the compared layers); an artifact it rejects makes the search walk back to
// an older run. A local file (the baseline input) is used if it validates;
// accept's objection is only reported, since the user chose that file.
func (r *Runner) Baseline(ctx context.Context, p Plan, validate func([]byte) error, accept func([]byte) (bool, string)) Baseline {
	switch p.Baseline.Kind {
	case BaselineFile:
		return r.fileBaseline(p, validate, accept)
	case BaselineArtifact:
		return r.artifactBaseline(ctx, p, validate, accept)
	}
	b := Baseline{Note: "no baseline (" + p.Baseline.Why + "): the gate applies the floors only"}
	r.Notice("mcp-eval baseline", b.Note)
	return b
}

func (r *Runner) fileBaseline(p Plan, validate func([]byte) error, accept func([]byte) (bool, string)) Baseline {
	fail := func(format string, args ...any) Baseline {
		b := Baseline{Note: fmt.Sprintf("input \"baseline\": "+format+"; the gate applies the floors only", args...)}
		r.Warning("mcp-eval baseline", b.Note)
		return b
	}
	f, err := os.Open(p.resolve(p.Baseline.Path))
	if err != nil {
		return fail("cannot open %s (%v); the path is relative to the workspace", p.Baseline.Path, errors.Unwrap(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxBaselineFile+1))
	if err != nil {
		return fail("cannot read %s: %v", p.Baseline.Path, err)
	}
	if len(data) > maxBaselineFile {
		return fail("%s is over %d bytes", p.Baseline.Path, maxBaselineFile)
	}
	if validate != nil {
		if err := validate(data); err != nil {
			return fail("%s is not a valid report: %v", p.Baseline.Path, err)
		}
	}
	b := Baseline{Report: data, Source: "file " + p.Baseline.Path}
	if accept != nil {
		if ok, why := accept(data); !ok {
			b.Note = fmt.Sprintf("the baseline file %s is used as given although %s", p.Baseline.Path, why)
			r.Notice("mcp-eval baseline", b.Note)
		}
	}
	return b
}

func (r *Runner) artifactBaseline(ctx context.Context, p Plan, validate func([]byte) error, accept func([]byte) (bool, string)) Baseline {
	c, err := r.client()
	if err != nil {
		b := Baseline{Note: err.Error() + "; the gate applies the floors only"}
		r.Warning("mcp-eval baseline", b.Note)
		return b
	}
	owner, repo, _ := strings.Cut(p.Repository, "/")
	found, err := c.FetchReports(ctx, github.Params{
		Owner: owner, Repo: repo,
		WorkflowFile:  p.Baseline.WorkflowFile,
		DefaultBranch: p.Baseline.DefaultBranch,
		ArtifactName:  p.Baseline.Artifact,
		ExcludeRunID:  p.RunID,
		Validate:      validate,
		Accept:        accept,
	}, max(p.Baseline.History, 1))
	if len(found) > 0 && err != nil {
		// The baseline was found; an older run broke the walk.
		r.Warning("mcp-eval history", fmt.Sprintf("history: %d green report(s) found, then: %v", len(found), err))
		err = nil
	}
	if err != nil {
		b := Baseline{Note: "no baseline: " + err.Error() + ". The gate applies the floors only"}
		// Not having a baseline yet is normal (first runs, expired
		// artifacts); a broken one or a failing API deserves a warning.
		if errors.Is(err, github.ErrNoRun) || errors.Is(err, github.ErrNoArtifact) || errors.Is(err, github.ErrArtifactExpired) {
			r.Notice("mcp-eval baseline", b.Note)
		} else {
			r.Warning("mcp-eval baseline", b.Note)
		}
		return b
	}
	report, run := found[0].Report, found[0].Run
	b := Baseline{Report: report, Run: &run, Source: fmt.Sprintf("run #%d (%s)", run.Number, run.HTMLURL)}
	if p.Baseline.History > 0 {
		b.History = found
	}
	if len(run.Passed) > 0 {
		b.Note = "newer green runs passed over: " + strings.Join(run.Passed, "; ")
	}
	r.logf("mcp-eval: baseline is %s, commit %s", b.Source, shortSHA(run.HeadSHA))
	if len(b.History) > 0 {
		r.logf("mcp-eval: history: %d green report(s) for trends and drift", len(b.History))
	}
	return b
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
