package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Target is a server to start over Streamable HTTP on loopback.
type Target struct {
	Name  string
	Label string // for table headings
	Dir   string // working directory, relative to the repository
	Argv  []string
}

// targets are the servers of the cross-check, in table order; the first
// two are the primary pair of the agreement table, the rest the extras.
func targets(bin string) []Target {
	return []Target{
		{Name: "example", Label: "example", Argv: []string{filepath.Join(bin, "example-server"), "--http", "127.0.0.1:0"}},
		{Name: "ts", Label: "ts", Dir: "interop/ts", Argv: []string{"node", "server.mjs", "http", "0"}},
		{Name: "gosdk", Label: "gosdk", Argv: []string{"interop/bin/gosdk-srv", "--http", "127.0.0.1:0", "--stateless"}},
		{Name: "mcpgo", Label: "mcpgo", Argv: []string{"interop/bin/mcpgo-srv", "--http", "127.0.0.1:0", "--stateless"}},
	}
}

var listening = regexp.MustCompile(`listening on (http://(?:127\.0\.0\.1|localhost|\[::1\]):\d+/\S*)`)

// server is a started target; Stop ends it and its children.
type server struct {
	cmd  *exec.Cmd
	URL  string
	done chan struct{}
}

// start runs argv in dir and waits (up to 30 s) for the "listening on URL"
// line every target prints on stderr; the rest of stderr goes to logPath.
func start(ctx context.Context, root, dir string, argv []string, logPath string) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(root, dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so Stop reaches node's children too
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", strings.Join(argv, " "), err)
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		defer logf.Close()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(logf, stderr)
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case s.URL = <-urls:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("%s exited before listening (its stderr: %s)", strings.Join(argv, " "), logPath)
	case <-wait.Done():
		s.Stop()
		return nil, fmt.Errorf("%s printed no \"listening on http://…\" within 30 s (its stderr: %s)", strings.Join(argv, " "), logPath)
	}
}

// Stop sends SIGTERM to the server's process group, then SIGKILL after 5 s.
func (s *server) Stop() {
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
}

// runner runs both tools against a URL and keeps their outputs in out.
type runner struct {
	root, bin, out string
	log            io.Writer
}

// ours runs `mcp-eval check --url URL --out FILE` (plus extra flags) in an
// empty directory, so no mcp-eval.yaml changes the defaults. Exit 1 (a
// failed check) is a result, not an error; a missing report is.
func (r runner) ours(ctx context.Context, url, file string, extra ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	args := append([]string{"check", "--url", url, "--out", file}, extra...)
	cmd := exec.CommandContext(ctx, filepath.Join(r.bin, "mcp-eval"), args...)
	cmd.Dir = r.out
	outText, err := cmd.CombinedOutput()
	_ = os.WriteFile(strings.TrimSuffix(file, ".json")+".txt", outText, 0o644)
	if _, statErr := os.Stat(file); statErr != nil {
		return fmt.Errorf("mcp-eval check on %s wrote no report (%v): %s", url, err, tail(outText))
	}
	return nil
}

// official runs scripts/official-suite.sh --json FILE URL. Exit 1 (a
// failed scenario) is a result; the script's 2, 3 and 124 are errors.
func (r runner) official(ctx context.Context, url, file string) error {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(r.root, "scripts/official-suite.sh"),
		"--json", file, "--checks", "none", url)
	cmd.Dir = r.root
	outText, err := cmd.CombinedOutput()
	_ = os.WriteFile(strings.TrimSuffix(file, ".json")+".txt", outText, 0o644)
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		return fmt.Errorf("official suite on %s: %v: %s", url, err, tail(outText))
	}
	if _, statErr := os.Stat(file); statErr != nil {
		return fmt.Errorf("official suite on %s wrote no JSON: %s", url, tail(outText))
	}
	return nil
}

func tail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return s
}

// runTarget starts t, runs both tools on it and stops it.
func (r runner) runTarget(ctx context.Context, t Target) error {
	fmt.Fprintf(r.log, "crosscheck: %s: starting %s\n", t.Name, strings.Join(t.Argv, " "))
	s, err := start(ctx, r.root, t.Dir, t.Argv, filepath.Join(r.out, t.Name+".server.log"))
	if err != nil {
		return fmt.Errorf("target %s: %w", t.Name, err)
	}
	defer s.Stop()
	if err := r.ours(ctx, s.URL, filepath.Join(r.out, t.Name+".ours.json")); err != nil {
		return fmt.Errorf("target %s: %w", t.Name, err)
	}
	if err := r.official(ctx, s.URL, filepath.Join(r.out, t.Name+".official.json")); err != nil {
		return fmt.Errorf("target %s: %w", t.Name, err)
	}
	fmt.Fprintf(r.log, "crosscheck: %s: done (%s)\n", t.Name, s.URL)
	return nil
}

// runMutant starts the reference server with --break id and runs ours
// twice (default, and allowing send_email, the MRTR tool that is not
// read-only) and the official suite once, each on a server of its own: a
// mutant may stop serving after what one run does to it (RESIL-1 stops
// answering once a client drops a request), and the next run must not
// inherit that.
func (r runner) runMutant(ctx context.Context, id string) error {
	argv := []string{filepath.Join(r.bin, "example-server"), "--http", "127.0.0.1:0", "--break", id}
	base := filepath.Join(r.out, "mutant-"+id)
	for _, run := range []struct {
		log string
		do  func(url string) error
	}{
		{".server.log", func(url string) error { return r.ours(ctx, url, base+".ours.json") }},
		{".server-call.log", func(url string) error { return r.ours(ctx, url, base+".ours-call.json", "--call-tool", "send_email") }},
		{".server-official.log", func(url string) error { return r.official(ctx, url, base+".official.json") }},
	} {
		s, err := start(ctx, r.root, "", argv, base+run.log)
		if err != nil {
			return fmt.Errorf("mutant %s: %w", id, err)
		}
		err = run.do(s.URL)
		s.Stop()
		if err != nil {
			return fmt.Errorf("mutant %s: %w", id, err)
		}
	}
	return nil
}
