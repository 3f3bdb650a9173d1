package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The check of issue 17: --shard 1/3, 2/3 and 3/3 plus report merge give
// the cases and scores of one unsharded run on the same scripted models;
// a missing or duplicated shard is refused by name.
func TestShardsMergeIntoTheUnshardedRun(t *testing.T) {
	e := newEvalEnv(t, "")
	base := []string{"run", "--config", e.path("mcp-eval.yaml"), "--url", e.url, "--layers", "all", "--fresh", "--conformance-runs", "1"}
	code, out, stderr := e.run(append(base, "--out", e.path("full.json"))...)
	if code != ExitOK {
		t.Fatalf("unsharded run: exit %d\n%s%s", code, out, stderr)
	}
	var shards []string
	for i := 1; i <= 3; i++ {
		path := e.path(fmt.Sprintf("shard-%d.json", i))
		code, out, stderr := e.run(append(base, "--shard", fmt.Sprintf("%d/3", i), "--out", path)...)
		if code != ExitOK {
			t.Fatalf("shard %d/3: exit %d\n%s%s", i, code, out, stderr)
		}
		shards = append(shards, path)
	}
	full, err := report.Load(e.path("full.json"))
	if err != nil {
		t.Fatal(err)
	}
	units := map[report.ShardUnit]int{}
	for i, s := range shards {
		r, err := report.Load(s)
		if err != nil {
			t.Fatal(err)
		}
		if r.Shard == nil || r.Shard.Index != i+1 || r.Shard.Count != 3 || r.Shard.Total != 6 || r.Shard.Balance != report.BalanceCount {
			t.Fatalf("shard %d records %+v", i+1, r.Shard)
		}
		if (r.Conformance != nil) != (i == 0) {
			t.Errorf("shard %d: Layer 0 present %v; it runs in shard 1 only", i+1, r.Conformance != nil)
		}
		if r.Server.Name == "" || r.Server.Name != full.Server.Name || r.ToolSurfaceHash != full.ToolSurfaceHash {
			t.Errorf("shard %d: server %q, tool surface %s; want %q and %s", i+1, r.Server.Name, r.ToolSurfaceHash, full.Server.Name, full.ToolSurfaceHash)
		}
		if len(r.Behavior.Results) != len(r.Shard.Units) {
			t.Errorf("shard %d: %d Layer 1 results for %d units", i+1, len(r.Behavior.Results), len(r.Shard.Units))
		}
		for _, u := range r.Shard.Units {
			units[u]++
		}
	}
	if len(units) != 6 {
		t.Errorf("the shards ran %d distinct units, want 3 cases × 2 models: %v", len(units), units)
	}

	code, out, stderr = e.run("report", "merge", shards[0], shards[1], shards[2], "--out", e.path("merged.json"), "--markdown", e.path("merged.md"))
	if code != ExitOK {
		t.Fatalf("report merge: exit %d\n%s%s", code, out, stderr)
	}
	merged, err := report.Load(e.path("merged.json"))
	if err != nil {
		t.Fatal(err)
	}
	if merged.Shard != nil || merged.Conformance == nil || merged.Gate == nil || merged.Gate.Verdict != full.Gate.Verdict {
		t.Fatalf("merged: shard %+v, Layer 0 %v, gate %+v; want no shard, Layer 0 from shard 1, verdict %s", merged.Shard, merged.Conformance != nil, merged.Gate, full.Gate.Verdict)
	}
	// The notes (and the comment) name the shards, never by a runner's
	// absolute temp path.
	if md, _ := os.ReadFile(e.path("merged.md")); strings.Contains(strings.Join(merged.Gate.Notes, "\n")+string(md), e.path("shard-")) {
		t.Errorf("the merged notes or comment hold the absolute path %s:\n%s", e.dir, strings.Join(merged.Gate.Notes, "\n"))
	}
	// The tools the shards listed are the merged report's too.
	if !reflect.DeepEqual(merged.Tools, full.Tools) || len(merged.Tools) == 0 {
		t.Errorf("merged tools %q, want the unsharded run's %q", merged.Tools, full.Tools)
	}
	if !reflect.DeepEqual(merged.Behavior.Cases, full.Behavior.Cases) || merged.Behavior.GoldenSetHash != full.Behavior.GoldenSetHash {
		t.Errorf("merged cases %+v, want %+v", merged.Behavior.Cases, full.Behavior.Cases)
	}
	type score struct {
		Case, Model string
		Passed      report.Count
		Scores      []report.Score
	}
	scores := func(r *report.Report) []score {
		var out []score
		for _, cr := range r.Behavior.Results {
			out = append(out, score{cr.Case, cr.Model, cr.Passed, cr.Scores})
		}
		return out
	}
	if got, want := scores(merged), scores(full); !reflect.DeepEqual(got, want) {
		t.Errorf("merged Layer 1 scores\n%+v\nwant the unsharded run's\n%+v", got, want)
	}
	if len(full.Resilience.Attacks) == 0 {
		t.Fatal("the unsharded run measured no attack: nothing of Layer 2 to compare")
	}
	if !reflect.DeepEqual(merged.Resilience.Faults, full.Resilience.Faults) || !reflect.DeepEqual(merged.Resilience.Attacks, full.Resilience.Attacks) {
		t.Errorf("merged Layer 2\n%+v\n%+v\nwant\n%+v\n%+v", merged.Resilience.Faults, merged.Resilience.Attacks, full.Resilience.Faults, full.Resilience.Attacks)
	}
	if len(merged.Resilience.Runs) != len(full.Resilience.Runs) {
		t.Errorf("merged Layer 2 has %d runs, the unsharded %d", len(merged.Resilience.Runs), len(full.Resilience.Runs))
	}
	// Latency is recomputed from the shards' samples: the case-run rows
	// count every run once, and keep the samples for the next merge.
	for _, l := range merged.Telemetry.Latency {
		if l.Kind != report.LatencyCase {
			continue
		}
		var want *report.Latency
		for i, f := range full.Telemetry.Latency {
			if f.Kind == l.Kind && f.Model == l.Model {
				want = &full.Telemetry.Latency[i]
			}
		}
		if want == nil || l.Samples != want.Samples || len(l.SamplesMs) != l.Samples {
			t.Errorf("merged case latency of %s: %d samples (%d kept), want %+v", l.Model, l.Samples, len(l.SamplesMs), want)
		}
	}
	md, _ := os.ReadFile(e.path("merged.md"))
	// One comment for the whole run: one verdict line, and it says the
	// report was merged (the passing case matrix may be folded away to
	// keep the comment short).
	if n := len(regexp.MustCompile(`(?m)^### \S+ mcp-eval: `).FindAllString(string(md), -1)); !strings.Contains(string(md), "merged from 3 shards") || n != 1 {
		t.Errorf("the merged comment does not read as one run's (%d verdict lines):\n%s", n, md)
	}

	// A missing shard and a duplicated one are refused by name.
	code, _, stderr = e.run("report", "merge", shards[0], shards[2], "--out", e.path("bad.json"))
	if code != ExitError || !strings.Contains(stderr, "shard 2/3 is missing") {
		t.Errorf("merge without shard 2: exit %d\n%s", code, stderr)
	}
	dup := e.path("shard-2-again.json")
	data, _ := os.ReadFile(shards[1])
	if err := os.WriteFile(dup, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = e.run("report", "merge", shards[0], shards[1], dup, shards[2], "--out", e.path("bad.json"))
	if code != ExitError || !strings.Contains(stderr, "shard 2/3 is given twice: "+filepath.Base(shards[1])+" and "+filepath.Base(dup)) {
		t.Errorf("merge with shard 2 twice: exit %d\n%s", code, stderr)
	}
	// A shard of another setup (one run per case) is named as mismatched.
	other := e.path("other-3.json")
	if code, out, stderr := e.run(append(base, "--shard", "3/3", "--runs", "1", "--out", other)...); code != ExitOK {
		t.Fatalf("shard 3/3 --runs 1: exit %d\n%s%s", code, out, stderr)
	}
	code, _, stderr = e.run("report", "merge", shards[0], shards[1], other, "--out", e.path("bad.json"))
	if code != ExitError || !strings.Contains(stderr, filepath.Base(other)+" (shard 3/3) does not match") {
		t.Errorf("merge with a mismatched shard: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(e.path("bad.json")); err == nil {
		t.Errorf("a refused merge wrote a report")
	}

	// Against a baseline: the split is by its durations, every shard
	// records it, and the merge gates against it (found at the path the
	// shards recorded) once.
	var withBase []string
	for i := 1; i <= 2; i++ {
		path := e.path(fmt.Sprintf("based-%d.json", i))
		if code, out, stderr := e.run(append(base, "--shard", fmt.Sprintf("%d/2", i), "--baseline", e.path("full.json"), "--out", path)...); code != ExitOK {
			t.Fatalf("shard %d/2 with a baseline: exit %d\n%s%s", i, code, out, stderr)
		}
		r, _ := report.Load(path)
		if r.Shard.Balance != report.BalanceDuration || r.Shard.Baseline == nil || r.Shard.Baseline.Commit != full.Run.Commit {
			t.Errorf("shard %d/2 with a baseline records %+v", i, r.Shard)
		}
		withBase = append(withBase, path)
	}
	code, out, stderr = e.run("report", "merge", withBase[0], withBase[1], "--out", e.path("based.json"))
	if code != ExitOK {
		t.Fatalf("merge with a baseline: exit %d\n%s%s", code, out, stderr)
	}
	if r, _ := report.Load(e.path("based.json")); r.Gate.Baseline == nil || !strings.HasSuffix(r.Gate.Baseline.Path, "full.json") {
		t.Errorf("the merge was not gated against the shards' baseline: %+v (%s)", r.Gate.Baseline, r.Gate.BaselineNote)
	}
	if code, _, stderr := e.run("report", "merge", withBase[0], withBase[1], "--baseline", e.path("merged.json"), "--out", e.path("bad.json")); code != ExitError || !strings.Contains(stderr, "is not the one the shards balanced on") {
		t.Errorf("merge against another baseline: exit %d\n%s", code, stderr)
	}

	// More shards than units: a shard with nothing to run still writes
	// its report, for the merge to count.
	empty := e.path("shard-8.json")
	if code, out, stderr := e.run(append(base, "--shard", "8/8", "--out", empty)...); code != ExitOK {
		t.Fatalf("shard 8/8 of 6 units: exit %d\n%s%s", code, out, stderr)
	}
	if r, err := report.Load(empty); err != nil || r.Shard == nil || len(r.Shard.Units) != 0 || r.Shard.Total != 6 || len(r.Behavior.Results) != 0 {
		t.Errorf("shard 8/8: %v, %+v", err, r)
	}
}

// A Layer 1 run (eval, or a shard) whose server cannot be reached tests
// nothing, and writes the report that says so, as check does: a CI step
// uploading report.json finds it, and the comment says why. A shard's
// says which shard it is, so that the merge names it and its reason.
func TestUnreachableServerOfAModelRunWritesItsReport(t *testing.T) {
	e := newEvalEnv(t, "")
	gone := e.path("no-such-server")
	code, stdout, stderr := e.run("eval", "--config", e.path("mcp-eval.yaml"), "--cmd", gone, "--out", e.path("eval.json"), "--markdown", e.path("eval.md"))
	if code != ExitError || !strings.Contains(stderr, "Layer 1 could not reach") || strings.Contains(stdout, "verdict") {
		t.Fatalf("eval of a missing server: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	rep, err := report.Load(e.path("eval.json"))
	if err != nil || !strings.Contains(rep.Run.Untested, "no-such-server") || rep.Gate == nil || rep.Gate.Verdict != report.GateError || rep.Behavior != nil {
		t.Fatalf("eval's report.json: %v %+v", err, rep)
	}
	if md, _ := os.ReadFile(e.path("eval.md")); !strings.Contains(string(md), "the server could not be tested") {
		t.Errorf("eval's comment does not say the server could not be tested:\n%s", md)
	}

	base := []string{"run", "--config", e.path("mcp-eval.yaml"), "--layers", "behavior", "--fresh"}
	good := e.path("shard-1.json")
	if code, out, stderr := e.run(append(base, "--url", e.url, "--shard", "1/2", "--out", good)...); code != ExitOK {
		t.Fatalf("shard 1/2: exit %d\n%s%s", code, out, stderr)
	}
	bad := e.path("shard-2.json")
	if code, _, stderr := e.run(append(base, "--cmd", gone, "--shard", "2/2", "--out", bad)...); code != ExitError {
		t.Fatalf("shard 2/2 of a missing server: exit %d\n%s", code, stderr)
	}
	if r, err := report.Load(bad); err != nil || r.Shard == nil || r.Shard.Index != 2 || r.Shard.Count != 2 || r.Run.Untested == "" {
		t.Fatalf("shard 2/2's report: %v %+v", err, r)
	}
	code, _, stderr = e.run("report", "merge", good, bad, "--out", e.path("merged.json"))
	if code != ExitError || !strings.Contains(stderr, "shard-2.json: shard 2/2 could not test the server") || !strings.Contains(stderr, "no-such-server") {
		t.Errorf("merge with a shard that tested nothing: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(e.path("merged.json")); err == nil {
		t.Errorf("a refused merge wrote a report")
	}
}

// The action's side: shard jobs (shard: i/n) write their reports and make
// no comment; the merge job (shard: merge) downloads the shard artifacts
// of the same run, merges and gates them once and makes the one comment.
func TestActionShardsAndMergeJob(t *testing.T) {
	e := newEvalEnv(t, "")
	gh := fakegithub.New("octo", "server")
	defer gh.Close()
	evPath, _ := filepath.Abs(filepath.Join("..", "..", "pkg", "action", "testdata", "events", "pull_request_labeled_run-evals.json"))
	action := func(shard string) (int, string) {
		t.Helper()
		env := map[string]string{
			"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": evPath,
			"GITHUB_OUTPUT": e.path("gh-output"), "GITHUB_STEP_SUMMARY": e.path("gh-summary"), "GITHUB_WORKSPACE": e.dir,
			"GITHUB_API_URL": gh.APIURL(), "GITHUB_SERVER_URL": "https://github.example", "GITHUB_REPOSITORY": "octo/server",
			"GITHUB_WORKFLOW_REF": "octo/server/.github/workflows/evals.yml@refs/heads/main", "GITHUB_RUN_ID": "777",
			"GITHUB_SHA":         "0123456789abcdef0123456789abcdef01234567",
			"INPUT_GITHUB-TOKEN": "ghs_token", "INPUT_COMMENT": "true", "INPUT_LAYERS": "1,2",
			"INPUT_SERVER-URL": e.url, "INPUT_CONFIG": "mcp-eval.yaml", "INPUT_SHARD": shard,
		}
		for _, f := range []string{"gh-output", "gh-summary"} {
			os.WriteFile(e.path(f), nil, 0o644)
		}
		var out, errb bytes.Buffer
		c := &Command{Stdout: &out, Stderr: &errb, LookupEnv: func(k string) (string, bool) {
			if v, ok := env[k]; ok {
				return v, true
			}
			return e.models.LookupEnv(k)
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		code := c.Main(ctx, []string{"action"})
		return code, out.String() + errb.String()
	}
	for i := 1; i <= 2; i++ {
		code, log := action(fmt.Sprintf("%d/2", i))
		if code != ExitOK {
			t.Fatalf("shard %d/2: exit %d\n%s", i, code, log)
		}
		data, err := os.ReadFile(e.path("report.json"))
		if err != nil {
			t.Fatal(err)
		}
		gh.Artifacts = append(gh.Artifacts, fakegithub.Artifact{ID: int64(600 + i), RunID: 777, Name: fmt.Sprintf("mcp-eval-shard-%d", i), Zip: fakegithub.ReportZip(string(data))})
	}
	if c := gh.CommentsOn(42); len(c) != 0 {
		t.Fatalf("shard jobs commented: %+v", c)
	}
	code, log := action("merge")
	if code != ExitOK {
		t.Fatalf("merge job: exit %d\n%s", code, log)
	}
	rep, err := report.Load(e.path("report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Shard != nil || len(rep.Behavior.Results) != 6 || rep.Gate == nil {
		t.Fatalf("the merge job's report: shard %+v, %d results, gate %v", rep.Shard, len(rep.Behavior.Results), rep.Gate)
	}
	if c := gh.CommentsOn(42); len(c) != 1 || !strings.Contains(c[0].Body, "`weather`") {
		t.Fatalf("want one comment from the merge job: %+v", c)
	}

	// A shard's artifact missing: the merge job fails naming it.
	gh.Artifacts = gh.Artifacts[:1]
	if code, log := action("merge"); code != ExitError || !strings.Contains(log, "shard 2/2 is missing") {
		t.Errorf("merge without shard 2: exit %d\n%s", code, log)
	}
}
