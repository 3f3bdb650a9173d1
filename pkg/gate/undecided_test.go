package gate_test

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/report/reporttest"
)

// The lexical selector as pkg/behavior writes it into a report; the CLI's
// TestGateMatchesTheCLIComposition builds it from pkg/behavior itself, so
// a change there fails a test rather than gating the selector.
const (
	lexicalID    = "baseline:lexical (baseline, no LLM)"
	lexicalLabel = "baseline, no LLM"
)

func withLexical(r *report.Report) *report.Report {
	r.Models = append(r.Models, report.Model{ID: lexicalID, Provider: lexicalLabel, Requested: "lexical"})
	return r
}

func TestIsLexicalBaseline(t *testing.T) {
	r := withLexical(reporttest.New())
	if !gate.IsLexicalBaseline(r, lexicalID) {
		t.Errorf("%q (provider %q) is not recognised as the lexical baseline", lexicalID, lexicalLabel)
	}
	// By the provider alone, for an id written some other way.
	r.Models = append(r.Models, report.Model{ID: "yardstick", Provider: lexicalLabel})
	if !gate.IsLexicalBaseline(r, "yardstick") {
		t.Error("a model whose provider is the baseline label is not recognised")
	}
	if gate.IsLexicalBaseline(r, "m1") {
		t.Error("m1 is taken for the lexical baseline")
	}
}

func undecided(r *report.Report, c, model string, runs int) *report.Report {
	r.Behavior.Inconclusive = append(r.Behavior.Inconclusive, report.Inconclusive{Case: c, Model: model, Runs: runs, Reason: "the budget was reached"})
	return r
}

func TestUndecidedRunsMakeAPassInconclusive(t *testing.T) {
	mk := func() *report.Report {
		r := reporttest.New()
		for _, id := range []string{"a", "b", "c"} {
			reporttest.Case(r, id, report.Soft, "m1", 5, 5)
		}
		return r
	}
	base := mk()
	g := evaluate(t, undecided(mk(), "b", "m1", 2), base)
	if g.Verdict != report.GateInconclusive {
		t.Errorf("verdict %s, want inconclusive", g.Verdict)
	}
	var got []report.GateItem
	for _, it := range find(g, report.KindCase, "b", "m1") {
		if it.Rule == gate.RuleUndecided {
			got = append(got, it)
		} else if it.Status != report.ItemPass {
			t.Errorf("the decided runs of b: %s, want pass", it.Status)
		}
	}
	if len(got) != 1 || got[0].Status != report.ItemInconclusive || got[0].Subject != "b" || got[0].Model != "m1" ||
		got[0].Reason != "2 runs not decided: the budget was reached" {
		t.Errorf("undecided items %+v", got)
	}

	// A case × model with no decided run at all has no result, only the
	// entry: still inconclusive.
	r := mk()
	r.Behavior.Results = r.Behavior.Results[:2]
	if g := evaluate(t, undecided(r, "c", "m1", 5), base); g.Verdict != report.GateInconclusive {
		t.Errorf("every run of c undecided: verdict %s, want inconclusive", g.Verdict)
	}

	// Undecided runs never soften a fail.
	r = mk()
	r.Behavior.Results[0].Passed.K, r.Behavior.Results[0].Scores[0].K = 0, 0
	if g := evaluate(t, undecided(r, "b", "m1", 2), base); g.Verdict != report.GateFail {
		t.Errorf("a new failure and undecided runs: verdict %s, want fail", g.Verdict)
	}
}

func TestLexicalBaselineIsShownNotGated(t *testing.T) {
	// Every case far below its floor and runs undecided: with a model that
	// would fail; with the lexical selector it is a yardstick, not gated.
	now := withLexical(reporttest.New())
	for _, id := range []string{"a", "b"} {
		reporttest.Case(now, id, report.Hard, lexicalID, 0, 5)
	}
	undecided(now, "b", lexicalID, 1)
	for _, base := range []*report.Report{nil, withLexical(reporttest.Case(reporttest.New(), "a", report.Hard, lexicalID, 5, 5))} {
		g := evaluate(t, now, base)
		if g.Verdict != report.GatePass {
			t.Errorf("baseline %v: verdict %s, want pass", base != nil, g.Verdict)
		}
		for _, it := range g.Items {
			if it.Status != report.ItemInfo || it.Model != lexicalID {
				t.Errorf("item %s %s %s: %s (%s), want info on the lexical baseline", it.Kind, it.Subject, it.Model, it.Status, it.Reason)
			}
		}
		if items := find(g, report.KindCase, "a", lexicalID); len(items) != 1 || !strings.Contains(items[0].Reason, "shown, not gated") {
			t.Errorf("case a: %+v", items)
		}
		if len(g.Unmatched) != 0 {
			t.Errorf("unmatched %+v", g.Unmatched)
		}
		if !strings.Contains(strings.Join(g.Notes, "\n"), "only the lexical baseline") {
			t.Errorf("notes %q", g.Notes)
		}
	}

	// Next to a real model, the model is gated and the selector is not.
	mixed := withLexical(reporttest.Case(reporttest.New(), "a", report.Hard, lexicalID, 0, 5))
	reporttest.Case(mixed, "a", report.Hard, "m1", 0, 5)
	g := evaluate(t, mixed, nil)
	if g.Verdict != report.GateFail {
		t.Errorf("m1 below its floor: verdict %s, want fail", g.Verdict)
	}
	wantStatus(t, one(t, g, report.KindCase, "a", "m1"), report.ItemFail)
	wantStatus(t, one(t, g, report.KindCase, "a", lexicalID), report.ItemInfo)
	if n := len(find(g, report.KindSuite, report.ToolSelection, lexicalID)); n != 0 {
		t.Errorf("%d suite items for the lexical baseline, want none", n)
	}
	if mixed.Behavior.Results[0].Model != lexicalID || len(mixed.Behavior.Results) != 2 {
		t.Error("Evaluate modified the report")
	}
}
