// Package poison scans a server's tool list for tool poisoning: text in
// tool names, descriptions and schemas that is aimed at the model rather
// than at describing the tool. The model reads every one of those strings
// as trusted context the moment the tools are listed, before any tool is
// called, so a poisoned description works without the user doing anything
// (MCPSecBench "tool poisoning", "tool shadowing", "rug pull"; OWASP MCP
// Top 10 MCP03 Tool Poisoning).
//
// The scan is deterministic and costs no model call: it runs with Layer 0
// on every push. Scan takes the tools of two tools/list calls; the Layer 0
// checks POISON-1 to POISON-8 (package conformance, level SHOULD: a finding
// warns, it never fails conformance) report its findings, one rule each.
//
// Every rule looks for something a legitimate description has no reason
// to contain; each rule's exemptions (emoji sequences, joiners inside
// scripts that need them, documentation links) are in its file.
package poison

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Rule names one kind of poisoning. Its Layer 0 check id is in Rules.
type Rule string

const (
	// RuleTagChars: Unicode tag characters (U+E0000–U+E007F), which render
	// as nothing and spell ASCII a model can read ("ASCII smuggling").
	RuleTagChars Rule = "unicode-tags"
	// RuleInvisible: zero-width characters, other invisible format
	// characters, variation selectors used as a code, control characters.
	RuleInvisible Rule = "invisible-chars"
	// RuleBidi: bidirectional embedding, override and isolate controls,
	// which make text read differently from how it displays.
	RuleBidi Rule = "bidi-controls"
	// RuleOverride: "ignore previous instructions"-style text and fake
	// role or system markers.
	RuleOverride Rule = "instruction-override"
	// RuleDirective: instructions aimed at the model that a tool has no
	// reason to give: keep something from the user, read or send secrets,
	// change how another tool is used.
	RuleDirective Rule = "model-directive"
	// RuleExfilURL: URLs built to carry data out (placeholders, collector
	// hosts, raw IP addresses, image links with a query, "send … to URL").
	RuleExfilURL Rule = "exfiltration-url"
	// RuleDrift: a tool that changed between two tools/list calls of one
	// run (a rug pull shows one description for review and another later).
	RuleDrift Rule = "description-drift"
	// RuleConfusableName: a name with non-ASCII letters, or two names
	// that are the same once case and separators are ignored (shadowing).
	RuleConfusableName Rule = "confusable-name"
)

// RuleInfo names a rule's Layer 0 check; the check itself (its doc and
// fix) is in package conformance.
type RuleInfo struct {
	Rule Rule
	// ID is the Layer 0 check id (POISON-n).
	ID string
}

// Rules lists every rule in check-id order. It returns a new slice each
// time: callers may keep or change it.
func Rules() []RuleInfo {
	return []RuleInfo{
		{RuleTagChars, "POISON-1"},
		{RuleInvisible, "POISON-2"},
		{RuleBidi, "POISON-3"},
		{RuleOverride, "POISON-4"},
		{RuleDirective, "POISON-5"},
		{RuleExfilURL, "POISON-6"},
		{RuleDrift, "POISON-7"},
		{RuleConfusableName, "POISON-8"},
	}
}

// Finding is one piece of poisoning: which rule, where, and the text that
// shows it (made visible and bounded: it came from the server).
type Finding struct {
	Rule Rule   `json:"rule"`
	Tool string `json:"tool"`
	// Where is the field: name, title, description, or a JSON pointer
	// into the tool object (/inputSchema/properties/q/description).
	Where string `json:"where"`
	// Excerpt is the text around the match, hidden characters shown as
	// <U+XXXX>.
	Excerpt string `json:"excerpt"`
	// Detail says what matched, e.g. `tag characters spelling "ignore…"`.
	Detail string `json:"detail"`
}

func (f Finding) String() string {
	return fmt.Sprintf("%s: tool %s %s: %s: %s", f.Rule, f.Tool, f.Where, f.Detail, f.Excerpt)
}

// Bounds: the tool list is untrusted input of any size.
const (
	maxTools       = 2000     // tools scanned per listing
	maxStrings     = 4096     // strings scanned per tool
	maxDepth       = 32       // JSON nesting followed
	maxScanBytes   = 64 << 10 // bytes of one string scanned
	maxFindings    = 500      // findings returned
	maxExcerpt     = 160      // bytes of one excerpt
	maxNameInText  = 128      // bytes of a tool name in a finding
	maxDetailBytes = 300
)

