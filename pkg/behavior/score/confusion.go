package score

import (
	"sort"
	"strings"
)

// Matrix is a model's confusion matrix: expected class × chosen class,
// where a class is a tool name or NoTool. Each expected step of each run
// (that was not an Error) adds one count: a single-tool case its expected
// tool × the first tool called; a chain each step × the tool called at
// that position (retries folded); a negative case NoTool × the first tool
// called. The diagonal is right; everything else is a confusion.
type Matrix struct {
	// Classes are every class seen, tools sorted by name, NoTool last.
	Classes []string `json:"classes"`
	// Cells are the non-zero counts, by expected then chosen class order.
	Cells []Cell `json:"cells"`
}

// BuildMatrix counts the cells of runs (of one model).
func BuildMatrix(runs []Run) Matrix {
	counts := map[[2]string]int{}
	classes := map[string]bool{}
	for i := range runs {
		for _, c := range runs[i].Cells {
			counts[[2]string{c.Expected, c.Chosen}] += c.Count
			classes[c.Expected], classes[c.Chosen] = true, true
		}
	}
	m := Matrix{Classes: make([]string, 0, len(classes)), Cells: make([]Cell, 0, len(counts))}
	for c := range classes {
		m.Classes = append(m.Classes, c)
	}
	sort.Slice(m.Classes, func(i, j int) bool { return classLess(m.Classes[i], m.Classes[j]) })
	for k, n := range counts {
		m.Cells = append(m.Cells, Cell{Expected: k[0], Chosen: k[1], Count: n})
	}
	sort.Slice(m.Cells, func(i, j int) bool {
		a, b := m.Cells[i], m.Cells[j]
		if a.Expected != b.Expected {
			return classLess(a.Expected, b.Expected)
		}
		return classLess(a.Chosen, b.Chosen)
	})
	return m
}

// classLess orders tool names alphabetically with NoTool last.
func classLess(a, b string) bool {
	if (a == NoTool) != (b == NoTool) {
		return b == NoTool
	}
	return a < b
}

// Count is the cell expected × chosen.
func (m Matrix) Count(expected, chosen string) int {
	for _, c := range m.Cells {
		if c.Expected == expected && c.Chosen == chosen {
			return c.Count
		}
	}
	return 0
}

// Total is the sum of all cells.
func (m Matrix) Total() int {
	n := 0
	for _, c := range m.Cells {
		n += c.Count
	}
	return n
}

// Confusions are the off-diagonal cells, most frequent first (ties by
// expected, then chosen class).
func (m Matrix) Confusions() []Cell {
	out := []Cell{}
	for _, c := range m.Cells {
		if c.Expected != c.Chosen {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// Confusion is a frequent confusion with the two tool descriptions side
// by side: most selection failures are description failures, and this is
// what tells a team which description to rewrite.
type Confusion struct {
	Cell
	// ExpectedDescription and ChosenDescription are the tools'
	// descriptions as the server lists them; empty for NoTool, and a note
	// for a tool the server does not list (the model invented it).
	ExpectedDescription string `json:"expectedDescription"`
	ChosenDescription   string `json:"chosenDescription"`
}

// NotListed is the description shown for a chosen tool the server does
// not list.
const NotListed = "(the server lists no such tool: the model invented the name)"

// maxDescription bounds a description in a report: it comes from the
// server under test.
const maxDescription = 2000

// TopConfusions returns the n most frequent confusions of m with the
// descriptions of both tools, from descriptions (tool name → description
// as the server listed it).
func TopConfusions(m Matrix, descriptions map[string]string, n int) []Confusion {
	out := []Confusion{}
	for _, c := range m.Confusions() {
		if len(out) == n {
			break
		}
		out = append(out, Confusion{Cell: c, ExpectedDescription: describeTool(c.Expected, descriptions), ChosenDescription: describeTool(c.Chosen, descriptions)})
	}
	return out
}

func describeTool(name string, descriptions map[string]string) string {
	if name == NoTool {
		return ""
	}
	d, ok := descriptions[name]
	if !ok {
		return NotListed
	}
	d = strings.TrimSpace(d)
	if r := []rune(d); len(r) > maxDescription {
		d = string(r[:maxDescription]) + "…"
	}
	return d
}
