package pipeline

import (
	"strings"
	"testing"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

func TestParseShard(t *testing.T) {
	if s, err := ParseShard(" 2/4 "); err != nil || *s != (Shard{2, 4}) {
		t.Errorf("2/4: %v %v", s, err)
	}
	if s, err := ParseShard(""); s != nil || err != nil {
		t.Errorf("empty: %v %v", s, err)
	}
	for _, bad := range []string{"0/3", "4/3", "1/0", "2", "a/b", "1/100000"} {
		if _, err := ParseShard(bad); err == nil || !strings.Contains(err.Error(), "--shard") {
			t.Errorf("%q: %v, want an error naming --shard", bad, err)
		}
	}
}

func durationBaseline(ms map[string]int64) *report.Report {
	b := &report.Behavior{}
	for k, d := range ms {
		c, m, _ := strings.Cut(k, "|")
		b.Results = append(b.Results, report.CaseResult{Case: c, Model: m, Runs: []report.CaseRun{
			{Run: 1, Trajectory: &report.Trajectory{DurationMs: d}},
			{Run: 2}, // its trajectory bounded away: counts as the mean of the others
		}})
	}
	return &report.Report{Behavior: b}
}

// Every shard deals the same units the same way: together they are every
// case × model once, by count without a baseline and by the baseline's
// durations with one.
func TestSplitUnitsIsAPartitionBalancedOnTheBaseline(t *testing.T) {
	cases, models := []string{"a", "b", "c"}, []string{"m1", "m2"}
	id := func(s string) string { return s }
	deal := func(n int, base *report.Report) []*split {
		var out []*split
		seen := map[[2]string]int{}
		for i := 1; i <= n; i++ {
			s := splitUnits(Shard{i, n}, cases, models, id, base, nil)
			for u := range s.mine {
				seen[u]++
			}
			if s.record.Total != 6 || len(s.record.Units) != len(s.mine) {
				t.Errorf("shard %d/%d records %+v", i, n, s.record)
			}
			out = append(out, s)
		}
		if len(seen) != 6 {
			t.Errorf("%d shards cover %d of 6 units", n, len(seen))
		}
		for u, k := range seen {
			if k != 1 {
				t.Errorf("unit %v dealt %d times", u, k)
			}
		}
		return out
	}
	for _, s := range deal(3, nil) {
		if len(s.mine) != 2 || s.record.Balance != report.BalanceCount {
			t.Errorf("by count, shard %d has %d units (%s), want 2", s.record.Index, len(s.mine), s.record.Balance)
		}
	}
	// a × m1 takes as long as the five others together: it gets a shard
	// of its own. c × m2 is not in the baseline and weighs the mean.
	base := durationBaseline(map[string]int64{"a|m1": 500, "a|m2": 100, "b|m1": 100, "b|m2": 100, "c|m1": 100})
	two := deal(2, base)
	heavy := two[0]
	if !heavy.mine[[2]string{"a", "m1"}] {
		heavy = two[1]
	}
	if len(heavy.mine) != 1 || heavy.record.Balance != report.BalanceDuration {
		t.Errorf("the shard with a × m1 runs %v (%s); want it alone, balanced by duration", heavy.record.Units, heavy.record.Balance)
	}
	if len(deal(8, nil)) != 8 {
		t.Fatal("more shards than units must still deal every unit")
	}
}
