package merge_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A merge reads reports: it must not be able to reach into a run's
// internals (or be compiled with the harness), so pkg/report is the one
// package of this module it may import.
func TestReadsReportsOnly(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.ImportPath}}{{end}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var deps []string
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasSuffix(p, "/pkg/report") && !strings.HasSuffix(p, "/pkg/merge") {
			deps = append(deps, p)
		}
	}
	if len(deps) > 0 {
		t.Errorf("package merge imports more of this module than pkg/report:\n  %s", strings.Join(deps, "\n  "))
	}
}
