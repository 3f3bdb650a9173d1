package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// reachableTempDir is t.TempDir opened up to every user. Tests run as root
// in CI containers, and then the mcp-eval binary runs stdio servers as uid
// 65534 (transport.UnprivilegedIfRoot), which must be able to run a server
// built there and write into the directory, as it can in a real workspace.
// t.TempDir and its per-test parent are 0700.
func reachableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{filepath.Dir(dir), 0o755}, {dir, 0o777}} {
		if err := os.Chmod(d.path, d.mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
