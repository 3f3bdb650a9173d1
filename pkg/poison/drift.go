package poison

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// drift compares two tools/list calls of one run. A server has no reason
// to describe a tool differently a moment later; one that does can pass a
// review with one description and act on another (a rug pull), or feed
// the model text that depends on who asks.
func drift(fs *findings, first, second []mcpclient.Tool) {
	a, b := byName(first), byName(second)
	for name, t := range a {
		u, ok := b[name]
		if !ok {
			fs.add(Finding{Rule: RuleDrift, Tool: name, Where: "tool", Detail: "listed by the first tools/list call, missing from the second"})
			continue
		}
		for _, f := range toolFields() {
			x, y := f.get(t), f.get(u)
			if !bytes.Equal(x, y) {
				fs.add(Finding{Rule: RuleDrift, Tool: name, Where: f.name, Excerpt: diffExcerpt(x, y),
					Detail: "the " + f.name + " changed between two tools/list calls of one run"})
			}
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			fs.add(Finding{Rule: RuleDrift, Tool: name, Where: "tool", Detail: "missing from the first tools/list call, listed by the second"})
		}
	}
}

// toolFields are what drift compares, each in a canonical form (JSON
// values re-encoded with sorted keys, so key order and spacing do not
// count as a change).
type toolField struct {
	name string
	get  func(mcpclient.Tool) []byte
}

func toolFields() []toolField {
	return []toolField{
		{"title", func(t mcpclient.Tool) []byte { return []byte(t.Title) }},
		{"description", func(t mcpclient.Tool) []byte { return []byte(t.Description) }},
		{"inputSchema", func(t mcpclient.Tool) []byte { return canonical(t.InputSchema) }},
		{"outputSchema", func(t mcpclient.Tool) []byte { return canonical(t.OutputSchema) }},
		{"annotations", func(t mcpclient.Tool) []byte {
			if t.Annotations == nil {
				return nil
			}
			b, _ := json.Marshal(t.Annotations)
			return b
		}},
	}
}

func byName(tools []mcpclient.Tool) map[string]mcpclient.Tool {
	m := make(map[string]mcpclient.Tool, len(tools))
	for _, t := range tools {
		if _, dup := m[t.Name]; !dup {
			m[t.Name] = t
		}
	}
	return m
}

func canonical(raw json.RawMessage) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return b
}

// diffExcerpt shows both versions around their first difference.
func diffExcerpt(x, y []byte) string {
	i := 0
	for i < len(x) && i < len(y) && x[i] == y[i] {
		i++
	}
	return "first: " + excerpt(string(x), min(i, len(x)), 0) + " | second: " + excerpt(string(y), min(i, len(y)), 0)
}

// confusableNames flags tool names with non-ASCII letters (a Cyrillic "а"
// in "reаd_file" looks like the real tool), and names that collide once
// case and separators are ignored (send_email and sendEmail): both let
// one tool pass for another (MCPSecBench tool shadowing, name squatting).
func confusableNames(fs *findings, tools []mcpclient.Tool) {
	bySkeleton := map[string][]string{}
	for _, t := range tools {
		for _, r := range t.Name {
			if r >= 0x80 && (unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)) {
				fs.add(Finding{Rule: RuleConfusableName, Tool: t.Name, Where: "name", Excerpt: visible(t.Name, maxExcerpt) + " (" + codepoints(t.Name) + ")",
					Detail: "the name has non-ASCII letters that can pass for ASCII ones"})
				break
			}
		}
		sk := skeleton(t.Name)
		if !contains(bySkeleton[sk], t.Name) {
			bySkeleton[sk] = append(bySkeleton[sk], t.Name)
		}
	}
	for _, names := range bySkeleton {
		if len(names) < 2 {
			continue
		}
		sort.Strings(names)
		for _, n := range names {
			var others []string
			for _, o := range names {
				if o != n {
					others = append(others, o)
				}
			}
			fs.add(Finding{Rule: RuleConfusableName, Tool: n, Where: "name", Excerpt: visible(n, maxExcerpt),
				Detail: "the name differs only in case or separators from " + strings.Join(others, ", ")})
		}
	}
}

func skeleton(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r != '_' && r != '-' && r != '.' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// codepoints lists the non-ASCII characters of s, at most 8.
func codepoints(s string) string {
	var parts []string
	for _, r := range s {
		if r >= 0x80 && len(parts) < 8 {
			parts = append(parts, fmt.Sprintf("U+%04X", r))
		}
	}
	return strings.Join(parts, " ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
