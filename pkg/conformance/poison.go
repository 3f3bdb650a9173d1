package conformance

import (
	"fmt"
	"slices"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/poison"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// The POISON family reports the tool-poisoning scan (package poison): text
// in the tool list aimed at the model rather than at describing the tool.
// The spec tells clients to treat tool metadata from untrusted servers as
// untrusted but sets no server rule, so the checks are SHOULD: a finding
// warns and never fails conformance, since the rules read intent from text.
var poisonFamily = family{name: "POISON", title: "tool poisoning",
	checks:          []*check.Check{POISON1, POISON2, POISON3, POISON4, POISON5, POISON6, POISON7, POISON8},
	beyondChecklist: "the spec sets no server rule on tool text; the scan reads the untrusted-metadata warning of server/tools.mdx as a client would"}

// poisonSpec is where the spec tells clients that tool metadata is
// untrusted.
const poisonSpec = "server/tools.mdx §Security Considerations; schema ToolAnnotations (\"untrusted servers\")"

// The POISON checks are Exclusive: the drift rule compares two listings,
// and a check in flight that makes the server change its list would read as
// a rug pull. Only the first of them to run makes the scan; the others wait
// for it and read its findings.

var POISON1 = &check.Check{ID: "POISON-1", Level: check.Should, Transports: check.Both, Spec: poisonSpec, Exclusive: check.Both,
	Doc: "tool names, descriptions and schemas carry no Unicode tag characters (hidden ASCII)",
	Fix: "remove the U+E0000–U+E007F characters; they spell text only a model reads",
	Run: poisonRule(poison.RuleTagChars)}

var POISON2 = &check.Check{ID: "POISON-2", Level: check.Should, Transports: check.Both, Spec: poisonSpec, Exclusive: check.Both,
	Doc: "tool text carries no zero-width, invisible format or control characters",
	Fix: "remove the invisible characters shown as <U+…> in the evidence",
	Run: poisonRule(poison.RuleInvisible)}

var POISON3 = &check.Check{ID: "POISON-3", Level: check.Should, Transports: check.Both, Spec: poisonSpec, Exclusive: check.Both,
	Doc: "tool text carries no bidirectional override, embedding or isolate controls",
	Fix: "remove the U+202A–U+202E and U+2066–U+2069 characters",
	Run: poisonRule(poison.RuleBidi)}

var POISON4 = &check.Check{ID: "POISON-4", Level: check.Should, Transports: check.Both, Spec: poisonSpec, Exclusive: check.Both,
	Doc: "tool text does not tell the model to ignore its instructions or pose as a system message",
	Fix: "describe what the tool does; never address the model's instructions",
	Run: poisonRule(poison.RuleOverride)}

var POISON5 = &check.Check{ID: "POISON-5", Level: check.Should, Transports: check.Both, Spec: poisonSpec, Exclusive: check.Both,
	Doc: "tool text does not direct the model to hide things from the user, handle secrets or change other tools",
	Fix: "describe the tool's own behaviour and inputs only",
	Run: poisonRule(poison.RuleDirective)}

var POISON6 = &check.Check{ID: "POISON-6", Level: check.Should, Transports: check.Both, Spec: poisonSpec, Exclusive: check.Both,
	Doc: "tool text carries no URL built to send data out",
	Fix: "remove the URL, or link plain documentation without placeholders or query data",
	Run: poisonRule(poison.RuleExfilURL)}

var POISON7 = &check.Check{ID: "POISON-7", Level: check.Should, Transports: check.Both, Spec: poisonSpec, Exclusive: check.Both,
	Doc: "two tools/list calls in one run describe every tool the same way",
	Fix: "serve one tool list: a description that changes after review is a rug pull",
	Run: poisonRule(poison.RuleDrift)}

var POISON8 = &check.Check{ID: "POISON-8", Level: check.Should, Transports: check.Both, Spec: poisonSpec, Exclusive: check.Both,
	Doc: "tool names are ASCII and distinct once case and separators are ignored",
	Fix: "rename the tool: look-alike names let one tool shadow another",
	Run: poisonRule(poison.RuleConfusableName)}

// poisonScan is one run's scan, shared by the eight checks through the
// Env's Memo.
type poisonScan struct {
	byRule map[poison.Rule][]poison.Finding
	// secondListing says whether the second tools/list call answered;
	// without it there is nothing to compare and the drift rule skips.
	secondListing bool
	againErr      error // why the second listing failed
}

type poisonScanKey struct{}

// poisonFirstKey holds, in the run's Memo, the scan of the listing the
// facts hold (poison.Listing). Run begins it as soon as it has the facts,
// when a POISON check is selected: the checks run alone at the end of the
// run, and on a server of 1,000 tools the scan was most of the 0.2 s they
// took there.
type poisonFirstKey struct{}

// poisonFirst is the scan of the facts' listing, made once per run: nil
// when the scan Run began panicked (beside).
func poisonFirst(m *check.Memo, f *check.Facts) *poison.Listing {
	l, _ := m.Do(poisonFirstKey{}, func() any { return poisonScanFirst(f) }).(*poison.Listing)
	return l
}

// poisonScanFirst computes poisonFirstKey's entry.
func poisonScanFirst(f *check.Facts) any { return poison.ScanListing(f.Tools) }

// poisonWanted says whether a POISON check is among selected.
func poisonWanted(selected []*check.Check) bool {
	return slices.ContainsFunc(selected, func(c *check.Check) bool { return c.Family() == poisonFamily.name })
}

// scanPoison scans the tool list once per run: the listing the facts hold
// (poisonFirst) and one more tools/list for the drift rule.
func scanPoison(p *check.Pass) *poisonScan {
	v := p.Env.Memo.Do(poisonScanKey{}, func() any {
		first := poisonFirst(p.Env.Memo, p.Env.Facts)
		if first == nil {
			// The scan Run began panicked: made again here, where the
			// check's run reports the panic as any check's.
			first = poison.ScanListing(p.Env.Facts.Tools)
		}
		// The second listing is a tools/list of its own: repetition 0's
		// shared walk is the facts' listing itself, and comparing a list
		// with itself would hide a description that moved.
		var fs []poison.Finding
		again, err := p.Env.Client.ListTools(p.Ctx)
		if err == nil {
			fs = first.Findings(poisonAgain(again.Tools))
		} else {
			// The second listing failed; what the first showed is still
			// reported, and the drift rule is skipped.
			fs = first.Findings(nil)
		}
		s := &poisonScan{byRule: map[poison.Rule][]poison.Finding{}, secondListing: err == nil, againErr: err}
		for _, f := range fs {
			s.byRule[f.Rule] = append(s.byRule[f.Rule], f)
		}
		return s
	})
	return v.(*poisonScan)
}

// poisonAgain is a second listing for poison.Scan: never nil, so an empty
// answer is compared (every tool gone) rather than taken for no listing.
func poisonAgain(tools []mcpclient.Tool) []mcpclient.Tool {
	if tools == nil {
		return []mcpclient.Tool{}
	}
	return tools
}

// poisonRule reports one rule's findings: the first as the headline, the
// next ten as details, the first five excerpts as evidence.
func poisonRule(rule poison.Rule) func(p *check.Pass) error {
	return func(p *check.Pass) error {
		s := scanPoison(p)
		list := s.byRule[rule]
		switch {
		case rule == poison.RuleDrift && !s.secondListing && transport.GatewayRefused(s.againErr):
			return s.againErr // a proxy answered in the server's stead
		case rule == poison.RuleDrift && !s.secondListing:
			p.Skipf("only one tools/list call was made: nothing to compare")
			return nil
		case len(list) == 0:
			p.Passf(nil, "nothing found")
			return nil
		}
		evidence := func(i int) *check.Evidence {
			if i >= 5 || list[i].Excerpt == "" {
				return nil
			}
			return &check.Evidence{Request: "tools/list", Response: list[i].Excerpt}
		}
		f := list[0]
		p.Failf(evidence(0), "%d finding(s); first: tool %s %s: %s", len(list), f.Tool, f.Where, f.Detail)
		for i := 1; i < len(list) && i <= 10; i++ {
			p.Failf(evidence(i), "%s", fmt.Sprintf("tool %s %s: %s", list[i].Tool, list[i].Where, list[i].Detail))
		}
		if len(list) > 11 {
			p.Failf(nil, "… and %d more", len(list)-11)
		}
		return nil
	}
}
