package action

import (
	"reflect"
	"strings"
	"testing"
)

func TestPlanChoosesLayersByEvent(t *testing.T) {
	all := AllLayers()
	tests := []struct {
		event, fixture, layers string
		trigger                Trigger
		want, skipped          []Layer
		pr                     int
		note                   string
	}{
		{event: "push", fixture: "push.json", trigger: TriggerPush, want: []Layer{0}},
		{event: "schedule", fixture: "schedule.json", trigger: TriggerSchedule, want: all},
		{event: "workflow_dispatch", fixture: "workflow_dispatch.json", trigger: TriggerDispatch, want: all},
		{event: "pull_request", fixture: "pull_request_opened.json", trigger: TriggerPullRequest, want: []Layer{0}, pr: 42},
		// A push to a labelled PR does not re-arm the paid layers.
		{event: "pull_request", fixture: "pull_request_synchronize.json", trigger: TriggerPullRequest, want: []Layer{0}, pr: 42},
		{event: "pull_request", fixture: "pull_request_labeled_run-evals.json", trigger: TriggerLabeled, want: all, pr: 42, note: "label run-evals was added"},
		{event: "pull_request", fixture: "pull_request_labeled_wrong_case.json", trigger: TriggerPullRequest, want: []Layer{0}, pr: 42},
		{event: "pull_request", fixture: "pull_request_labeled_other.json", trigger: TriggerPullRequest, want: []Layer{0}, pr: 42},
		{event: "pull_request", fixture: "pull_request_labeled_run-evals_fork.json", trigger: TriggerPullRequest, want: []Layer{0}, skipped: []Layer{1, 2, 3}, pr: 42, note: "comes from a fork"},
		{event: "pull_request", fixture: "pull_request_fork.json", trigger: TriggerPullRequest, want: []Layer{0}, pr: 42},
		{event: "pull_request_target", fixture: "pull_request_labeled_run-evals.json", trigger: TriggerLabeled, want: all, pr: 42, note: "label run-evals"},
		{event: "merge_group", fixture: "", trigger: TriggerOther, want: []Layer{0}},
		// Explicit lists win over the event, except where secrets are missing.
		{event: "push", fixture: "push.json", layers: "0,1", trigger: TriggerPush, want: []Layer{0, 1}},
		{event: "pull_request", fixture: "pull_request_fork.json", layers: "1,2", trigger: TriggerPullRequest, want: []Layer{0}, skipped: []Layer{1, 2}, pr: 42, note: "not a failure"},
	}
	for _, tt := range tests {
		t.Run(tt.event+"/"+tt.fixture+"/"+tt.layers, func(t *testing.T) {
			e := newRunnerEnv(t, tt.event, tt.fixture)
			if tt.layers != "" {
				e.set("INPUT_LAYERS", tt.layers)
			}
			p := e.plan()
			if p.Trigger != tt.trigger || !reflect.DeepEqual(p.Layers, tt.want) || !reflect.DeepEqual(p.Skipped, tt.skipped) {
				t.Errorf("trigger %s layers %v skipped %v; want %s %v %v", p.Trigger, p.Layers, p.Skipped, tt.trigger, tt.want, tt.skipped)
			}
			if p.Comment.PR != tt.pr {
				t.Errorf("comment PR = %d (%s), want %d", p.Comment.PR, p.Comment.Why, tt.pr)
			}
			notes := strings.Join(p.Notes, "\n")
			if tt.note == "" && notes != "" || !strings.Contains(notes, tt.note) {
				t.Errorf("notes = %q, want %q", notes, tt.note)
			}
		})
	}
}

func TestPlanContext(t *testing.T) {
	e := newRunnerEnv(t, "schedule", "schedule.json")
	e.set("INPUT_MODELS", "openai:gpt-5-mini")
	p := e.plan()
	if p.Schedule != "17 3 * * *" || p.RunURL != "https://github.com/octo/server/actions/runs/999" || p.RunID != 999 {
		t.Errorf("plan = %+v", p)
	}
	if !reflect.DeepEqual(p.Models, []string{"openai:gpt-5-mini"}) {
		t.Errorf("models = %v", p.Models)
	}
	// The schedule payload has no repository: the branch is looked up later.
	want := BaselineSource{Kind: BaselineArtifact, Artifact: DefaultArtifact, WorkflowFile: "evals.yml"}
	if p.Baseline != want {
		t.Errorf("baseline = %+v", p.Baseline)
	}
	if p.Comment.PR != 0 || p.Comment.Why != "not a pull request event" || p.Comment.Marker != "<!-- mcp-eval-action:evals.yml -->" {
		t.Errorf("comment = %+v", p.Comment)
	}
}

func TestPlanBaselineAndCommentChoices(t *testing.T) {
	e := newRunnerEnv(t, "pull_request", "pull_request_opened.json")
	e.set("INPUT_BASELINE", "baseline/report.json")
	e.set("INPUT_COMMENT", "false")
	p := e.plan()
	if p.Baseline.Kind != BaselineFile || p.Baseline.Path != "baseline/report.json" {
		t.Errorf("baseline = %+v", p.Baseline)
	}
	if p.Comment.PR != 0 || !strings.Contains(p.Comment.Why, "comment input is false") {
		t.Errorf("comment = %+v", p.Comment)
	}

	e = newRunnerEnv(t, "pull_request", "pull_request_opened.json")
	e.set("INPUT_GITHUB-TOKEN", "")
	p = e.plan()
	if p.Baseline.Kind != BaselineNone || p.Comment.PR != 0 || p.Inputs.HasToken {
		t.Errorf("without a token: baseline %+v comment %+v", p.Baseline, p.Comment)
	}
	if p.Baseline.DefaultBranch != "" {
		t.Error("default branch set without a search")
	}
}

func TestPlanRejectsBadEnvironments(t *testing.T) {
	e := newRunnerEnv(t, "pull_request", "push.json")
	if _, err := e.runner().Plan(); err == nil || !strings.Contains(err.Error(), "no pull_request payload") {
		t.Errorf("err = %v", err)
	}
	e = newRunnerEnv(t, "push", "push.json")
	e.set("GITHUB_EVENT_PATH", e.dir+"/missing.json")
	if _, err := e.runner().Plan(); err == nil || !strings.Contains(err.Error(), "GITHUB_EVENT_PATH") {
		t.Errorf("err = %v", err)
	}
	e = newRunnerEnv(t, "push", "push.json")
	e.set("INPUT_MAX_DROP", "0.1") // a composite action's typo
	if _, err := e.runner().Plan(); err == nil || !strings.Contains(err.Error(), `did you mean "max-drop"`) {
		t.Errorf("err = %v", err)
	}
}

func TestRelPath(t *testing.T) {
	p := Plan{Workspace: "/github/workspace"}
	for in, want := range map[string]string{
		"/github/workspace/out/report.json": "out/report.json",
		"report.json":                       "report.json",
		"/tmp/report.json":                  "/tmp/report.json",
		"/github/workspace2/x":              "/github/workspace2/x",
	} {
		if got := p.RelPath(in); got != want {
			t.Errorf("RelPath(%q) = %q, want %q", in, got, want)
		}
	}
}
