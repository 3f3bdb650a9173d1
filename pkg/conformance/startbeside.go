package conformance

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// spareStart is a process of the server started beside the run's own and
// sent nothing: the first new connection the run opens takes it (Run's
// openNew), and the run closes it if none does.
type spareStart struct {
	mu sync.Mutex
	t  transport.Transport
}

// take returns the spare process once, then nil (nil on a nil spare). One
// that has exited is closed instead: started beside the run's own, it may
// have lost what only one process at a time can hold (a port, a lock, a
// first-run migration), which a process started alone would have had.
func (s *spareStart) take() transport.Transport {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	t := s.t
	s.t = nil
	s.mu.Unlock()
	if t != nil && spareExited(t) {
		t.Close()
		return nil
	}
	return t
}

// exited says whether the spare, not taken yet, has exited.
func (s *spareStart) exited() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t != nil && spareExited(s.t)
}

// close stops the spare if no one took it, and waits until it has exited.
func (s *spareStart) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	t := s.t
	s.t = nil
	s.mu.Unlock()
	if t != nil {
		t.Close()
	}
}

// closeBeside closes the run's own transport and the spare together: a
// process that does not end when its stdin closes holds each up for its
// shutdown grace.
func closeBeside(own transport.Transport, s *spareStart) {
	var closing sync.WaitGroup
	closing.Go(s.close)
	own.Close()
	closing.Wait()
}

func spareExited(t transport.Transport) bool {
	st, ok := t.(*transport.StdioTransport)
	if !ok {
		return false
	}
	select {
	case <-st.Exited():
		return true
	default:
		return false
	}
}

// startFailedBeside: a process's start ended with the process gone (it
// exited, or its transport closed), what a server that runs once at a time
// does when another of its processes holds the port or lock. Not a
// timeout: a server that never answers would be waited for twice.
func startFailedBeside(err error) bool {
	switch transport.KindOf(err) {
	case transport.KindProcessExited, transport.KindClosed:
		return true
	}
	return false
}

// startsBeside says whether a second process of argv (run in dir) may
// start while the first one starts: not when the program, or the
// interpreter of the script it is, is one that may fetch, install or build
// what it runs on its first start (npx, uvx, go run, docker run …), nor a
// shell or env, which may run one of those: two cold starts of npx at once
// install into the same cache directory, and one of them fails
// (npm/cli#8224) or the two share the work. A program run directly (a
// binary, node, python, a script of theirs) only starts.
func startsBeside(argv []string, dir string) bool {
	if len(argv) == 0 || !runsDirectly(argv[0]) {
		return false
	}
	prog, err := transport.LookCommand(argv[0], dir)
	if err != nil {
		return false
	}
	interp, script := shebang(prog)
	return !script || interp != "" && runsDirectly(interp)
}

// runsDirectly: the program named is not one startsBeside keeps alone.
func runsDirectly(program string) bool {
	name := strings.ToLower(filepath.Base(program))
	if strings.HasSuffix(name, ".sh") || strings.HasSuffix(name, ".bash") {
		return false
	}
	switch name {
	case "npx", "npm", "pnpm", "pnpx", "yarn", "yarnpkg", "bun", "bunx", "deno", "corepack",
		"uv", "uvx", "pipx", "pipenv", "poetry", "pdm", "hatch", "rye", "conda", "mamba", "micromamba", "pixi",
		"go", "cargo", "dotnet", "mvn", "mvnw", "gradle", "gradlew", "sbt", "jbang", "lein", "clojure", "clj",
		"swift", "cabal", "stack", "mix", "dart", "flutter", "bundle", "bundler", "rake",
		"nix", "nix-shell", "make", "just", "mise", "asdf",
		"docker", "podman", "nerdctl", "kubectl", "ssh",
		"sh", "bash", "dash", "zsh", "fish", "ksh", "env", "sudo", "doas", "xargs", "timeout", "nohup", "nice", "stdbuf":
		return false
	}
	return true
}

// shebang reads whether the file at path is a script (#!) and, if so, the
// program its first line runs: env's first operand for "#!/usr/bin/env
// node", "" when that line names none.
func shebang(path string) (interp string, script bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var b [256]byte
	n, _ := io.ReadFull(f, b[:])
	line, ok := bytes.CutPrefix(b[:n], []byte("#!"))
	if !ok {
		return "", false
	}
	line, _, _ = bytes.Cut(line, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 {
		return "", true
	}
	if filepath.Base(fields[0]) != "env" {
		return fields[0], true
	}
	for _, f := range fields[1:] {
		if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
			return f, true
		}
	}
	return "", true
}
