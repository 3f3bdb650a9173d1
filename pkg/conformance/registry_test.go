package conformance

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/internal/testenv"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

func TestRegistryIsValid(t *testing.T) {
	if err := check.Validate(registry()); err != nil {
		t.Fatal(err)
	}
}

// Run refuses an invalid registry before it starts the server: the target
// here does not exist, so any attempt to reach it would fail differently.
func TestRunRefusesUnknownSelection(t *testing.T) {
	_, _, err := Run(t.Context(), Target{Argv: []string{"/nonexistent/server"}}, Options{Options: check.Options{Only: []string{"POISON-9"}}})
	if err == nil || !strings.Contains(err.Error(), `"POISON-9" names no check or family`) {
		t.Fatalf("Run with --only POISON-9: %v", err)
	}
}

func TestKnownIDs(t *testing.T) {
	for _, ok := range [][]string{nil, {"POISON"}, {"POISON-3"}, {"RESIL"}, {"RESIL-1", "DISC", "TOOL-2"}} {
		if err := KnownIDs(ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"POISON-9"}, {"DISC", "disc"}, {"NOPE"}} {
		if err := KnownIDs(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
	if FamilyTitle("POISON") != "tool poisoning" || FamilyTitle("DISC") != "server/discover" || FamilyTitle("NOPE") != "" {
		t.Error("family titles")
	}
}

// The POISON checks keep their place at the end of the report, where they
// were when the scan ran after the registry, and RESIL-1 follows them.
func TestRegistryEndsWithPoisonThenResil(t *testing.T) {
	reg := Registry()
	var tail []string
	for _, c := range reg[len(reg)-9:] {
		tail = append(tail, c.ID)
	}
	want := "POISON-1 POISON-2 POISON-3 POISON-4 POISON-5 POISON-6 POISON-7 POISON-8 RESIL-1"
	if strings.Join(tail, " ") != want {
		t.Fatalf("registry ends with %v, want %s", tail, want)
	}
}

// checklistIDs reads every item id of §1 of the shared spec checklist.
func checklistIDs(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join(testenv.SharedDir(t), "docs", "spec-checklist.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start, end := strings.Index(text, "## 1. Checklist"), strings.Index(text, "## 2. Backward compatibility")
	if start < 0 || end < start {
		t.Fatal("spec-checklist.md has no §1 / §2 headings")
	}
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^- \*\*([A-Z]+-[0-9]+)\*\*`).FindAllStringSubmatch(text[start:end], -1) {
		seen[m[1]] = true
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Every checklist item is either a check or listed as unobservable with a
// reason, never both, and nothing else is registered but the families the
// harness adds beyond the checklist, each with its reason.
func TestRegistryCoversTheChecklist(t *testing.T) {
	want := checklistIDs(t)
	un := Unobservable()
	var got []string
	for _, f := range families() {
		if f.beyondChecklist != "" {
			if len(f.unobservable) > 0 || slices.ContainsFunc(want, func(id string) bool { return strings.HasPrefix(id, f.name+"-") }) {
				t.Errorf("family %s is said to be beyond the checklist, but the checklist has items of it", f.name)
			}
			continue
		}
		for _, c := range f.checks {
			if _, dup := un[c.ID]; dup {
				t.Errorf("%s is both a check and unobservable", c.ID)
			}
			if why, ok := f.added[c.ID]; ok {
				if strings.TrimSpace(why) == "" || slices.Contains(want, c.ID) {
					t.Errorf("%s is added beyond the checklist without a reason, or the checklist has it", c.ID)
				}
				continue
			}
			got = append(got, c.ID)
		}
		for id := range f.added {
			if !slices.ContainsFunc(f.checks, func(c *check.Check) bool { return c.ID == id }) {
				t.Errorf("family %s lists %s as added, but has no such check", f.name, id)
			}
		}
	}
	for id, why := range un {
		if strings.TrimSpace(why) == "" {
			t.Errorf("%s is unobservable without a reason", id)
		}
		got = append(got, id)
	}
	sort.Strings(got)
	for _, id := range want {
		if !slices.Contains(got, id) {
			t.Errorf("checklist item %s has no check and is not listed as unobservable", id)
		}
	}
	for _, id := range got {
		if !slices.Contains(want, id) {
			t.Errorf("%s is registered but not in the checklist", id)
		}
	}
}

// A check's id leads to one place: variable IDn in the family's file.
func TestCheckIDsLeadToOnePlace(t *testing.T) {
	for _, f := range families() {
		for _, c := range f.checks {
			if c.Family() != f.name {
				t.Errorf("%s is registered in family %s", c.ID, f.name)
			}
			src, err := os.ReadFile(strings.ToLower(f.name) + ".go")
			if err != nil {
				t.Fatalf("family %s has no file: %v", f.name, err)
			}
			decl := "var " + strings.ReplaceAll(c.ID, "-", "") + " = &check.Check{"
			if strings.Count(string(src), decl) != 1 || strings.Count(string(src), `ID: "`+c.ID+`"`) != 1 {
				t.Errorf("%s: want exactly one %q with ID %q in %s.go", c.ID, decl, c.ID, strings.ToLower(f.name))
			}
		}
	}
}
