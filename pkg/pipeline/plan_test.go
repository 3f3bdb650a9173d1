package pipeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
)

func TestModelsForTrigger(t *testing.T) {
	m := config.Models{Default: []string{"d"}, Nightly: []string{"n"}, Weekly: []string{"w1", "w2"}}
	for _, tc := range []struct {
		trigger, cron, want string
	}{
		{"push", "", "d"}, {"pull_request_labeled", "", "d"}, {"schedule", "0 3 * * *", "n"}, {"schedule", "0 3 * * 1", "w1,w2"},
		{"workflow_dispatch", "", "d"}, // no dispatch list: default
	} {
		if got := strings.Join(modelsFor(m, tc.trigger, tc.cron), ","); got != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.trigger, tc.cron, got, tc.want)
		}
	}
}

// The cache names its directory, in notes that reach the PR comment,
// relative to the workspace; outside it, as it is.
func TestCacheLabelIsRelativeToTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	p := &Plan{Env: Env{Workspace: ws}}
	p.Behavior.CacheDir = filepath.Join(ws, DefaultCacheDir)
	c, err := p.cache()
	if err != nil || c == nil || c.Label != DefaultCacheDir {
		t.Fatalf("cache in the workspace: %+v, %v; want label %s", c, err, DefaultCacheDir)
	}
	p.Behavior.CacheDir = filepath.Join(t.TempDir(), "elsewhere")
	if c, err = p.cache(); err != nil || c.Label != "" {
		t.Errorf("cache outside the workspace: label %q, %v; want none (the path as it is)", c.Label, err)
	}
}
