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
	title        string // for headings: "server/discover"
	checks       []*check.Check
	unobservable map[string]string // checklist id → why no check can observe it
	// beyondChecklist says why a family the harness adds (POISON, RESIL)
	// has no items in the spec checklist; empty for checklist families.
	beyondChecklist string
	// added are the checks of a checklist family that the checklist has
	// no item for (a rule it missed, found on a real server), with where
	// the rule is written.
	added map[string]string
}

// families lists every family in checklist order, then the families the
// harness adds beyond the checklist, in the order they report.
func families() []*family {
	return []*family{
		&rpcFamily, &metaFamily, &verFamily, &stateFamily, &errFamily, &discFamily,
		&resFamily, &cacheFamily, &pageFamily, &toolFamily, &callFamily, &schemaFamily,
		&rsrcFamily, &promptFamily, &compFamily, &mrtrFamily, &subFamily, &logFamily,
		&progFamily, &cancFamily, &remFamily, &otelFamily, &httpFamily, &hdrFamily,
		&stdioFamily, &authFamily, &taskFamily,
		&lintFamily, &poisonFamily, &resilFamily,
	}
}

// registry is what Run executes: every family and every check, in report
// order.
func registry() check.Registry {
	var r check.Registry
	for _, f := range families() {
		r.Families = append(r.Families, check.Family{ID: f.name, Title: f.title})
		r.Checks = append(r.Checks, f.checks...)
	}
	return r
}

// Registry returns every check in report order: the checklist's, then
// POISON and RESIL.
func Registry() []*check.Check { return registry().Checks }

// Families returns every family, with its title, in report order.
func Families() []check.Family { return registry().Families }

// FamilyTitle is the title of a family ("" for an unknown one), for
// reports written before results carried check.Result.FamilyTitle.
func FamilyTitle(family string) string { return registry().Title(family) }

// KnownIDs returns an error unless every one of ids is a check id
// ("POISON-3") or a family ("POISON") of the registry, so that a
// selection with a typo is refused instead of running nothing.
func KnownIDs(ids []string) error { return registry().Known(ids) }

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

var discFamily = family{name: "DISC", title: "server/discover", checks: []*check.Check{DISC1, DISC2, DISC3, DISC4, DISC5, DISC6, DISC7, DISC8, DISC9},
	added: map[string]string{"DISC-9": "ServerCapabilities (schema.ts) has no sampling, elicitation or roots: those are ClientCapabilities; a server declaring them was seen on a real server"}}
