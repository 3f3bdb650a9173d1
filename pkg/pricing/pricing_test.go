package pricing

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

func day(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d.Add(12 * time.Hour)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestEmbeddedTableParses(t *testing.T) {
	tb := Default()
	if tb.Version() == "" || len(tb.Models()) < 10 {
		t.Fatalf("version %q, %d models", tb.Version(), len(tb.Models()))
	}
}

// A price change is a new dated row: a call is priced by the row of its
// day, so re-costing an old report does not rewrite its history.
func TestDatedPriceChange(t *testing.T) {
	tb := Default()
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}
	before := tb.Quote("anthropic:claude-sonnet-5", day("2026-08-31"), u)
	after := tb.Quote("anthropic:claude-sonnet-5", day("2026-09-01"), u)
	if !before.Known || !after.Known {
		t.Fatalf("unknown: %+v %+v", before, after)
	}
	// Introductory $2/$10, then $3/$15 per million.
	if !near(before.USD, 2+1) || !near(after.USD, 3+1.5) {
		t.Errorf("before %v after %v, want 3 and 4.5", before.USD, after.USD)
	}
	if !strings.Contains(after.Basis, "from 2026-09-01") || strings.Contains(before.Basis, "from") {
		t.Errorf("basis before %q after %q", before.Basis, after.Basis)
	}
	// The row applies from midnight UTC of its date.
	edge := tb.Quote("anthropic:claude-sonnet-5", time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), u)
	late := tb.Quote("anthropic:claude-sonnet-5", time.Date(2026, 8, 31, 23, 59, 59, 0, time.UTC), u)
	if !near(edge.USD, 4.5) || !near(late.USD, 3) {
		t.Errorf("at the boundary: %v and %v", edge.USD, late.USD)
	}
}

// Prompt-length tiers apply to every token of a request above the
// threshold, and cache tokens count toward the prompt.
func TestPromptTiers(t *testing.T) {
	tb := Default()
	at := day("2026-08-10") // Terra after its 2026-07-30 cut: $2/$0.20/$2.50/$12; above 272k $4/$0.40/$5/$18
	small := llm.Usage{InputTokens: 100_000, CachedInputTokens: 172_000, OutputTokens: 1000}
	q := tb.Quote("openai:gpt-5.6-terra", at, small)
	want := (100_000*2 + 172_000*0.20 + 1000*12) / 1e6
	if !near(q.USD, want) || strings.Contains(q.Basis, "above") {
		t.Errorf("272000-token prompt: %v (%s), want %v at base rates", q.USD, q.Basis, want)
	}
	big := small
	big.CacheWriteTokens = 1
	q = tb.Quote("openai:gpt-5.6-terra", at, big)
	want = (100_000*4 + 172_000*0.40 + 1*5 + 1000*18) / 1e6
	if !near(q.USD, want) || !strings.Contains(q.Basis, "prompt above 272000 tokens") {
		t.Errorf("272001-token prompt: %v (%s), want %v at tier rates", q.USD, q.Basis, want)
	}
	// The same request before the cut is priced at the old rates.
	q = tb.Quote("openai:gpt-5.6-terra", day("2026-07-29"), big)
	want = (100_000*5 + 172_000*0.50 + 1*6.25 + 1000*22.50) / 1e6
	if !near(q.USD, want) {
		t.Errorf("before the cut: %v, want %v", q.USD, want)
	}
}

func TestReasoningIsNotChargedTwice(t *testing.T) {
	u := llm.Usage{InputTokens: 1000, OutputTokens: 500, ReasoningTokens: 400}
	q := Default().Quote("openai:gpt-5-mini", day("2026-10-01"), u)
	if want := (1000*0.25 + 500*2.0) / 1e6; !near(q.USD, want) {
		t.Errorf("got %v, want %v: reasoning is part of output", q.USD, want)
	}
}

func TestUnknownIsNeverZero(t *testing.T) {
	tb := Default()
	for _, spec := range []string{"openai:gpt-9-imaginary", "anthropic:gpt-5-mini", "openai-compatible:llama3.1@http://localhost:11434/v1", "gpt-5-mini", "", "openai:claude-sonnet-5"} {
		q := tb.Quote(spec, day("2026-10-01"), llm.Usage{InputTokens: 10})
		if q.Known || q.Unknown == "" || q.USD != 0 {
			t.Errorf("%q: %+v, want unknown with a reason", spec, q)
		}
	}
	// A sonnet-5 pattern must not price a later sonnet-5-5.
	if tb.Known("anthropic:claude-sonnet-5-5") {
		t.Error("claude-sonnet-5-5 is priced as claude-sonnet-5")
	}
	if !tb.Known("anthropic:claude-sonnet-5-20260801") || !tb.Known("anthropic:claude-haiku-4-5-20251001") {
		t.Error("dated snapshots of known models are not priced")
	}
}

