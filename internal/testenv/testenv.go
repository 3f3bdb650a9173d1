// Package testenv finds what tests need from outside the repository: the
// steering repo's shared/ directory, which holds the official MCP JSON
// Schemas used as an independent oracle.
package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SharedDir returns the shared/ directory that sits beside the checkout
// ($MCP_EVAL_SHARED overrides). Without it a test skips, except under
// CI=true, where it fails: CI always has shared/ beside the clone.
func SharedDir(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv("MCP_EVAL_SHARED"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err == nil {
		for {
			cand := filepath.Join(dir, "..", "shared")
			if st, err := os.Stat(filepath.Join(cand, "mcp-spec")); err == nil && st.IsDir() {
				return filepath.Clean(cand)
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	msg := "shared/mcp-spec not found beside the checkout; set MCP_EVAL_SHARED to the shared/ directory"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

// SpecSchema returns the path of the official JSON Schema of a revision,
// e.g. "2026-07-28".
func SpecSchema(tb testing.TB, revision string) string {
	tb.Helper()
	return filepath.Join(SharedDir(tb), "mcp-spec", revision, "schema.json")
}

// CPUTime is the CPU time (user + system) this test process has used.
// Bounds on hostile input are asserted in CPU time, not wall time: a
// machine busy with other work stretches the wall clock, never the work
// a runaway parser or scanner does.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
