package gate

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/didyoumean"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// The Layer 0 rules on the tool surface: its token count against the
// caps, and what a description-lint finding does. Both read the report
// alone (report.ToolTokens, the LINT results).

// ParseToolTokens reads a max-tool-tokens: a whole number of tokens ≥ 1.
func ParseToolTokens(s string) (int, error) {
	v, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(s, "_", "")))
	if err != nil || v < 1 {
		return 0, fmt.Errorf("%w: max-tool-tokens %q is not a whole number of tokens ≥ 1: write e.g. 8000", ErrPolicy, s)
	}
	return v, nil
}

// ParseToolTokensIncrease reads a max-tool-tokens-increase as the cost
// increase is written: a fraction (0.1) or a percentage (10%).
func ParseToolTokensIncrease(s string) (float64, error) {
	v, err := ParseCostIncrease(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %s", ErrPolicy, strings.Replace(strings.TrimPrefix(err.Error(), ErrPolicy.Error()+": "), "max-cost-increase", "max-tool-tokens-increase", 1))
	}
	return v, nil
}

// CheckLint refuses a lint mode other than off, warn and fail ("" is
// warn).
func CheckLint(mode string) error {
	switch mode {
	case "", LintOff, LintWarn, LintFail:
		return nil
	}
	return fmt.Errorf("%w: lint %q is not a mode: want off, warn or fail", ErrPolicy, mode)
}

// toolTokens adds one item per counted encoding: the count as a value,
// with the baseline's in the same encoding, judged against
// max-tool-tokens and max-tool-tokens-increase when set (info when not).
// The count is exact arithmetic over the same bytes, so a rise beyond the
// limit fails outright.
func (e *evaluation) toolTokens() {
	tt := e.new.ToolTokens
	if tt == nil {
		return
	}
	var bt *report.ToolTokens
	if e.base != nil {
		bt = e.base.ToolTokens
	}
	for _, c := range tt.Counts {
		it := report.GateItem{Layer: 0, Kind: report.KindToolTokens, Subject: c.Encoding, Status: report.ItemInfo, Direction: report.Lower,
			Value: ptr(float64(c.Total)), Rule: "tools array tokens (" + c.Encoding + "), not gated"}
		b := bt.Count(c.Encoding)
		if b != nil {
			it.BaselineValue = ptr(float64(b.Total))
		}
		var rules, fails, oks []string
		if m := e.p.MaxToolTokens; m != nil {
			rules = append(rules, fmt.Sprintf("at most %d tokens", *m))
			if c.Total > *m {
				fails = append(fails, fmt.Sprintf("%d tokens, over max-tool-tokens %d", c.Total, *m))
			} else {
				oks = append(oks, fmt.Sprintf("%d ≤ %d tokens", c.Total, *m))
			}
		}
		if f := e.p.MaxToolTokensIncrease; f != nil {
			rules = append(rules, fmt.Sprintf("at most +%s over the baseline", percent(*f)))
			switch {
			case b == nil:
				oks = append(oks, "no baseline count in "+c.Encoding+": the increase is not compared")
			case b.Total == 0 && c.Total > 0, b.Total > 0 && float64(c.Total-b.Total)/float64(b.Total) > *f+1e-9:
				fails = append(fails, fmt.Sprintf("%d tokens, %s over the baseline's %d (max-tool-tokens-increase %s)", c.Total, delta(c.Total, b.Total), b.Total, percent(*f)))
			default:
				oks = append(oks, fmt.Sprintf("%s against the baseline's %d", delta(c.Total, b.Total), b.Total))
			}
		}
		switch {
		case len(fails) > 0:
			it.Status, it.Reason = report.ItemFail, strings.Join(fails, "; ")
		case len(rules) > 0:
			it.Status, it.Reason = report.ItemPass, strings.Join(oks, "; ")
		case b != nil:
			it.Reason = fmt.Sprintf("%d tokens, %s against the baseline's %d", c.Total, delta(c.Total, b.Total), b.Total)
		default:
			it.Reason = fmt.Sprintf("%d tokens; no baseline count to compare", c.Total)
		}
		if len(rules) > 0 {
			it.Rule = "tools array (" + c.Encoding + "): " + strings.Join(rules, ", ")
		}
		e.add(it)
	}
}

