package conformance

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// On stdio, LOG-1, LOG-2 and PROG-1 take turns on one process per
// repetition, whose first request after the probe is the list walk of
// TOOL-2, RSRC-1 and PROMPT-1; REM-2's initialize and REM-3's legacy
// notifications share one process per repetition in that order. Every
// process is gone when the run returns. Each server process's stdin is
// copied to a file, so the test reads what each process was sent.
func TestStdioChecksShareProcessesPerRepetition(t *testing.T) {
	dir := t.TempDir()
	target := Target{Argv: []string{"sh", "-c", `tee "$1/$$.in" | exec "$0"`, exampleServer, dir}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	only := []string{"LOG-1", "LOG-2", "PROG-1", "TOOL-2", "RSRC-1", "PROMPT-1", "REM-2", "REM-3"}
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 2, Only: only}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Checks {
		if r.Verdict != check.Passed {
			t.Errorf("%s = %s (%s), want pass on the reference server", r.ID, r.Verdict, r.Outcome.Message)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.in"))
	if err != nil {
		t.Fatal(err)
	}
	var quiet, rem int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
		name := filepath.Base(f)
		if pid, err := strconv.Atoi(strings.TrimSuffix(name, ".in")); err == nil {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process %d still runs after the run returned (kill 0: %v)", pid, err)
			}
		}
		switch {
		case bytes.Contains(b, []byte(`"progressToken":424242`)):
			quiet++
			// The probe, then the walk before any call.
			if len(lines) < 2 || !bytes.Contains(lines[1], []byte(`"method":"tools/list"`)) {
				t.Errorf("%s: the second request is %.200s, want the list walk (tools/list) first on the quiet process", name, lines[min(1, len(lines)-1)])
			}
			for _, want := range []string{`"method":"prompts/list"`, `"io.modelcontextprotocol/logLevel":"notice"`} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("%s: PROG-1's process got no %s: LOG-2 and the walk did not take turns on it", name, want)
				}
			}
		case bytes.Contains(b, []byte(`notifications/roots/list_changed`)):
			rem++
			if len(lines) < 3 || !bytes.Contains(lines[1], []byte(`"method":"initialize"`)) {
				t.Errorf("%s: REM-3's process did not get REM-2's initialize right after the probe", name)
			}
		}
	}
	if quiet != 2 || rem != 2 {
		t.Errorf("%d processes got PROG-1's calls and %d REM-3's notifications, want one of each per repetition (2)", quiet, rem)
	}
}
