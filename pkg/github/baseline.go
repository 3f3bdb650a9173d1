package github

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v60/github"
)

// DefaultArtifactName is the artifact the example workflow uploads report.json as.
const DefaultArtifactName = "mcp-eval-report"

// DefaultMaxRuns bounds the walk back through green runs.
const DefaultMaxRuns = 10

// Listing bounds: runs are listed newest first, runsPerPage at a time, for at
// most maxRunPages pages, so a repository whose history is mostly PR or fork
// runs costs a bounded number of requests (GITHUB_TOKEN: 1,000 per hour).
const (
	runsPerPage      = 30
	maxRunPages      = 5
	artifactsPerPage = 100
	maxArtifactPages = 5
)

// baselineEvents are the triggers whose runs may become a baseline. A PR run
// tests code that is not on the default branch; workflow_dispatch may run
// with hand-picked inputs. Push and schedule runs are what "main is green" means.
var baselineEvents = map[string]bool{"push": true, "schedule": true}

// Params selects the baseline.
type Params struct {
	Owner, Repo string
	// WorkflowFile is the workflow's file name ("evals.yml", as in
	// GITHUB_WORKFLOW_REF); WorkflowID may be given instead.
	WorkflowFile string
	WorkflowID   int64
	// DefaultBranch of the repository; "" looks it up (GET /repos/{o}/{r}),
	// since schedule payloads may not carry it.
	DefaultBranch string
	// ArtifactName defaults to DefaultArtifactName. The zip must hold
	// report.json at its root (upload the file, not its directory).
	ArtifactName string
	// MaxRuns bounds how many candidate runs are inspected (default 10).
	MaxRuns int
	// ExcludeRunID is the current run (GITHUB_RUN_ID): never its own baseline.
	ExcludeRunID int64
	// Validate checks report.json's structure (e.g. its JSON Schema). A
	// failure stops the walk with ErrInvalidReport: a broken artifact is
	// reported, not silently skipped. nil accepts any bytes.
	Validate func(reportJSON []byte) error
	// Accept says whether a valid report can be the baseline (verdict pass,
	// has the layers being compared). false walks back to an older run; why
	// is shown to the user. nil accepts every report.
	Accept func(reportJSON []byte) (ok bool, why string)
}

