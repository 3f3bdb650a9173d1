package report

import (
	"path/filepath"
	"strings"
)

// RelPath is p relative to the workspace with forward slashes, so a report
// reads the same on every runner and leaks no runner layout. A path that is
// already relative is only cleaned; one outside the workspace keeps its
// ../ steps rather than becoming absolute.
func RelPath(workspace, p string) string {
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) || workspace == "" {
		return filepath.ToSlash(filepath.Clean(p))
	}
	rel, err := filepath.Rel(workspace, p)
	if err != nil {
		// Another volume on Windows: no relative form exists.
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

// RelCommand makes each absolute path inside the workspace in a stdio
// command line relative ("node /github/workspace/dist/server.js" becomes
// "node dist/server.js"); other words are kept.
func RelCommand(workspace, cmdline string) string {
	if workspace == "" {
		return cmdline
	}
	ws := filepath.Clean(workspace)
	words := strings.Split(cmdline, " ")
	for i, w := range words {
		if filepath.IsAbs(w) && (w == ws || strings.HasPrefix(w, ws+string(filepath.Separator))) {
			words[i] = RelPath(ws, w)
		}
	}
	return strings.Join(words, " ")
}
