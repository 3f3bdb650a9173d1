package golden

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/mcp-eval/mcp-eval-action/pkg/didyoumean"
)

// caseKeys are the keys of a case, in the order the docs present them.
var caseKeys = []string{"id", "prompt", "expect_tool", "expect_sequence", "expect_args", "arg_match", "kind", "rubric", "inputs", "tags",
	"faults"} // faults: Layer 2, read by caseFaults (faults.go)

// stepKeys are the keys of an expect_sequence entry written as a mapping.
var stepKeys = []string{"tool", "args"}

// idPattern keeps ids safe to print in a PR comment and to use as a file
// name, and short enough to read in a table.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// caseNodes are a case's value nodes by key, for the checks across keys.
type caseNodes map[string]*yaml.Node

// parseCase reads one case, reporting every problem it finds.
func (p *parser) parseCase(n *yaml.Node) Case {
	c := Case{Pos: pos(p.file, n), Kind: Hard}
	if n.Kind != yaml.MappingNode {
		p.fail(n, "a case must be a mapping, got "+describe(n), "write - id: …, prompt: …, expect_tool: …")
		return c
	}
	nodes := caseNodes{}
	keyNodes := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		key, _ := scalarText(k)
		if !contains(caseKeys, key) {
			p.fail(k, fmt.Sprintf("unknown key %q in a case", key), suggest(key, caseKeys)+"the keys of a case are "+strings.Join(caseKeys, ", "))
			continue
		}
		if _, dup := nodes[key]; dup {
			p.fail(k, fmt.Sprintf("%q appears twice in this case", key), "keep one")
			continue
		}
		nodes[key], keyNodes[key] = deref(v), k
	}
	c.ID = p.caseID(n, nodes)
	p.casePrompt(&c, n, nodes)
	p.caseExpect(&c, n, nodes, keyNodes)
	p.caseArgMatch(&c, nodes, keyNodes)
	if v := nodes["kind"]; v != nil {
		switch s, _ := scalarText(v); s {
		case Hard, Soft:
			c.Kind = s
		default:
			p.fail(v, fmt.Sprintf("kind is %s, want hard or soft", quoteNode(v)), "hard cases must pass every run, soft ones 4 of 5 (floors 1.0 and 0.8)")
		}
	}
	if v := nodes["rubric"]; v != nil {
		p.caseRubric(&c, v)
	}
	if v := nodes["inputs"]; v != nil {
		p.caseInputs(&c, v)
	}
	if v := nodes["tags"]; v != nil {
		p.caseTags(&c, v)
	}
	if v := nodes["faults"]; v != nil {
		p.caseFaults(&c, v) // Layer 2 (faults.go)
	}
	return c
}

func (p *parser) caseID(n *yaml.Node, nodes caseNodes) string {
	v := nodes["id"]
	if v == nil {
		p.fail(n, "case without an id", "add id: a short name such as weather-seattle; results and baselines are keyed on it")
		return ""
	}
	id, ok := scalarText(v)
	switch {
	case !ok:
		p.fail(v, "id must be a string, got "+describe(v), `quote it, e.g. id: "42", or use a name such as weather-seattle`)
	case len(id) > maxIDLen:
		p.fail(v, fmt.Sprintf("id is %d characters, at most %d", len(id), maxIDLen), "use a short name")
	case !idPattern.MatchString(id):
		p.fail(v, fmt.Sprintf("id %s has characters other than letters, digits, '.', '_' and '-'", quoteNode(v)), "ids appear in reports and PR comments; e.g. weather-seattle")
	}
	return id
}

func (p *parser) casePrompt(c *Case, n *yaml.Node, nodes caseNodes) {
	v := nodes["prompt"]
	if v == nil {
		p.fail(n, fmt.Sprintf("case %q has no prompt", c.ID), "add prompt: the user message the model receives")
		return
	}
	s, ok := scalarText(v)
	switch {
	case !ok:
		p.fail(v, "prompt must be a string, got "+describe(v), "quote it, or use a block scalar (prompt: |) for several lines")
	case strings.TrimSpace(s) == "":
		p.fail(v, "prompt is empty", "write the user message the model receives")
	case len(s) > MaxPromptBytes:
		p.fail(v, fmt.Sprintf("prompt is %d bytes, at most %d", len(s), MaxPromptBytes), "shorten it")
	}
	c.Prompt = s
}

