package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Modes hold under a umask that would otherwise make everything private.
func TestModesWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "report.json")
	if err := WriteBytes(p, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{p: FileMode, filepath.Join(dir, "a"): DirMode | os.ModeDir, filepath.Join(dir, "a", "b"): DirMode | os.ModeDir} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, st.Mode(), want)
		}
	}
}

// A failed write leaves the old file and no temporary file behind.
func TestFailedWriteKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	if err := WriteBytes(p, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	b, _ := os.ReadFile(p)
	ents, _ := os.ReadDir(dir)
	if string(b) != "old" || len(ents) != 1 {
		t.Fatalf("file %q, %d entries", b, len(ents))
	}
}
