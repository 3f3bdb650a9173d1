package golden

import (
	"fmt"
	"strings"
	"testing"
)

var exampleTools = []string{"get_weather", "search_invoices", "send_email", "lookup_region", "slow_count"}

// The bundled example set is clean against the example server's tools.
func TestHygieneExampleClean(t *testing.T) {
	set, err := Load("../../golden-examples/tasks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if w := Hygiene(set, exampleTools); len(w) != 0 {
		t.Errorf("warnings on the bundled example: %v", w)
	}
	negatives, chains, mrtr := 0, 0, 0
	for _, c := range set.Cases {
		if c.Negative {
			negatives++
		}
		if c.Chain() {
			chains++
		}
		if len(c.Inputs) > 0 {
			mrtr++
		}
	}
	if n := len(set.Cases); n < 20 || n > 30 || negatives < 4 || chains < 2 || mrtr < 1 {
		t.Errorf("the example must have 20–30 cases, ≥ 4 negatives, chains and an MRTR case: %d, %d, %d, %d", n, negatives, chains, mrtr)
	}
}

func TestHygieneWarnings(t *testing.T) {
	set, err := Parse("small.yaml", []byte(`
cases:
  - {id: a, prompt: p, expect_tool: get_weather, expect_args: {id: C1}, arg_match: {id: 'regex:C\d'}}
  - {id: b, prompt: p, expect_sequence: [search_invoices, send_mail]}
  - {id: c, prompt: p, expect_tool: null}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := Hygiene(set, append(exampleTools, "get_weather")) // a duplicate in the server's list is harmless
	want := []string{
		`small.yaml: warning: the set has 3 cases, fewer than 20 (each case moves an accuracy by 33 points; add cases until the scores mean something) [few-cases]`,
		`small.yaml: warning: the set has 1 negative case (expect_tool: null), fewer than 4 (add prompts that must not call any tool (small talk, questions the tools cannot answer, near misses): without them over-triggering goes unmeasured) [few-negatives]`,
		`small.yaml:3:5: warning: case "a": arg_match for "id" is the unanchored regex "C\\d", which accepts any value that merely contains a match (write regex:^C\d$ to match the whole value) [unanchored-regex]`,
		`small.yaml:4:5: warning: case "b" expects the tool "send_mail", which the server does not list (did you mean send_email? every run of this case will fail; fix the name or the server) [unknown-tool]`,
		`small.yaml: warning: no case expects the tool "lookup_region" (add a case whose prompt should select it: a description change there goes unnoticed, and so does another tool stealing its prompts) [untested-tool]`,
		`small.yaml: warning: no case expects the tool "send_email" (add a case whose prompt should select it: a description change there goes unnoticed, and so does another tool stealing its prompts) [untested-tool]`,
		`small.yaml: warning: no case expects the tool "slow_count" (add a case whose prompt should select it: a description change there goes unnoticed, and so does another tool stealing its prompts) [untested-tool]`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d warnings, want %d:\n%s", len(got), len(want), join(got))
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("warning %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	// Without the server's tool list the two tool checks are skipped.
	if w := Hygiene(set, nil); len(w) != 3 {
		t.Errorf("without tools: %s", join(w))
	}
	if Hygiene(nil, nil) != nil {
		t.Error("nil set")
	}
}

// The thresholds are "fewer than": exactly 20 cases with 4 negatives is
// clean.
func TestHygieneThresholds(t *testing.T) {
	var b strings.Builder
	b.WriteString("cases:\n")
	for i := range 20 {
		tool := "t"
		if i < 4 {
			tool = "null"
		}
		fmt.Fprintf(&b, "  - {id: c%d, prompt: p, expect_tool: %s}\n", i, tool)
	}
	set, err := Parse("twenty.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if w := Hygiene(set, []string{"t"}); len(w) != 0 {
		t.Errorf("%s", join(w))
	}
}

func join(ws []Warning) string {
	var lines []string
	for _, w := range ws {
		lines = append(lines, w.String())
	}
	return strings.Join(lines, "\n")
}
