package conformance

import (
	"fmt"
	"slices"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/didyoumean"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

// allowedCallTools are the names the user allowed, each once, in the
// order given: the settings add up the flag's and the file's, so a name
// may come twice, and the report records each name once.
func allowedCallTools(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// unknownCallToolsNamed is how many names the server does not list get a
// note each; the rest are counted in one more. A note per name keeps each
// within the terminal's line (render.Line clips at 300 bytes), and a
// config written for another version of the server adds a few lines, not
// one per name.
const unknownCallToolsNamed = 3

// unknownCallToolNotes are the notes on allowed names the server does not
// list. Such a name allows nothing, and nothing else said so: the skips
// still asked for --call-tool as though it had not been given. Notes, not
// an error: tool lists change between versions of a server, and the
// mcp-eval.yaml that names a tool can be older than the server it checks
// (a pull request that renames the tool); the check of the server must
// not stop on that, and what the name would have allowed shows as skips.
//
// No notes when the list could not be read whole (tools/list failed or
// was cut short): a name missing from part of it may be on the rest. A
// server that declares no tools capability lists none, however its
// tools/list fails. A
// name the harness dropped as malformed is listed: the checks of the list
// (TOOL-4, TOOL-6) report the drop. Names are clipped and quoted: the
// user's may come from a file in a pull request, the suggestions come
// from the server.
func unknownCallToolNotes(allowed []string, facts *check.Facts) []string {
	if len(allowed) == 0 || facts == nil {
		return nil
	}
	if (facts.ToolsErr != nil || facts.ToolsCut) && facts.Has("tools") {
		return nil
	}
	listed := make(map[string]bool, len(facts.Tools)+len(facts.Dropped))
	names := make([]string, 0, len(facts.Tools))
	for _, t := range facts.Tools {
		listed[t.Name] = true
		names = append(names, t.Name)
	}
	for _, d := range facts.Dropped {
		listed[d.Name] = true
	}
	var notes []string
	unknown := 0
	for _, n := range allowed {
		if listed[n] {
			continue
		}
		unknown++
		if unknown > unknownCallToolsNamed {
			continue
		}
		fix := "fix or drop the name"
		if near, ok := didyoumean.Nearest(n, names); ok {
			fix = fmt.Sprintf("did you mean %q? fix or drop the name", jsonrpc.Clip(near, 60))
		}
		notes = append(notes, fmt.Sprintf("--call-tool (or conformance.call-tools) names %q, which the server does not list, so it allows no tool (%s)", jsonrpc.Clip(n, 60), fix))
	}
	if more := unknown - unknownCallToolsNamed; more > 0 {
		notes = append(notes, fmt.Sprintf("--call-tool (or conformance.call-tools) names %s the server does not list either", plural(more, "more tool", "more tools")))
	}
	return notes
}
