// Package draft writes a starter golden set from a server's own tools
// (`mcp-eval golden init`): per tool a positive case whose expect_args are
// valid against the tool's inputSchema, negatives (small talk, a question
// no tool answers, near misses between the most similar descriptions),
// and chains where one tool's output field feeds another's input by name.
// A model, when given, rewrites the prompts (Rewrite); the rest is
// deterministic, so the same tools give the same draft.
//
// Quick start:
//
//	d, err := draft.Build(tools.Tools, draft.Options{Source: "http://127.0.0.1:3000/mcp"})
//	_ = draft.Rewrite(ctx, model, d)       // optional: natural prompts
//	os.WriteFile("golden/tasks.yaml", d.YAML(), 0o644)
//
// Everything the draft holds is checked before it is written: every value
// against its tool's inputSchema (pkg/jsonschema), the whole file against
// the golden loader (pkg/golden).
package draft

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonschema"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Tool is a tool as the server listed it.
type Tool = mcpclient.Tool

// Tags a drafted case carries, so a reviewer can filter on how it was made.
const (
	TagDraft       = "draft"                                  // every case
	TagFromSchema  = "from-schema"                            // prompt made from the description and schema
	TagModel       = "model-drafted"                          // prompt written by a model (Rewrite)
	TagNeedsValue  = "needs-value"                            // a required value could not be made; see the comment
	TagNegative    = "negative"                               // no tool may be called
	TagNearMiss    = "near-miss"                              // a negative between two similar tools
	TagChain       = "chain"                                  // expect_sequence
	TagFailsDrafts = "fails-at-draft"                         // a model already failed it when drafted (Mark)
	maxTools       = 500                                      // tools drafted; a larger surface is cut, with a note
	maxChains      = 10                                       // chains drafted
	maxNearMisses  = 2                                        // near-miss negatives
	maxDescInText  = 160                                      // characters of a description used in a prompt
	minNegatives   = 4                                        // negatives every draft has
	idMax          = 100                                      // characters of an id made from a tool name
	draftHeaderDoc = "docs/golden-format.md (Drafting a set)" // where golden init is documented
)

// Options are what Build needs besides the tools.
type Options struct {
	// Source names the server in the header (a URL or command, no
	// secrets).
	Source string
}

// Draft is a golden set in the making.
type Draft struct {
	Source string
	Cases  []*Case
	// Notes are about the draft as a whole (tools left out, no chain).
	Notes []string
	tools map[string]*toolInfo
	// unsafe are the tools not marked read-only, for the stubs the
	// header offers.
	unsafe []string
}

// Case is one drafted case. Steps is empty for a negative, one step for
// expect_tool, two for a chain.
type Case struct {
	ID       string
	Prompt   string
	Negative bool
	Steps    []Step
	ArgMatch map[string]string
	Tags     []string
	// How says how the case was made (a comment above it); Todo lists
	// what a reviewer must do (values that could not be made).
	How  []string
	Todo []string
	// Facts are the values a model-written prompt must carry, for
	// Rewrite's check: verbatim when matched exactly, by a word of theirs
	// when matched semantically.
	facts []fact
	// subject is what the template prompt asks, for Rewrite's request.
	subject string
}

// Step is one expected call.
type Step struct {
	Tool string
	Args map[string]any
	// Fed are the arguments left out because an earlier step's output
	// gives them, by name.
	Fed []string
}

// toolInfo is a tool with its schemas read.
type toolInfo struct {
	tool     Tool
	id       string
	doc      *schemaDoc
	compiled *jsonschema.Schema
	props    map[string]map[string]any
	required []string
	optional []string
	outputs  map[string]map[string]any
}

