package golden

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcp-eval/mcp-eval-action/pkg/didyoumean"
	"github.com/mcp-eval/mcp-eval-action/pkg/yamlsyntax"
)

// Limits on what a golden set may hold. A golden file comes with a pull
// request, so it is untrusted input.
const (
	MaxFileBytes   = 4 << 20  // one golden file
	MaxFiles       = 200      // files in a golden directory
	MaxCases       = 5000     // cases in a set
	MaxPromptBytes = 64 << 10 // one prompt
	MaxRubricBytes = 64 << 10 // one rubric, inline or from a file
	maxIDLen       = 128
	maxToolLen     = 128
)

// Load reads a golden set from a file, or from a directory: every *.yaml
// and *.yml file directly in it, in name order, as one set (ids are unique
// across the files). Problems come back together as Errors, each with
// file:line:column and a fix.
func Load(path string) (*Set, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// The path a user mistyped, with the one beside it they meant.
		e := &Error{Pos: Position{File: path}, Msg: "no such file or directory", Hint: "the golden set is a YAML file or a directory of them: golden: in mcp-eval.yaml, --golden or the golden input"}
		if near, ok := nearestSibling(path); ok {
			e.Hint = "did you mean " + near + "?"
		}
		return nil, e
	}
	if err != nil {
		return nil, fmt.Errorf("reading golden set: %w", err)
	}
	if !info.IsDir() {
		return loadFiles(path, []string{path})
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("reading golden set: %w", err)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && (strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")) {
			files = append(files, filepath.Join(path, name))
		}
	}
	if len(files) == 0 {
		return nil, &Error{Pos: Position{File: path}, Msg: "no *.yaml or *.yml file in the golden directory", Hint: "put the cases in e.g. " + filepath.Join(path, "tasks.yaml")}
	}
	if len(files) > MaxFiles {
		return nil, &Error{Pos: Position{File: path}, Msg: fmt.Sprintf("%d golden files, at most %d", len(files), MaxFiles), Hint: "merge cases into fewer files"}
	}
	sort.Strings(files)
	return loadFiles(path, files)
}

func loadFiles(setPath string, files []string) (*Set, error) {
	set := &Set{Path: setPath}
	var sink errorSink
	seen := map[string]Position{}
	for _, file := range files {
		src, err := readBounded(file)
		if err != nil {
			sink.list = append(sink.list, asError(file, err))
			continue
		}
		cases := parseInto(&sink, file, src)
		for _, c := range cases {
			if c.ID == "" {
				continue // already reported
			}
			if first, dup := seen[c.ID]; dup {
				sink.add(c.Pos, fmt.Sprintf("case id %q is already used at %s", c.ID, first), "give every case its own id: results and baselines are keyed on it")
				continue
			}
			seen[c.ID] = c.Pos
			set.Cases = append(set.Cases, c)
		}
	}
	if len(set.Cases) > MaxCases {
		sink.add(Position{File: setPath}, fmt.Sprintf("%d cases, at most %d", len(set.Cases), MaxCases), "split the set and run the parts separately")
	}
	if err := sink.err(); err != nil {
		return nil, err
	}
	return set, nil
}

// Parse reads one golden file's content; path names it in positions, and
// rubric files are read relative to its directory.
func Parse(path string, src []byte) (*Set, error) {
	if len(src) > MaxFileBytes {
		return nil, &Error{Pos: Position{File: path}, Msg: fmt.Sprintf("golden file is %d bytes, at most %d", len(src), MaxFileBytes), Hint: "split it into several files in one directory"}
	}
	var sink errorSink
	cases := parseInto(&sink, path, src)
	seen := map[string]Position{}
	for _, c := range cases {
		if first, dup := seen[c.ID]; dup && c.ID != "" {
			sink.add(c.Pos, fmt.Sprintf("case id %q is already used at %s", c.ID, first), "give every case its own id: results and baselines are keyed on it")
			continue
		}
		seen[c.ID] = c.Pos
	}
	if err := sink.err(); err != nil {
		return nil, err
	}
	return &Set{Path: path, Cases: cases}, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileBytes {
		return nil, &Error{Pos: Position{File: path}, Msg: fmt.Sprintf("golden file is larger than %d bytes", MaxFileBytes), Hint: "split it into several files in one directory"}
	}
	return b, nil
}

