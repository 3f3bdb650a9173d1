package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// Row is one line of mapping.tsv: an official check and the ids of ours
// that test the same rule.
type Row struct {
	Scenario string // "*": the check every scenario emits
	Check    string
	Class    string   // "compare" or "fixture"
	Ours     []string // empty for "-"
	Rule     string
	Line     int // line in mapping.tsv, for errors
}

const (
	classCompare = "compare"
	classFixture = "fixture"
)

// LoadMapping reads mapping.tsv; errors name the file and line.
func LoadMapping(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the mapping: %w", err)
	}
	return parseMapping(path, data)
}

func parseMapping(path string, data []byte) ([]Row, error) {
	var rows []Row
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	n, header := 0, false
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cells := strings.Split(line, "\t")
		if len(cells) != 5 {
			return nil, fmt.Errorf("%s:%d: want 5 tab-separated cells (scenario, check, class, ours, rule), got %d", path, n, len(cells))
		}
		if !header {
			header = true
			if cells[0] == "scenario" {
				continue
			}
		}
		r := Row{Scenario: cells[0], Check: cells[1], Class: cells[2], Rule: cells[4], Line: n}
		if r.Scenario == "" || r.Check == "" {
			return nil, fmt.Errorf("%s:%d: scenario and check must not be empty", path, n)
		}
		if r.Class != classCompare && r.Class != classFixture {
			return nil, fmt.Errorf("%s:%d: class %q: want %s or %s", path, n, r.Class, classCompare, classFixture)
		}
		if cells[3] != "-" {
			for _, id := range strings.Split(cells[3], ",") {
				if id = strings.TrimSpace(id); id != "" {
					r.Ours = append(r.Ours, id)
				}
			}
		}
		key := r.Scenario + "\x00" + r.Check
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s:%d: %s/%s is already mapped on line %d", path, n, r.Scenario, r.Check, prev)
		}
		seen[key] = n
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return rows, nil
}

// Note is what mutant-notes.tsv says about one mutant: why the two
// tools' verdicts on it are what they are, written when the computed
// result was Result. A note whose Result no longer matches is shown as
// stale instead of being trusted.
type Note struct {
	Result string
	Text   string
}

// LoadNotes reads mutant-notes.tsv: mutant id, result, note.
func LoadNotes(path string) (map[string]Note, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the mutant notes: %w", err)
	}
	out := map[string]Note{}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cells := strings.Split(line, "\t")
		if len(cells) != 3 {
			return nil, fmt.Errorf("%s:%d: want 3 tab-separated cells (mutant, result, note), got %d", path, i+1, len(cells))
		}
		if !validResult(cells[1]) {
			return nil, fmt.Errorf("%s:%d: result %q: want one of %s", path, i+1, cells[1], strings.Join(mutantResults, ", "))
		}
		out[cells[0]] = Note{Result: cells[1], Text: cells[2]}
	}
	return out, nil
}

var mutantResults = []string{resultBoth, resultOursOnly, resultOfficialOnly, resultNeither}

func validResult(s string) bool {
	for _, r := range mutantResults {
		if s == r {
			return true
		}
	}
	return false
}
