package golden

import "fmt"

// Kinds of case, as written in `kind:`.
const (
	Hard = "hard" // must pass every run (floor 1.0)
	Soft = "soft" // may miss now and then (floor 0.8)
)

// Step is one call a case expects, in order: the tool, the arguments it
// must receive (a subset: other arguments are not checked) and how each
// is compared.
type Step struct {
	Tool     string
	Args     map[string]any
	ArgMatch map[string]Matcher
}

// Steps returns the calls the case expects, in order: none for a negative
// case, one for expect_tool, one per entry of expect_sequence. A step's
// ArgMatch holds the case's arg_match entries for the arguments that step
// expects; an argument without one is compared exactly.
func (c *Case) Steps() []Step {
	switch {
	case c.Negative:
		return nil
	case len(c.ExpectSequence) > 0:
		steps := make([]Step, len(c.ExpectSequence))
		for i, tool := range c.ExpectSequence {
			var args map[string]any
			if i < len(c.ExpectSequenceArgs) {
				args = c.ExpectSequenceArgs[i]
			}
			steps[i] = Step{Tool: tool, Args: args, ArgMatch: c.matchersFor(args)}
		}
		return steps
	case c.ExpectTool != "":
		return []Step{{Tool: c.ExpectTool, Args: c.ExpectArgs, ArgMatch: c.matchersFor(c.ExpectArgs)}}
	}
	return nil
}

// matchersFor picks the case's matchers of the arguments in args.
func (c *Case) matchersFor(args map[string]any) map[string]Matcher {
	var out map[string]Matcher
	for name, m := range c.ArgMatch {
		if _, ok := args[name]; ok {
			if out == nil {
				out = map[string]Matcher{}
			}
			out[name] = m
		}
	}
	return out
}

// Chain reports whether the case expects a sequence of calls.
func (c *Case) Chain() bool { return len(c.ExpectSequence) > 0 }

// Definition is the case without its position, for hashing: moving a case
// within its file, or to another file, does not change what it asks.
func (c *Case) Definition() Case {
	d := *c
	d.Pos = Position{}
	return d
}

// String is file:line:column, leaving out what is unknown.
func (p Position) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Column == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
}
