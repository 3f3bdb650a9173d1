package hostile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/internal/hostile"
)

// Server text that reaches the action's log cannot act as a workflow
// command (set an output, add a mask, forge an annotation), and the PR
// comment and the job summary keep it neutralised.
func TestServerTextStaysInertInTheAction(t *testing.T) {
	for _, behaviour := range []string{"workflow-commands", "hostile-names"} {
		t.Run(behaviour, func(t *testing.T) {
			ws := reachableDir(t)
			cfg := "server:\n  command: " + bin.server + " --behaviour " + behaviour + "\nconformance:\n  runs: 1\n"
			if err := os.WriteFile(filepath.Join(ws, "mcp-eval.yaml"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			a := runAction(t, ws, "pull_request_opened.json", "ghs_inert_test_token")
			noWorkflowCommands(t, a.log)
			outputs, _ := os.ReadFile(filepath.Join(ws, "gh-output"))
			if strings.Contains(string(outputs), "verdict=pass") && behaviour == "workflow-commands" {
				t.Errorf("the server's ::set-output reached the outputs:\n%s", outputs)
			}
			summary, _ := os.ReadFile(filepath.Join(ws, "gh-summary"))
			bodies := append([]string{string(summary)}, a.comments...)
			if len(a.comments) != 1 {
				t.Errorf("want one PR comment, got %d", len(a.comments))
			}
			for _, md := range bodies {
				if p := hostile.MarkdownProblems(md); len(p) > 0 {
					t.Errorf("server text got loose in the Markdown:\n%s\n--- body:\n%s", strings.Join(p, "\n"), tail(md))
				}
			}
		})
	}
}

// probe prints tool names at the start of a line; a name that is a
// workflow command must not become one in a CI log.
func TestProbeTextStaysInert(t *testing.T) {
	for _, behaviour := range []string{"workflow-commands", "hostile-names"} {
		for _, format := range [][]string{nil, {"--json"}} {
			dir := reachableDir(t)
			r := runMCPEval(t, defaultDeadline, dir, baseEnv(), append([]string{"probe", "--cmd", bin.server + " --behaviour " + behaviour}, format...)...)
			noPanic(t, r)
			noWorkflowCommands(t, r.stdout)
			noWorkflowCommands(t, r.stderr)
		}
	}
}
