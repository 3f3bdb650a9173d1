package action

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/github"
)

// Trigger is what started the run, as far as choosing layers and models goes.
type Trigger string

// Triggers. Config files map model sets to them (and, for TriggerSchedule,
// to Plan.Schedule, so a nightly and a weekly cron can differ).
const (
	TriggerPush        Trigger = "push"
	TriggerPullRequest Trigger = "pull_request"
	TriggerLabeled     Trigger = "pull_request_labeled" // labelled run-evals, same repository
	TriggerSchedule    Trigger = "schedule"
	TriggerDispatch    Trigger = "workflow_dispatch"
	TriggerOther       Trigger = "other"
	TriggerLocal       Trigger = "local" // not in GitHub Actions
)

// defaultMarkerKey names the comment marker when the workflow is unknown.
const defaultMarkerKey = "default"

// Plan is what this run will do. It holds no secret and can be logged whole.
type Plan struct {
	Inputs   Inputs
	Event    string  // GITHUB_EVENT_NAME
	Action   string  // the payload's action, e.g. "labeled"
	Trigger  Trigger // the event as it matters for layers and models
	Schedule string  // the cron expression of a schedule event
	// Layers to run, sorted; never empty (when nothing else may run, Layer 0 does).
	Layers []Layer
	// Skipped are layers the inputs asked for that this event cannot run
	// (fork pull requests have no secrets).
	Skipped []Layer
	// Models as the input gave them; empty means the config file decides
	// (per Trigger and Schedule).
	Models []string
	// Fork is true for a pull request from another repository.
	Fork bool
	// Notes are neutral sentences for the log and the summary.
	Notes    []string
	Baseline BaselineSource
	Comment  CommentTarget
	// Repository is owner/name; RunURL links to this run.
	Repository string
	RunURL     string
	RunID      int64
	SHA        string
	// Workspace is GITHUB_WORKSPACE (the process's working directory in the
	// Docker action); report paths in outputs are relative to it.
	Workspace string
}

// Baseline source kinds.
const (
	BaselineNone     = "none"
	BaselineFile     = "file"
	BaselineArtifact = "artifact"
)

// BaselineSource says where the baseline comes from.
type BaselineSource struct {
	Kind string // BaselineNone, BaselineFile or BaselineArtifact
	// Path of the local report (BaselineFile), as given in the input.
	Path string
	// For BaselineArtifact: the artifact name, this workflow's file name
	// (from GITHUB_WORKFLOW_REF) and the default branch ("" = look it up).
	Artifact      string
	WorkflowFile  string
	DefaultBranch string
	// Why there is none (BaselineNone).
	Why string
	// History is how many green reports to fetch for trends and drift
	// (the policy's gate.history); the baseline is the newest of them.
	History int
}

// CommentTarget is the pull request to comment on; PR 0 means no comment,
// and Why says why.
type CommentTarget struct {
	PR     int
	Marker string
	Why    string
}

// PlanFromEnv reads the inputs (INPUT_*), the event (GITHUB_EVENT_NAME,
// GITHUB_EVENT_PATH) and the run's context (GITHUB_REPOSITORY, GITHUB_RUN_ID,
// GITHUB_WORKFLOW_REF, …) through getenv and decides what to run. Its errors
// name the input or variable at fault.
func PlanFromEnv(getenv func(string) string) (Plan, error) {
	in, err := ParseInputs(getenv)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{
		Inputs:     in,
		Event:      getenv("GITHUB_EVENT_NAME"),
		Repository: getenv("GITHUB_REPOSITORY"),
		SHA:        getenv("GITHUB_SHA"),
		Workspace:  getenv("GITHUB_WORKSPACE"),
		Models:     in.Models,
	}
	if v := getenv("GITHUB_RUN_ID"); v != "" {
		if p.RunID, err = strconv.ParseInt(v, 10, 64); err != nil {
			return Plan{}, fmt.Errorf("GITHUB_RUN_ID %q is not a number", v)
		}
		server := strings.TrimRight(getenv("GITHUB_SERVER_URL"), "/")
		if server == "" {
			server = "https://github.com"
		}
		p.RunURL = fmt.Sprintf("%s/%s/actions/runs/%d", server, p.Repository, p.RunID)
	}
	ev, err := readEvent(getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		return Plan{}, err
	}
	if isPullRequest(p.Event) && ev.PullRequest == nil {
		return Plan{}, fmt.Errorf("GITHUB_EVENT_NAME is %s but GITHUB_EVENT_PATH holds no pull_request payload", p.Event)
	}
	p.Action, p.Schedule = ev.Action, ev.Schedule
	p.Fork = isPullRequest(p.Event) && ev.fromFork(p.Repository)
	p.Trigger = trigger(p.Event, ev, p.Fork)
	p.chooseLayers(p.Fork && ev.labeledRunEvals())
	p.Baseline = baselineSource(in, getenv, ev, p.Repository)
	p.Comment = commentTarget(in, p.Event, ev, getenv)
	if p.Repository == "" && p.Comment.PR > 0 {
		p.Comment = CommentTarget{Marker: p.Comment.Marker, Why: "GITHUB_REPOSITORY is not set"}
	}
	return p, nil
}

