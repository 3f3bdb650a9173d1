package action

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func sampleResult(e *runnerEnv) Result {
	return Result{
		Verdict:      VerdictFail,
		Passed:       false,
		ReportPath:   filepath.Join(e.dir, "out", "report.json"),
		MarkdownBody: "## mcp-eval: fail\n\n| check | result |\n|---|---|\n| TOOL-3 | fail 0/3 |\n",
		Annotations: []Annotation{
			{Title: "TOOL-3", File: "evals/golden.yaml", Line: 12, Message: "server said: boom\n::add-mask::x"},
			{Level: "warning", Title: "drift", Message: "case weather-1 fell 5/5 → 3/5"},
		},
		Scores: map[string]string{"conformance": "41/43", "behavior": "0.91"},
	}
}

func TestPublishOnALabelledPR(t *testing.T) {
	e := newRunnerEnv(t, "pull_request", "pull_request_labeled_run-evals.json")
	r := e.runner()
	p := e.plan()
	res := sampleResult(e)

	pub, err := r.Publish(context.Background(), p, res)
	if err != nil {
		t.Fatal(err)
	}
	if pub.Comment != "created" || len(pub.Warnings) != 0 {
		t.Errorf("published = %+v", pub)
	}
	out := e.outputs()
	want := map[string]string{
		"verdict": "fail", "passed": "false", "report-path": "out/report.json", "comment": "created",
		"score-conformance": "41/43", "score-behavior": "0.91",
	}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("output %s = %q, want %q", k, out[k], v)
		}
	}
	if len(out) != len(want) {
		t.Errorf("outputs = %v", out)
	}
	if sum := e.file("summary.md"); !strings.Contains(sum, "| TOOL-3 | fail 0/3 |") {
		t.Errorf("summary = %q", sum)
	}
	log := e.stdout.String()
	for _, w := range []string{
		"::error file=evals/golden.yaml,line=12,title=TOOL-3::server said: boom%0A::add-mask::x\n",
		"::warning title=drift::case weather-1 fell 5/5 → 3/5\n",
	} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
	cs := e.fake.CommentsOn(42)
	if len(cs) != 1 || !strings.HasPrefix(cs[0].Body, "<!-- mcp-eval-action:evals.yml -->\n## mcp-eval: fail") ||
		!strings.Contains(cs[0].Body, "https://github.com/octo/server/actions/runs/999") {
		t.Fatalf("comments = %+v", cs)
	}

	// The next run with the same body leaves the comment alone; a new body edits it.
	if pub, _ := r.Publish(context.Background(), p, res); pub.Comment != "unchanged" {
		t.Errorf("second publish: %+v", pub)
	}
	res.MarkdownBody = "## mcp-eval: pass\n"
	if pub, _ := r.Publish(context.Background(), p, res); pub.Comment != "updated" {
		t.Errorf("third publish: %+v", pub)
	}
	if cs := e.fake.CommentsOn(42); len(cs) != 1 || !strings.Contains(cs[0].Body, "mcp-eval: pass") {
		t.Errorf("comments = %+v", cs)
	}
}

// A fork's read-only token: the comment becomes a warning, the verdict and
// the outputs stay, and Publish does not fail.
func TestPublishWithAReadOnlyToken(t *testing.T) {
	e := newRunnerEnv(t, "pull_request", "pull_request_fork.json")
	e.fake.ReadOnly = true
	r := e.runner()
	p := e.plan()
	res := sampleResult(e)
	res.Verdict, res.Passed = VerdictPass, true
	pub, err := r.Publish(context.Background(), p, res)
	if err != nil {
		t.Fatal(err)
	}
	out := e.outputs()
	if pub.Comment != "failed" || out["comment"] != "failed" || out["verdict"] != "pass" || out["passed"] != "true" {
		t.Errorf("published %+v, outputs %v", pub, out)
	}
	log := e.stdout.String()
	if !strings.Contains(log, "::warning title=mcp-eval::PR comment not posted: the token is read-only") || strings.Contains(log, "::error title=mcp-eval") {
		t.Errorf("log:\n%s", log)
	}
}

