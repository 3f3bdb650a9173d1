package config

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	c, err := Parse("mcp-eval.yaml", []byte(`
server:
  command: go run ./golden-examples/cmd/example-server
  headers:
    Authorization: Bearer ${TOKEN}
  user: current
layers: [auto]
conformance:
  runs: 3
  call-tools: [send_email]
gate:
  max-drop: 0.05
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Command == "" || c.Conformance.Runs != 3 || float64(*c.Gate.MaxDrop) != 0.05 || c.Conformance.CallTools[0] != "send_email" || c.Server.User != "current" {
		t.Fatalf("parsed %+v", c)
	}
}

// gate.max-drop takes the forms --max-drop and the max-drop input take.
func TestParseMaxDropForms(t *testing.T) {
	for src, want := range map[string]float64{"gate:\n  max-drop: 0.02\n": 0.02, "gate:\n  max-drop: 2%\n": 0.02, "gate:\n  max-drop: \"5 %\"\n": 0.05, "gate:\n  max-drop: 0\n": 0} {
		c, err := Parse("mcp-eval.yaml", []byte(src))
		if err != nil || c.Gate.MaxDrop == nil || math.Abs(float64(*c.Gate.MaxDrop)-want) > 1e-12 {
			t.Errorf("Parse(%q): %v, %v; want %v", src, c, err, want)
		}
	}
}

// The cost gates take the forms the flags and inputs take: mcp-eval.yaml
// may write 10% as docs/telemetry.md says.
func TestParseCostGateForms(t *testing.T) {
	for src, want := range map[string][2]float64{
		"gate:\n  max-cost-increase: 10%\n  max-cost-per-run: 5\n":          {0.1, 5},
		"gate:\n  max-cost-increase: 0.25\n  max-cost-per-run: \"$2.50\"\n": {0.25, 2.5},
		"gate:\n  max-cost-increase: \" 25 % \"\n  max-cost-per-run: 1e2\n": {0.25, 100},
	} {
		c, err := Parse("mcp-eval.yaml", []byte(src))
		if err != nil {
			t.Errorf("Parse(%q): %v", src, err)
			continue
		}
		if got := [2]float64{float64(*c.Gate.MaxCostIncrease), float64(*c.Gate.MaxCostPerRun)}; got[0]-want[0] > 1e-12 || want[0]-got[0] > 1e-12 || got[1] != want[1] {
			t.Errorf("Parse(%q) = %v, want %v", src, got, want)
		}
	}
}

func TestParseErrorsNameFileLineAndFix(t *testing.T) {
	cases := map[string]string{
		"server:\n  url: http://x/mcp\n  comand: srv\n":                              "mcp-eval.yaml:3: unknown key \"comand\" in server: did you mean command?",
		"server:\n  url: http://x/mcp\n  header:\n    A: b\nlayerz: [conformance]\n": "mcp-eval.yaml:3: unknown key \"header\" in server: did you mean headers? (the README's Configuration section lists every key)\nmcp-eval.yaml:5: unknown key \"layerz\" in the top level: did you mean layers?",
		"server:\n  xyzzy: 1\n": "mcp-eval.yaml:2: unknown key \"xyzzy\" in server: its keys are ",
		"endpoints:\n  fake:\n    dialect: openai-chat\n    bse-url: http://x\n": "mcp-eval.yaml:4: unknown key \"bse-url\" in endpoints.fake: did you mean base-url?",
		"eval: {runz: 3}\n":                                              "mcp-eval.yaml:1: unknown key \"runz\" in eval: did you mean runs?",
		"conformance:\n  runs: -1\n":                                     "mcp-eval.yaml:2: conformance.runs is -1",
		"gate:\n  max-drop: 2\n":                                         "mcp-eval.yaml:2: gate.max-drop 2 is out of range",
		"gate:\n  max-drop: 1\n":                                         "mcp-eval.yaml:2: gate.max-drop 1 is out of range",
		"gate:\n  max-drop: 100%\n":                                      "mcp-eval.yaml:2: gate.max-drop 1 is out of range",
		"gate:\n  max-drop: .nan\n":                                      "mcp-eval.yaml:2: gate.max-drop \".nan\" is not a number",
		"gate:\n  max-drop: [1]\n":                                       "mcp-eval.yaml:2: want a number or a string",
		"layers: [layer9]\n":                                             "mcp-eval.yaml:1: unknown layer \"layer9\"",
		"server:\n  url: http://x\n  command: srv\n":                     "mcp-eval.yaml:2: server.url and server.command are exclusive",
		"conformance:\n  runs: many\n":                                   "mcp-eval.yaml:2:",
		"server: [\n":                                                    "mcp-eval.yaml:",
		"server:\n  command: srv\n  user: root\n":                        "mcp-eval.yaml:3: server.user is \"root\", want auto, unprivileged or current",
		"gate:\n  max-drop: 0.1\n  max-cost-increase: 10%%\n":            "mcp-eval.yaml:3: gate.max-cost-increase \"10%%\" is not a number: write a fraction like 0.25 or a percentage like 25%",
		"gate:\n  max-cost-increase: abc\n":                              "mcp-eval.yaml:2: gate.max-cost-increase \"abc\" is not a number",
		"gate:\n  max-cost-increase: -0.1\n":                             "mcp-eval.yaml:2: gate.max-cost-increase -0.1 is out of range",
		"gate:\n  max-cost-increase: .nan\n":                             "mcp-eval.yaml:2: gate.max-cost-increase \".nan\" is not a number",
		"gate:\n  max-cost-increase: [1]\n":                              "mcp-eval.yaml:2: want a number or a string",
		"gate:\n  max-cost-per-run: -5\n":                                "mcp-eval.yaml:2: gate.max-cost-per-run -5 is out of range",
		"endpoints:\n  fake: {dialect: anthropic, base-url: http://x}\n": "mcp-eval.yaml:2: endpoints.fake.dialect is \"anthropic\": did you mean anthropic-messages?",
		"endpoints:\n  fake:\n    dialect: openai-chta\n":                "mcp-eval.yaml:3: endpoints.fake.dialect is \"openai-chta\": did you mean openai-chat?",
		"endpoints:\n  fake:\n    base-url: 127.0.0.1:9/v1\n":            "mcp-eval.yaml:3: endpoints.fake.base-url is not an http(s) URL (write it with its scheme",
		"endpoints:\n  fake:\n    base-url: ftp://x/v1\n":                "mcp-eval.yaml:3: endpoints.fake.base-url \"ftp://x/v1\" is not an http(s) URL",
	}
	for src, want := range cases {
		_, err := Parse("mcp-eval.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want prefix %q", src, err, want)
		}
	}
	// A base URL with a key in it is refused without being shown.
	_, err := Parse("mcp-eval.yaml", []byte("endpoints:\n  fake:\n    base-url: https://me:sk-secret@x/v1\n"))
	if err == nil || !strings.Contains(err.Error(), "carries credentials") || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("a base URL with credentials: %v", err)
	}
}

// Every refused key and value of a file at once, one a line in file
// order, each at its own line (eval's runs, not conformance's): a file
// with several mistakes was fixed one run at a time.
func TestParseSaysEveryProblemAtOnce(t *testing.T) {
	src := `conformance:
  runs: 3
layers: [conformance, behavor]
eval:
  runs: -3
  max-steps: -1
waivers:
  - {check: META-1, transport: stdio, reason: x, until: 2027-01-01, extra: 1}
gate:
  max-drop: 2.5
  lint: loud
  confidence: 0.9
`
	_, err := Parse("mcp-eval.yaml", []byte(src))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("Parse = %v, want every problem", err)
	}
	want := []string{
		"mcp-eval.yaml:3: unknown layer \"behavor\"",
		"mcp-eval.yaml:5: eval.runs is -3, want 1..100",
		"mcp-eval.yaml:6: eval.max-steps is -1",
		"mcp-eval.yaml:8: waivers: unknown key \"extra\"",
		"mcp-eval.yaml:10: gate.max-drop 2.5 is out of range",
		"mcp-eval.yaml:11: gate.lint \"loud\" is not a mode",
		"mcp-eval.yaml:12: unknown key \"confidence\" in gate",
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("problem %d: %q, want prefix %q", i+1, lines[i], w)
		}
	}
	var first *Error
	if !errors.As(err, &first) || first.Line != 3 {
		t.Errorf("errors.As finds %+v, want the first problem's *Error", first)
	}
}

// Each problem at its own key's line: a nested key of the same name
// (rate-limits' concurrency, conformance's runs) or flow style does not
// move it; and a value refused by its type is not said twice (a pointer
// yaml.v3 allocated before the value failed read as 0, "want ≥ 1").
func TestParseNamesEachProblemsOwnLine(t *testing.T) {
	cases := map[string][]string{
		"eval:\n  rate-limits:\n    openai: {concurrency: 2}\n  concurrency: -2\n": {"mcp-eval.yaml:4: eval.concurrency is -2"},
		"conformance:\n  runs: 3\neval: {runs: -1}\n":                              {"mcp-eval.yaml:3: eval.runs is -1"},
		"gate:\n  lint: warn\n  max-tool-tokens: abc\n":                            {"mcp-eval.yaml:3: gate.max-tool-tokens: cannot unmarshal"},
		"gate:\n  max-tool-tokens: [1]\n":                                          {"mcp-eval.yaml:2: gate.max-tool-tokens: cannot unmarshal"},
	}
	for src, want := range cases {
		_, err := Parse("mcp-eval.yaml", []byte(src))
		if err == nil {
			t.Errorf("Parse(%q) = nil", src)
			continue
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(want) {
			t.Errorf("Parse(%q): %d problems, want %d:\n%v", src, len(lines), len(want), err)
			continue
		}
		for i, w := range want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("Parse(%q): %q, want prefix %q", src, lines[i], w)
			}
		}
	}
}

// layers: as a list, or as --layers and the action's input write it.
func TestParseLayersAsAListOrAString(t *testing.T) {
	for src, want := range map[string]string{
		"layers: all\n":                      "all",
		"layers: \"0, 1\"\n":                 "0|1",
		"layers: [conformance, behaviour]\n": "conformance|behaviour",
	} {
		c, err := Parse("mcp-eval.yaml", []byte(src))
		if err != nil || strings.Join(c.Layers, "|") != want {
			t.Errorf("Parse(%q) = %v, %v; want layers %s", src, c, err, want)
		}
	}
	if _, err := Parse("mcp-eval.yaml", []byte("layers: {a: 1}\n")); err == nil || !strings.HasPrefix(err.Error(), "mcp-eval.yaml:1: layers: want a list") {
		t.Errorf("layers as a map: %v", err)
	}
}

// A waiver's check id is checked with the file's other problems, with the
// id it likely meant.
func TestParseWithKnownChecks(t *testing.T) {
	src := "waivers:\n  - {check: META-1, transport: stdio, reason: x, until: 2027-01-01}\n  - {check: MTEA-2, transport: stdio, reason: x, until: 2027-01-01}\ngate:\n  lint: loud\n"
	ids := []string{"META-1", "META-2"}
	_, err := ParseWith("mcp-eval.yaml", []byte(src), Options{CheckIDs: ids, KnownCheck: func(id string) bool { return slices.Contains(ids, id) }})
	lines := strings.Split(fmt.Sprint(err), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "mcp-eval.yaml:3: waivers: MTEA-2 is not a check of Layer 0: did you mean META-2?") ||
		!strings.HasPrefix(lines[1], "mcp-eval.yaml:5: gate.lint") {
		t.Errorf("ParseWith = %v", err)
	}
}

// A case's waiver: for one model, or every model; a model without a case
// is refused at its line.
func TestParseCaseWaivers(t *testing.T) {
	c, err := Parse("mcp-eval.yaml", []byte("waivers:\n  - {case: refund, model: \"openai:gpt-5-nano\", reason: small, until: 2027-03-31}\n  - {case: search, reason: rework, until: 2027-01-15}\n"))
	if err != nil || len(c.Waivers) != 2 {
		t.Fatalf("Parse = %v, %v", c, err)
	}
	if g := c.Waivers[0].Gate(); g.Case != "refund" || g.Model != "openai:gpt-5-nano" || g.Check != "" {
		t.Errorf("waiver %+v", g)
	}
	_, err = Parse("mcp-eval.yaml", []byte("waivers:\n  - {model: m2, reason: r, until: 2027-01-15}\n"))
	if err == nil || !strings.HasPrefix(err.Error(), `mcp-eval.yaml:2: waivers: model "m2" without a case`) {
		t.Errorf("a model without a case: %v", err)
	}
}

func TestExpandEnv(t *testing.T) {
	look := func(k string) (string, bool) {
		if k == "TOKEN" {
			return "abc", true
		}
		return "", false
	}
	if got, err := ExpandEnv("Bearer ${TOKEN}", look); err != nil || got != "Bearer abc" {
		t.Fatalf("%q %v", got, err)
	}
	if _, err := ExpandEnv("${NOPE}", look); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Fatalf("missing variable: %v", err)
	}
}

// Waivers and the tool-surface gates load as written, and every mistake
// names its line.
func TestWaiversAndSurfaceGates(t *testing.T) {
	src := "gate:\n  max-tool-tokens: 8000\n  max-tool-tokens-increase: 10%\n  lint: fail\nwaivers:\n  - check: TOOL-5\n    transport: stdio\n    reason: the SDK names tools with spaces (sdk#42)\n    until: 2026-12-31\n  - {check: LINT-2, reason: generated schemas, until: \"2027-01-15\"}\n"
	c, err := Parse("mcp-eval.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if *c.Gate.MaxToolTokens != 8000 || float64(*c.Gate.MaxToolTokensIncrease) != 0.1 || c.Gate.Lint != "fail" {
		t.Errorf("gate: %+v", c.Gate)
	}
	if len(c.Waivers) != 2 || c.Waivers[0].Until != "2026-12-31" || c.Waivers[0].Line != 6 || c.Waivers[1].Check != "LINT-2" || c.Waivers[1].Line != 10 {
		t.Errorf("waivers: %+v", c.Waivers)
	}
	for src, want := range map[string]string{
		"waivers:\n  - check: TOOL-5\n    reason: x\n    until: 2026-13-01\n":   `mcp-eval.yaml:2: waivers: until "2026-13-01" of TOOL-5 is not a date YYYY-MM-DD`,
		"waivers:\n  - check: TOOL-5\n    until: 2026-12-01\n":                  "mcp-eval.yaml:2: waivers: TOOL-5 has no reason",
		"waivers:\n  - check: tool5\n    reason: x\n    until: 2026-12-01\n":    `mcp-eval.yaml:2: waivers: check "tool5" is not a check id like TOOL-5`,
		"waivers:\n  - check: TOOL-5\n    reason: x\n    expires: 2026-12-01\n": `mcp-eval.yaml:4: waivers: unknown key "expires"`,
		"waivers:\n  - TOOL-5\n": "mcp-eval.yaml:2: waivers: each entry is a map",
		"waivers:\n  - {check: TOOL-5, transport: sse, reason: x, until: 2026-12-01}\n": `mcp-eval.yaml:2: waivers: transport "sse" is not http or stdio`,
		"gate:\n  lint: loud\n":                     `mcp-eval.yaml:2: gate.lint "loud" is not a mode: want off, warn or fail`,
		"gate:\n  max-tool-tokens: 0\n":             "mcp-eval.yaml:2: gate.max-tool-tokens is 0",
		"gate:\n  max-tool-tokens-increase: lots\n": `mcp-eval.yaml:2: gate.max-tool-tokens-increase "lots" is not a number`,
	} {
		_, err := Parse("mcp-eval.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// The layers a config file accepts are those --layers accepts.
func TestLayersAsTheFlagReadsThem(t *testing.T) {
	for _, src := range []string{"layers: [behaviour]\n", "layers: [all]\n", "layers: [0, telemetry]\n"} {
		if _, err := Parse("mcp-eval.yaml", []byte(src)); err != nil {
			t.Errorf("Parse(%q): %v", src, err)
		}
	}
}

// A flow-style line holds several keys: each refused value on it is said,
// each named by its key, and a value refused by its type once.
func TestParseSaysEveryProblemOfAFlowLine(t *testing.T) {
	src := "eval: {runs: -3, max-steps: -1, runz: 2}\ngate: {max-tool-tokens: abc, lint: loud}\nconformance: {runs: many}\n"
	_, err := Parse("mcp-eval.yaml", []byte(src))
	if err == nil {
		t.Fatal("Parse accepted it")
	}
	want := []string{
		`mcp-eval.yaml:1: unknown key "runz" in eval: did you mean runs?`,
		"mcp-eval.yaml:1: eval.runs is -3, want 1..100",
		"mcp-eval.yaml:1: eval.max-steps is -1",
		"mcp-eval.yaml:2: gate.max-tool-tokens: cannot unmarshal !!str `abc` into int",
		`mcp-eval.yaml:2: gate.lint "loud" is not a mode`,
		"mcp-eval.yaml:3: conformance.runs: cannot unmarshal !!str `many` into int",
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("problem %d: %q, want prefix %q", i+1, lines[i], w)
		}
	}
}
