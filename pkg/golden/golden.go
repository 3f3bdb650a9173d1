// Package golden reads golden sets: the cases Layer 1 runs through real
// models (a prompt, the tool or sequence expected, the arguments, how to
// match them). This file is the contract; the loader, its JSON Schema and
// the hygiene warnings live beside it.
//
// Quick start:
//
//	set, err := golden.Load("golden/tasks.yaml") // a file, or a directory of them
//	if err != nil {
//		return err // golden.Errors: every problem, as file:line:column: what (how to fix)
//	}
//	for _, w := range golden.Hygiene(set, serverToolNames) {
//		fmt.Fprintln(stderr, w) // advice, never a failure
//	}
//	for _, c := range set.Cases {
//		steps := c.Steps() // the expected calls in order; none for a negative case
//	}
//
// The format is in docs/golden-format.md; golden.schema.json (Schema)
// gives editors completion.
package golden

import "encoding/json"

// Set is a loaded golden set.
type Set struct {
	// Path is the file as given; Cases keep their own positions.
	Path  string
	Cases []Case
}

// Case is one golden case.
type Case struct {
	ID     string
	Prompt string
	// ExpectTool is the one tool expected; Negative is true for
	// `expect_tool: null` (no tool may be called). ExpectSequence is a
	// chain whose order is checked.
	ExpectTool     string
	Negative       bool
	ExpectSequence []string
	// ExpectArgs are the expected arguments of ExpectTool (or, for a
	// chain, per step: ExpectSequenceArgs[i]); ArgMatch says how each is
	// compared.
	ExpectArgs         map[string]any
	ExpectSequenceArgs []map[string]any
	ArgMatch           map[string]Matcher
	Kind               string // "hard" (default) or "soft"
	// Rubric is the judge's rubric text (inline, or read from RubricFile).
	Rubric     string
	RubricFile string
	// Inputs answer MRTR input requests by key (inputResponses values).
	Inputs map[string]json.RawMessage
	Tags   []string
	// Faults are the Layer 2 faults (pkg/resilience) to inject into the
	// case's first expected tool, one run set per fault: http_500,
	// timeout, malformed_json, expired_token, oversized (faults.go).
	// Added for Layer 2: Layer 1 ignores it, so it is left out of the
	// case's JSON (json:"-") and of the Layer 1 hash and cache keys.
	Faults []string `json:"-"`
	// Pos is where the case starts in the file.
	Pos Position
}

// Matcher is how one argument is compared.
type Matcher struct {
	Kind      string  // "exact", "semantic", "regex", "tolerance"
	Pattern   string  // for regex
	Tolerance float64 // for tolerance (absolute)
	// Relative makes Tolerance a fraction of the expected value
	// ("tolerance:2%" is Tolerance 0.02, Relative true).
	Relative bool
}

// Position is file:line:column, 1-based.
type Position struct {
	File   string
	Line   int
	Column int
}
