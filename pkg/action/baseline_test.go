package action

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
	"github.com/mcp-eval/mcp-eval-action/pkg/pipeline"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func greenRun(id int64, hoursAgo int) fakegithub.Run {
	return fakegithub.Run{ID: id, Number: int(id), Workflow: "evals.yml", Event: "push", Branch: "main",
		HeadRepo: "octo/server", Conclusion: "success", HeadSHA: "4444444444444444",
		Created: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC).Add(-time.Duration(hoursAgo) * time.Hour)}
}

func acceptPass(b []byte) (bool, string) {
	if strings.Contains(string(b), `"verdict":"pass"`) {
		return true, ""
	}
	return false, "its verdict is not pass"
}

func TestBaselineFromTheLastGreenRun(t *testing.T) {
	e := newRunnerEnv(t, "schedule", "schedule.json") // no default_branch: looked up
	e.fake.Runs = []fakegithub.Run{greenRun(8, 1), greenRun(7, 2)}
	e.fake.Artifacts = []fakegithub.Artifact{
		{ID: 81, RunID: 8, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"inconclusive"}`)},
		{ID: 71, RunID: 7, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"pass"}`)},
	}
	b := e.runner().Baseline(context.Background(), e.plan(), nil, acceptPass)
	if string(b.Report) != `{"verdict":"pass"}` || b.Run == nil || b.Run.ID != 7 || !strings.Contains(b.Note, "its verdict is not pass") {
		t.Fatalf("baseline = %+v", b)
	}
	if e.fake.BlobAuthCount() != 0 {
		t.Error("token sent to the blob store")
	}
	if !strings.Contains(e.stdout.String(), "mcp-eval: baseline is run #7") {
		t.Errorf("log:\n%s", e.stdout.String())
	}
}

func TestBaselineProblemsFallBackToFloors(t *testing.T) {
	tests := []struct {
		name      string
		artifacts []fakegithub.Artifact
		validate  func([]byte) error
		level     string
		want      string
	}{
		{name: "first run", level: "::notice ", want: "no artifact named"},
		{name: "corrupt", artifacts: []fakegithub.Artifact{{ID: 81, RunID: 8, Name: "mcp-eval-report", Zip: []byte("garbage")}}, level: "::warning ", want: "corrupt"},
		{name: "oversized", artifacts: []fakegithub.Artifact{{ID: 81, RunID: 8, Name: "mcp-eval-report", Zip: []byte("x"), Size: 1 << 40}}, level: "::warning ", want: "too large"},
		{name: "schema-invalid", artifacts: []fakegithub.Artifact{{ID: 81, RunID: 8, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(`{"verdict":"pass"}`)}},
			validate: func([]byte) error { return errors.New("schemaVersion: missing") }, level: "::warning ", want: "schemaVersion: missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRunnerEnv(t, "push", "push.json")
			e.fake.Runs = []fakegithub.Run{greenRun(8, 1)}
			e.fake.Artifacts = tt.artifacts
			b := e.runner().Baseline(context.Background(), e.plan(), tt.validate, acceptPass)
			if b.Report != nil || !strings.Contains(b.Note, tt.want) || !strings.Contains(b.Note, "floors only") {
				t.Fatalf("baseline = %+v", b)
			}
			log := e.stdout.String()
			if !strings.Contains(log, tt.level+"title=mcp-eval baseline::") || strings.Contains(log, "::error") {
				t.Errorf("log:\n%s", log)
			}
		})
	}
}

func TestBaselineFromAFile(t *testing.T) {
	e := newRunnerEnv(t, "push", "push.json")
	if err := os.WriteFile(filepath.Join(e.dir, "green.json"), []byte(`{"verdict":"fail"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.set("INPUT_BASELINE", "green.json")
	b := e.runner().Baseline(context.Background(), e.plan(), nil, acceptPass)
	if string(b.Report) != `{"verdict":"fail"}` || b.Source != "file green.json" || !strings.Contains(b.Note, "used as given") {
		t.Errorf("baseline = %+v", b)
	}
	if len(e.fake.Calls()) != 0 {
		t.Errorf("API called: %v", e.fake.Calls())
	}

	e.set("INPUT_BASELINE", "missing.json")
	b = e.runner().Baseline(context.Background(), e.plan(), nil, nil)
	if b.Report != nil || !strings.Contains(b.Note, `input "baseline": cannot open missing.json`) {
		t.Errorf("baseline = %+v", b)
	}
}

func TestNoTokenMeansNoBaselineSearch(t *testing.T) {
	e := newRunnerEnv(t, "push", "push.json")
	e.set("INPUT_GITHUB-TOKEN", "")
	b := e.runner().Baseline(context.Background(), e.plan(), nil, nil)
	if b.Report != nil || !strings.Contains(b.Note, "no github-token") || len(e.fake.Calls()) != 0 {
		t.Errorf("baseline = %+v", b)
	}
}

// A replayed run is compared with the last green run replayed from the
// same cassette, a live run with the last live one: the search walks past
// the report it could not compare instead of gating on floors.
func TestReplayedAndLiveRunsFindTheirOwnBaseline(t *testing.T) {
	hash := "sha256:" + strings.Repeat("b", 64)
	green := func(replay string) string {
		rep, err := report.Load(filepath.Join("..", "render", "testdata", "report", "full.json"))
		if err != nil {
			t.Fatal(err)
		}
		rep.Gate.Verdict = report.GatePass
		if replay != "" {
			rep.Replay = &report.Replay{Cassette: "cassette/cassette.json", Hash: replay, Stale: []report.StaleTurn{}}
		}
		b, err := report.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tt := range []struct {
		name, replay string
		want         int64
	}{
		{"live", "", 7},
		{"replayed", hash, 8},
		{"another cassette", "sha256:" + strings.Repeat("c", 64), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newRunnerEnv(t, "push", "push.json")
			e.fake.Runs = []fakegithub.Run{greenRun(9, 1), greenRun(8, 2), greenRun(7, 3)}
			e.fake.Artifacts = []fakegithub.Artifact{
				{ID: 91, RunID: 9, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(green("sha256:" + strings.Repeat("d", 64)))},
				{ID: 81, RunID: 8, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(green(hash))},
				{ID: 71, RunID: 7, Name: "mcp-eval-report", Zip: fakegithub.ReportZip(green(""))},
			}
			b := e.runner().Baseline(context.Background(), e.plan(), nil, AcceptBaseline([]string{pipeline.Behavior}, tt.replay))
			switch {
			case tt.want == 0 && b.Report != nil:
				t.Fatalf("a baseline from run %d, want none (no run replayed this cassette)", b.Run.ID)
			case tt.want != 0 && (b.Run == nil || b.Run.ID != tt.want):
				t.Fatalf("baseline %+v (%s), want run %d", b.Run, b.Note, tt.want)
			}
		})
	}
}
