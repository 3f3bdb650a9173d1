package render

import (
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// ReplayLabel is the sentence every surface shows on a replayed report
// (report.Replay), "" on any other: its Layer 1 and 2 results are the
// recorded models' answers to the live server, not the models' own now.
func ReplayLabel(rep *report.Report) string {
	r := rep.Replay
	if r == nil {
		return ""
	}
	s := fmt.Sprintf("replayed: Layers 1 and 2 are the recorded model answers of cassette %s (sha256 %s…), with the tool calls made on the live server; compared only with a baseline replayed from the same cassette",
		r.Cassette, shortHash(r.Hash))
	if n := len(r.Stale) + r.MoreStale; n > 0 {
		s += fmt.Sprintf("; %d runs went stale (not measured): record the cassette again", n)
	}
	return s
}

// replayedTag marks a layer heading of a replayed report.
func replayedTag(rep *report.Report) string {
	if rep.Replay == nil {
		return ""
	}
	return " · replayed"
}
