package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// regated counts the reports re-gated in this test binary, so that a test
// can tell the check ran.
var regated atomic.Int64

// regate re-gates the report that a run, eval or check wrote, with
// `mcp-eval gate` against the baseline its gate section names, and fails
// the test unless it gives the same verdict and exit code: every verdict
// rule lives in the gate and reads only the report (and the policy it
// records). Every in-process command the tests of this package run passes
// through here.
func regate(t *testing.T, code int, args []string, lookup func(string) (string, bool)) {
	t.Helper()
	if code == ExitError || len(args) == 0 {
		return
	}
	switch args[0] {
	case "run", "eval", "check":
	case "report":
		if len(args) < 2 || args[1] != "merge" {
			return
		}
	default:
		return
	}
	path := flagValue(args, "--out", "--json")
	if path == "" || slices.Contains(args, "--preview") {
		return // nothing written: the preview calls no model and writes no report
	}
	rep, err := report.Load(path)
	if err != nil {
		t.Errorf("%s exited %d but its report %s does not load: %v", args[0], code, path, err)
		return
	}
	out := filepath.Join(t.TempDir(), "regated.json")
	gargs := []string{"gate", "--report", path, "--out", out}
	if b := rep.Gate.Baseline; b != nil {
		base := b.Path
		if !filepath.IsAbs(base) {
			wd, _ := os.Getwd()
			base = filepath.Join(wd, base)
		}
		gargs = append(gargs, "--baseline", base)
	}
	var stdout, stderr bytes.Buffer
	c := &Command{Stdout: &stdout, Stderr: &stderr, LookupEnv: lookup}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := c.Main(ctx, gargs)
	again, err := report.Load(out)
	if err != nil {
		t.Errorf("mcp-eval %q: %v\n%s", gargs, err, stderr.String())
		return
	}
	if got != code || again.Gate.Verdict != rep.Gate.Verdict {
		t.Errorf("%q wrote verdict %s and exited %d; `mcp-eval %q` on its report says %s and exits %d\n%s%s",
			args, rep.Gate.Verdict, code, gargs, again.Gate.Verdict, got, stdout.String(), stderr.String())
	}
	regated.Add(1)
}

// flagValue is the value of the last of the named flags in args.
func flagValue(args []string, names ...string) string {
	v := ""
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				v = args[i+1]
			} else if len(a) > len(n) && a[:len(n)+1] == n+"=" {
				v = a[len(n)+1:]
			}
		}
	}
	return v
}
