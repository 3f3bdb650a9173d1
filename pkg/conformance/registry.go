// Package conformance is Layer 0: every server rule of MCP 2026-07-28 that a
// client can observe on an arbitrary server, as check values (package check)
// grouped by checklist family, one file per family: the id DISC-1 is the
// variable DISC1 in disc.go. Rules that cannot be observed without a fixture
// or an event the harness cannot cause are listed with the reason in the
// family's unobservable table instead.
package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// family is one checklist family: its checks and the ids it cannot observe.
type family struct {
	name         string
	checks       []*check.Check
	unobservable map[string]string // checklist id → why no check can observe it
}

// families lists every family in checklist order.
func families() []*family {
	return []*family{
		&rpcFamily, &metaFamily, &verFamily, &stateFamily, &errFamily, &discFamily,
		&resFamily, &cacheFamily, &pageFamily, &toolFamily, &callFamily, &schemaFamily,
		&rsrcFamily, &promptFamily, &compFamily, &mrtrFamily, &subFamily, &logFamily,
		&progFamily, &cancFamily, &remFamily, &otelFamily, &httpFamily, &hdrFamily,
		&stdioFamily, &authFamily, &taskFamily,
	}
}

// Registry returns every check in checklist order.
func Registry() []*check.Check {
	var out []*check.Check
	for _, f := range families() {
		out = append(out, f.checks...)
	}
	return out
}

// Unobservable returns the checklist ids no check implements, with the
// reason.
func Unobservable() map[string]string {
	out := map[string]string{}
	for _, f := range families() {
		for id, why := range f.unobservable {
			out[id] = why
		}
	}
	return out
}

var discFamily = family{name: "DISC", checks: []*check.Check{DISC1, DISC2, DISC3, DISC4, DISC5, DISC6, DISC7, DISC8}}