func TestOverrideReplacesAndAdds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prices.yaml")
	os.WriteFile(path, []byte(`version: acme-2026-11
models:
  - provider: openai
    id: gpt-5-mini
    prices:
      - {input: 0.10, output: 1}
  - provider: openai-compatible
    id: local-llama
    match: ["llama3.1@*"]
    prices:
      - {input: 0, output: 0}
`), 0o644)
	over, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tb := Default().With(over)
	if !strings.HasSuffix(tb.Version(), "+acme-2026-11") {
		t.Errorf("version %q", tb.Version())
	}
	q := tb.Quote("openai:gpt-5-mini", day("2026-10-01"), llm.Usage{InputTokens: 1_000_000, CachedInputTokens: 1_000_000})
	// No cache-read rate in the override: cached tokens cost the input rate.
	if !near(q.USD, 0.2) {
		t.Errorf("override price %v, want 0.2", q.USD)
	}
	q = tb.Quote("openai-compatible:llama3.1@http://localhost:11434/v1", day("2026-10-01"), llm.Usage{InputTokens: 5000})
	if !q.Known || q.USD != 0 {
		t.Errorf("a free local model: %+v, want known $0", q)
	}
	if Default().Quote("openai:gpt-5-mini", day("2026-10-01"), llm.Usage{InputTokens: 1_000_000}).USD != 0.25 {
		t.Error("With changed the default table")
	}
}

func TestParseRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"no version":         "models: []",
		"unknown key":        "version: x\nmodels:\n  - {provider: a, id: b, prices: [{input: 1, output: 1, ouput: 2}]}",
		"negative":           "version: x\nmodels:\n  - {provider: a, id: b, prices: [{input: -1, output: 1}]}",
		"no output":          "version: x\nmodels:\n  - {provider: a, id: b, prices: [{input: 1}]}",
		"rows out of order":  "version: x\nmodels:\n  - {provider: a, id: b, prices: [{from: 2026-02-01, input: 1, output: 1}, {from: 2026-01-01, input: 1, output: 1}]}",
		"second row no from": "version: x\nmodels:\n  - {provider: a, id: b, prices: [{input: 1, output: 1}, {input: 2, output: 2}]}",
		"bad date":           "version: x\nmodels:\n  - {provider: a, id: b, prices: [{from: 1 Sept, input: 1, output: 1}]}",
		"duplicate":          "version: x\nmodels:\n  - {provider: a, id: b, prices: [{input: 1, output: 1}]}\n  - {provider: a, id: b, prices: [{input: 1, output: 1}]}",
		"star inside":        "version: x\nmodels:\n  - {provider: a, id: b, match: [\"g*t\"], prices: [{input: 1, output: 1}]}",
		"tiers unordered":    "version: x\nmodels:\n  - {provider: a, id: b, prices: [{input: 1, output: 1, tiers: [{above: 10, input: 1, output: 1}, {above: 5, input: 1, output: 1}]}]}",
		"other currency":     "version: x\ncurrency: EUR\nmodels: []",
	} {
		if _, err := Parse([]byte(doc), name); !errors.Is(err, ErrTable) {
			t.Errorf("%s: err %v, want ErrTable", name, err)
		}
	}
}

func TestBeforeFirstRowIsUnknown(t *testing.T) {
	tb, err := Parse([]byte("version: x\nmodels:\n  - {provider: a, id: b, prices: [{from: 2026-05-01, input: 1, output: 1}]}"), "t")
	if err != nil {
		t.Fatal(err)
	}
	if q := tb.Quote("a:b", day("2026-04-30"), llm.Usage{InputTokens: 1}); q.Known || !strings.Contains(q.Unknown, "starts 2026-05-01") {
		t.Errorf("%+v", q)
	}
}

func TestParseNamesTheLineOfEveryBadRow(t *testing.T) {
	doc := `version: x
models:
  - provider: acme
    id: m1
    prices:
      - {input: 1, output: 2}
      - {from: 2020-01-01, input: -1, output: 2}
  - provider: acme
    id: m1
    prices: []
  - provider: acme
    prices:
      - {input: 1, output: 2}
`
	_, err := Parse([]byte(doc), "over.yaml")
	if !errors.Is(err, ErrTable) {
		t.Fatalf("err %v, want ErrTable", err)
	}
	for _, want := range []string{
		"over.yaml:7: models[0] (acme:m1) prices[1]: rate -1",
		"over.yaml:8: models[1] (acme:m1): listed twice (first on line 3)",
		"over.yaml:8: models[1] (acme:m1): no prices: add a row",
		"over.yaml:11: models[2] (acme:): provider and id are required",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	_, err = Parse([]byte("version: x\nmodels:\n  - provider: a\n    id: b\n    prices:\n      - {input: 1, ouput: 2}\n"), "typo.yaml")
	if err == nil || !strings.Contains(err.Error(), "typo.yaml:6: field ouput not found") || !strings.Contains(err.Error(), "a row has from, input") {
		t.Errorf("an unknown key must name its line and the keys allowed: %v", err)
	}
}

// A syntax error names the line to fix, not the line above the construct
// that holds it (yaml.v3's own line for a parser error with a context).
func TestParseNamesTheLineOfASyntaxError(t *testing.T) {
	doc := "version: x\nmodels:\n  - provider: a\n    id: b\n    prices: [{input: 1, output: 1}\n  - provider: c\n"
	_, err := Parse([]byte(doc), "p.yaml")
	if err == nil || !strings.Contains(err.Error(), "p.yaml:5: ") {
		t.Fatalf("err %v, want it on p.yaml:5, where the [ is not closed", err)
	}
}
