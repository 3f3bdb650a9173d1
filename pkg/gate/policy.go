// Package gate decides whether a report is a regression against the last
// green run: pass, fail or inconclusive, with a reason for every item.
//
// The policy is parsed and validated before any report is read (like k6
// thresholds); Evaluate is a pure function of the reports and the policy.
// The method and its measured error rates are in docs/gate.md.
package gate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Policy is what the gate enforces. The zero value is not valid; start from
// DefaultPolicy.
type Policy struct {
	// MaxDrop is the largest drop of a suite score (a fraction, 0.02 = two
	// points) that is not a regression.
	MaxDrop float64
	// Confidence of the one-sided bounds and exact tests, family-wise
	// (default 0.95).
	Confidence float64
	// Floors are fractions of N applied as ⌈f·N⌉: MUST checks and hard
	// cases 1.0, soft cases 0.8 (4 of 5).
	FloorMust, FloorHard, FloorSoft float64
	// HistoryDepth is how many earlier green reports to walk for drift and
	// slow slides (default 10).
	HistoryDepth int
	// FailOnInconclusive turns an inconclusive verdict into exit 1.
	FailOnInconclusive bool
	// FailOnLegacy fails a server that speaks legacy MCP only, whatever
	// the baseline: mcp-eval check asks whether a server conforms to
	// 2026-07-28, where run and action ask whether it regressed.
	FailOnLegacy bool
	// MaxCostIncrease is the largest rise of a model's cost per case over
	// the baseline, as a fraction (0.1 = +10%); nil: not gated. The cost
	// gates are in cost.go.
	MaxCostIncrease *float64
	// MaxCostPerRun caps the whole run's model cost in USD; nil: no cap.
	MaxCostPerRun *float64
	// MaxToolTokens caps the tokens of the tools array (each encoding the
	// report counted); MaxToolTokensIncrease caps its rise over the
	// baseline, a fraction. nil: not gated (tokens.go).
	MaxToolTokens         *int
	MaxToolTokensIncrease *float64
	// Lint is what a description-lint finding does: LintOff, LintWarn
	// (also "") or LintFail.
	Lint string
	// Waivers accept named check failures, or cases below their floor,
	// until a date (surface.go).
	Waivers []report.GateWaiver
}

// What a description-lint finding does (Policy.Lint).
const (
	LintOff  = "off"
	LintWarn = "warn"
	LintFail = "fail"
)

// DefaultPolicy is the policy of issue 4: max-drop 0.02, 95%, floors 1.0 /
// 1.0 / 0.8, history 10.
func DefaultPolicy() Policy {
	return Policy{MaxDrop: 0.02, Confidence: 0.95, FloorMust: 1, FloorHard: 1, FloorSoft: 0.8, HistoryDepth: 10}
}

// ErrPolicy marks a policy that cannot be enforced; the CLI exits 2.
var ErrPolicy = errors.New("invalid gate policy")