// caseExpect reads expect_tool, expect_sequence and expect_args.
func (p *parser) caseExpect(c *Case, n *yaml.Node, nodes caseNodes, keys map[string]*yaml.Node) {
	tool, seq, args := nodes["expect_tool"], nodes["expect_sequence"], nodes["expect_args"]
	switch {
	case tool == nil && seq == nil:
		p.fail(n, fmt.Sprintf("case %q expects nothing", c.ID), "add expect_tool: NAME, expect_tool: null (no tool may be called) or expect_sequence: [A, B]")
		return
	case tool != nil && seq != nil:
		p.fail(keys["expect_sequence"], "expect_tool and expect_sequence are exclusive", "use expect_tool for one call, expect_sequence for a chain")
		return
	case seq != nil:
		if args != nil {
			p.fail(keys["expect_args"], "expect_args does not apply to expect_sequence", "give each step its own: expect_sequence: [{tool: NAME, args: {…}}, …]")
		}
		p.sequence(c, seq)
		return
	}
	if isNull(tool) {
		if tool.Value == "" {
			// `expect_tool:` with nothing after it is null to YAML, but
			// far more often an unfinished line than a negative case.
			p.fail(tool, "expect_tool has no value", "write a tool name, or null for a negative case (no tool may be called)")
			return
		}
		c.Negative = true
		if args != nil {
			p.fail(keys["expect_args"], "expect_args on a negative case (expect_tool: null)", "remove expect_args, or name the tool the prompt should select")
		}
		return
	}
	c.ExpectTool = p.toolName(tool, "expect_tool")
	if args != nil {
		c.ExpectArgs = p.args(args, "expect_args")
	}
}

// toolName reads a tool name: non-empty, bounded, no spaces or control
// characters (MCP names are ^[A-Za-z0-9_.-]{1,128}$; a server that bends
// that rule still gets its names matched, but never a blank one).
func (p *parser) toolName(v *yaml.Node, what string) string {
	s, ok := scalarText(v)
	switch {
	case !ok:
		p.fail(v, fmt.Sprintf("%s must be a tool name, got %s", what, describe(v)), "write the tool's name as the server lists it, quoted if YAML would read it as a number or boolean")
	case s == "":
		p.fail(v, what+" is empty", "write the tool's name as the server lists it")
	case len(s) > maxToolLen:
		p.fail(v, fmt.Sprintf("%s is %d characters, MCP tool names have at most %d", what, len(s), maxToolLen), "")
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		p.fail(v, fmt.Sprintf("%s %s contains a space or control character", what, quoteNode(v)), "write the tool's name as the server lists it")
	default:
		return s
	}
	return ""
}

// args reads an expected-arguments mapping.
func (p *parser) args(v *yaml.Node, what string) map[string]any {
	if v.Kind != yaml.MappingNode {
		p.fail(v, fmt.Sprintf("%s must be a mapping of argument names to values, got %s", what, describe(v)), "e.g. "+what+": {location: Seattle}")
		return nil
	}
	val, ok := p.conv.convert(v, 0)
	if !ok {
		return nil
	}
	return val.(map[string]any)
}