// RunInfo describes the run the baseline came from.
type RunInfo struct {
	ID           int64
	Number       int
	Event        string
	HeadBranch   string
	HeadSHA      string
	HTMLURL      string
	CreatedAt    time.Time
	ArtifactID   int64
	ArtifactName string
	// Passed lists, newest first, why newer green runs were not used.
	Passed []string
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func (p *Params) check() error {
	bad := func(detail, hint string) error {
		return &Error{Op: "find the baseline", Kind: ErrConfig, Detail: detail, Hint: hint}
	}
	if !namePattern.MatchString(p.Owner) || !namePattern.MatchString(p.Repo) {
		return bad(fmt.Sprintf("repository %q/%q is not owner/name", p.Owner, p.Repo), "GITHUB_REPOSITORY must be set, e.g. octo/server")
	}
	if p.WorkflowFile != "" {
		// GITHUB_WORKFLOW_REF gives ".github/workflows/evals.yml"; the API wants the base name.
		p.WorkflowFile = path.Base(p.WorkflowFile)
		if !namePattern.MatchString(p.WorkflowFile) {
			return bad(fmt.Sprintf("workflow file %q is not a file name", p.WorkflowFile), "pass the base name, e.g. evals.yml")
		}
	} else if p.WorkflowID <= 0 {
		return bad("no workflow file or id", "set GITHUB_WORKFLOW_REF or pass the workflow file name")
	}
	if p.ArtifactName == "" {
		p.ArtifactName = DefaultArtifactName
	}
	if p.MaxRuns <= 0 {
		p.MaxRuns = DefaultMaxRuns
	}
	if p.Accept == nil {
		p.Accept = func([]byte) (bool, string) { return true, "" }
	}
	return nil
}

func (p *Params) workflow() string {
	if p.WorkflowFile != "" {
		return p.WorkflowFile
	}
	return fmt.Sprint(p.WorkflowID)
}

// FetchBaseline returns report.json of the newest green push or schedule run
// of the workflow on the default branch, from this repository (never a
// fork), whose report Validate and Accept take. It walks back at most
// MaxRuns candidates. With no baseline the error's kind says why: ErrNoRun,
// ErrNoArtifact or ErrArtifactExpired (those of the newest candidate), or a
// stopping error: ErrTooLarge, ErrCorruptArtifact, ErrInvalidReport,
// ErrRateLimited, ErrAPI.
func (c *Client) FetchBaseline(ctx context.Context, p Params) ([]byte, RunInfo, error) {
	found, err := c.FetchReports(ctx, p, 1)
	if len(found) == 0 {
		return nil, RunInfo{}, err
	}
	return found[0].Report, found[0].Run, nil
}

// Found is one usable report and the run it came from.
type Found struct {
	Report []byte
	Run    RunInfo
}

// FetchReports walks the green runs as FetchBaseline does and keeps up to
// want usable reports, newest first: the first is the baseline, the rest
// the history a trend and the gate's drift warnings read. The walk
// inspects at most MaxRuns candidates past the want-1 it keeps, so each
// kept report may cost one unusable run before it. With nothing found the
// error is FetchBaseline's; with some found, a stopping error (a broken
// artifact, a failing API) ends the walk and is returned with them.
func (c *Client) FetchReports(ctx context.Context, p Params, want int) ([]Found, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	want = max(want, 1)
	if p.DefaultBranch == "" {
		branch, err := c.defaultBranch(ctx, p.Owner, p.Repo)
		if err != nil {
			return nil, err
		}
		p.DefaultBranch = branch
	}

	op := fmt.Sprintf("find the baseline in runs of %s on %s", p.workflow(), p.DefaultBranch)
	opts := &gogithub.ListWorkflowRunsOptions{
		Branch:              p.DefaultBranch,
		Status:              "success",
		ExcludePullRequests: true,
		ListOptions:         gogithub.ListOptions{PerPage: runsPerPage},
	}
	var (
		found     []Found
		passed    []string
		firstKind error
		inspected int
	)
	limit := p.MaxRuns + want - 1
	for page := 0; page < maxRunPages && inspected < limit && len(found) < want; page++ {
		runs, resp, err := c.listRuns(ctx, &p, opts)
		if err != nil {
			err := c.apiError("list runs of workflow "+p.workflow(), resp, err).withHint404("check the workflow file name and that the job has `permissions: actions: read`")
			if len(found) > 0 {
				return found, err
			}
			return nil, err
		}
		for _, run := range runs.WorkflowRuns {
			if !isCandidate(run, &p) {
				continue
			}
			inspected++
			report, info, err := c.runReport(ctx, &p, run)
			if err == nil {
				if len(found) == 0 {
					info.Passed = passed
				}
				found = append(found, Found{Report: report, Run: info})
				if len(found) == want {
					return found, nil
				}
				continue
			}
			var e *Error
			if !errors.As(err, &e) || stops(e.Kind) {
				if len(found) > 0 {
					return found, err
				}
				return nil, err
			}
			if firstKind == nil {
				firstKind = e.Kind
			}
			if len(found) == 0 {
				passed = append(passed, fmt.Sprintf("run #%d (%d): %s", run.GetRunNumber(), run.GetID(), e.Detail))
			}
			if inspected >= limit {
				break
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(found) > 0 {
		return found, nil
	}
	if firstKind == nil {
		return nil, &Error{Op: op, Kind: ErrNoRun,
			Detail: "no successful push or schedule run of this repository",
			Hint:   "a baseline appears once the workflow has passed on the default branch (push or schedule) and uploaded the report artifact"}
	}
	return nil, &Error{Op: op, Kind: firstKind,
		Detail: fmt.Sprintf("%d green run(s) inspected, none usable: %s", inspected, summarize(passed, 5)),
		Hint:   fmt.Sprintf("upload report.json as artifact %q with `if: always()`; artifacts expire after the retention period (90 days by default), and a schedule run keeps one fresh", p.ArtifactName)}
}

// stops says whether a failure ends the walk instead of trying an older run.
// A missing, expired or unsuitable report is a property of that run; a broken
// artifact or a failing API is not fixed by looking further back, and is
// worth a warning of its own.
func stops(kind error) bool {
	return kind != ErrNoArtifact && kind != ErrArtifactExpired && kind != ErrNoRun
}

// isCandidate filters what the API's query cannot: the branch filter matches
// head branch *names*, so a fork's "main" would match too.
func isCandidate(run *gogithub.WorkflowRun, p *Params) bool {
	if run.GetID() == p.ExcludeRunID || !baselineEvents[run.GetEvent()] {
		return false
	}
	if run.GetConclusion() != "success" || run.GetHeadBranch() != p.DefaultBranch {
		return false
	}
	return strings.EqualFold(run.GetHeadRepository().GetFullName(), p.Owner+"/"+p.Repo)
}

func (c *Client) listRuns(ctx context.Context, p *Params, opts *gogithub.ListWorkflowRunsOptions) (*gogithub.WorkflowRuns, *gogithub.Response, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	if p.WorkflowFile != "" {
		return c.gh.Actions.ListWorkflowRunsByFileName(ctx, p.Owner, p.Repo, p.WorkflowFile, opts)
	}
	return c.gh.Actions.ListWorkflowRunsByID(ctx, p.Owner, p.Repo, p.WorkflowID, opts)
}

func (c *Client) defaultBranch(ctx context.Context, owner, repo string) (string, error) {
	ctx, cancel := c.call(ctx)
	defer cancel()
	r, resp, err := c.gh.Repositories.Get(ctx, owner, repo)
	if err != nil {
		return "", c.apiError("look up the default branch of "+owner+"/"+repo, resp, err).withHint404("pass the default branch, or give the job `permissions: contents: read`")
	}
	if r.GetDefaultBranch() == "" {
		return "", &Error{Op: "look up the default branch of " + owner + "/" + repo, Kind: ErrAPI, Detail: "the API returned no default_branch"}
	}
	return r.GetDefaultBranch(), nil
}

// runReport finds, downloads and checks one run's report.
func (c *Client) runReport(ctx context.Context, p *Params, run *gogithub.WorkflowRun) ([]byte, RunInfo, error) {
	info := RunInfo{
		ID: run.GetID(), Number: run.GetRunNumber(), Event: run.GetEvent(),
		HeadBranch: run.GetHeadBranch(), HeadSHA: run.GetHeadSHA(), HTMLURL: run.GetHTMLURL(),
		CreatedAt: run.GetCreatedAt().Time, ArtifactName: p.ArtifactName,
	}
	art, err := c.findArtifact(ctx, p, run.GetID())
	if err != nil {
		return nil, info, err
	}
	info.ArtifactID = art.GetID()
	report, err := c.downloadReport(ctx, p.Owner, p.Repo, art)
	if err != nil {
		return nil, info, err
	}
	op := fmt.Sprintf("check report.json of run #%d", run.GetRunNumber())
	if p.Validate != nil {
		if err := p.Validate(report); err != nil {
			return nil, info, &Error{Op: op, Kind: ErrInvalidReport, Detail: c.scrub(err.Error()), Err: err,
				Hint: "the baseline is ignored and only the floors apply; the next green run on the default branch replaces it"}
		}
	}
	if ok, why := p.Accept(report); !ok {
		if why == "" {
			why = "not usable as a baseline"
		}
		return nil, info, &Error{Op: op, Kind: ErrNoRun, Detail: c.scrub(why)}
	}
	return report, info, nil
}

// findArtifact pages through a run's artifacts for the one named p.ArtifactName.
func (c *Client) findArtifact(ctx context.Context, p *Params, runID int64) (*gogithub.Artifact, error) {
	op := fmt.Sprintf("list artifacts of run %d", runID)
	opts := &gogithub.ListOptions{PerPage: artifactsPerPage}
	var expired *gogithub.Artifact
	for page := 0; page < maxArtifactPages; page++ {
		list, resp, err := func() (*gogithub.ArtifactList, *gogithub.Response, error) {
			ctx, cancel := c.call(ctx)
			defer cancel()
			return c.gh.Actions.ListWorkflowRunArtifacts(ctx, p.Owner, p.Repo, runID, opts)
		}()
		if err != nil {
			return nil, c.apiError(op, resp, err).withHint404("give the job `permissions: actions: read`")
		}
		for _, a := range list.Artifacts {
			if a.GetName() != p.ArtifactName {
				continue
			}
			if !a.GetExpired() {
				return a, nil
			}
			expired = a
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if expired != nil {
		return nil, &Error{Op: op, Kind: ErrArtifactExpired,
			Detail: fmt.Sprintf("artifact %q expired on %s", p.ArtifactName, expired.GetExpiresAt().UTC().Format("2006-01-02"))}
	}
	return nil, &Error{Op: op, Kind: ErrNoArtifact, Detail: fmt.Sprintf("no artifact named %q", p.ArtifactName)}
}

// withHint404 adds a hint when the API said 404, which on these endpoints
// means a wrong name or a token without the permission.
func (e *Error) withHint404(hint string) *Error {
	if e.Status == 404 && e.Hint == "" {
		e.Hint = hint
	}
	return e
}

func summarize(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:max], "; ") + fmt.Sprintf("; and %d more", len(items)-max)
}
