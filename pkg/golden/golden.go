// Package golden reads golden sets: the cases Layer 1 runs through real
// models (a prompt, the tool or sequence expected, the arguments, how to
// match them). This file is the contract; the loader, its JSON Schema and
// the hygiene warnings live beside it.
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
	// Pos is where the case starts in the file.
	Pos Position
}

// Matcher is how one argument is compared.
type Matcher struct {
	Kind      string  // "exact", "semantic", "regex", "tolerance"
	Pattern   string  // for regex
	Tolerance float64 // for tolerance (absolute)
}

// Position is file:line:column, 1-based.
type Position struct {
	File   string
	Line   int
	Column int
}
