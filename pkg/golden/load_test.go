package golden

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// Every testdata/err/X.yaml must fail to load with exactly the lines of
// X.want, in order: a line is the error text (positions relative to
// testdata/err) or a /regexp/ for messages that quote a library.
func TestLoadErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/err/*.yaml")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".want")
			if err != nil {
				t.Fatal(err)
			}
			_, lerr := Load(f)
			if lerr == nil {
				t.Fatal("loaded without error")
			}
			var es Errors
			if !errors.As(lerr, &es) {
				var e *Error
				if !errors.As(lerr, &e) {
					t.Fatalf("error is %T, want Errors: %v", lerr, lerr)
				}
				es = Errors{e}
			}
			var got []string
			for _, e := range es {
				got = append(got, strings.ReplaceAll(e.Error(), "testdata/err/", ""))
			}
			wantLines := strings.Split(strings.TrimSpace(string(want)), "\n")
			if len(got) != len(wantLines) {
				t.Fatalf("%d errors, want %d:\n%s", len(got), len(wantLines), strings.Join(got, "\n"))
			}
			for i, w := range wantLines {
				if re, ok := strings.CutPrefix(w, "/"); ok && strings.HasSuffix(re, "/") {
					if !regexp.MustCompile(strings.TrimSuffix(re, "/")).MatchString(got[i]) {
						t.Errorf("error %d:\n got %s\nwant /%s", i, got[i], re)
					}
				} else if got[i] != w {
					t.Errorf("error %d:\n got %s\nwant %s", i, got[i], w)
				}
			}
		})
	}
}

// Every error names file:line:column, except the few a YAML parser or the
// file system reports without one.
func TestErrorsHavePositions(t *testing.T) {
	_, err := Load("testdata/err/expect.yaml")
	var es Errors
	if !errors.As(err, &es) {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Pos.File == "" || e.Pos.Line == 0 || e.Pos.Column == 0 {
			t.Errorf("no full position: %v", e)
		}
		if e.Hint == "" {
			t.Errorf("no hint: %v", e)
		}
	}
}

func TestLoadOK(t *testing.T) {
	set, err := Load("testdata/ok/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Cases) != 5 {
		t.Fatalf("%d cases, want 5", len(set.Cases))
	}
	byID := map[string]Case{}
	for _, c := range set.Cases {
		byID[c.ID] = c
	}

	w := byID["weather"]
	if w.ExpectTool != "get_weather" || w.Negative || w.Kind != Hard || w.Pos != (Position{File: "testdata/ok/full.yaml", Line: 2, Column: 5}) {
		t.Errorf("weather: %+v", w)
	}
	if want := map[string]any{"location": "Seattle, WA", "units": "celsius", "days": int64(3), "ratio": 0.5, "flags": []any{true, nil}, "when": "2026-01-02"}; !reflect.DeepEqual(w.ExpectArgs, want) {
		t.Errorf("args: %#v", w.ExpectArgs)
	}
	if want := map[string]Matcher{
		"location": {Kind: MatchSemantic},
		"units":    {Kind: MatchExact},
		"days":     {Kind: MatchTolerance, Tolerance: 1},
		"ratio":    {Kind: MatchTolerance, Tolerance: 0.1, Relative: true},
	}; !reflect.DeepEqual(w.ArgMatch, want) {
		t.Errorf("matchers: %#v", w.ArgMatch)
	}
	if !reflect.DeepEqual(w.Tags, []string{"weather", "2026"}) {
		t.Errorf("tags: %q", w.Tags)
	}

	n := byID["no-tool"]
	if !n.Negative || n.ExpectTool != "" || n.Kind != Soft || len(n.Steps()) != 0 {
		t.Errorf("negative: %+v", n)
	}

	ch := byID["chain"]
	steps := ch.Steps()
	if len(steps) != 3 || steps[0].Tool != "search_invoices" || steps[1].Tool != "send_email" || steps[2].Tool != "get_weather" {
		t.Fatalf("chain steps: %+v", steps)
	}
	if !reflect.DeepEqual(steps[0].Args, map[string]any{"customer_id": "C1234"}) ||
		!reflect.DeepEqual(steps[0].ArgMatch, map[string]Matcher{"customer_id": {Kind: MatchRegex, Pattern: `^C\d{4}$`}}) {
		t.Errorf("step 0: %+v", steps[0])
	}
	if steps[1].Args != nil || steps[1].ArgMatch != nil || steps[2].Args["location"] != "Oslo" || steps[2].ArgMatch["location"].Kind != MatchSemantic {
		t.Errorf("steps 1, 2: %+v", steps[1:])
	}
	if got := string(ch.Inputs["confirm"]); got != `{"action":"accept","content":{"confirm":true}}` {
		t.Errorf("inputs: %s", got)
	}
	if ch.Rubric != "The email went out.\n" || ch.RubricFile != "" {
		t.Errorf("inline rubric: %q %q", ch.Rubric, ch.RubricFile)
	}

	f := byID["rubric-file"]
	if f.RubricFile != "rubrics/done.md" || !strings.HasPrefix(f.Rubric, "Done means") {
		t.Errorf("file rubric: %q %q", f.RubricFile, f.Rubric)
	}
	if f.ExpectTool != "42" {
		t.Errorf("a quoted number is a name: %q", f.ExpectTool)
	}

	alias := byID["alias"]
	if got := string(alias.Inputs["confirm"]); got != `{"action":"accept","content":{"confirm":true}}` {
		t.Errorf("alias inputs: %s", got)
	}
}

// A bare list of cases is a golden file too.
func TestParseBareList(t *testing.T) {
	set, err := Parse("mem.yaml", []byte("- {id: a, prompt: hi, expect_tool: null}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Cases) != 1 || !set.Cases[0].Negative || set.Path != "mem.yaml" {
		t.Fatalf("%+v", set)
	}
}

// A directory is one set: its files in name order, ids unique across them.
func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yml", "cases:\n  - {id: two, prompt: p, expect_tool: x}\n")
	write("a.yaml", "cases:\n  - {id: one, prompt: p, expect_tool: x}\n")
	write("notes.txt", "not a golden file")
	set, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Cases) != 2 || set.Cases[0].ID != "one" || set.Cases[1].ID != "two" || set.Path != dir {
		t.Fatalf("%+v", set)
	}
	write("c.yaml", "cases:\n  - {id: one, prompt: p, expect_tool: y}\n")
	_, err = Load(dir)
	if err == nil || !strings.Contains(err.Error(), `c.yaml:2:5: case id "one" is already used at `+filepath.Join(dir, "a.yaml")+":2:5") {
		t.Fatalf("duplicate across files: %v", err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.yaml or *.yml file") {
		t.Fatalf("empty directory: %v", err)
	}
}

// A symlink cannot smuggle a file from outside the golden directory into
// a rubric, which is sent to the judge model.
func TestRubricSymlinkEscape(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "r.md")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	file := filepath.Join(dir, "g.yaml")
	if err := os.WriteFile(file, []byte("- {id: a, prompt: p, expect_tool: x, rubric: {file: r.md}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := Load(file)
	if err == nil {
		t.Fatalf("read a rubric through a symlink leaving the directory: %q", set.Cases[0].Rubric)
	}
	if strings.Contains(err.Error(), "secret") && !strings.Contains(err.Error(), "secret.txt") {
		t.Fatalf("the error leaks the file: %v", err)
	}
}

func TestLimits(t *testing.T) {
	big := make([]byte, MaxFileBytes+1)
	if _, err := Parse("big.yaml", big); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("oversized file: %v", err)
	}
	long := "- {id: a, prompt: " + strings.Repeat("x", MaxPromptBytes+1) + ", expect_tool: t}\n"
	if _, err := Parse("long.yaml", []byte(long)); err == nil || !strings.Contains(err.Error(), "prompt is 65537 bytes") {
		t.Errorf("oversized prompt: %v", err)
	}
	deep := "- {id: a, prompt: p, expect_tool: t, expect_args: {x: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}}\n"
	if _, err := Parse("deep.yaml", []byte(deep)); err == nil || !strings.Contains(err.Error(), "nested more than 32") {
		t.Errorf("deep value: %v", err)
	}
}

func TestMatcherRoundTrip(t *testing.T) {
	for _, s := range []string{"exact", "semantic", `regex:^C\d{4}$`, "regex:a:b", "tolerance:0.5", "tolerance:2%", "tolerance:0.1%", "tolerance:0.7%", "tolerance:33.3%", "tolerance:0"} {
		m, err := ParseMatcher(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if m.String() != s {
			t.Errorf("%s came back as %s", s, m.String())
		}
	}
	if m, _ := ParseMatcher("regex:a:b"); m.Pattern != "a:b" {
		t.Errorf("the pattern is everything after the first colon: %q", m.Pattern)
	}
	for _, s := range []string{"", "Exact", "exact:1", "regex:", "tolerance:", "tolerance:x", "tolerance:NaN", "tolerance:Inf", "regex:" + strings.Repeat("a", 1025)} {
		if _, err := ParseMatcher(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

// Case.Definition leaves the position out, so hashing a moved case gives
// the same hash.
func TestDefinition(t *testing.T) {
	a := Case{ID: "x", Prompt: "p", ExpectTool: "t", Pos: Position{File: "a.yaml", Line: 3, Column: 5}}
	b := a
	b.Pos = Position{File: "b.yaml", Line: 90, Column: 5}
	ja, _ := json.Marshal(a.Definition())
	jb, _ := json.Marshal(b.Definition())
	if string(ja) != string(jb) {
		t.Fatalf("%s != %s", ja, jb)
	}
}

func TestPositionString(t *testing.T) {
	for p, want := range map[Position]string{
		{File: "f"}:                     "f",
		{File: "f", Line: 2}:            "f:2",
		{File: "f", Line: 2, Column: 3}: "f:2:3",
	} {
		if p.String() != want {
			t.Errorf("%+v: %s", p, p.String())
		}
	}
}

// A golden path that does not exist says so at the path, with the YAML
// file beside it that was likely meant.
func TestLoadMissingPathSuggestsTheSibling(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tasks.yaml"), []byte("version: 1\ncases: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(filepath.Join(dir, "task.yaml"))
	want := filepath.Join(dir, "task.yaml") + ": no such file or directory (did you mean " + filepath.Join(dir, "tasks.yaml") + "?)"
	if err == nil || err.Error() != want {
		t.Errorf("Load = %v, want %q", err, want)
	}
	if _, err := Load(filepath.Join(dir, "elsewhere.yaml")); err == nil || !strings.Contains(err.Error(), "no such file or directory (the golden set is a YAML file") {
		t.Errorf("nothing near: %v", err)
	}
}
