package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
)

// Every id of ours in the mapping must be a registered check, or a
// checklist id the registry lists as unobservable (SUB-9): a renamed or
// removed check would otherwise show as "did not run" in every table.
func TestMappingNamesOnlyKnownCheckIDs(t *testing.T) {
	rows, err := LoadMapping("mapping.tsv")
	if err != nil {
		t.Fatal(err)
	}
	unobservable := conformance.Unobservable()
	for _, r := range rows {
		for _, id := range r.Ours {
			if _, ok := unobservable[id]; ok {
				continue
			}
			if err := conformance.KnownIDs([]string{id}); err != nil || !strings.Contains(id, "-") {
				t.Errorf("mapping.tsv:%d: %s/%s maps to %q, which is no registered check id nor an unobservable one (%v)", r.Line, r.Scenario, r.Check, id, err)
			}
		}
	}
}

// The suite's requirements file names the scenarios it runs; every
// scenario in the mapping must be one of them (scored, or not scored with
// leg: server). Check ids are built by template in the suite's bundle, so
// a run reports mapped checks it did not emit instead (the "unmapped"
// section). Skipped when the pinned suite is not installed, except under
// CI=true, where scripts/test.sh installs it.
func TestMappingNamesOnlySuiteScenarios(t *testing.T) {
	req := filepath.Join("..", "..", ".cache", "official-suite", "node_modules", "@modelcontextprotocol", "conformance", "requirements", "2026-07-28.yaml")
	if dir := os.Getenv("OFFICIAL_SUITE_CACHE"); dir != "" {
		req = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "requirements", "2026-07-28.yaml")
	}
	data, err := os.ReadFile(req)
	if err != nil {
		msg := fmt.Sprintf("the official suite is not installed (bash scripts/official-suite.sh --install-only): %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	known := map[string]bool{}
	section := ""
	item := regexp.MustCompile(`^\s+-\s+(?:scenario:\s*)?(\S+)\s*$`)
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimRight(regexp.MustCompile(`\s+#.*$`).ReplaceAllString(line, ""), " "); line == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":") {
			section = strings.TrimSuffix(line, ":")
			continue
		}
		if m := item.FindStringSubmatch(line); m != nil && (section == "server" || section == "not_scored") {
			known[m[1]] = true
		}
	}
	if len(known) < 30 {
		t.Fatalf("read only %d scenarios from %s: has its format changed?", len(known), req)
	}
	rows, err := LoadMapping("mapping.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Scenario != "*" && !known[r.Scenario] {
			t.Errorf("mapping.tsv:%d: scenario %q is not in %s", r.Line, r.Scenario, req)
		}
	}
}

// Every note is about a mutant the reference server has.
func TestNotesNameRealMutants(t *testing.T) {
	notes, err := LoadNotes("mutant-notes.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for id := range notes {
		if _, ok := refserver.Mutants[id]; !ok {
			t.Errorf("mutant-notes.tsv names %q, which is no mutant of the reference server", id)
		}
	}
}

func TestParseMappingRejectsBadRows(t *testing.T) {
	for _, bad := range []string{
		"scenario\tcheck\tclass\tours\trule\ns\tc\tbogus\tRPC-1\tr\n",
		"s\tc\tcompare\tRPC-1\n",
		"s\tc\tcompare\tRPC-1\tr\ns\tc\tfixture\tRPC-2\tr\n",
	} {
		if _, err := parseMapping("m.tsv", []byte(bad)); err == nil || !strings.Contains(err.Error(), "m.tsv:") {
			t.Errorf("parseMapping(%q) = %v, want an error naming the line", bad, err)
		}
	}
}

func TestCompare(t *testing.T) {
	for _, c := range []struct{ official, ours, want string }{
		{"SUCCESS", "pass", "agree"},
		{"SUCCESS", "warn", "agree (ours warns)"},
		{"SUCCESS", "fail", "DISAGREE"},
		{"FAILURE", "fail", "agree"},
		{"FAILURE", "pass", "DISAGREE"},
		{"WARNING", "warn", "agree"},
		{"WARNING", "pass", "DISAGREE (suite warns)"},
		{"WARNING", "unobservable", "ours-unobservable"},
		{"SUCCESS", "skip", "not compared (ours skipped)"},
		{"SKIPPED", "pass", "not compared (suite SKIPPED)"},
		{"", "pass", "not emitted by the suite"},
	} {
		if got := Compare(c.official, c.ours); got != c.want {
			t.Errorf("Compare(%q, %q) = %q, want %q", c.official, c.ours, got, c.want)
		}
	}
}

func TestReplaceSections(t *testing.T) {
	doc := "intro\n<!-- crosscheck:begin a -->\nold\n<!-- crosscheck:end a -->\nkept\n<!-- crosscheck:begin b -->\nb stays\n<!-- crosscheck:end b -->\n"
	got, err := replaceSections([]byte(doc), map[string]string{"a": "new\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := "intro\n<!-- crosscheck:begin a -->\nnew\n<!-- crosscheck:end a -->\nkept\n<!-- crosscheck:begin b -->\nb stays\n<!-- crosscheck:end b -->\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := replaceSections([]byte(doc), map[string]string{"c": "x"}); err == nil {
		t.Error("a section without markers was accepted")
	}
	if _, err := replaceSections([]byte("<!-- crosscheck:begin a -->\n"), map[string]string{"a": "x"}); err == nil {
		t.Error("an unterminated marker was accepted")
	}
}

// The document keeps a marker pair for every section the program writes.
func TestDocumentHasEveryMarker(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "conformance-crosscheck.md"))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{}
	for _, name := range []string{"meta", "summary", "targets", "fixtures", "unmapped", "extra", "mutants"} {
		all[name] = name
	}
	if _, err := replaceSections(data, all); err != nil {
		t.Error(err)
	}
}