// Build drafts the golden set. The error is for tools that give nothing to
// draft from; a tool whose schema cannot be read still gets a case, with a
// todo.
func Build(tools []Tool, opts Options) (*Draft, error) {
	d := &Draft{Source: opts.Source, tools: map[string]*toolInfo{}}
	var usable []Tool
	ids := map[string]bool{}
	for _, t := range tools {
		if !validToolName(t.Name) {
			d.Notes = append(d.Notes, fmt.Sprintf("tool %q left out: a golden file cannot name it (no spaces or control characters, at most 128 characters)", clipText(t.Name, 60)))
			continue
		}
		if _, dup := d.tools[t.Name]; dup {
			d.Notes = append(d.Notes, fmt.Sprintf("tool %q is listed twice; drafted once", t.Name))
			continue
		}
		if len(usable) == maxTools {
			d.Notes = append(d.Notes, fmt.Sprintf("the server lists more than %d tools; the draft covers the first %d", maxTools, maxTools))
			break
		}
		ti := &toolInfo{tool: t, id: uniqueID(idFor(t.Name), ids)}
		d.tools[t.Name] = ti
		usable = append(usable, t)
		doc, err := decodeSchema(t.InputSchema)
		if err == nil {
			ti.doc = doc
			root := doc.resolve(doc.root)
			if root == nil {
				root = map[string]any{}
			}
			ti.props, ti.required, ti.optional = doc.properties(root)
			if len(t.InputSchema) > 0 {
				ti.compiled, err = jsonschema.Compile(t.InputSchema, jsonschema.Limits{})
			}
		}
		if err != nil {
			ti.doc = nil
			d.Notes = append(d.Notes, fmt.Sprintf("tool %s: its inputSchema cannot be used (%v); its case has no expect_args", t.Name, clipText(err.Error(), 120)))
		}
		if out, err := decodeSchema(t.OutputSchema); err == nil && len(t.OutputSchema) > 0 {
			if root := out.resolve(out.root); root != nil {
				ti.outputs, _, _ = out.properties(root)
			}
		}
	}
	if len(usable) == 0 {
		return nil, fmt.Errorf("the server lists no tool a golden case can name; golden init drafts cases from tools, so add tools to the server or write the cases by hand (docs/golden-format.md)")
	}
	for _, t := range usable {
		d.positives(d.tools[t.Name])
	}
	d.chains(usable)
	d.negatives(usable)
	d.uniqueIDs()
	d.sideEffects(usable)
	return d, nil
}

// sideEffects says, above each case that calls a tool not marked
// readOnlyHint: true and once for the draft, that a run calls it for real
// on the server the config names, and how to stub it: a user's draft
// closed tickets 10 times a run on a staging server, the lexical baseline
// alone.
func (d *Draft) sideEffects(tools []Tool) {
	kinds := map[string]string{}
	var names []string
	for _, t := range tools {
		if t.ReadOnly() {
			continue
		}
		// The spec's default for destructiveHint is true.
		kind := "not read-only, and destructive (destructiveHint true or not said)"
		if a := t.Annotations; a != nil && a.DestructiveHint != nil && !*a.DestructiveHint {
			kind = "not read-only"
		}
		kinds[t.Name] = kind
		names = append(names, t.Name)
	}
	if len(names) == 0 {
		return
	}
	for _, c := range d.Cases {
		done := map[string]bool{}
		for _, st := range c.Steps {
			if k, ok := kinds[st.Tool]; ok && !done[st.Tool] {
				done[st.Tool] = true
				c.How = append(c.How, fmt.Sprintf("%s is %s: every run calls it for real on the server the config names, unless eval.stubs answers it", st.Tool, k))
			}
		}
	}
	d.Notes = append(d.Notes, fmt.Sprintf("%d tool(s) are not marked readOnlyHint: true, and each run of their cases calls them for real on the server the config names: %s. To keep runs from changing anything, answer them with stubs in mcp-eval.yaml (below)",
		len(names), strings.Join(names, ", ")))
	d.unsafe = names
}

// uniqueIDs makes the case ids unique and short enough for the loader,
// in case order: a tool's own case keeps its name-based id.
func (d *Draft) uniqueIDs() {
	seen := map[string]bool{}
	for _, c := range d.Cases {
		id := c.ID
		if len(id) > 120 {
			id = strings.TrimRight(id[:120], "-._")
		}
		out := id
		for i := 2; seen[out]; i++ {
			out = fmt.Sprintf("%s-%d", id, i)
		}
		seen[out] = true
		c.ID = out
	}
}