// delta is a signed change with its percentage: "+120 (+8.5%)".
func delta(now, base int) string {
	d := now - base
	if base == 0 {
		return fmt.Sprintf("%+d", d)
	}
	return fmt.Sprintf("%+d (%+.1f%%)", d, 100*float64(d)/float64(base))
}

func percent(f float64) string { return strconv.FormatFloat(math.Round(f*1e4)/100, 'f', -1, 64) + "%" }

// lint adds an item for every description-lint check (family LINT) that
// found something, as the policy's lint mode says: off adds none, warn a
// warning, fail a failure. The Layer 0 verdict never counts them.
func (e *evaluation) lint() {
	nc := e.new.Conformance
	if nc == nil || e.p.Lint == LintOff {
		return
	}
	status, mode := report.ItemWarn, LintWarn
	if e.p.Lint == LintFail {
		status, mode = report.ItemFail, LintFail
	}
	for _, r := range nc.Checks {
		if r.Family != "LINT" || r.Counts[report.CheckWarned]+r.Counts[report.CheckFailed] == 0 {
			continue
		}
		reason := r.Outcome.Message
		if n := len(r.Outcome.Details); n > 0 {
			// Findings, not parameters: "1 of 3 parameters … (and 1
			// more)" read as a contradiction.
			word := "findings"
			if n == 1 {
				word = "finding"
			}
			reason += fmt.Sprintf(" (and %d more %s, listed under the check)", n, word)
		}
		reason = e.lintSince(r) + reason
		e.add(report.GateItem{Layer: 0, Kind: report.KindLint, Subject: r.ID, Status: status, Rule: "gate.lint: " + mode + ": " + r.Doc, Reason: reason})
	}
}

// lintSince says whether a lint finding is new since the baseline: a
// removed description looked the same as the finding every PR had shown.
func (e *evaluation) lintSince(r report.CheckResult) string {
	if e.base == nil || e.base.Conformance == nil {
		return ""
	}
	for _, b := range e.base.Conformance.Checks {
		if b.ID != r.ID {
			continue
		}
		switch {
		case b.Counts[report.CheckWarned]+b.Counts[report.CheckFailed] == 0:
			return "new since the baseline: "
		case b.Outcome.Message == r.Outcome.Message && len(b.Outcome.Details) == len(r.Outcome.Details):
			return "as in the baseline: "
		}
		return "changed since the baseline: "
	}
	return "new since the baseline: "
}