// Validate reports every problem with the policy at once, each with the
// allowed range.
func (p Policy) Validate() error {
	var errs []string
	frac := func(name string, v float64, lo float64, loIncl bool, hi float64, hiIncl bool) {
		okLo := v > lo || (loIncl && v == lo)
		okHi := v < hi || (hiIncl && v == hi)
		if math.IsNaN(v) || !okLo || !okHi {
			errs = append(errs, fmt.Sprintf("%s %v is out of range: want %s%v, %v%s", name, v, map[bool]string{true: "[", false: "("}[loIncl], lo, hi, map[bool]string{true: "]", false: ")"}[hiIncl]))
		}
	}
	if err := CheckMaxDrop(p.MaxDrop); err != nil {
		errs = append(errs, strings.TrimPrefix(err.Error(), ErrPolicy.Error()+": "))
	}
	frac("confidence", p.Confidence, 0.5, false, 1, false)
	frac("floor for MUST checks", p.FloorMust, 0, false, 1, true)
	frac("floor for hard cases", p.FloorHard, 0, false, 1, true)
	frac("floor for soft cases", p.FloorSoft, 0, false, 1, true)
	if p.HistoryDepth < 0 || p.HistoryDepth > 100 {
		errs = append(errs, fmt.Sprintf("history depth %d is out of range: want 0..100", p.HistoryDepth))
	}
	if v := p.MaxCostIncrease; v != nil {
		if err := CheckCostIncrease(*v); err != nil {
			errs = append(errs, strings.TrimPrefix(err.Error(), ErrPolicy.Error()+": "))
		}
	}
	if v := p.MaxCostPerRun; v != nil {
		if err := CheckUSD(*v); err != nil {
			errs = append(errs, strings.TrimPrefix(err.Error(), ErrPolicy.Error()+": "))
		}
	}
	if v := p.MaxToolTokens; v != nil && *v < 1 {
		errs = append(errs, fmt.Sprintf("max-tool-tokens %d is out of range: want a whole number of tokens ≥ 1", *v))
	}
	if v := p.MaxToolTokensIncrease; v != nil {
		if err := CheckCostIncrease(*v); err != nil {
			errs = append(errs, strings.Replace(strings.TrimPrefix(err.Error(), ErrPolicy.Error()+": "), "max-cost-increase", "max-tool-tokens-increase", 1))
		}
	}
	if err := CheckLint(p.Lint); err != nil {
		errs = append(errs, strings.TrimPrefix(err.Error(), ErrPolicy.Error()+": "))
	}
	for i, w := range p.Waivers {
		if err := CheckWaiver(w); err != nil {
			errs = append(errs, fmt.Sprintf("waiver %d: %s", i+1, strings.TrimPrefix(err.Error(), ErrPolicy.Error()+": ")))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrPolicy, strings.Join(errs, "; "))
}

// ParseMaxDrop reads a max-drop as the user may write it: a fraction
// ("0.02") or points with a percent sign ("2%"), in [0, 1). It is the one
// parser of the --max-drop flag, the max-drop input and gate.max-drop, so
// that all three accept and refuse the same values.
func ParseMaxDrop(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if strings.HasSuffix(t, "%") {
		t, scale = strings.TrimSpace(strings.TrimSuffix(t, "%")), 0.01
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w: max-drop %q is not a number: write a fraction like 0.02 or points like 2%%", ErrPolicy, s)
	}
	v *= scale
	if err := CheckMaxDrop(v); err != nil {
		return 0, err
	}
	return v, nil
}

// CheckMaxDrop checks a max-drop's range, [0, 1): a drop of 1 (everything
// lost) would never be a regression.
func CheckMaxDrop(v float64) error {
	if math.IsNaN(v) || v < 0 || v >= 1 {
		return fmt.Errorf("%w: max-drop %v is out of range: write a fraction in [0, 1) like 0.02, or points like 2%%", ErrPolicy, v)
	}
	return nil
}

func (p Policy) alpha() float64 { return 1 - p.Confidence }

// Text is the policy in one line, as recorded in the report and printed.
func (p Policy) Text() string {
	s := fmt.Sprintf("max-drop %s, confidence %s, floors MUST %s · hard %s · soft %s, history %d",
		num(p.MaxDrop), num(p.Confidence), num(p.FloorMust), num(p.FloorHard), num(p.FloorSoft), p.HistoryDepth)
	if p.FailOnInconclusive {
		s += ", fail on inconclusive"
	}
	if p.FailOnLegacy {
		s += ", fail on legacy"
	}
	if p.MaxCostIncrease != nil {
		s += ", max-cost-increase " + num(*p.MaxCostIncrease)
	}
	if p.MaxCostPerRun != nil {
		s += ", max-cost-per-run $" + num(*p.MaxCostPerRun)
	}
	if p.MaxToolTokens != nil {
		s += fmt.Sprintf(", max-tool-tokens %d", *p.MaxToolTokens)
	}
	if p.MaxToolTokensIncrease != nil {
		s += ", max-tool-tokens-increase " + num(*p.MaxToolTokensIncrease)
	}
	if p.Lint != "" && p.Lint != LintWarn {
		s += ", lint " + p.Lint
	}
	if n := len(p.Waivers); n > 0 {
		s += fmt.Sprintf(", %d waiver(s)", n)
	}
	return s
}

// Record is the policy as report data.
func (p Policy) Record() report.GatePolicy {
	return report.GatePolicy{Text: p.Text(), MaxDrop: p.MaxDrop, Confidence: p.Confidence, FloorMust: p.FloorMust,
		FloorHard: p.FloorHard, FloorSoft: p.FloorSoft, HistoryDepth: p.HistoryDepth, FailOnInconclusive: p.FailOnInconclusive,
		FailOnLegacy: p.FailOnLegacy, MaxCostIncrease: clone(p.MaxCostIncrease), MaxCostPerRunUSD: clone(p.MaxCostPerRun),
		MaxToolTokens: clone(p.MaxToolTokens), MaxToolTokensIncrease: clone(p.MaxToolTokensIncrease), Lint: recordedLint(p.Lint),
		Waivers: slices.Clone(p.Waivers)}
}

// recordedLint is the lint mode as the report records it: the default,
// warn, is left out, so reports of policies without lint read the same.
func recordedLint(mode string) string {
	if mode == LintWarn {
		return ""
	}
	return mode
}

// PolicyFromReport is the policy a gated report recorded (its
// gate.policy), so that gating the report again applies the rules of the
// command that wrote it. The text is not read: Text derives it. The
// result is as valid as the record; call Validate.
func PolicyFromReport(r report.GatePolicy) Policy {
	return Policy{MaxDrop: r.MaxDrop, Confidence: r.Confidence, FloorMust: r.FloorMust, FloorHard: r.FloorHard, FloorSoft: r.FloorSoft,
		HistoryDepth: r.HistoryDepth, FailOnInconclusive: r.FailOnInconclusive, FailOnLegacy: r.FailOnLegacy,
		MaxCostIncrease: clone(r.MaxCostIncrease), MaxCostPerRun: clone(r.MaxCostPerRunUSD),
		MaxToolTokens: clone(r.MaxToolTokens), MaxToolTokensIncrease: clone(r.MaxToolTokensIncrease), Lint: r.Lint,
		Waivers: slices.Clone(r.Waivers)}
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// floorFor is the floor fraction of a case kind.
func (p Policy) floorFor(kind report.CaseKind) float64 {
	if kind == report.Hard {
		return p.FloorHard
	}
	return p.FloorSoft
}