// positives adds a tool's case with its required arguments, and a second
// one with every argument when it has optional ones that can be made.
func (d *Draft) positives(ti *toolInfo) {
	c := &Case{ID: ti.id, Tags: []string{TagDraft, TagFromSchema}}
	args, match, todo := ti.makeArgs(ti.required)
	c.Steps = []Step{{Tool: ti.tool.Name, Args: args}}
	c.ArgMatch, c.Todo = match, todo
	c.How = []string{fmt.Sprintf("from %s's description and inputSchema: its required arguments, with values valid against the schema", ti.tool.Name)}
	if len(todo) > 0 {
		c.Tags = append(c.Tags, TagNeedsValue)
	}
	c.subject = describeTool(ti.tool)
	c.Prompt, c.facts = templatePrompt(c.subject, args, match)
	d.Cases = append(d.Cases, c)

	if len(ti.optional) == 0 || ti.doc == nil {
		return
	}
	all := append(append([]string(nil), ti.required...), ti.optional...)
	fargs, fmatch, ftodo := ti.makeArgs(all)
	if len(ftodo) > 0 || len(fargs) == len(args) {
		return // the optional ones could not all be made: the first case stands alone
	}
	f := &Case{ID: ti.id + "-all-args", Tags: []string{TagDraft, TagFromSchema}, ArgMatch: fmatch}
	f.Steps = []Step{{Tool: ti.tool.Name, Args: fargs}}
	f.How = []string{fmt.Sprintf("from %s's description and inputSchema: every argument, optional ones included", ti.tool.Name)}
	f.subject = c.subject
	f.Prompt, f.facts = templatePrompt(f.subject, fargs, fmatch)
	d.Cases = append(d.Cases, f)
}

// makeArgs makes values for names and checks them against the tool's
// inputSchema. A value that cannot be made, or a set the schema rejects,
// becomes a todo instead of an invented value.
func (ti *toolInfo) makeArgs(names []string) (map[string]any, map[string]string, []string) {
	if ti.doc == nil {
		return nil, nil, []string{"the tool's inputSchema could not be read: write expect_args by hand"}
	}
	args := map[string]any{}
	var todo []string
	ti.doc.made = 0
	for _, n := range names {
		v, u := ti.doc.value(n, ti.props[n], 0)
		if u == nil && tooLarge(v) {
			u = &unmade{n, fmt.Sprintf("the schema's own value is over %d bytes", maxValueBytes)}
		}
		if u != nil {
			todo = append(todo, fmt.Sprintf("no schema-valid value could be made for %s (%s): add expect_args.%s by hand", u.Prop, u.Why, n))
			continue
		}
		args[n] = v
	}
	if len(todo) == 0 && ti.compiled != nil {
		if err := ti.compiled.ValidateValue(jsonValue(args)); err != nil {
			return nil, nil, []string{fmt.Sprintf("the values the draft made do not satisfy the inputSchema (%s): write expect_args by hand", clipText(err.Error(), 160))}
		}
	}
	if len(args) == 0 {
		return nil, nil, todo
	}
	match := map[string]string{}
	for n, v := range args {
		match[n] = matcherFor(n, ti.props[n], v)
	}
	return args, match, todo
}

// maxValueBytes bounds one value taken from a schema (a const, a default,
// an example): a server's schema is untrusted, and the value goes into a
// prompt.
const maxValueBytes = 1024

func tooLarge(v any) bool {
	b, _ := json.Marshal(v)
	return len(b) > maxValueBytes
}

// jsonValue round-trips v through JSON so the validator sees json.Number
// like it does for a server's own values.
func jsonValue(v any) any {
	b, _ := json.Marshal(v)
	var out any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	_ = dec.Decode(&out)
	return out
}

// matcherFor is exact for enums, ids, numbers, booleans and structured
// values, semantic for free text.
func matcherFor(name string, s map[string]any, v any) string {
	str, isString := v.(string)
	if !isString || str == "" {
		return golden.MatchExact
	}
	if s != nil {
		if _, ok := s["enum"]; ok {
			return golden.MatchExact
		}
		if _, ok := s["const"]; ok {
			return golden.MatchExact
		}
		if _, ok := s["pattern"]; ok {
			return golden.MatchExact
		}
		if f, ok := s["format"].(string); ok && f != "" {
			return golden.MatchExact
		}
	}
	if isIDName(name) || machineText.MatchString(str) {
		return golden.MatchExact
	}
	return golden.MatchSemantic
}