var (
	waiverCheckRE = regexp.MustCompile(`^[A-Z]+-[0-9]+$`)
	waiverDateRE  = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// CheckWaiver refuses a waiver the gate cannot apply: a check id with an
// optional transport (http or stdio), or a case with an optional model;
// a reason and a real date.
func CheckWaiver(w report.GateWaiver) error {
	name := WaiverName(w)
	switch {
	case w.Case != "" && w.Check != "":
		return fmt.Errorf("%w: a waiver names a check or a case, not both (%s and %s)", ErrPolicy, w.Check, w.Case)
	case w.Case != "" && w.Transport != "":
		return fmt.Errorf("%w: %s: transport applies to a check's waiver; a case's names a model, or none for every model", ErrPolicy, name)
	case w.Case != "" && (len(w.Case) > 200 || len(w.Model) > 200):
		return fmt.Errorf("%w: a case or model id of over 200 bytes", ErrPolicy)
	case w.Case == "" && w.Model != "":
		return fmt.Errorf("%w: model %q without a case: a model is waived per case (case: ID, model: %s)", ErrPolicy, w.Model, w.Model)
	case w.Case == "" && !waiverCheckRE.MatchString(w.Check):
		return fmt.Errorf("%w: check %q is not a check id like TOOL-5", ErrPolicy, w.Check)
	case w.Transport != "" && w.Transport != "http" && w.Transport != "stdio":
		return fmt.Errorf("%w: transport %q is not http or stdio (leave it out to waive both)", ErrPolicy, w.Transport)
	case strings.TrimSpace(w.Reason) == "":
		return fmt.Errorf("%w: %s has no reason: say why the failure is accepted", ErrPolicy, name)
	case len(w.Reason) > 500:
		return fmt.Errorf("%w: the reason of %s is longer than 500 bytes", ErrPolicy, name)
	}
	if _, err := time.Parse(time.DateOnly, w.Until); err != nil || !waiverDateRE.MatchString(w.Until) {
		return fmt.Errorf("%w: until %q of %s is not a date YYYY-MM-DD", ErrPolicy, w.Until, name)
	}
	return nil
}

// nearCase is what a case waiver that matched nothing likely meant.
func (e *evaluation) nearCase(w report.GateWaiver) string {
	var cases, models []string
	for _, c := range e.new.Behavior.Cases {
		cases = append(cases, c.ID)
	}
	for _, r := range e.new.Behavior.Results {
		if !slices.Contains(models, r.Model) {
			models = append(models, r.Model)
		}
	}
	switch {
	case !slices.Contains(cases, w.Case):
		if near, ok := didyoumean.Nearest(w.Case, cases); ok {
			return fmt.Sprintf(": did you mean case %s?", near)
		}
		return ": no case of the golden set has that id"
	case w.Model != "" && !slices.Contains(models, w.Model):
		if near, ok := didyoumean.Nearest(w.Model, models); ok {
			return fmt.Sprintf(": did you mean model %s?", near)
		}
		return fmt.Sprintf(": the run's models are %s", strings.Join(models, ", "))
	}
	return ""
}

// caseWaived reports whether a waiver in force covers a Layer 1 case ×
// model.
func (e *evaluation) caseWaived(caseID, model string) bool {
	for _, w := range e.p.Waivers {
		if w.Case == caseID && (w.Model == "" || w.Model == model) && w.Until >= e.today {
			return true
		}
	}
	return false
}

// waive marks an item accepted by w, keeping why it was not a pass.
func waive(it *report.GateItem, w report.GateWaiver) {
	it.Reason = fmt.Sprintf("waived until %s: %s (%s)", w.Until, w.Reason, it.Reason)
	it.Status = report.ItemWaived
}

// expire says an item's waiver ran out. A failure known from the
// baseline fails again: the baseline was green because the same waiver
// waived it there, so "known" would keep accepting it past the date.
func expire(it *report.GateItem, w report.GateWaiver) {
	it.Reason += fmt.Sprintf("; waiver expired on %s: %s", w.Until, w.Reason)
	if it.Status == report.ItemKnown {
		it.Status = report.ItemFail
		it.Reason += "; its waiver has run out, so it counts again"
	}
}

// WaiverName is how messages name what a waiver waives: "TOOL-5",
// "case refund-over-limit × gpt-4.1-mini", "case refund-over-limit (every
// model)".
func WaiverName(w report.GateWaiver) string {
	switch {
	case w.Case == "":
		return w.Check
	case w.Model == "":
		return "case " + w.Case + " (every model)"
	}
	return "case " + w.Case + " × " + w.Model
}

// caseWaivers applies the waivers of Layer 1 cases once the cases are
// decided: a case × model below its floor (failed, warned, known or
// inconclusive; not one whose runs errored, which says nothing of the
// model) is waived through the date. This is how a team accepts a
// model's known weakness before any run is green: without it no run with
// that model ever passed, so the baseline search never found one. A
// waiver whose case passes now for every model it covers is stale.
func (e *evaluation) caseWaivers() {
	for _, w := range e.p.Waivers {
		if w.Case == "" {
			continue
		}
		st := report.WaiverState{GateWaiver: w, State: report.WaiverUnused}
		expired := w.Until < e.today
		if expired {
			st.State = report.WaiverExpired
		}
		covered, passing := 0, 0
		for i := range e.g.Items {
			it := &e.g.Items[i]
			if it.Layer != 1 || it.Subject != w.Case || (w.Model != "" && it.Model != w.Model) {
				continue
			}
			if (it.Kind == report.KindDrift || it.Kind == report.KindSlide) && it.Status == report.ItemWarn && !expired {
				// The history's warning that the case drifts or slides:
				// accepted with its failures.
				waive(it, w)
				continue
			}
			if it.Kind != report.KindCase {
				continue
			}
			covered++
			switch it.Status {
			case report.ItemPass:
				passing++
				continue
			case report.ItemFail, report.ItemWarn, report.ItemKnown, report.ItemInconclusive:
			default:
				continue
			}
			if expired {
				expire(it, w)
				continue
			}
			waive(it, w)
			st.State = report.WaiverActive
		}
		if covered == 0 && e.new.Behavior != nil && e.new.Shard == nil {
			// A case waiver waives nothing it does not match, and an
			// unused one is shown nowhere: a typo kept the PR failing.
			e.add(report.GateItem{Layer: 1, Kind: report.KindWaiver, Subject: w.Case, Model: w.Model, Status: report.ItemWarn,
				Rule: "a case waiver names a case × model of the run", Reason: fmt.Sprintf("%s matches no case × model of this run%s", WaiverName(w), e.nearCase(w))})
		}
		// A shard sees only its part of the models: stale is the
		// merge's to say.
		if covered > 0 && passing == covered && !expired && e.new.Shard == nil {
			st.State = report.WaiverStale
			e.add(report.GateItem{Layer: 1, Kind: report.KindWaiver, Subject: w.Case, Model: w.Model, Status: report.ItemWarn,
				Rule: "a waiver waives a failing case", Reason: fmt.Sprintf("%s passes now: remove its waiver (%q, until %s)", WaiverName(w), w.Reason, w.Until)})
		}
		e.g.Waivers = append(e.g.Waivers, st)
	}
}

// waivers applies the policy's waivers to the Layer 0 items: a failure
// (or a lint item) of a waived check, on the waiver's transport, is
// waived through its date (UTC, inclusive) and counts again after it. A
// waiver whose check now passes is stale, said with a warning so that it
// gets removed. Each waiver's state is recorded in the gate section.
func (e *evaluation) waivers() {
	if len(e.p.Waivers) == 0 {
		return
	}
	transport := ""
	results := map[string]report.CheckResult{}
	if nc := e.new.Conformance; nc != nil {
		transport = nc.Transport
		for _, r := range nc.Checks {
			results[r.ID] = r
		}
	}
	for _, w := range e.p.Waivers {
		if w.Case != "" {
			continue // caseWaivers, once Layer 1 is decided
		}
		st := report.WaiverState{GateWaiver: w, State: report.WaiverUnused}
		expired := w.Until < e.today
		if expired {
			st.State = report.WaiverExpired
		}
		applies := w.Transport == "" || w.Transport == transport
		if applies {
			for i := range e.g.Items {
				it := &e.g.Items[i]
				if it.Layer != 0 || it.Subject != w.Check || (it.Kind != report.KindCheck && it.Kind != report.KindLint) {
					continue
				}
				// A check the waiver accepts may also be one the harness
				// cannot judge on this server (it hangs, it times out):
				// accepted until the date all the same.
				// A failure the baseline had too (known) is waived as
				// well: the waiver says why it is accepted, every run.
				if it.Status != report.ItemFail && it.Status != report.ItemWarn && it.Status != report.ItemError && it.Status != report.ItemKnown {
					continue
				}
				if expired {
					expire(it, w)
					continue
				}
				waive(it, w)
				st.State = report.WaiverActive
			}
			if r, ok := results[w.Check]; ok && st.State != report.WaiverActive && r.Verdict == report.CheckPassed {
				st.State = report.WaiverStale
				e.add(report.GateItem{Layer: 0, Kind: report.KindWaiver, Subject: w.Check, Status: report.ItemWarn,
					Rule: "a waiver waives a failing check", Reason: fmt.Sprintf("%s passes now: remove its waiver (%q, until %s)", w.Check, w.Reason, w.Until)})
			}
		}
		e.g.Waivers = append(e.g.Waivers, st)
	}
}