func TestPublishOnPushSkipsTheComment(t *testing.T) {
	e := newRunnerEnv(t, "push", "push.json")
	pub, err := e.runner().Publish(context.Background(), e.plan(), Result{Verdict: VerdictPass, Passed: true, ReportPath: "report.json", MarkdownBody: "ok"})
	if err != nil || pub.Comment != "skipped" {
		t.Fatalf("%+v %v", pub, err)
	}
	if calls := e.fake.Calls(); len(calls) != 0 {
		t.Errorf("API calls on push: %v", calls)
	}
	if e.outputs()["report-path"] != "report.json" {
		t.Errorf("outputs = %v", e.outputs())
	}
}

func TestPublishKeepsUntrustedTextOutOfOutputs(t *testing.T) {
	e := newRunnerEnv(t, "push", "push.json")
	res := Result{Verdict: VerdictInconclusive, Passed: true, MarkdownBody: "x",
		ReportPath: "out/report\n.json",
		Scores:     map[string]string{"behavior": "0.9\nverdict<<EOF", "telemetry": "fast", "custom": "1"}}
	pub, err := e.runner().Publish(context.Background(), e.plan(), res)
	if err != nil {
		t.Fatal(err)
	}
	out := e.outputs()
	if out["report-path"] != "" || out["score-behavior"] != "" || out["score-telemetry"] != "" || out["verdict"] != "inconclusive" {
		t.Errorf("outputs = %v", out)
	}
	if len(pub.Warnings) != 4 {
		t.Errorf("warnings = %q", pub.Warnings)
	}
	if _, err := e.runner().Publish(context.Background(), e.plan(), Result{Verdict: "pass\n"}); err == nil {
		t.Error("a bad verdict was accepted")
	}
}

func TestPublishCapsAnnotations(t *testing.T) {
	e := newRunnerEnv(t, "push", "push.json")
	var anns []Annotation
	for range 25 {
		anns = append(anns, Annotation{Title: "X-1", Message: "m"})
	}
	if _, err := e.runner().Publish(context.Background(), e.plan(), Result{Verdict: VerdictFail, Annotations: anns}); err != nil {
		t.Fatal(err)
	}
	log := e.stdout.String()
	if n := strings.Count(log, "::error "); n != 10 || !strings.Contains(log, "15 more annotation(s)") {
		t.Errorf("%d errors; log:\n%s", n, log)
	}
}

func TestPublishWithoutRunnerFilesFails(t *testing.T) {
	e := newRunnerEnv(t, "push", "push.json")
	e.set("GITHUB_OUTPUT", "")
	_, err := e.runner().Publish(context.Background(), e.plan(), Result{Verdict: VerdictPass})
	if err == nil || !strings.Contains(err.Error(), "GITHUB_OUTPUT is not set") {
		t.Errorf("err = %v", err)
	}
}

func TestSummaryIsCapped(t *testing.T) {
	big := strings.Repeat("| row | é |\n", 200000)
	got := capSummary(big)
	if len(got) > maxSummaryBytes || !strings.Contains(got, "Truncated") {
		t.Errorf("len %d", len(got))
	}
}

func TestPublishWithoutATokenWarns(t *testing.T) {
	e := newRunnerEnv(t, "pull_request", "pull_request_opened.json")
	e.set("INPUT_GITHUB-TOKEN", "")
	pub, err := e.runner().Publish(context.Background(), e.plan(), Result{Verdict: VerdictFail, MarkdownBody: "x"})
	if err != nil || pub.Comment != "skipped" || len(pub.Warnings) != 1 || !strings.Contains(pub.Warnings[0], "no github-token") {
		t.Fatalf("%+v %v", pub, err)
	}
	if e.outputs()["verdict"] != "fail" || len(e.fake.Calls()) != 0 {
		t.Errorf("outputs %v calls %v", e.outputs(), e.fake.Calls())
	}
}