// machineText is a free string a program reads, not a person: a date or
// time, an email address, a URL, a path, a phone number. A model must pass
// it as written ("2026-01-15", not "January 15"), so it is matched
// exactly, as an id is.
var machineText = regexp.MustCompile(`^(?:\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\d{2}:\d{2}(?::\d{2})?|[^\s@]+@[^\s@]+\.[^\s@]+|[a-zA-Z][a-zA-Z0-9+.-]*://\S+|[^\s/]*/\S+|\+?[0-9][0-9 ().-]{6,}[0-9])$`)

// chains adds a case for each ordered pair where an output property of one
// tool has the name of an input property of another.
func (d *Draft) chains(tools []Tool) {
	n := 0
	for _, ta := range tools {
		a := d.tools[ta.Name]
		if len(a.outputs) == 0 {
			continue
		}
		for _, tb := range tools {
			b := d.tools[tb.Name]
			if a == b || b.doc == nil || a.doc == nil {
				continue
			}
			var fed []string
			for _, p := range append(append([]string(nil), b.required...), b.optional...) {
				if out, ok := a.outputs[p]; ok && compatible(out, b.props[p]) {
					fed = append(fed, p)
				}
			}
			if len(fed) == 0 {
				continue
			}
			if n == maxChains {
				d.Notes = append(d.Notes, fmt.Sprintf("more than %d tool pairs chain; the draft has the first %d", maxChains, maxChains))
				return
			}
			n++
			var rest []string
			for _, p := range b.required {
				if !slices.Contains(fed, p) {
					rest = append(rest, p)
				}
			}
			aArgs, aMatch, aTodo := a.makeArgs(a.required)
			bArgs, bMatch, bTodo := b.partialArgs(rest)
			c := &Case{ID: "chain-" + a.id + "-" + b.id, Tags: []string{TagDraft, TagFromSchema, TagChain}}
			c.Steps = []Step{{Tool: a.tool.Name, Args: aArgs}, {Tool: b.tool.Name, Args: bArgs, Fed: fed}}
			c.ArgMatch = map[string]string{}
			for k, v := range aMatch {
				c.ArgMatch[k] = v
			}
			for k, v := range bMatch {
				if prev, dup := c.ArgMatch[k]; dup && prev != v {
					v = golden.MatchExact
				}
				c.ArgMatch[k] = v
			}
			c.Todo = append(aTodo, bTodo...)
			if len(c.Todo) > 0 {
				c.Tags = append(c.Tags, TagNeedsValue)
			}
			c.How = []string{fmt.Sprintf("chain: %s's output field %s feeds %s's input of the same name (outputSchema → inputSchema); %s is left out of the second step's args because its value comes from the first call",
				a.tool.Name, strings.Join(fed, ", "), b.tool.Name, strings.Join(fed, ", "))}
			first, f1 := templatePrompt(describeTool(a.tool), aArgs, aMatch)
			second, f2 := templatePrompt(describeTool(b.tool), bArgs, bMatch)
			c.Prompt = strings.TrimSuffix(first, ".") + ". Then, with the " + strings.Join(fed, " and ") + " it gives, do this: " + lowerFirst(second)
			c.facts = append(f1, f2...)
			c.subject = describeTool(a.tool) + " Then, with the " + strings.Join(fed, " and ") + " from that result: " + describeTool(b.tool)
			d.Cases = append(d.Cases, c)
		}
	}
}

// partialArgs makes the values of names only (the chain's second step),
// checked against the property schemas one by one: the fed ones are
// missing on purpose, so the whole inputSchema would reject the set.
func (ti *toolInfo) partialArgs(names []string) (map[string]any, map[string]string, []string) {
	args, match := map[string]any{}, map[string]string{}
	var todo []string
	ti.doc.made = 0
	for _, n := range names {
		v, u := ti.doc.value(n, ti.props[n], 0)
		if u == nil && tooLarge(v) {
			u = &unmade{n, fmt.Sprintf("the schema's own value is over %d bytes", maxValueBytes)}
		}
		if u != nil {
			todo = append(todo, fmt.Sprintf("no schema-valid value could be made for %s (%s): add it to the %s step by hand", u.Prop, u.Why, ti.tool.Name))
			continue
		}
		args[n], match[n] = v, matcherFor(n, ti.props[n], v)
	}
	if len(args) == 0 {
		return nil, nil, todo
	}
	return args, match, todo
}

