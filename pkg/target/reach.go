package target

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// UnreachableError is a stdio server the unprivileged user cannot start:
// a directory on the way to its working directory or its program that
// uid 65534 may not enter, or a program it may not run. The usual cause is
// a checkout under /root or inside a `mktemp -d` directory (mode 0700),
// which root enters and nobody else does.
type UnreachableError struct {
	RunAs *transport.RunAs
	// Why is Target.Why: what made mcp-eval drop privileges.
	Why string
	// What is what the server needed: "the working directory", "the
	// command", "the argument".
	What string
	// Target is the path the server needed (the directory, or the
	// program resolved through PATH).
	Target string
	// Blocked is the first path on the way to Target that RunAs may not
	// use, Need what it lacks ("enter", "run", "read"), Mode and Owner
	// its permissions. Blocked is empty when only the kernel's refusal is
	// known (an exec that failed although the bits allow it: an ACL, a
	// noexec mount, a security module).
	Blocked string
	Need    string
	Mode    fs.FileMode
	Owner   uint32
	// Err is the start's own error when the kernel refused.
	Err error
}

func (e *UnreachableError) Error() string {
	var b strings.Builder
	why := ""
	if e.Why != "" {
		why = " " + e.Why
	}
	fmt.Fprintf(&b, "mcp-eval runs as root%s, so it starts the stdio server as %s", why, e.RunAs)
	switch {
	case e.Blocked == "":
		fmt.Fprintf(&b, ", and the system refused %s %s: %v", e.What, e.Target, e.Err)
	case e.Blocked == e.Target:
		fmt.Fprintf(&b, ", which cannot %s %s %s (%s, owner uid %d)", e.Need, e.What, e.Blocked, e.Mode, e.Owner)
	default:
		fmt.Fprintf(&b, ", which cannot %s %s (%s, owner uid %d) on the way to %s %s", e.Need, e.Blocked, e.Mode, e.Owner, e.What, e.Target)
	}
	b.WriteString(". Fix it one of two ways: ")
	if e.Blocked != "" {
		fmt.Fprintf(&b, "make the path usable by others, e.g. chmod o+%s %s", e.bit(), e.Blocked)
		b.WriteString(" (and chmod -R o+rX the server's own files if they are not already)")
	} else {
		fmt.Fprintf(&b, "make %s and the directories above it readable and executable by others (chmod -R o+rX)", e.Target)
	}
	b.WriteString("; or run the server as mcp-eval's own user (root) with server.user: current in mcp-eval.yaml, --server-user current, or the action input server-user: current")
	b.WriteString(", which lets the server read mcp-eval's environment (model keys, GITHUB_TOKEN) and everything else root can")
	return b.String()
}

func (e *UnreachableError) Unwrap() error { return e.Err }

func (e *UnreachableError) bit() string {
	switch e.Need {
	case "read":
		return "r"
	default:
		return "x"
	}
}