// Scan looks for poisoning in tools, the result of one tools/list call.
// toolsAgain is a second tools/list call of the same run (nil when there
// is none): every difference between the two is a drift finding. Findings
// are sorted by tool, field and rule, one per rule and field, at most 500.
func Scan(tools, toolsAgain []mcpclient.Tool) []Finding {
	return ScanListing(tools).Findings(toolsAgain)
}

// Listing is what the scan found in one tools/list call, before a second
// listing is compared with it: a run scans its first listing as soon as it
// has it (on a server of 1,000 tools that is most of the scan's fifth of a
// second), and compares the second when it comes.
type Listing struct {
	tools []mcpclient.Tool
	fs    findings
}

// ScanListing scans tools, the result of one tools/list call.
func ScanListing(tools []mcpclient.Tool) *Listing {
	l := &Listing{tools: tools}
	if len(l.tools) > maxTools {
		l.tools = l.tools[:maxTools]
	}
	names := map[string]bool{}
	for _, t := range l.tools {
		names[strings.ToLower(t.Name)] = true
	}
	for _, t := range l.tools {
		scanTool(&l.fs, t, names)
	}
	confusableNames(&l.fs, l.tools)
	return l
}

// Findings are the listing's findings and, when toolsAgain is not nil,
// every difference from that second listing, as Scan returns them. l is
// left as it was: Findings may be called again.
func (l *Listing) Findings(toolsAgain []mcpclient.Tool) []Finding {
	fs := findings{list: slices.Clone(l.fs.list), seen: maps.Clone(l.fs.seen)}
	if toolsAgain != nil {
		if len(toolsAgain) > maxTools {
			toolsAgain = toolsAgain[:maxTools]
		}
		drift(&fs, l.tools, toolsAgain)
	}
	return fs.sorted()
}

// findings collects findings, one per (rule, tool, where).
type findings struct {
	list []Finding
	seen map[[3]string]bool
}

func (fs *findings) add(f Finding) {
	if fs.seen == nil {
		fs.seen = map[[3]string]bool{}
	}
	k := [3]string{string(f.Rule), f.Tool, f.Where}
	if fs.seen[k] {
		return
	}
	fs.seen[k] = true
	f.Tool = visible(f.Tool, maxNameInText)
	f.Where = visible(f.Where, maxNameInText)
	f.Detail = visible(f.Detail, maxDetailBytes)
	fs.list = append(fs.list, f)
}

func (fs *findings) sorted() []Finding {
	out := fs.list
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		if a.Where != b.Where {
			return a.Where < b.Where
		}
		return a.Rule < b.Rule
	})
	if len(out) > maxFindings {
		n := len(out) - maxFindings
		out = out[:maxFindings]
		out[maxFindings-1].Detail += fmt.Sprintf(" (and %d more findings not listed)", n)
	}
	if out == nil {
		out = []Finding{}
	}
	return out
}

// scanTool runs the text and character rules over every string of one
// tool: its name, title, description, annotations, schemas and _meta, as
// the server sent them.
func scanTool(fs *findings, t mcpclient.Tool, names map[string]bool) {
	name := t.Name
	for _, s := range toolStrings(t) {
		text := s.text
		if len(text) > maxScanBytes {
			text = text[:maxScanBytes]
		}
		chars(fs, name, s.where, text)
		hidden := decodeTags(text)
		prose(fs, name, s.where, text, hidden, names)
	}
}

// Summary is one line per rule that found something, for a terminal or a
// gate note: "POISON-4 instruction-override: 2 findings (get_weather
// description, …)".
func Summary(fs []Finding) []string {
	byRule := map[Rule][]Finding{}
	for _, f := range fs {
		byRule[f.Rule] = append(byRule[f.Rule], f)
	}
	var out []string
	for _, ri := range Rules() {
		list := byRule[ri.Rule]
		if len(list) == 0 {
			continue
		}
		var where []string
		for i, f := range list {
			if i == 3 {
				where = append(where, "…")
				break
			}
			where = append(where, f.Tool+" "+f.Where)
		}
		out = append(out, fmt.Sprintf("%s %s: %d finding(s) (%s)", ri.ID, ri.Rule, len(list), strings.Join(where, ", ")))
	}
	return out
}