// compatible says whether an output property can feed an input property:
// same type where both say one.
func compatible(out, in map[string]any) bool {
	to, ti := schemaType(out), schemaType(in)
	return to == "" || ti == "" || to == ti || (to == "integer" && ti == "number")
}

// Questions no MCP tool is likely to answer; the one sharing the fewest
// words with the tools' descriptions is drafted.
var offTopic = []string{
	"Who wrote the novel Pride and Prejudice?",
	"What is the capital of Australia?",
	"Write a haiku about autumn leaves.",
	"Explain the rules of chess in two sentences.",
}

// negatives adds at least minNegatives cases where no tool may be called.
func (d *Draft) negatives(tools []Tool) {
	neg := func(id, prompt string, how string, tags ...string) {
		d.Cases = append(d.Cases, &Case{ID: id, Prompt: prompt, Negative: true, How: []string{how}, Tags: append([]string{TagDraft, TagNegative}, tags...)})
	}
	neg("no-tool-small-talk", "Hi! How are you doing today?", "negative, fixed text: small talk needs no tool")
	neg("no-tool-thanks", "Thanks, that's all I needed.", "negative, fixed text: small talk needs no tool")
	var all strings.Builder
	for _, t := range tools {
		all.WriteString(toolText(t) + " ")
	}
	type scored struct {
		q string
		s float64
	}
	var qs []scored
	for _, q := range offTopic {
		qs = append(qs, scored{q, Similarity(q, all.String())})
	}
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].s < qs[j].s })
	neg("no-tool-off-topic", qs[0].q, fmt.Sprintf("negative: the question of a fixed list that shares the fewest words with the tools' descriptions (similarity %.2f)", qs[0].s))
	count := 3
	for i, p := range SimilarPairs(tools, maxNearMisses) {
		a, b := d.tools[p.A].tool, d.tools[p.B].tool
		prompt := fmt.Sprintf("Don't run anything, just answer from what you know: what is the difference between \"%s\" and \"%s\"?", shortDesc(a), shortDesc(b))
		rank := "the most similar pair"
		if i > 0 {
			rank = fmt.Sprintf("pair %d by similarity", i+1)
		}
		neg(fmt.Sprintf("no-tool-near-miss-%d", i+1), prompt, fmt.Sprintf("near miss: %s and %s are %s of descriptions (cosine of their words %.2f); the prompt uses both tools' words and asks for no call", p.A, p.B, rank, p.Score), TagNearMiss)
		count++
	}
	for i := 1; count < minNegatives && i < len(qs); i++ {
		neg(fmt.Sprintf("no-tool-off-topic-%d", i+1), qs[i].q, "negative: another question of the fixed off-topic list (the server has too few tools for more near misses)")
		count++
	}
	if len(tools) == 1 {
		t := tools[0]
		neg("no-tool-near-miss-1", fmt.Sprintf("Don't run anything: in one sentence, what does \"%s\" mean?", shortDesc(t)), fmt.Sprintf("near miss: uses %s's own words but asks about it, not for a call", t.Name), TagNearMiss)
	}
}

// describeTool is what a tool does, for a prompt: its description's first
// sentence, else its title, else its name in words.
func describeTool(t Tool) string {
	s := imperative(firstSentence(t.Description))
	if s == "" {
		s = oneLine(t.Title)
	}
	if s == "" {
		s = capitalize(strings.Join(nameWords(t.Name), " "))
	}
	return clipText(s, maxDescInText)
}

// verbs are the words a description starts with in the third person
// ("Returns the sum"), turned into a request ("Return the sum").
var verbs = map[string]bool{
	"return": true, "get": true, "list": true, "create": true, "delete": true, "update": true, "fetch": true, "search": true,
	"send": true, "find": true, "add": true, "remove": true, "demonstrate": true, "generate": true, "retrieve": true, "echo": true,
	"count": true, "compute": true, "calculate": true, "convert": true, "run": true, "start": true, "stop": true, "read": true,
	"write": true, "show": true, "set": true, "toggle": true, "trigger": true, "look": true, "check": true, "validate": true,
	"query": true, "print": true, "upload": true, "download": true, "post": true, "open": true, "close": true, "summarize": true,
	"translate": true, "provide": true, "make": true, "queue": true, "lookup": true, "describe": true, "resolve": true, "schedule": true,
	"compress": true, "simulate": true, "analyze": true, "fail": true, "throw": true, "raise": true, "sum": true, "multiply": true,
}

