package action

import (
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/target"
)

// server.user in mcp-eval.yaml and the action input server-user accept
// exactly the policies ResolveUser knows.
func TestPolicyNamesMatchConfigAndInputs(t *testing.T) {
	for _, v := range []string{"auto", "unprivileged", "current", "root", "nobody", "Current"} {
		_, perr := target.ParseUserPolicy(v)
		_, cerr := config.Parse("mcp-eval.yaml", []byte("server:\n  command: srv\n  user: "+v+"\n"))
		_, aerr := ParseInputs(func(k string) string {
			if k == "INPUT_SERVER-USER" {
				return v
			}
			return ""
		})
		if (perr == nil) != (cerr == nil) || (perr == nil) != (aerr == nil) {
			t.Errorf("%q: ParseUserPolicy %v, server.user %v, input server-user %v", v, perr, cerr, aerr)
		}
	}
}
