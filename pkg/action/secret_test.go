package action

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
)

// The token must never appear in the log, the outputs, the summary, the
// comment, errors or the plan, whatever goes wrong. The canary is seeded as
// github-token and echoed back by the "server" and a "model" on purpose.
func TestTheTokenNeverLeaks(t *testing.T) {
	e := newRunnerEnv(t, "pull_request", "pull_request_labeled_run-evals.json")
	e.fake.Runs = []fakegithub.Run{greenRun(8, 1)}
	e.fake.Artifacts = []fakegithub.Artifact{{ID: 81, RunID: 8, Name: "mcp-eval-report", Zip: []byte("corrupt")}}
	r := e.runner()
	var seen []string

	p, err := r.Plan()
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, fmt.Sprintf("%+v", p))
	r.Announce(p)
	b := r.Baseline(context.Background(), p, nil, nil)
	seen = append(seen, b.Note)

	res := Result{
		Verdict: VerdictFail, ReportPath: "report.json",
		MarkdownBody: "a model quoted the token: " + canary,
		Annotations:  []Annotation{{Title: "TOOL-1", Message: "server echoed Authorization: Bearer " + canary}},
		Scores:       map[string]string{"behavior": canary},
	}
	pub, err := r.Publish(context.Background(), p, res)
	seen = append(seen, fmt.Sprint(pub, err))

	// Errors from a bad token and a read-only token too.
	e.fake.ReadOnly = true
	pub, err = r.Publish(context.Background(), p, res)
	seen = append(seen, fmt.Sprint(pub, err))
	e.set("GITHUB_API_URL", "http://127.0.0.1:1/"+canary)
	b = r.Baseline(context.Background(), p, nil, nil)
	seen = append(seen, b.Note)

	seen = append(seen, e.stdout.String(), e.file("output.txt"), e.file("summary.md"))
	for _, c := range e.fake.CommentsOn(42) {
		seen = append(seen, c.Body)
	}
	for i, s := range seen {
		if strings.Contains(s, canary) {
			t.Errorf("the token leaked (item %d):\n%s", i, s)
		}
	}
	if !strings.Contains(e.file("summary.md"), "***") {
		t.Error("the summary was not scrubbed")
	}
}
