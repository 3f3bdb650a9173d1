package merge_test

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/merge"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// row is a latency row as pkg/telemetry writes it, samples kept or not.
func row(samples []float64, keep bool) report.Latency {
	p50, p95, mx, hist := telemetry.Distribution(samples)
	l := report.Latency{Kind: report.LatencyMethod, Subject: "tools/call", Samples: len(samples), P50Ms: p50, P95Ms: p95, MaxMs: mx, Histogram: hist, Direction: report.Lower}
	if keep {
		l.SamplesMs = samples
	}
	return l
}

func shard(name string, i int, lat report.Latency) merge.Shard {
	r := report.New()
	r.Shard = &report.Shard{Index: i, Count: 2, Units: []report.ShardUnit{{Case: name, Model: "m"}}, Total: 2, Balance: report.BalanceCount}
	r.Telemetry = &report.Telemetry{Latency: []report.Latency{lat}}
	return merge.Shard{Name: name + ".json", Report: r}
}

// Percentiles are recomputed from the samples of every shard, never
// averaged: the merged p95 is the p95 of all the samples.
func TestLatencyIsRecomputedFromSamples(t *testing.T) {
	var fast, slow, all []float64
	for i := 0; i < 15; i++ {
		fast = append(fast, float64(10+i))
		slow = append(slow, float64(1000+i))
	}
	all = append(append(all, fast...), slow...)
	res, err := merge.Merge([]merge.Shard{shard("a", 1, row(fast, true)), shard("b", 2, row(slow, true))}, telemetry.Distribution)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Report.Telemetry.Latency[0]
	want := row(all, true)
	if got.Samples != 30 || got.P50Ms == nil || got.P95Ms == nil || *got.P50Ms != *want.P50Ms || *got.P95Ms != *want.P95Ms || got.MaxMs != want.MaxMs {
		t.Fatalf("merged %+v, want the distribution of all 30 samples %+v", got, want)
	}
	if _, err := report.Marshal(res.Report); err != nil {
		t.Errorf("the merged report does not validate: %v", err)
	}

	// A shard that kept no samples: the histogram adds up, the
	// percentiles are not made up.
	res, err = merge.Merge([]merge.Shard{shard("a", 1, row(fast, true)), shard("b", 2, row(slow, false))}, telemetry.Distribution)
	if err != nil {
		t.Fatal(err)
	}
	got = res.Report.Telemetry.Latency[0]
	n := 0
	for _, b := range got.Histogram {
		n += b.Count
	}
	if got.P50Ms != nil || got.P95Ms != nil || n != 30 || got.MaxMs != 1014 || len(res.Report.Telemetry.Warnings) != 1 {
		t.Errorf("merged without samples: %+v, warnings %q", got, res.Report.Telemetry.Warnings)
	}
}

func TestUnitsRunTwiceAreRefusedByName(t *testing.T) {
	a, b := shard("x", 1, row([]float64{1}, true)), shard("x", 2, row([]float64{2}, true))
	b.Name = "other.json"
	_, err := merge.Merge([]merge.Shard{a, b}, telemetry.Distribution)
	if err == nil || !strings.Contains(err.Error(), "x.json and other.json both ran case x") {
		t.Errorf("err %v, want both files named", err)
	}
}

// Shards replayed from one cassette merge into one replayed report (its
// answers added up); a live shard and a replayed one are not one run.
func TestReplayedShardsMergeAndMixedOnesAreRefused(t *testing.T) {
	hash := "sha256:" + strings.Repeat("a", 64)
	a, b := shard("a", 1, row([]float64{1}, true)), shard("b", 2, row([]float64{2}, true))
	a.Report.Replay = &report.Replay{Cassette: "cassette/cassette.json", Hash: hash, Answered: 3, Stale: []report.StaleTurn{}}
	b.Report.Replay = &report.Replay{Cassette: "cassette/cassette.json", Hash: hash, Answered: 4,
		Stale: []report.StaleTurn{{Model: "m", Case: "b", Run: 1, Turn: 2, Diff: "tools[0].description"}}}
	res, err := merge.Merge([]merge.Shard{a, b}, telemetry.Distribution)
	if err != nil {
		t.Fatal(err)
	}
	if rp := res.Report.Replay; rp == nil || rp.Hash != hash || rp.Answered != 7 || len(rp.Stale) != 1 {
		t.Errorf("merged replay %+v, want one cassette, 7 answers, 1 stale turn", rp)
	}
	b.Report.Replay = nil
	_, err = merge.Merge([]merge.Shard{a, b}, telemetry.Distribution)
	if err == nil || !strings.Contains(err.Error(), "cassette") || !strings.Contains(err.Error(), "b.json") {
		t.Errorf("a live shard merged with a replayed one: err %v, want a cassette mismatch naming b.json", err)
	}
}

