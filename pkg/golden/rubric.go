package golden

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// readRubric reads a rubric file named relative to the golden file's
// directory. A rubric is sent to the judge model, so a golden file from a
// pull request must not be able to make it read anything else: the path
// must stay inside that directory (os.Root also refuses symlinks that
// leave it), and the file is bounded and must be text.
func readRubric(goldenFile, rel string) (text, msg, hint string) {
	const where = "rubric files are read relative to the golden file's directory and must stay inside it"
	if filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.Contains(rel, `\`) {
		return "", fmt.Sprintf("rubric file %q is not a relative path", clip(rel)), where + "; write e.g. rubrics/send-email.md"
	}
	clean := path.Clean(rel)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Sprintf("rubric file %q leaves the golden file's directory", clip(rel)), where
	}
	root, err := os.OpenRoot(filepath.Dir(goldenFile))
	if err != nil {
		return "", fmt.Sprintf("cannot open the golden file's directory for rubric %q: %v", clip(rel), err), ""
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(clean))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Sprintf("rubric file %q does not exist", clip(rel)), where
		}
		return "", fmt.Sprintf("cannot read rubric file %q: %v", clip(rel), err), where
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxRubricBytes+1))
	switch {
	case err != nil:
		return "", fmt.Sprintf("cannot read rubric file %q: %v", clip(rel), err), ""
	case len(b) > MaxRubricBytes:
		return "", fmt.Sprintf("rubric file %q is larger than %d bytes", clip(rel), MaxRubricBytes), "shorten it: the judge reads it on every graded run"
	case !utf8.Valid(b):
		return "", fmt.Sprintf("rubric file %q is not UTF-8 text", clip(rel)), ""
	case strings.TrimSpace(string(b)) == "":
		return "", fmt.Sprintf("rubric file %q is empty", clip(rel)), "say what a completed task looks like"
	}
	return string(b), "", ""
}
