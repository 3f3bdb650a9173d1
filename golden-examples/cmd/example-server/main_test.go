package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunStdio drives the command in-process: one request in, one JSON line
// out, logs only on stderr, exit 0 on EOF.
func TestRunStdio(t *testing.T) {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, in, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut.String())
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `"supportedVersions":["2026-07-28"]`) {
		t.Errorf("stdout = %q", out.String())
	}
}

func TestRunUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, strings.NewReader(""), &out, &errOut); code != exitOK {
		t.Errorf("--help exit %d", code)
	}
	if !strings.Contains(errOut.String(), "--http ADDR") || out.Len() != 0 {
		t.Errorf("usage went to the wrong stream: stdout %q stderr %q", out.String(), errOut.String())
	}
	if code := run(context.Background(), []string{"extra"}, strings.NewReader(""), &out, &errOut); code != exitUsage {
		t.Errorf("unexpected argument: exit %d, want %d", code, exitUsage)
	}
	if code := run(context.Background(), []string{"--http", "256.0.0.1:99999"}, strings.NewReader(""), &out, &errOut); code != exitError {
		t.Errorf("bad address: exit %d, want %d", code, exitError)
	}
}