func trigger(name string, ev event, fork bool) Trigger {
	switch {
	case name == "":
		return TriggerLocal
	case name == "push":
		return TriggerPush
	case name == "schedule":
		return TriggerSchedule
	case name == "workflow_dispatch":
		return TriggerDispatch
	case isPullRequest(name) && ev.labeledRunEvals() && !fork:
		return TriggerLabeled
	case isPullRequest(name):
		return TriggerPullRequest
	}
	return TriggerOther
}

// chooseLayers applies `layers: auto` and the fork rule.
//
// auto: push and ordinary pull-request events run Layer 0 (free, every
// change); schedule, workflow_dispatch and the run-evals label on a pull
// request from this repository run all layers. Only the labelled event
// itself arms the paid layers: later pushes to the same PR are
// "synchronize" and run Layer 0 again, so a label is a one-shot opt-in.
func (p *Plan) chooseLayers(forkAskedForAll bool) {
	want := p.Inputs.Layers
	if p.Inputs.AutoLayers {
		switch p.Trigger {
		case TriggerSchedule, TriggerDispatch, TriggerLabeled:
			want = AllLayers()
		default:
			want = []Layer{Conformance}
		}
		// A fork's run-evals label would have armed them: say why not.
		if forkAskedForAll {
			want = AllLayers()
		}
	}
	for _, l := range want {
		if p.Fork && l.NeedsSecrets() {
			p.Skipped = append(p.Skipped, l)
			continue
		}
		p.Layers = append(p.Layers, l)
	}
	if len(p.Skipped) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf(
			"layers %s skipped: this pull request comes from a fork, and GitHub gives runs for forks neither secrets nor model keys. This is not a failure; a maintainer can run them from a branch of this repository.",
			joinLayers(p.Skipped)))
	}
	if len(p.Layers) == 0 {
		// Layer 0 needs no secret and always has something to say.
		p.Layers = []Layer{Conformance}
	}
	if p.Trigger == TriggerLabeled && p.Inputs.AutoLayers {
		p.Notes = append(p.Notes, "all layers run because the label "+RunEvalsLabel+" was added; later pushes run Layer 0 only until the label is added again")
	}
}

func baselineSource(in Inputs, getenv func(string) string, ev event, repository string) BaselineSource {
	if in.Baseline != "" {
		return BaselineSource{Kind: BaselineFile, Path: in.Baseline}
	}
	if repository == "" {
		return BaselineSource{Kind: BaselineNone, Why: "GITHUB_REPOSITORY is not set (not running in GitHub Actions?); pass the baseline input instead"}
	}
	if !in.HasToken {
		return BaselineSource{Kind: BaselineNone, Why: "no github-token to search earlier runs"}
	}
	wf := workflowFile(getenv("GITHUB_WORKFLOW_REF"))
	if wf == "" {
		return BaselineSource{Kind: BaselineNone, Why: "GITHUB_WORKFLOW_REF is not set, so the workflow whose runs hold the baseline is unknown; pass the baseline input instead"}
	}
	return BaselineSource{Kind: BaselineArtifact, Artifact: in.BaselineArtifact, WorkflowFile: wf, DefaultBranch: ev.defaultBranch()}
}

// workflowFile turns "octo/server/.github/workflows/evals.yml@refs/heads/main"
// into "evals.yml".
func workflowFile(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if ref == "" || !strings.Contains(ref, "/") {
		return ""
	}
	return path.Base(ref)
}

func commentTarget(in Inputs, eventName string, ev event, getenv func(string) string) CommentTarget {
	key := workflowFile(getenv("GITHUB_WORKFLOW_REF"))
	if key == "" {
		key = getenv("GITHUB_WORKFLOW")
	}
	if key == "" {
		key = defaultMarkerKey
	}
	t := CommentTarget{Marker: github.Marker(key)}
	switch {
	case in.Shard != "":
		// One comment per run: the merge job (shard: merge) makes it.
		t.Why = "a shard's report is part of the run; the merge job (shard: merge) comments"
	case !isPullRequest(eventName):
		t.Why = "not a pull request event"
	case !in.Comment:
		t.Why = "the comment input is false"
	case !in.HasToken:
		t.Why = "no github-token"
	case ev.prNumber() <= 0:
		t.Why = "the event payload has no pull request number"
	default:
		t.PR = ev.prNumber()
	}
	return t
}

// RelPath returns p relative to the workspace when it lies inside it, else
// p cleaned. Outputs and reports carry relative paths: /github/workspace/…
// means nothing to the steps that run on the host after a Docker action.
func (p Plan) RelPath(file string) string {
	if p.Workspace == "" || !filepath.IsAbs(file) {
		return filepath.ToSlash(filepath.Clean(file))
	}
	rel, err := filepath.Rel(p.Workspace, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(filepath.Clean(file))
	}
	return filepath.ToSlash(rel)
}

// resolve makes a workspace-relative input path absolute.
func (p Plan) resolve(file string) string {
	if filepath.IsAbs(file) || p.Workspace == "" {
		return file
	}
	return filepath.Join(p.Workspace, file)
}
