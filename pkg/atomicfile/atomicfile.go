// Package atomicfile is the one way mcp-eval writes a file: reports,
// renderings, cache entries. A reader (the next CI step, a concurrent run
// sharing the cache) sees the old file or the new one, never half of it,
// and every file is readable by the other users of a runner: files 0644,
// directories 0755, whatever the umask.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Modes of what mcp-eval writes: a report is meant to be read by the next
// step of a workflow, which may run as another user (a container action
// writes as root, the runner reads as runner).
const (
	FileMode fs.FileMode = 0o644
	DirMode  fs.FileMode = 0o755
)

// Write writes path through a temporary file in the same directory and
// renames it into place. Missing parent directories are made. On any error
// the previous file, if any, is left as it was.
func Write(path string, write func(io.Writer) error) error {
	if err := MkdirAll(filepath.Dir(path)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcp-eval-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// CreateTemp makes the file 0600; Chmod is not subject to the umask.
	// Sync before the rename, so a crash leaves the old file, not an empty
	// new one.
	err = errors.Join(tmp.Chmod(FileMode), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteBytes writes b to path atomically.
func WriteBytes(path string, b []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(b))
		return err
	})
}

// MkdirAll makes dir and its missing parents with DirMode, whatever the
// umask; directories that exist are left as they are.
func MkdirAll(dir string) error {
	if dir == "" || dir == "." {
		return nil
	}
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if parent := filepath.Dir(d); parent == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		} else if err == nil {
			if err := os.Chmod(d, DirMode); err != nil {
				return err
			}
		}
	}
	return nil
}