// preflight checks, before anything starts, that t.RunAs can enter the
// server's working directory, run its program, and read the arguments
// that name existing files. It reads permission bits the way the kernel
// does for a process of that uid and gid without supplementary groups
// (RunAs starts it with none); ACLs and mount options are not read, and a
// refusal they cause is explained when the start fails (explainStart).
func (t Target) preflight() error {
	if len(t.Argv) == 0 || t.Argv[0] == "" {
		return nil // StartStdio says what to pass
	}
	op := fmt.Sprintf("start %q", t.Argv[0])
	fail := func(e *UnreachableError) error {
		e.RunAs, e.Why = t.RunAs, t.Why
		return &transport.Error{Kind: transport.KindConnect, Op: op, Err: e}
	}
	dir := t.Dir
	if dir == "" {
		// The server inherits the harness's directory, which must then
		// be the one uid 65534 can enter.
		wd, err := os.Getwd()
		if err != nil {
			return &transport.Error{Kind: transport.KindConnect, Op: op, Err: fmt.Errorf("finding the working directory: %w", err)}
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return &transport.Error{Kind: transport.KindConnect, Op: op, Err: err}
	}
	if e := reachDir(dir, t.RunAs); e != nil {
		e.What = "the working directory"
		return fail(e)
	}
	prog, err := transport.LookCommand(t.Argv[0], t.Dir)
	if err != nil {
		// StartStdio says so in its own words.
		return nil
	}
	if e := reachProgram(prog, t.RunAs); e != nil {
		e.What = "the command"
		return fail(e)
	}
	for _, a := range t.Argv[1:] {
		if !strings.ContainsRune(a, '/') {
			continue // a flag or a word, not a path worth checking
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		if e := reachFile(p, t.RunAs, modeRead); e != nil {
			e.What = "the argument"
			return fail(e)
		}
	}
	return nil
}

// Permission bits, as in the "other" triple.
const (
	modeExec = 1
	modeRead = 4
)

// reachProgram reports the first thing on the way to a program that as
// may not use: a directory it cannot enter, or the program it cannot run
// (or, for a script, read).
func reachProgram(path string, as *transport.RunAs) *UnreachableError {
	if e := reachFile(path, as, modeExec); e != nil {
		return e
	}
	if isScript(path) {
		// An interpreter reads the script it runs.
		return reachFile(path, as, modeRead)
	}
	return nil
}

// reachFile checks the directories above path, then path for want. Both
// the path as written and the path with symbolic links resolved are
// walked, since the kernel walks both.
func reachFile(path string, as *transport.RunAs, want uint32) *UnreachableError {
	for _, p := range resolved(path) {
		if e := reachDir(filepath.Dir(p), as); e != nil {
			e.Target = path
			return e
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil // StartStdio reports a missing file itself
		}
		if !allows(st, as, want) {
			need := "run"
			if want == modeRead {
				need = "read"
			}
			return blocked(path, p, need, st)
		}
	}
	return nil
}

// reachDir checks that as can enter every directory from the root down
// to dir, dir included.
func reachDir(dir string, as *transport.RunAs) *UnreachableError {
	for _, d := range resolved(dir) {
		var chain []string
		for p := filepath.Clean(d); ; p = filepath.Dir(p) {
			chain = append(chain, p)
			if p == filepath.Dir(p) {
				break
			}
		}
		for i := len(chain) - 1; i >= 0; i-- {
			st, err := os.Stat(chain[i])
			if err != nil {
				return nil // a missing directory fails the start with its own error
			}
			if !allows(st, as, modeExec) {
				return blocked(dir, chain[i], "enter", st)
			}
		}
	}
	return nil
}

// resolved is path as written and, when different, with its symbolic
// links resolved.
func resolved(path string) []string {
	out := []string{path}
	if r, err := filepath.EvalSymlinks(path); err == nil && r != path {
		out = append(out, r)
	}
	return out
}

func blocked(target, path, need string, st fs.FileInfo) *UnreachableError {
	e := &UnreachableError{Target: target, Blocked: path, Need: need, Mode: st.Mode()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		e.Owner = sys.Uid
	}
	return e
}

// allows applies the permission bits as the kernel does for a process of
// as's uid and gid with no supplementary groups: the owner triple when it
// owns the file, else the group triple when its gid is the file's, else
// the other triple. Only one triple is ever consulted.
func allows(st fs.FileInfo, as *transport.RunAs, want uint32) bool {
	perm := uint32(st.Mode().Perm())
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true // not a Unix file system view: let the kernel decide
	}
	switch {
	case as.UID == 0:
		return true
	case sys.Uid == as.UID:
		return perm>>6&want == want
	case sys.Gid == as.GID:
		return perm>>3&want == want
	default:
		return perm&want == want
	}
}

// isScript reports whether path starts with "#!": the kernel then runs
// its interpreter, which must read it.
func isScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2]byte
	_, err = io.ReadFull(f, b[:])
	return err == nil && string(b[:]) == "#!"
}

// explainStart turns a start refused by the kernel under RunAs into an
// UnreachableError naming the path it refused, found by the same walk as
// the preflight when the bits explain it.
func (t Target) explainStart(err error) error {
	if t.RunAs == nil || !errors.Is(err, os.ErrPermission) {
		return err
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	e := &UnreachableError{RunAs: t.RunAs, Why: t.Why, What: "the command", Target: pe.Path, Err: pe}
	if pe.Op == "chdir" {
		e.What = "the working directory"
	}
	return &transport.Error{Kind: transport.KindConnect, Op: fmt.Sprintf("start %q", t.Argv[0]), Err: e}
}