func asError(file string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Pos: Position{File: file}, Msg: err.Error()}
}

// parseInto parses one file and appends its problems to sink.
func parseInto(sink *errorSink, file string, src []byte) []Case {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			sink.add(Position{File: file}, "the golden file is empty", "add cases: see docs/golden-format.md")
			return nil
		}
		// yaml.v3's own line is often above the fault, and it has no
		// column.
		line, _ := yamlsyntax.Locate(src, err)
		sink.add(Position{File: file, Line: line}, "YAML syntax: "+yamlsyntax.Problem(err), "check the indentation and quoting on this line")
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		sink.add(Position{File: file, Line: line}, "more than one YAML document (a second ---)", "keep one document per file; several files in one directory form one set")
		return nil
	}
	p := &parser{file: file, sink: sink}
	p.conv = &valueConv{p: p}
	return p.document(&doc)
}

// parser walks one file's nodes.
type parser struct {
	file string
	sink *errorSink
	conv *valueConv
}

func (p *parser) fail(n *yaml.Node, msg, hint string) {
	p.sink.add(pos(p.file, n), msg, hint)
}

// document accepts either a mapping {version: 1, cases: […]} or a bare
// list of cases.
func (p *parser) document(doc *yaml.Node) []Case {
	if len(doc.Content) == 0 {
		p.sink.add(Position{File: p.file}, "the golden file is empty", "add cases: see docs/golden-format.md")
		return nil
	}
	root := deref(doc.Content[0])
	switch root.Kind {
	case yaml.SequenceNode:
		return p.cases(root)
	case yaml.MappingNode:
	default:
		p.fail(root, "a golden file is a mapping with cases: (or a list of cases), got "+describe(root), "start the file with cases: and list the cases under it")
		return nil
	}
	var cases *yaml.Node
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := deref(root.Content[i]), deref(root.Content[i+1])
		key, _ := scalarText(k)
		if seen[key] {
			p.fail(k, fmt.Sprintf("%q appears twice at the top level", key), "keep one")
			continue
		}
		seen[key] = true
		switch key {
		case "version":
			if s, _ := rawText(v); s != "1" || v.ShortTag() != "!!int" {
				p.fail(v, fmt.Sprintf("version is %s, this mcp-eval reads version 1", quoteNode(v)), "write version: 1, or upgrade mcp-eval")
			}
		case "cases":
			cases = v
		default:
			p.fail(k, fmt.Sprintf("unknown top-level key %q", key), suggest(key, topKeys)+"the top-level keys are "+strings.Join(topKeys, ", "))
		}
	}
	if cases == nil {
		p.fail(root, "no cases: key", "list the cases under cases:")
		return nil
	}
	if cases.Kind != yaml.SequenceNode {
		p.fail(cases, "cases must be a list, got "+describe(cases), "write each case as a list item starting with - id: …")
		return nil
	}
	return p.cases(cases)
}

var topKeys = []string{"version", "cases"}

func (p *parser) cases(list *yaml.Node) []Case {
	if len(list.Content) == 0 {
		p.fail(list, "the list of cases is empty", "add cases: see docs/golden-format.md")
		return nil
	}
	if len(list.Content) > MaxCases {
		p.fail(list, fmt.Sprintf("%d cases, at most %d", len(list.Content), MaxCases), "split the set and run the parts separately")
		return nil
	}
	// Cases with problems are returned too, so that duplicate ids are
	// found in the same pass; any problem fails the whole load.
	out := make([]Case, 0, len(list.Content))
	for _, n := range list.Content {
		out = append(out, p.parseCase(deref(n)))
	}
	return out
}

// quoteNode renders a scalar for a message, bounded.
func quoteNode(n *yaml.Node) string {
	s, ok := rawText(n)
	if !ok {
		return describe(n)
	}
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return strconv.Quote(s)
}

// nearestSibling is the YAML file or directory beside path whose name is
// within two edits of path's, as the path would be written.
func nearestSibling(path string) (string, bool) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	var names []string
	for i, e := range entries {
		if i == 1000 {
			break // a directory that large holds no golden set
		}
		n := e.Name()
		if e.IsDir() || strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") {
			names = append(names, n)
		}
	}
	near, ok := didyoumean.Nearest(filepath.Base(path), names)
	if !ok {
		return "", false
	}
	return filepath.Join(dir, near), true
}
