package pipeline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// MaxShards bounds --shard's n: far more than a matrix needs, and a typo
// (1/100000) must not make a plan of empty shards.
const MaxShards = 256

// Shard is one share of a run split over n jobs: shard Index of Count,
// 1-based.
type Shard struct{ Index, Count int }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads "i/n" (--shard, the shard input); "" is no sharding.
func ParseShard(v string) (*Shard, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	is, ns, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(is))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return nil, fmt.Errorf("--shard (the shard input) %q: want i/n, e.g. 2/4 for the second of four shards", v)
	case n < 1 || n > MaxShards:
		return nil, fmt.Errorf("--shard %q: the number of shards must be 1..%d", v, MaxShards)
	case i < 1 || i > n:
		return nil, fmt.Errorf("--shard %q: the shard must be 1..%d", v, n)
	}
	return &Shard{Index: i, Count: n}, nil
}

// unit is one case × model of Layers 1 and 2: the grain of a split, so
// that a case's k/N for a model is always made by one shard.
type unit struct {
	kase, model string // the model as the provider names it
	weight      float64
	order       int
}

// split is a shard's share of a run's units: which it runs, and the record
// its report keeps.
type split struct {
	mine   map[[2]string]bool
	record *report.Shard
}

// only accepts the units of this shard; it is behavior.Config.Only and
// resilience.Config.Only.
func (s *split) only(caseID, modelID string) bool { return s.mine[[2]string{caseID, modelID}] }

// splitUnits deals every case × model to n shards deterministically: the
// longest first, each to the shard with the least work so far (ties to
// the lowest shard, then the earlier unit), where a unit's work is its
// case's duration for that model in the baseline when the baseline has
// durations, else 1 (by count). Every shard computes the same deal from
// the same inputs, so shards need not talk to each other.
func splitUnits(sh Shard, cases, models []string, reportID func(string) string, base *report.Report, baseRef *report.ReportRef) *split {
	durations := baselineDurations(base)
	balance := report.BalanceCount
	if len(durations) > 0 {
		balance = report.BalanceDuration
	}
	var mean float64
	for _, d := range durations {
		mean += d
	}
	if len(durations) > 0 {
		mean /= float64(len(durations))
	}
	var units []unit
	for _, c := range cases {
		for _, m := range models {
			u := unit{kase: c, model: m, weight: 1, order: len(units)}
			if balance == report.BalanceDuration {
				// A case the baseline does not know (new, or its
				// trajectories were bounded away) weighs the mean.
				u.weight = mean
				if d, ok := durations[[2]string{c, reportID(m)}]; ok {
					u.weight = d
				}
			}
			units = append(units, u)
		}
	}
	sorted := append([]unit(nil), units...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].weight > sorted[j].weight })
	load := make([]float64, sh.Count)
	owner := make([]int, len(units))
	for _, u := range sorted {
		best := 0
		for k := 1; k < sh.Count; k++ {
			if load[k] < load[best] {
				best = k
			}
		}
		load[best] += u.weight
		owner[u.order] = best + 1
	}
	s := &split{mine: map[[2]string]bool{}, record: &report.Shard{Index: sh.Index, Count: sh.Count, Units: []report.ShardUnit{},
		Total: len(units), Balance: balance}}
	if baseRef != nil {
		ref := *baseRef
		s.record.Baseline = &ref
	}
	for _, u := range units {
		if owner[u.order] == sh.Index {
			s.mine[[2]string{u.kase, u.model}] = true
			s.record.Units = append(s.record.Units, report.ShardUnit{Case: u.kase, Model: reportID(u.model)})
		}
	}
	return s
}

// baselineDurations are the Layer 1 durations of each case × model in a
// baseline (by report model id): the sum of its runs' trajectory
// durations, scaled to all its runs. Empty when the baseline has none.
func baselineDurations(base *report.Report) map[[2]string]float64 {
	out := map[[2]string]float64{}
	if base == nil || base.Behavior == nil {
		return out
	}
	for _, r := range base.Behavior.Results {
		var total float64
		timed := 0
		for _, run := range r.Runs {
			if run.Trajectory != nil && run.Trajectory.DurationMs > 0 {
				total += float64(run.Trajectory.DurationMs)
				timed++
			}
		}
		if timed > 0 {
			// Trajectories the report bounded away count as the mean of
			// the runs that kept theirs.
			out[[2]string{r.Case, r.Model}] = total / float64(timed) * float64(len(r.Runs))
		}
	}
	return out
}
