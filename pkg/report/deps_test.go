package report_test

import (
	"os/exec"
	"strings"
	"testing"
)

// A report is plain data that every layer fills and the gate and the
// renderers read: if package report imported a producer, every reader of
// report.json would compile (and trust) the harness that wrote it, and the
// producers could not import report without a cycle.
func TestNoModuleDependencies(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	// Module.Main marks this module's packages; "." is package report
	// itself, which is the one allowed.
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{if .Module}}{{if .Module.Main}}{{.ImportPath}}{{end}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var deps []string
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasSuffix(p, "/pkg/report") {
			deps = append(deps, p)
		}
	}
	if len(deps) > 0 {
		t.Errorf("package report depends on packages of this module; it must import none of them:\n  %s", strings.Join(deps, "\n  "))
	}
}
