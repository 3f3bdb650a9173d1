package render

import (
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// A server that speaks legacy MCP only ran no 2026-07-28 check: its report
// is neither a pass nor, unless the gate made it one, a failure. Every view
// gives it this mark instead of the gate's, so that "✅ PASS" never heads a
// report whose Layer 0 verdict is legacy.
const (
	legacyIcon = "🕰️" // Markdown and the HTML badge
	legacyWord = "LEGACY"
)

// legacy is the Layer 0 section of a report whose server speaks legacy
// MCP only, nil otherwise.
func legacy(rep *report.Report) *report.Conformance {
	if c := rep.Conformance; c != nil && c.Verdict == report.ConformanceLegacy {
		return c
	}
	return nil
}

// legacySpeaks is what the server speaks, for "speaks 2025-11-25 only".
func legacySpeaks(c *report.Conformance) string {
	switch {
	case c.Legacy != nil && c.Legacy.Speaks != "":
		return c.Legacy.Speaks
	case c.ProtocolVersion != "":
		return c.ProtocolVersion
	}
	return "legacy MCP"
}

// legacyGate is what the gate made of a legacy server, for the headline,
// in fixed words (the verdict read from a report is not echoed): failed,
// or let through because staying legacy is no regression.
func legacyGate(g *report.Gate) string {
	switch {
	case g == nil:
		return "not gated"
	case g.Verdict == report.GateFail:
		return "the gate failed it"
	case g.Verdict == report.GateInconclusive:
		return "the gate is inconclusive"
	case g.Verdict == report.GateError:
		return "runs the gate needs could not be judged"
	}
	return "the gate passes it as no regression"
}
