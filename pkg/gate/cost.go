package gate

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Bounds of the cost policy: past them a value is a typo, not a policy
// (an increase of 100× or a run of a million dollars).
const (
	maxCostIncrease = 100.0
	maxCostPerRun   = 1e6
)

// ParseCostIncrease reads a max-cost-increase as the user may write it, in
// mcp-eval.yaml, a flag or an action input alike: a fraction ("0.25") or a
// percentage ("25%"). The range is checked here too, so that every caller
// can name its own source (flag, input, file:line) in front of one message.
func ParseCostIncrease(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSpace(strings.TrimSuffix(t, "%")), 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w: max-cost-increase %q is not a number: write a fraction like 0.25 or a percentage like 25%%", ErrPolicy, s)
	}
	v *= scale
	if err := CheckCostIncrease(v); err != nil {
		return 0, err
	}
	return v, nil
}

// CheckCostIncrease is the range of a max-cost-increase: [0, 100] as a
// fraction (a 100× rise is a typo, not a policy).
func CheckCostIncrease(v float64) error {
	if math.IsNaN(v) || v < 0 || v > maxCostIncrease {
		return fmt.Errorf("%w: max-cost-increase %v is out of range: write a fraction in [0, %v] like 0.25, or a percentage like 25%%", ErrPolicy, v, maxCostIncrease)
	}
	return nil
}

// ParseUSD reads a max-cost-per-run: a number of US dollars, with or
// without a leading "$" ("5", "$2.50"), in (0, 1e6].
func ParseUSD(s string) (float64, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "$")
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w: max-cost-per-run %q is not an amount: write US dollars like 5 or $2.50", ErrPolicy, s)
	}
	if err := CheckUSD(v); err != nil {
		return 0, err
	}
	return v, nil
}

