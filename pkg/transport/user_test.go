package transport

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Started as root with RunAs, the server runs as nobody with a TMPDIR and
// HOME of its own, cannot read the harness's environment, and its
// directory is gone after Close.
func TestRunAsDropsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	script := `read l; echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"; touch "$TMPDIR/x" && echo "tmp=$TMPDIR home=$HOME"; cat /proc/$PPID/environ >/dev/null 2>&1 || echo "environ denied"; sleep 30`
	tr := shServer(t, script, func(c *StdioConfig) { c.RunAs = Nobody() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _ = tr.RoundTrip(ctx, req(1, "x"))
	var lines []string
	for _, a := range tr.Anomalies() {
		lines = append(lines, a.Excerpt)
	}
	got := strings.Join(lines, "\n")
	if !strings.Contains(got, "uid=65534 gid=65534 groups=65534") || !strings.Contains(got, "environ denied") {
		t.Fatalf("the server's view:\n%s", got)
	}
	var tmp string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "tmp="); ok {
			tmp, _, _ = strings.Cut(rest, " ")
			if !strings.Contains(l, "home="+tmp) {
				t.Errorf("HOME is not the private directory: %s", l)
			}
		}
	}
	if tmp == "" || filepath.Dir(tmp) != filepath.Clean(os.TempDir()) {
		t.Fatalf("no private TMPDIR: %q", got)
	}
	tr.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the server's private directory %s outlived it: %v", tmp, err)
	}
}

// A server only root can run fails to start with a message that says why
// and what to do.
func TestRunAsExplainsAnUnreachableServer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	dir := t.TempDir() // 0700: nobody cannot enter it
	prog := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nsleep 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := StartStdio(context.Background(), StdioConfig{Argv: []string{prog}, RunAs: Nobody()})
	if err == nil || !strings.Contains(err.Error(), "uid 65534 (nobody)") || !strings.Contains(err.Error(), "chmod") {
		t.Fatalf("got %v", err)
	}
}
