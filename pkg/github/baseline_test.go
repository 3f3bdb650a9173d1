package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
)

func acceptPass(b []byte) (bool, string) {
	if strings.Contains(string(b), `"verdict":"pass"`) {
		return true, ""
	}
	return false, "verdict is not pass"
}

func TestFetchBaselineWalksBackToTheNewestUsableRun(t *testing.T) {
	f, c := newFake(t)
	// 35 newer PR runs fill the first page (30 per page): the search must
	// follow the Link header to page 2.
	for i := range 35 {
		r := run(int64(100+i), i)
		r.Event = "pull_request"
		f.Runs = append(f.Runs, r)
	}
	fork := run(50, 40) // a fork's "main": matches the branch filter, must be ignored
	fork.HeadRepo = "evil/server"
	other := run(49, 41)
	other.Branch = "feature"
	failed := run(48, 42)
	failed.Conclusion = "failure"
	dispatch := run(47, 43)
	dispatch.Event = "workflow_dispatch"
	inconclusive := run(7, 44)
	inconclusive.Event = "schedule"
	f.Runs = append(f.Runs, fork, other, failed, dispatch, inconclusive,
		run(6, 45), // no artifact by that name
		run(5, 46), // expired
		run(4, 47), // the baseline
		run(3, 48), // older and also good: not reached
	)
	f.Artifacts = []fakegithub.Artifact{
		{ID: 501, RunID: 50, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"pass","from":"fork"}`)},
		{ID: 701, RunID: 7, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"inconclusive"}`)},
		{ID: 601, RunID: 6, Name: "coverage", Zip: fakegithub.ReportZip(`{}`)},
		{ID: 501 + 1, RunID: 5, Name: "mcp-eval-report", Expired: true},
		{ID: 301, RunID: 3, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"pass","run":3}`)},
	}
	// Run 4 has 120 artifacts, ours last: artifacts are paged too.
	for i := range 119 {
		f.Artifacts = append(f.Artifacts, fakegithub.Artifact{ID: int64(10000 + i), RunID: 4, Name: fmt.Sprintf("other-%d", i), Zip: []byte("x")})
	}
	f.Artifacts = append(f.Artifacts, fakegithub.Artifact{ID: 401, RunID: 4, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"pass","run":4}`)})

	report, info, err := c.FetchBaseline(context.Background(), Params{
		Owner: "octo", Repo: "server", WorkflowFile: ".github/workflows/evals.yml", DefaultBranch: "main",
		Accept: acceptPass,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(report); got != `{"verdict":"pass","run":4}` {
		t.Errorf("report = %s, want run 4's", got)
	}
	if info.ID != 4 || info.ArtifactID != 401 || info.Event != "push" || !strings.Contains(info.HTMLURL, "/runs/4") {
		t.Errorf("run info = %+v", info)
	}
	if len(info.Passed) != 3 || !strings.Contains(info.Passed[0], "verdict is not pass") ||
		!strings.Contains(info.Passed[1], "no artifact named") || !strings.Contains(info.Passed[2], "expired") {
		t.Errorf("passed over = %q", info.Passed)
	}
	if n := f.BlobAuthCount(); n != 0 {
		t.Errorf("the token was sent to the blob store %d time(s)", n)
	}
	calls := strings.Join(f.Calls(), "\n")
	for _, want := range []string{
		"GET /fake-api/repos/octo/server/actions/workflows/evals.yml/runs?branch=main&exclude_pull_requests=true&per_page=30&status=success",
		"page=2",
		"GET /fake-api/repos/octo/server/actions/runs/4/artifacts?page=2&per_page=100",
		"GET /blob/401",
	} {
		if !strings.Contains(calls, want) {
			t.Errorf("no request like %q in:\n%s", want, calls)
		}
	}
	for _, bad := range []string{"/runs/50/", "/runs/49/", "/runs/47/", "/runs/3/", "/api/v3/"} {
		if strings.Contains(calls, bad) {
			t.Errorf("unexpected request %q in:\n%s", bad, calls)
		}
	}
}

func TestFetchBaselineLooksUpTheDefaultBranch(t *testing.T) {
	f, c := newFake(t)
	f.DefaultBranch = "trunk"
	r := run(1, 1)
	r.Branch = "trunk"
	f.Runs = []fakegithub.Run{r}
	f.Artifacts = []fakegithub.Artifact{{ID: 11, RunID: 1, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"pass"}`)}}
	if _, info, err := c.FetchBaseline(context.Background(), Params{Owner: "octo", Repo: "server", WorkflowFile: "evals.yml"}); err != nil || info.ID != 1 {
		t.Fatalf("info=%+v err=%v", info, err)
	}
}

func TestFetchBaselineFailures(t *testing.T) {
	good := fakegithub.ReportZip(`{"verdict":"pass"}`)
	tests := []struct {
		name      string
		runs      []fakegithub.Run
		artifacts []fakegithub.Artifact
		params    func(*Params)
		want      error
		detail    string
	}{
		{name: "no runs", want: ErrNoRun, detail: "no successful push or schedule run"},
		{name: "only a fork's run", runs: []fakegithub.Run{func() fakegithub.Run { r := run(1, 1); r.HeadRepo = "evil/server"; return r }()},
			artifacts: []fakegithub.Artifact{{ID: 11, RunID: 1, Name: "mcp-eval-report", Zip: good}}, want: ErrNoRun},
		{name: "no artifact", runs: []fakegithub.Run{run(1, 1)}, want: ErrNoArtifact, detail: `no artifact named "mcp-eval-report"`},
		{name: "custom artifact name", runs: []fakegithub.Run{run(1, 1)},
			artifacts: []fakegithub.Artifact{{ID: 11, RunID: 1, Name: "mcp-eval-report", Zip: good}},
			params:    func(p *Params) { p.ArtifactName = "evals" }, want: ErrNoArtifact, detail: `"evals"`},
		{name: "expired", runs: []fakegithub.Run{run(1, 1)},
			artifacts: []fakegithub.Artifact{{ID: 11, RunID: 1, Name: "mcp-eval-report", Expired: true}}, want: ErrArtifactExpired},
		{name: "oversized by its size", runs: []fakegithub.Run{run(1, 1), run(2, 2)},
			artifacts: []fakegithub.Artifact{{ID: 11, RunID: 1, Name: "mcp-eval-report", Zip: good, Size: 1 << 30}, {ID: 12, RunID: 2, Name: "mcp-eval-report", Zip: good}},
			want:      ErrTooLarge},
		{name: "corrupt zip stops the walk", runs: []fakegithub.Run{run(1, 1), run(2, 2)},
			artifacts: []fakegithub.Artifact{{ID: 11, RunID: 1, Name: "mcp-eval-report", Zip: []byte("PK\x03\x04 this is not a zip")}, {ID: 12, RunID: 2, Name: "mcp-eval-report", Zip: good}},
			want:      ErrCorruptArtifact},
		{name: "zip without report.json", runs: []fakegithub.Run{run(1, 1)},
			artifacts: []fakegithub.Artifact{{ID: 11, RunID: 1, Name: "mcp-eval-report", Zip: fakegithub.Zip(map[string][]byte{"out/report.json": []byte("{}")})}},
			want:      ErrCorruptArtifact, detail: "no report.json at the zip root"},
		{name: "schema-invalid", runs: []fakegithub.Run{run(1, 1), run(2, 2)},
			artifacts: []fakegithub.Artifact{{ID: 11, RunID: 1, Name: "mcp-eval-report", Zip: good}, {ID: 12, RunID: 2, Name: "mcp-eval-report", Zip: good}},
			params:    func(p *Params) { p.Validate = func([]byte) error { return errors.New("missing schemaVersion") } },
			want:      ErrInvalidReport, detail: "missing schemaVersion"},
		{name: "walk is bounded", runs: []fakegithub.Run{run(1, 1), run(2, 2), run(3, 3)},
			artifacts: []fakegithub.Artifact{
				{ID: 11, RunID: 1, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"fail"}`)},
				{ID: 12, RunID: 2, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"fail"}`)},
				{ID: 13, RunID: 3, Name: "mcp-eval-report", Zip: good},
			},
			params: func(p *Params) { p.MaxRuns = 2 }, want: ErrNoRun, detail: "2 green run(s) inspected"},
		{name: "bad workflow name", params: func(p *Params) { p.WorkflowFile = "a b.yml" }, want: ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newFake(t)
			f.Runs, f.Artifacts = tt.runs, tt.artifacts
			p := Params{Owner: "octo", Repo: "server", WorkflowFile: "evals.yml", DefaultBranch: "main", Accept: acceptPass}
			if tt.params != nil {
				tt.params(&p)
			}
			_, _, err := c.FetchBaseline(context.Background(), p)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want kind %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("err = %q, want it to mention %q", err, tt.detail)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("the token leaked into %q", err)
			}
			if n := f.BlobAuthCount(); n != 0 {
				t.Errorf("the token was sent to the blob store %d time(s)", n)
			}
		})
	}
}

func TestFetchBaselineMissingPermissionSaysHowToFix(t *testing.T) {
	f, c := newFake(t)
	f.Runs = []fakegithub.Run{run(1, 1)}
	_, _, err := c.FetchBaseline(context.Background(), Params{Owner: "octo", Repo: "server", WorkflowFile: "nope.yml", DefaultBranch: "main"})
	// The fake lists no runs for an unknown workflow (GitHub answers 404).
	if !errors.Is(err, ErrNoRun) {
		t.Fatalf("err = %v", err)
	}
	f.Token = "other"
	_, _, err = c.FetchBaseline(context.Background(), Params{Owner: "octo", Repo: "server", WorkflowFile: "evals.yml", DefaultBranch: "main"})
	var e *Error
	if !errors.As(err, &e) || e.Status != 401 || !errors.Is(err, ErrAPI) || strings.Contains(err.Error(), testToken) {
		t.Fatalf("err = %v", err)
	}
}

// FetchReports keeps walking past the baseline for history: every usable
// green report up to want, newest first, skipping unusable runs, and
// stops at a broken artifact with what it has.
func TestFetchReportsCollectsHistory(t *testing.T) {
	f, c := newFake(t)
	f.Runs = []fakegithub.Run{run(9, 1), run(8, 2), run(7, 3), run(6, 4), run(5, 5)}
	f.Artifacts = []fakegithub.Artifact{
		{ID: 901, RunID: 9, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"pass","run":9}`)},
		{ID: 801, RunID: 8, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"fail","run":8}`)},
		{ID: 701, RunID: 7, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"pass","run":7}`)},
		{ID: 601, RunID: 6, Name: "mcp-eval-report", Zip: []byte("not a zip")},
		{ID: 501, RunID: 5, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"pass","run":5}`)},
	}
	p := Params{Owner: "octo", Repo: "server", WorkflowFile: "evals.yml", DefaultBranch: "main", Accept: acceptPass}
	found, err := c.FetchReports(context.Background(), p, 2)
	if err != nil || len(found) != 2 || found[0].Run.ID != 9 || found[1].Run.ID != 7 {
		t.Fatalf("want 2: %d found (%v), err %v", len(found), runIDs(found), err)
	}
	// Asking for more reaches run 6's broken artifact: the walk stops
	// there with the two it has and says why.
	found, err = c.FetchReports(context.Background(), p, 10)
	if err == nil || len(found) != 2 {
		t.Fatalf("want 10: %d found (%v), err %v; want the two before the broken artifact and its error", len(found), runIDs(found), err)
	}
}

func runIDs(found []Found) []int64 {
	var ids []int64
	for _, f := range found {
		ids = append(ids, f.Run.ID)
	}
	return ids
}