// sequence reads expect_sequence: a list of tool names, or of mappings
// {tool, args}.
func (p *parser) sequence(c *Case, v *yaml.Node) {
	if v.Kind != yaml.SequenceNode {
		p.fail(v, "expect_sequence must be a list of tool names, got "+describe(v), "e.g. expect_sequence: [search_invoices, send_email]")
		return
	}
	if len(v.Content) < 2 {
		p.fail(v, fmt.Sprintf("expect_sequence has %d step, a chain needs at least 2", len(v.Content)), "use expect_tool for a single call")
		return
	}
	hasArgs := false
	for _, e := range v.Content {
		e = deref(e)
		var tool string
		var args map[string]any
		if e.Kind == yaml.MappingNode {
			var toolNode *yaml.Node
			for i := 0; i+1 < len(e.Content); i += 2 {
				k, val := deref(e.Content[i]), deref(e.Content[i+1])
				switch key, _ := scalarText(k); key {
				case "tool":
					toolNode = val
				case "args":
					args = p.args(val, "args")
					hasArgs = true
				default:
					p.fail(k, fmt.Sprintf("unknown key %q in an expect_sequence step", key), suggest(key, stepKeys)+"a step is a tool name, or a mapping with tool and args")
				}
			}
			if toolNode == nil {
				p.fail(e, "expect_sequence step without a tool", "write - tool: NAME (and optionally args: {…})")
				continue
			}
			tool = p.toolName(toolNode, "tool")
		} else {
			tool = p.toolName(e, "expect_sequence step")
		}
		c.ExpectSequence = append(c.ExpectSequence, tool)
		c.ExpectSequenceArgs = append(c.ExpectSequenceArgs, args)
	}
	if !hasArgs {
		c.ExpectSequenceArgs = nil
	}
}

// caseArgMatch reads arg_match and checks each matcher against the
// expected value it will compare.
func (p *parser) caseArgMatch(c *Case, nodes caseNodes, keys map[string]*yaml.Node) {
	v := nodes["arg_match"]
	if v == nil {
		return
	}
	if c.Negative {
		p.fail(keys["arg_match"], "arg_match on a negative case (expect_tool: null)", "remove arg_match: no call is expected")
		return
	}
	if v.Kind != yaml.MappingNode {
		p.fail(v, "arg_match must be a mapping of argument names to matchers, got "+describe(v), "e.g. arg_match: {location: semantic}")
		return
	}
	c.ArgMatch = map[string]Matcher{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, mv := deref(v.Content[i]), deref(v.Content[i+1])
		name, _ := scalarText(k)
		if _, dup := c.ArgMatch[name]; dup {
			p.fail(k, fmt.Sprintf("%q appears twice in arg_match", name), "keep one")
			continue
		}
		text, ok := scalarText(mv)
		if !ok || mv.ShortTag() != "!!str" {
			p.fail(mv, fmt.Sprintf("arg_match for %q must be a string, got %s", name, describe(mv)), "one of "+MatcherSyntax)
			continue
		}
		m, err := ParseMatcher(text)
		if err != nil {
			p.fail(mv, fmt.Sprintf("arg_match for %q: %v", name, err), "one of "+MatcherSyntax)
			continue
		}
		c.ArgMatch[name] = m
		expected, found := c.expectedValues(name)
		if !found {
			p.fail(k, fmt.Sprintf("arg_match names %q, which no expected arguments list", name), "add it to expect_args (or a step's args); for a regex, any value the regex accepts")
			continue
		}
		for _, e := range expected {
			if msg, hint := checkExpected(m, e); msg != "" {
				p.fail(mv, fmt.Sprintf("arg_match for %q: %s", name, msg), hint)
				break
			}
		}
	}
}

// expectedValues returns every expected value of argument name.
func (c *Case) expectedValues(name string) ([]any, bool) {
	var out []any
	if v, ok := c.ExpectArgs[name]; ok {
		out = append(out, v)
	}
	for _, a := range c.ExpectSequenceArgs {
		if v, ok := a[name]; ok {
			out = append(out, v)
		}
	}
	return out, len(out) > 0
}