// CheckUSD is the range of a max-cost-per-run.
func CheckUSD(v float64) error {
	if math.IsNaN(v) || v <= 0 || v > maxCostPerRun {
		return fmt.Errorf("%w: max-cost-per-run %v is out of range: write US dollars above 0 and at most %v, like 5 or $2.50", ErrPolicy, v, maxCostPerRun)
	}
	return nil
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cost adds the Layer 3 cost gates. Cost is measured, not sampled, so a
// rise beyond the limit fails outright; what a gate cannot know (a price
// missing now or in the baseline) makes it inconclusive, never passed.
func (e *evaluation) cost() {
	if e.p.MaxCostIncrease != nil {
		e.costIncrease(*e.p.MaxCostIncrease)
	}
	if e.p.MaxCostPerRun != nil {
		e.runCost(*e.p.MaxCostPerRun)
	}
}

// costIncrease compares each model's cost per case run with the
// baseline's.
func (e *evaluation) costIncrease(limit float64) {
	now := evalUsage(e.new)
	var base map[string]report.Usage
	if e.base != nil {
		base = evalUsage(e.base)
	}
	rule := fmt.Sprintf("cost per case may rise at most %s over the baseline; an unknown cost is inconclusive", percentOf(limit))
	for _, model := range sortedKeys(now) {
		u := now[model]
		it := report.GateItem{Layer: 3, Kind: report.KindCost, Subject: "cost per case", Model: model, Direction: report.Lower, Rule: rule, Limit: ptr(limit)}
		if u.CostPerCaseUSD != nil {
			it.Value = ptr(*u.CostPerCaseUSD)
		}
		b, inBase := base[model]
		switch {
		case u.CaseRuns == 0:
			it.Status, it.Reason = report.ItemInfo, "no case runs: no cost per case"
		case u.CostPerCaseUSD == nil:
			it.Status, it.Reason = report.ItemInconclusive, fmt.Sprintf("cost unknown: %d of %d calls have no price (add the model to a price override file)", u.UnpricedCalls, u.Calls)
		case e.base == nil:
			it.Status, it.Reason = report.ItemInfo, fmt.Sprintf("%s per case; no baseline: shown, not compared", dollars(*u.CostPerCaseUSD))
		case !inBase || b.CaseRuns == 0:
			it.Status, it.Reason = report.ItemInfo, fmt.Sprintf("%s per case; not in the baseline: shown, not compared", dollars(*u.CostPerCaseUSD))
			e.unmatched(report.Unmatched{Layer: 3, Kind: report.KindCost, Subject: "cost per case", Model: model, Side: "new", Reason: "no cost in the baseline"})
		case b.CostPerCaseUSD == nil:
			it.Status, it.Reason = report.ItemInconclusive, fmt.Sprintf("%s per case; the baseline's cost is unknown (a price was missing then)", dollars(*u.CostPerCaseUSD))
		default:
			nowUSD, baseUSD := *u.CostPerCaseUSD, *b.CostPerCaseUSD
			it.BaselineValue = ptr(baseUSD)
			change := fmt.Sprintf("%s per case, was %s", dollars(nowUSD), dollars(baseUSD))
			switch {
			case baseUSD == 0 && nowUSD == 0:
				it.Status, it.Reason = report.ItemPass, change
			case baseUSD == 0:
				it.Status, it.Reason = report.ItemFail, change+": from nothing to a cost"
			default:
				rise := nowUSD/baseUSD - 1
				it.Reason = fmt.Sprintf("%s (%+.1f%%)", change, 100*rise)
				it.Status = report.ItemPass
				if rise > limit+1e-9 {
					it.Status, it.Reason = report.ItemFail, it.Reason+" > "+percentOf(limit)
				}
			}
		}
		e.add(it)
	}
}

// runCost holds the whole run's model cost, the judge included, to the
// cap.
func (e *evaluation) runCost(limit float64) {
	it := report.GateItem{Layer: 3, Kind: report.KindRunCost, Subject: "cost of the run", Direction: report.Lower, Limit: ptr(limit),
		Rule: fmt.Sprintf("the run may cost at most %s; an unknown cost is inconclusive", dollars(limit))}
	usd, known, why := runTotal(e.new)
	switch {
	case why == "no models":
		return // nothing in the report called a model: nothing to cap
	case !known:
		it.Status, it.Reason = report.ItemInconclusive, "cost unknown: "+why
	case usd > limit+1e-12:
		it.Value = ptr(usd)
		it.Status, it.Reason = report.ItemFail, fmt.Sprintf("the run cost %s > %s", dollars(usd), dollars(limit))
	default:
		it.Value = ptr(usd)
		it.Status, it.Reason = report.ItemPass, fmt.Sprintf("the run cost %s ≤ %s", dollars(usd), dollars(limit))
	}
	e.add(it)
}

// runTotal is the run's model cost: the run's spend record, or for a
// report without one, the telemetry section's total (Layer 1's spend
// alone in older reports).
func runTotal(rep *report.Report) (usd float64, known bool, why string) {
	// The budget meter's figure first: it is what the run paid (fresh
	// calls of every layer, the judges included) and what every surface
	// shows as the run's cost, so the cap and the comment say one number.
	if s := rep.Spend; s != nil {
		if s.Used.USD == nil {
			return 0, false, "the run's spend has " + s.Used.USDUnknown
		}
		return *s.Used.USD, true, ""
	}
	if t := rep.Telemetry; t != nil && len(t.Usage) > 0 {
		usd, known = t.TotalCostUSD()
		if !known {
			var missing []string
			for _, u := range t.Usage {
				if u.CostUSD == nil || u.UnpricedCalls > 0 {
					missing = append(missing, u.Model)
				}
			}
			why = "no price for " + strings.Join(missing, ", ")
		}
		return usd, known, why
	}
	if b := rep.Behavior; b != nil && b.Spend != nil {
		if b.Spend.Used.USD == nil {
			return 0, false, "Layer 1's spend has " + b.Spend.Used.USDUnknown
		}
		return *b.Spend.Used.USD, true, ""
	}
	if rep.Behavior == nil && rep.Resilience == nil {
		return 0, true, "no models"
	}
	return 0, false, "the report measured no model usage (no telemetry section)"
}

// evalUsage are the models under test's usage rows by model.
func evalUsage(rep *report.Report) map[string]report.Usage {
	out := map[string]report.Usage{}
	if rep.Telemetry == nil {
		return out
	}
	for _, u := range rep.Telemetry.Usage {
		if u.Role == report.RoleEval {
			out[u.Model] = u
		}
	}
	return out
}

func sortedKeys(m map[string]report.Usage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func percentOf(f float64) string { return strconv.FormatFloat(100*f, 'g', 6, 64) + "%" }

// dollars shows small amounts with enough digits to compare: a case often
// costs a fraction of a cent.
func dollars(v float64) string {
	if v != 0 && math.Abs(v) < 0.01 {
		return fmt.Sprintf("$%.6f", v)
	}
	return fmt.Sprintf("$%.4f", v)
}
