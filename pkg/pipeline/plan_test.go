package pipeline

import (
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
