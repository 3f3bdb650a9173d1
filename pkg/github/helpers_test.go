package github

import (
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/github/fakegithub"
)

const testToken = "ghs_CANARYcanary0123456789"

// newFake starts a fake for octo/server that insists on testToken, and a
// client pointed at it the way the action builds one.
func newFake(t *testing.T) (*fakegithub.Server, *Client) {
	t.Helper()
	f := fakegithub.New("octo", "server")
	f.Token = testToken
	t.Cleanup(f.Close)
	c, err := New(Options{APIURL: f.APIURL(), Token: testToken, CallTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return f, c
}

var t0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

// run is a green push run of evals.yml on main from octo/server, i hours old.
func run(id int64, hoursAgo int) fakegithub.Run {
	return fakegithub.Run{
		ID: id, Number: int(id), Workflow: "evals.yml", Event: "push", Branch: "main",
		HeadRepo: "octo/server", Conclusion: "success", HeadSHA: "abc",
		Created: t0.Add(-time.Duration(hoursAgo) * time.Hour),
	}
}
