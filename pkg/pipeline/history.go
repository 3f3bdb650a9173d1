package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// MaxHistoryFiles bounds how many files a history directory may make a
// run read: the walk needs ten, a directory of thousands is a mistake.
const MaxHistoryFiles = 200

// LoadHistory reads earlier reports from arg: a directory's *.json files
// (not recursive) or one file, each named relative to ws. An unreadable
// report is skipped and warn is told why: history only ever adds
// warnings and trends, it must not stop a run or the gate.
func LoadHistory(ws, arg string, warn func(string)) []gate.Historic {
	paths := []string{arg}
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		matches, _ := filepath.Glob(filepath.Join(arg, "*.json"))
		sort.Strings(matches)
		if len(matches) > MaxHistoryFiles {
			warn(fmt.Sprintf("%s has %d reports; reading the last %d by name", report.RelPath(ws, abs(arg)), len(matches), MaxHistoryFiles))
			matches = matches[len(matches)-MaxHistoryFiles:]
		}
		if len(matches) == 0 {
			warn(fmt.Sprintf("history %s holds no *.json report: no trend, no drift warning", report.RelPath(ws, abs(arg))))
		}
		paths = matches
	}
	var out []gate.Historic
	for _, p := range paths {
		r, err := report.Load(p)
		if err != nil {
			warn("skipping history report: " + Brief(err))
			continue
		}
		out = append(out, gate.Historic{Ref: Ref(ws, p, r), Report: r})
	}
	return out
}

// walked are the reports of h the gate walked (refs, from its
// History): the green ones, newest gate.history of them. The trend runs
// over the same reports as the drift warnings.
func walked(h []gate.Historic, refs []report.ReportRef) []*report.Report {
	var out []*report.Report
	for _, x := range h {
		for _, r := range refs {
			if r == x.Ref {
				out = append(out, x.Report)
				break
			}
		}
	}
	return out
}