// A note every shard wrote is said once; one only some shards wrote is
// about their part of the run and names them; a shard's view of itself
// ("shard …") is left out.
func TestShardNotesNameTheShardsTheyCameFrom(t *testing.T) {
	a, b := shard("a", 1, row([]float64{1}, true)), shard("b", 2, row([]float64{2}, true))
	a.Report.Gate = &report.Gate{Notes: []string{"the server runs as root", "Layer 1: 65 of 70 runs reused", "shard 1/2: 1 case"}}
	b.Report.Gate = &report.Gate{Notes: []string{"Layer 1: 60 of 65 runs reused", "the server runs as root", "nothing to gate"}}
	res, err := merge.Merge([]merge.Shard{a, b}, telemetry.Distribution)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(res.Notes, "\n")
	for _, want := range []string{"the server runs as root\n", "shard a.json: Layer 1: 65 of 70 runs reused", "shard b.json: Layer 1: 60 of 65 runs reused", "shard b.json: nothing to gate"} {
		if !strings.Contains(got, want) {
			t.Errorf("notes\n%s\nwant %q", got, want)
		}
	}
	if strings.Count(got, "runs as root") != 1 || strings.Contains(got, "1 case") {
		t.Errorf("notes\n%s\nwant the common note once and no shard's view of itself", got)
	}
}

// The merged report keeps what every shard listed of the server: the
// tool names and their tokens (the gate of the merge, and of the next run
// against it, took every tool for gone, then for new). A tool two models
// called keeps one row over all of them, with no model named; and the
// calls each shard replayed from the cache add up as reused, out of the
// latency.
func TestMergeKeepsTheToolsAndTheRowOverEveryModel(t *testing.T) {
	mk := func(name string, i int, model string, samples []float64, reused int) merge.Shard {
		l := row(samples, true)
		l.Kind, l.Subject, l.Model = report.LatencyTool, "get_stock", model
		s := shard(name, i, l)
		s.Report.ToolSurfaceHash = "sha256:" + strings.Repeat("a", 64)
		s.Report.Tools = []string{"get_stock", "list_products"}
		s.Report.ToolTokens = &report.ToolTokens{Serialization: "tools array", Counts: []report.ToolTokenCount{{Encoding: "o200k_base", Models: []string{}, Total: 120, Tools: []report.ToolTokenItem{}}}}
		s.Report.Telemetry.Tools = []report.ToolUsage{{Tool: "get_stock", Model: model, Calls: len(samples) + reused, Reused: reused, SamplesMs: samples,
			TokensPerCall: 100, CostUSD: ptr(0.002)}}
		return s
	}
	res, err := merge.Merge([]merge.Shard{mk("a", 1, "m1", []float64{10, 11}, 3), mk("b", 2, "m2", []float64{20, 21}, 1)}, telemetry.Distribution)
	if err != nil {
		t.Fatal(err)
	}
	out := res.Report
	if strings.Join(out.Tools, ",") != "get_stock,list_products" || out.ToolTokens == nil || out.ToolTokens.Counts[0].Total != 120 {
		t.Errorf("merged tools %q, tokens %+v; want the shards'", out.Tools, out.ToolTokens)
	}
	models := map[string]int{}
	for _, l := range out.Telemetry.Latency {
		if l.Kind == report.LatencyTool {
			models[l.Model] = l.Samples
		}
	}
	if len(models) != 3 || models[""] != 4 || models["m1"] != 2 || models["m2"] != 2 {
		t.Errorf("tool latency rows by model (samples): %v; want m1 2, m2 2 and one over both, with no model, 4", models)
	}
	for _, tu := range out.Telemetry.Tools {
		if want := map[string]int{"m1": 3, "m2": 1}[tu.Model]; tu.Reused != want || tu.Calls != 2+want || len(tu.SamplesMs) != 2 {
			t.Errorf("%s × %s: %+v; want %d reused of %d calls, the 2 timed ones in the latency", tu.Tool, tu.Model, tu, want, 2+want)
		}
		// Tokens and cost per call are over the 2 calls made now.
		if tu.TokensPerCall != 100 || tu.CostPerCallUSD == nil || *tu.CostPerCallUSD != 0.001 {
			t.Errorf("%s × %s: %v tokens, %v per call; want 100 and $0.001", tu.Tool, tu.Model, tu.TokensPerCall, tu.CostPerCallUSD)
		}
	}
	if _, err := report.Marshal(out); err != nil {
		t.Errorf("the merged report does not validate: %v", err)
	}
}

func ptr(v float64) *float64 { return &v }
