package transport

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// RunAs is the unprivileged identity a stdio server runs under. The server
// is untrusted code (a pull request's); run as root next to the harness it
// could read the harness's /proc/<pid>/environ, where the GitHub token and
// model keys live, and write the runner's files. Under another uid the
// kernel refuses both.
type RunAs struct {
	UID, GID uint32
}

// Nobody is the conventional unprivileged user and group, 65534.
func Nobody() *RunAs { return &RunAs{UID: 65534, GID: 65534} }

// UnprivilegedIfRoot is the policy of the mcp-eval command: a harness
// running as root (the Docker action) runs servers as Nobody; any other
// user runs them as itself, since it has nothing more to protect from the
// server than the server's own files.
func UnprivilegedIfRoot() *RunAs {
	if os.Geteuid() == 0 {
		return Nobody()
	}
	return nil
}

func (r *RunAs) String() string {
	if r.UID == 65534 {
		return "uid 65534 (nobody)"
	}
	return fmt.Sprintf("uid %d", r.UID)
}

// prepare gives the server a private TMPDIR and HOME it can write (the
// harness's are root's) and returns the credential to start it with. The
// directory is removed by cleanup once the server is gone.
func (r *RunAs) prepare(env []string) (cred *syscall.Credential, newEnv []string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "mcp-eval-server-")
	if err != nil {
		return nil, nil, nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	if err := os.Chown(dir, int(r.UID), int(r.GID)); err != nil {
		cleanup()
		return nil, nil, nil, fmt.Errorf("giving the server its TMPDIR: %w", err)
	}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMPDIR=") && !strings.HasPrefix(kv, "HOME=") {
			newEnv = append(newEnv, kv)
		}
	}
	newEnv = append(newEnv, "TMPDIR="+dir, "HOME="+dir)
	// Groups set to none: the server keeps none of the harness's
	// supplementary groups.
	return &syscall.Credential{Uid: r.UID, Gid: r.GID, Groups: []uint32{}}, newEnv, cleanup, nil
}

// explainStart turns a failed start under RunAs into what to do about it:
// the usual cause is a server, or its directory, that only root can read.
func (r *RunAs) explainStart(err error) error {
	if r == nil || !errors.Is(err, os.ErrPermission) {
		return err
	}
	return fmt.Errorf("%w (mcp-eval runs as root, so the server runs as %s, which may not read or run it: make the server and the directories on its path readable and executable by others, e.g. chmod -R o+rX, or run mcp-eval as a non-root user)", err, r)
}
