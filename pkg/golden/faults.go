package golden

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Layer 2 fault names, as a case lists them under faults: (added for
// pkg/resilience, which documents what each one shows the model in
// docs/resilience.md).
const (
	FaultHTTP500       = "http_500"
	FaultTimeout       = "timeout"
	FaultMalformedJSON = "malformed_json"
	FaultExpiredToken  = "expired_token"
	FaultOversized     = "oversized"
)

// FaultNames lists the fault names in the documented order; a new slice
// on every call.
func FaultNames() []string {
	return []string{FaultHTTP500, FaultTimeout, FaultMalformedJSON, FaultExpiredToken, FaultOversized}
}

// caseFaults reads faults: a list of distinct known fault names, on a
// case that expects a call (a fault replaces the result of the case's
// first expected tool; a negative case calls none).
func (p *parser) caseFaults(c *Case, v *yaml.Node) {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		p.fail(v, "faults must be a non-empty list of fault names, got "+describe(v), "e.g. faults: [http_500, timeout]; the names are "+strings.Join(FaultNames(), ", "))
		return
	}
	if c.Negative {
		p.fail(v, "faults on a negative case (expect_tool: null)", "a fault replaces the result of the case's first expected tool: list faults on a case that expects a call")
		return
	}
	known := FaultNames()
	for _, e := range v.Content {
		s, ok := scalarText(e)
		switch {
		case !ok || !contains(known, s):
			p.fail(deref(e), fmt.Sprintf("unknown fault %s", describeValue(e)), suggest(s, known)+"the faults are "+strings.Join(known, ", "))
		case contains(c.Faults, s):
			p.fail(deref(e), fmt.Sprintf("fault %q is listed twice", s), "keep one")
		default:
			c.Faults = append(c.Faults, s)
		}
	}
}