// checkExpected says what is wrong when a matcher cannot apply to the
// expected value it will be compared with.
func checkExpected(m Matcher, expected any) (msg, hint string) {
	switch m.Kind {
	case MatchRegex:
		s, ok := expected.(string)
		if !ok {
			return fmt.Sprintf("a regex compares text, the expected value is %s", jsonType(expected)), "quote the expected value, or use exact"
		}
		if !regexp.MustCompile(m.Pattern).MatchString(s) {
			return fmt.Sprintf("the expected value %q does not match its own regex %q", clip(s), m.Pattern), "fix the regex or the example value in expect_args"
		}
	case MatchTolerance:
		switch expected.(type) {
		case int64, float64:
		default:
			return fmt.Sprintf("a tolerance compares numbers, the expected value is %s", jsonType(expected)), "write the expected value as a number (unquoted)"
		}
	case MatchSemantic:
		switch expected.(type) {
		case nil, bool, int64, float64:
			return fmt.Sprintf("semantic compares text, the expected value is %s", jsonType(expected)), "use exact, or tolerance:N for numbers"
		}
	}
	return "", ""
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	}
	return "a mapping"
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// caseRubric reads rubric: inline text, or {file: PATH} relative to the
// golden file.
func (p *parser) caseRubric(c *Case, v *yaml.Node) {
	if v.Kind == yaml.MappingNode {
		var file *yaml.Node
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := deref(v.Content[i])
			if key, _ := scalarText(k); key == "file" {
				file = deref(v.Content[i+1])
			} else {
				p.fail(k, fmt.Sprintf("unknown key %q in rubric", key), "write rubric: {file: rubrics/NAME.md}, or the rubric text itself")
			}
		}
		if file == nil {
			p.fail(v, "rubric mapping without file", "write rubric: {file: rubrics/NAME.md}")
			return
		}
		rel, ok := scalarText(file)
		if !ok || rel == "" {
			p.fail(file, "rubric file must be a path, got "+describe(file), "e.g. rubric: {file: rubrics/send-email.md}")
			return
		}
		text, msg, hint := readRubric(p.file, rel)
		if msg != "" {
			p.fail(file, msg, hint)
			return
		}
		c.Rubric, c.RubricFile = text, rel
		return
	}
	s, ok := scalarText(v)
	switch {
	case !ok:
		p.fail(v, "rubric must be text or {file: PATH}, got "+describe(v), "use a block scalar (rubric: |) for several lines")
	case strings.TrimSpace(s) == "":
		p.fail(v, "rubric is empty", "say what a completed task looks like, or remove the key")
	case len(s) > MaxRubricBytes:
		p.fail(v, fmt.Sprintf("rubric is %d bytes, at most %d", len(s), MaxRubricBytes), "move it to a file and shorten it")
	default:
		c.Rubric = s
	}
}

// caseInputs reads inputs: MRTR input request key → the response value
// (for an elicitation, an ElicitResult such as {action: accept, content:
// {confirm: true}}).
func (p *parser) caseInputs(c *Case, v *yaml.Node) {
	if v.Kind != yaml.MappingNode {
		p.fail(v, "inputs must be a mapping of input request keys to responses, got "+describe(v), "e.g. inputs: {confirm: {action: accept, content: {confirm: true}}}")
		return
	}
	val, ok := p.conv.convert(v, 0)
	if !ok {
		return
	}
	m := val.(map[string]any)
	c.Inputs = make(map[string]json.RawMessage, len(m))
	for _, k := range sortedKeys(m) {
		if k == "" {
			p.fail(v, "inputs has an empty key", "use the key of the server's input request, e.g. confirm")
			continue
		}
		b, err := json.Marshal(m[k])
		if err != nil { // cannot happen for converted values; keep the message useful anyway
			p.fail(v, fmt.Sprintf("inputs.%s is not JSON: %v", k, err), "")
			continue
		}
		c.Inputs[k] = b
	}
}

func (p *parser) caseTags(c *Case, v *yaml.Node) {
	if v.Kind != yaml.SequenceNode {
		p.fail(v, "tags must be a list, got "+describe(v), "e.g. tags: [weather, smoke]")
		return
	}
	for _, e := range v.Content {
		s, ok := scalarText(e)
		if !ok || strings.TrimSpace(s) == "" || len(s) > 64 {
			p.fail(deref(e), "a tag must be a non-empty string of at most 64 characters, got "+describeValue(e), `quote numbers: tags: [weather, "2026"]`)
			continue
		}
		c.Tags = append(c.Tags, s)
	}
}

// describeValue is a scalar's text, quoted, with its type when it is not
// a string: "2026" (a number).
func describeValue(n *yaml.Node) string {
	q := quoteNode(n)
	if _, ok := scalarText(n); !ok {
		q += " (" + describe(n) + ")"
	}
	return q
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// suggest returns "did you mean X? " for a near miss among known, else "".
func suggest(got string, known []string) string {
	best, ok := didyoumean.Nearest(got, known)
	if !ok {
		return ""
	}
	return "did you mean " + best + "? "
}
