package draft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcp-eval/mcp-eval-action/pkg/golden"
)

// maxCommentLine bounds one comment line made from server or model text.
const maxCommentLine = 300

// maxStubLines bounds the stubs the header offers.
const maxStubLines = 50

// Mark records that model failed the case when the draft was run once;
// note is the report's explanation (model text: untrusted, kept to one
// line).
func (d *Draft) Mark(id, model, note string) bool {
	for _, c := range d.Cases {
		if c.ID != id {
			continue
		}
		line := fmt.Sprintf("%s already fails this case (one run when drafted)", model)
		if note = oneLine(note); note != "" {
			line += ": " + note
		}
		c.How = append(c.How, line)
		if !slices.Contains(c.Tags, TagFailsDrafts) {
			c.Tags = append(c.Tags, TagFailsDrafts)
		}
		return true
	}
	return false
}

// Unrun records that model could not complete the case's one run (a
// provider or harness error): said, not marked as a failure.
func (d *Draft) Unrun(id, model, note string) bool {
	for _, c := range d.Cases {
		if c.ID == id {
			line := fmt.Sprintf("%s could not complete this case's one run when drafted", model)
			if note = oneLine(note); note != "" {
				line += ": " + note
			}
			c.How = append(c.How, line)
			return true
		}
	}
	return false
}

// YAML writes the draft as a golden file: a header that says it is a draft
// to review, and above each case how it was made and what is left to do.
func (d *Draft) YAML() ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	root.HeadComment = d.header()
	cases := &yaml.Node{Kind: yaml.SequenceNode}
	root.Content = append(root.Content, str("version"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"}, str("cases"), cases)
	for _, c := range d.Cases {
		n, err := c.node()
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.ID, err)
		}
		cases.Content = append(cases.Content, n)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (d *Draft) header() string {
	lines := []string{
		"DRAFT golden set, written by `mcp-eval golden init` from the tools the server lists:",
		"  " + oneLine(d.Source),
		"Review every case before relying on it: the prompts and values are guesses from the",
		"descriptions and schemas (or a model's wording); the comment above each case says how",
		"it was made, and TODO lines say what the draft could not fill in. Keep what tests the",
		"behaviour you care about, then drop the `draft` tag. The format is in docs/golden-format.md,",
		"golden init in " + draftHeaderDoc + ".",
	}
	for _, n := range d.Notes {
		lines = append(lines, "NOTE: "+n)
	}
	if len(d.unsafe) == 0 {
		return comment(lines)
	}
	lines = append(lines, "Stubs for the tools that are not read-only, to paste into mcp-eval.yaml:")
	// Indented YAML, which comment's one-line form would flatten; the
	// names are ones a golden file can hold (validToolName).
	stub := []string{"#   eval:", "#     stubs:"}
	for i, name := range d.unsafe {
		if i == maxStubLines {
			stub = append(stub, fmt.Sprintf("#       # … and %d more", len(d.unsafe)-i))
			break
		}
		key := name
		if strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != "" {
			key = strconv.Quote(name)
		}
		stub = append(stub, fmt.Sprintf("#       %s: %q", key, "stubbed"))
	}
	return comment(lines) + "\n" + strings.Join(stub, "\n")
}

func comment(lines []string) string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, "# "+clipText(oneLine(l), maxCommentLine))
	}
	return strings.Join(out, "\n")
}

func (c *Case) node() (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	lines := append([]string(nil), c.How...)
	for _, t := range c.Todo {
		lines = append(lines, "TODO: "+t)
	}
	n.HeadComment = comment(lines)
	add := func(k string, v *yaml.Node) { n.Content = append(n.Content, str(k), v) }
	add("id", str(c.ID))
	add("prompt", str(c.Prompt))
	switch {
	case c.Negative:
		add("expect_tool", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"})
	case len(c.Steps) == 1:
		add("expect_tool", str(c.Steps[0].Tool))
		if len(c.Steps[0].Args) > 0 {
			v, err := flow(c.Steps[0].Args)
			if err != nil {
				return nil, err
			}
			add("expect_args", v)
		}
	default:
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, s := range c.Steps {
			step := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{str("tool"), str(s.Tool)}}
			if len(s.Args) > 0 {
				v, err := flow(s.Args)
				if err != nil {
					return nil, err
				}
				step.Content = append(step.Content, str("args"), v)
			}
			if len(s.Fed) > 0 {
				step.LineComment = "# " + clipText(oneLine(strings.Join(s.Fed, ", ")+" comes from the previous step's result"), maxCommentLine)
			}
			seq.Content = append(seq.Content, step)
		}
		add("expect_sequence", seq)
	}
	if len(c.ArgMatch) > 0 {
		m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		for _, k := range sortedKeys(c.ArgMatch) {
			m.Content = append(m.Content, str(k), str(c.ArgMatch[k]))
		}
		add("arg_match", m)
	}
	tags := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, t := range c.Tags {
		tags.Content = append(tags.Content, str(t))
	}
	add("tags", tags)
	return n, nil
}

func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// flow encodes a value as a flow-style YAML node.
func flow(v any) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	setFlow(&n)
	return &n, nil
}

func setFlow(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		setFlow(c)
	}
}

// Check loads the written draft with the golden loader and checks every
// expected argument against its tool's inputSchema: what golden init
// writes must load and validate with no edit. path names the file in
// errors.
func (d *Draft) Check(path string, data []byte) (*golden.Set, error) {
	set, err := golden.Parse(path, data)
	if err != nil {
		return nil, fmt.Errorf("the draft does not load (a bug in golden init, please report it): %w", err)
	}
	for _, gc := range set.Cases {
		for i, st := range gc.Steps() {
			ti := d.tools[st.Tool]
			if ti == nil {
				return nil, fmt.Errorf("%s: case %s names tool %q, which the server does not list", gc.Pos, gc.ID, st.Tool)
			}
			if ti.compiled == nil || len(st.Args) == 0 {
				continue
			}
			args := st.Args
			if gc.Chain() && i > 0 {
				// The fed arguments come from the earlier result: judge
				// the step with them filled in by made values.
				args = map[string]any{}
				for k, v := range st.Args {
					args[k] = v
				}
				for _, p := range ti.required {
					if _, ok := args[p]; !ok {
						if v, u := ti.doc.value(p, ti.props[p], 0); u == nil {
							args[p] = v
						}
					}
				}
			}
			var c *Case
			for _, dc := range d.Cases {
				if dc.ID == gc.ID {
					c = dc
				}
			}
			if c != nil && len(c.Todo) > 0 {
				continue // said so in a TODO
			}
			if err := ti.compiled.ValidateValue(jsonValue(args)); err != nil {
				return nil, fmt.Errorf("%s: case %s: the arguments for %s do not satisfy its inputSchema (a bug in golden init, please report it): %v", gc.Pos, gc.ID, st.Tool, err)
			}
		}
	}
	return set, nil
}

// valuesJSON is a compact rendering of args for a model's request.
func valuesJSON(args map[string]any) string {
	if len(args) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(args)
	return string(b)
}