func imperative(s string) string {
	first, rest, _ := strings.Cut(s, " ")
	lower := strings.ToLower(first)
	for _, cut := range []struct{ suffix, repl string }{{"ies", "y"}, {"es", ""}, {"s", ""}} {
		if stem, ok := strings.CutSuffix(lower, cut.suffix); ok && verbs[stem+cut.repl] {
			verb := stem + cut.repl
			if first != lower {
				verb = capitalize(verb)
			}
			if rest == "" {
				return verb
			}
			return verb + " " + rest
		}
	}
	return s
}

func shortDesc(t Tool) string {
	s := strings.TrimSuffix(describeTool(t), ".")
	return strings.ReplaceAll(s, `"`, "'")
}

// fact is a value a rewritten prompt must keep: verbatim when exact,
// else by one of its words (a semantic match forgives a paraphrase, not
// a prompt that never asks for the value).
type fact struct {
	text  string
	exact bool
}

// templatePrompt asks for the tool's job with the values spelled out; facts
// are the values a rewritten prompt must keep.
func templatePrompt(subject string, args map[string]any, match map[string]string) (string, []fact) {
	p := strings.TrimSuffix(strings.TrimSpace(subject), ".")
	var facts []fact
	if len(args) > 0 {
		var parts []string
		for _, k := range sortedKeys(args) {
			text := valueText(args[k])
			parts = append(parts, fmt.Sprintf("%s %s", strings.Join(nameWords(k), " "), text))
			switch match[k] {
			case golden.MatchExact, golden.MatchSemantic:
				for _, l := range leaves(args[k]) {
					facts = append(facts, fact{text: l, exact: match[k] == golden.MatchExact})
				}
			}
		}
		p += ", with " + joinAnd(parts)
	}
	return p + ".", facts
}

// leaves are the strings and numbers inside a value, as a prompt would
// spell them (booleans have no one spelling).
func leaves(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case int64, float64:
		return []string{valueText(x)}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, leaves(e)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, k := range sortedKeys(x) {
			out = append(out, leaves(x[k])...)
		}
		return out
	}
	return nil
}

func valueText(v any) string {
	switch x := v.(type) {
	case string:
		return `"` + x + `"`
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

var sentenceEnd = regexp.MustCompile(`[.!?](\s|$)`)

func firstSentence(s string) string {
	s = oneLine(s)
	if loc := sentenceEnd.FindStringIndex(s); loc != nil {
		s = s[:loc[0]+1]
	}
	return s
}

// oneLine makes server text safe for one line of YAML and a prompt: no
// control characters, spaces collapsed.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func capitalize(s string) string {
	r := []rune(s)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	return string(r)
}

func lowerFirst(s string) string {
	r := []rune(s)
	if len(r) > 1 && unicode.IsUpper(r[0]) && !unicode.IsUpper(r[1]) {
		r[0] = unicode.ToLower(r[0])
	}
	return string(r)
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func idFor(name string) string {
	id := strings.Trim(idUnsafe.ReplaceAllString(name, "-"), "-._")
	if id == "" {
		id = "tool"
	}
	if len(id) > idMax {
		id = id[:idMax]
	}
	return id
}

// uniqueID keeps ids unique across the draft; the prefixes of negatives and
// chains are kept for them.
func uniqueID(id string, seen map[string]bool) string {
	if strings.HasPrefix(id, "no-tool-") || strings.HasPrefix(id, "chain-") {
		id = "tool-" + id
	}
	out := id
	for i := 2; seen[out]; i++ {
		out = fmt.Sprintf("%s-%d", id, i)
	}
	seen[out] = true
	return out
}

func validToolName(s string) bool {
	return s != "" && len(s) <= 128 && strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) < 0
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
