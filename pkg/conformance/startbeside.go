package conformance

import (
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

// take returns the spare process once, then nil (nil on a nil spare).
func (s *spareStart) take() transport.Transport {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.t
	s.t = nil
	return t
}

// close stops the spare if no one took it, and waits until it has exited.
func (s *spareStart) close() {
	if t := s.take(); t != nil {
		t.Close()
	}
}

// ownStartFailed: the run's own process started and then exited, closed or
// answered nothing in time: what a server that cannot run twice at once
// does when another of its processes got the port or lock first.
func ownStartFailed(err error) bool {
	switch transport.KindOf(err) {
	case transport.KindProcessExited, transport.KindClosed, transport.KindTimeout:
		return true
	}
	return false
}

// startsBeside says whether a second process of argv may start while the
// first one starts: not when the program is one that may fetch, install or
// build what it runs on its first start (npx, uvx, go run, docker run …),
// nor a shell or env, which may run one of those: two cold starts of npx
// at once install into the same cache directory, and one of them fails
// (npm/cli#8224) or the two share the work. A program run directly (a
// binary, node, python) only starts.
func startsBeside(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	name := strings.ToLower(filepath.Base(argv[0]))
	if strings.HasSuffix(name, ".sh") {
		return false
	}
	if _, ok := fetchingStarters[name]; ok {
		return false
	}
	return true
}

// fetchingStarters are the programs startsBeside does not start twice at
// once: package runners and build tools, container and remote runners, and
// what may run any of them.
var fetchingStarters = map[string]struct{}{
	"npx": {}, "npm": {}, "pnpm": {}, "pnpx": {}, "yarn": {}, "yarnpkg": {}, "bun": {}, "bunx": {}, "deno": {},
	"uv": {}, "uvx": {}, "pipx": {}, "poetry": {}, "pdm": {}, "hatch": {}, "rye": {}, "conda": {}, "mamba": {}, "micromamba": {}, "pixi": {},
	"go": {}, "cargo": {}, "dotnet": {}, "mvn": {}, "mvnw": {}, "gradle": {}, "gradlew": {}, "sbt": {}, "jbang": {}, "nix": {}, "nix-shell": {}, "make": {}, "just": {},
	"docker": {}, "podman": {}, "nerdctl": {}, "kubectl": {}, "ssh": {},
	"sh": {}, "bash": {}, "dash": {}, "zsh": {}, "fish": {}, "ksh": {}, "env": {}, "sudo": {}, "doas": {}, "xargs": {}, "timeout": {}, "nohup": {}, "nice": {}, "stdbuf": {},
}
