package render

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Attention is what a reviewer must look at, worst first, for every
// surface (PR comment, job summary, report.html): the gate's items are
// the source of truth for status; the report supplies the cause and where
// to look. Results that share one cause (Layer 0 SameAs: the same
// response value broken by several rules) are one item listing its rules.
// It holds plain, unescaped text: each renderer escapes for itself.
type Attention struct {
	Items []AttentionItem
	// Causes and Rules count, per gate status, the items listed and the
	// gate items (rules) they group: "1 failure (3 rules)".
	Causes map[string]int
	Rules  map[string]int
}

// AttentionItem is one cause.
type AttentionItem struct {
	Status  string // the worst gate status among its items
	Layer   int
	Kind    string // report.KindCheck, KindCase, KindSuite, …
	Subject string // check id, case id, score, fault or attack type, …
	Model   string // "" for Layer 0 and the run as a whole
	// Rules are every check id the one cause breaks (Layer 0), the first
	// being Subject; one entry elsewhere. Checks the gate does not judge
	// (a SHOULD with the same fault) are listed too.
	Rules []string
	// Sentence says in plain words what happened and why that is the
	// status it has ("… within what chance allows over 3 comparisons, so
	// a warning"). Notes add what else the gate saw (likely drift).
	Sentence string
	Notes    []string
	Cause    *Cause
	// Where is where to look in the golden set: "golden/tasks.yaml:12"
	// (only the file when the report predates case lines).
	Where string
	// Decided are the gate's rule and reason of each item grouped here,
	// statistics included: the "how this was decided" section.
	Decided []Decision
	// Why is the one cause of a group that spans models, named after it
	// in the summary line ("the server could not be reached").
	Why string
	// Models are the models of a group that spans several (Model is
	// then "").
	Models []string
	// severity orders items of one status: the larger fall first.
	severity float64
}

// Cause is what broke: a Layer 0 finding with the response value, a Layer
// 1 run's reason with the tools it called, a Layer 2 run's evidence.
type Cause struct {
	Finding string // Layer 0: the outcome message
	Method  string // the request whose response holds the value
	Pointer string // RFC 6901 pointer into that response (or into In)
	// In is the message Pointer is into when it is not the response (a
	// notification sent during the request): kind and method.
	In      string
	Value   string // the value there ("" and Missing when absent)
	Missing bool
	Fix     string
	Spec    string // as the check registry cites it
	SpecURL string // a link to the cited section, "" when none is known
	// Run is the first failing run (1-based) and Reason its reason.
	Run    int
	Reason string
	// Called are the tools that run called, in order, when its trajectory
	// is kept; CalledKnown is false without one.
	Called      []string
	CalledKnown bool
	// Case is the golden case a Layer 2 run used.
	Case string
}

// Decision is one gate item's rule and reason, as the gate wrote them.
type Decision struct {
	Subject, Model, Rule, Reason string
}

// statusRank orders statuses worst first; only listed statuses have one.
var statusRank = map[string]int{report.ItemFail: 0, report.ItemError: 1, report.ItemInconclusive: 2, report.ItemWarn: 3, report.ItemKnown: 4}

// BuildAttention lists every failed, inconclusive, warned and known item of
// rep's gate, grouped by cause, worst first. A report never gated has none.
func BuildAttention(rep *report.Report) Attention {
	a := Attention{Causes: map[string]int{}, Rules: map[string]int{}}
	g := rep.Gate
	if g == nil {
		return a
	}
	ctx := newAttnContext(rep)
	index := map[string]int{} // group key → index in a.Items
	for _, it := range g.Items {
		if _, listed := statusRank[it.Status]; !listed {
			continue
		}
		key, merge := ctx.groupKey(it)
		if i, ok := index[key]; ok {
			ctx.merge(&a.Items[i], it, merge)
			continue
		}
		if merge && (it.Kind == report.KindDrift || it.Kind == report.KindSlide) {
			// History warnings about a case that is not listed (it met
			// its floor): a warning of their own.
			key = "own/" + key
			if i, ok := index[key]; ok {
				ctx.merge(&a.Items[i], it, false)
				continue
			}
		}
		index[key] = len(a.Items)
		a.Items = append(a.Items, ctx.item(it))
	}
	for i := range a.Items {
		ctx.finish(&a.Items[i])
	}
	sort.SliceStable(a.Items, func(i, j int) bool {
		x, y := a.Items[i], a.Items[j]
		if statusRank[x.Status] != statusRank[y.Status] {
			return statusRank[x.Status] < statusRank[y.Status]
		}
		if x.severity != y.severity {
			return x.severity > y.severity
		}
		return x.Layer < y.Layer
	})
	for _, it := range a.Items {
		a.Causes[it.Status]++
		if it.Kind == report.KindCase {
			a.Rules[it.Status]++ // a group of cases is one cause, not rules
		} else {
			a.Rules[it.Status] += len(it.Rules)
		}
	}
	return a
}

// Count is the number of listed causes of a status.
func (a Attention) Count(status string) int { return a.Causes[status] }

type attnContext struct {
	rep     *report.Report
	checks  map[string]report.CheckResult
	order   map[string]int // check id → position in the report
	sameAs  map[string][]string
	cases   map[string]report.Case
	results map[[2]string]report.CaseResult
	policy  gate.Policy
}

// newModel: the gate found model in this run and not in the baseline's
// Layer 1 (its case items are unpaired for that, not because a case is
// new or edited).
func (c *attnContext) newModel(model string) bool {
	for _, u := range c.rep.Gate.Unmatched {
		if u.Layer == 1 && u.Kind == report.KindModel && u.Model == model && u.Side == "new" {
			return true
		}
	}
	return false
}

func newAttnContext(rep *report.Report) *attnContext {
	c := &attnContext{rep: rep, checks: map[string]report.CheckResult{}, order: map[string]int{}, sameAs: map[string][]string{},
		cases: map[string]report.Case{}, results: map[[2]string]report.CaseResult{}, policy: gate.PolicyFromReport(rep.Gate.Policy)}
	if rep.Conformance != nil {
		for i, r := range rep.Conformance.Checks {
			c.checks[r.ID] = r
			c.order[r.ID] = i
			if r.SameAs != "" {
				c.sameAs[r.SameAs] = append(c.sameAs[r.SameAs], r.ID)
			}
		}
	}
	if b := rep.Behavior; b != nil {
		for _, k := range b.Cases {
			c.cases[k.ID] = k
		}
		for _, r := range b.Results {
			c.results[[2]string{r.Case, r.Model}] = r
		}
	}
	return c
}

// groupKey is the cause an item belongs to; merge says it joins a case's
// item as a note (history warnings) rather than as one more rule.
func (c *attnContext) groupKey(it report.GateItem) (string, bool) {
	switch it.Kind {
	case report.KindCheck:
		if r, ok := c.checks[it.Subject]; ok && it.Status == report.ItemError {
			// Checks not judged for one reason (the run's deadline, a
			// process that exited) are one thing to fix, not fifteen.
			return "check-error/" + errorKey(r.Outcome.Message), false
		}
		root := it.Subject
		if r, ok := c.checks[root]; ok && r.SameAs != "" {
			root = r.SameAs
		}
		return "check/" + root, false
	case report.KindCase, report.KindDrift, report.KindSlide:
		if it.Kind == report.KindCase && it.Status == report.ItemError {
			// A provider that could not be reached errs every case the
			// same way: one thing to fix per model and reason.
			why := ""
			if r, ok := c.results[[2]string{it.Subject, it.Model}]; ok {
				if rc := runCause(r); rc != nil {
					why = rc.Reason
				}
			}
			if serverLost(why) {
				// The server gone stops every model's cases alike: one
				// thing to fix, said once.
				return "case-error/server-lost", false
			}
			// One cause whatever hint a later call added ("not sent:
			// an earlier call …", "one attempt: …") and whichever model
			// met it (an endpoint down is every model's).
			return "case-error/" + caseErrorKey(why, it.Model), false
		}
		return "case/" + it.Subject + "\x00" + it.Model, it.Kind != report.KindCase
	case report.KindFault, report.KindAttack:
		// One fault type or attack category × model is one cause, whatever
		// scores it moved (attack success and refusal together).
		return fmt.Sprintf("%d/%s/%s\x00%s", it.Layer, it.Kind, it.Subject, it.Model), false
	}
	return fmt.Sprintf("%d/%s/%s/%s/%s/%s", it.Layer, it.Kind, it.Subject, it.Model, it.Score, it.Rule), false
}

func decision(it report.GateItem) Decision {
	return Decision{Subject: it.Subject, Model: it.Model, Rule: it.Rule, Reason: it.Reason}
}

func (c *attnContext) item(it report.GateItem) AttentionItem {
	a := AttentionItem{Status: it.Status, Layer: it.Layer, Kind: it.Kind, Subject: it.Subject, Model: it.Model,
		Rules: []string{ruleName(it)}, Decided: []Decision{decision(it)}}
	if it.Kind == report.KindDrift || it.Kind == report.KindSlide {
		a.Kind = report.KindCase
		a.Notes = append(a.Notes, historyNote(it))
		a.Sentence = plainReason(it) + ": worth a look, so a warning"
	} else {
		a.Sentence = c.sentence(it)
	}
	a.severity = severity(it)
	c.attachGate(&a, it)
	return a
}

func (c *attnContext) merge(a *AttentionItem, it report.GateItem, asNote bool) {
	a.Decided = append(a.Decided, decision(it))
	if asNote {
		a.Notes = append(a.Notes, historyNote(it))
		return
	}
	if statusRank[it.Status] < statusRank[a.Status] {
		// The worst status heads the item, with its sentence.
		a.Notes = append(a.Notes, a.Sentence)
		a.Status, a.Sentence = it.Status, c.sentence(it)
		if it.Kind == report.KindCheck {
			a.Subject = it.Subject
		}
		a.severity = severity(it)
	} else if it.Kind != report.KindCheck && (it.Kind != report.KindCase || it.Status != report.ItemError) {
		a.Notes = append(a.Notes, c.sentence(it))
	}
	if r := ruleName(it); !contains(a.Rules, r) {
		a.Rules = append(a.Rules, r)
	}
}

// attachGate adds the cause and where to look of the item's first rule.
func (c *attnContext) attachGate(a *AttentionItem, it report.GateItem) {
	switch {
	case it.Kind == report.KindCheck:
		if r, ok := c.checks[it.Subject]; ok {
			root := it.Subject
			if r.SameAs != "" {
				root = r.SameAs
			}
			if rr, ok := c.checks[root]; ok {
				a.Cause = checkCause(rr, c.rep)
				if it.Status == report.ItemError {
					// The check's fix is for a server that broke the
					// rule; no run saw this one break it.
					a.Cause.Fix = ""
				}
			}
		}
	case a.Kind == report.KindCase:
		if r, ok := c.results[[2]string{it.Subject, it.Model}]; ok {
			a.Cause = runCause(r)
		}
		a.Where = c.where(it.Subject)
	case it.Layer == 2 && (it.Kind == report.KindFault || it.Kind == report.KindAttack) && c.rep.Resilience != nil:
		if run, ok := firstBadRun(c.rep.Resilience, it); ok {
			a.Cause = &Cause{Run: run.Run, Reason: run.Reason, Case: run.Case}
			if run.Trajectory != nil {
				a.Cause.Called, a.Cause.CalledKnown = calledTools(run.Trajectory), true
			}
			a.Where = c.where(run.Case)
		}
	}
}

// finish lists, under a Layer 0 cause, every check that reported the same
// fault (SameAs), gated or not, in report order.
func (c *attnContext) finish(a *AttentionItem) {
	if a.Kind == report.KindCase && a.Status == report.ItemError && a.Cause != nil && serverLost(a.Cause.Reason) {
		on := spanModels(a)
		a.Why = report.ServerLost
		a.Sentence = fmt.Sprintf("%s errored on %s because %s (the first run below): no verdict on the models, so not judged; what stopped the server is the thing to fix", plural(len(a.Rules), "case", "cases"), on, report.ServerLost)
		if c.rep.Telemetry != nil {
			a.Sentence += ", and Layer 3's error counts include the calls lost with it"
		}
		if len(a.Rules) > 1 {
			a.Where = "" // the cases' files and lines are in the report
		}
		return
	}
	if a.Kind == report.KindCase && a.Status == report.ItemError && (len(a.Rules) > 1 || len(decidedModels(a)) > 1) {
		on := spanModels(a)
		a.Sentence = fmt.Sprintf("%s errored on %s for the reason below: the harness, the provider or the server could not complete their runs, which is no verdict on the model, so they are not judged", plural(len(a.Rules), "case", "cases"), on)
		a.Where = "" // the cases' files and lines are in the report
		return
	}
	if a.Kind != report.KindCheck {
		return
	}
	if a.Status == report.ItemError {
		if len(a.Rules) > 1 {
			sort.SliceStable(a.Rules, func(i, j int) bool { return c.order[a.Rules[i]] < c.order[a.Rules[j]] })
			a.Subject = a.Rules[0]
			a.Sentence = fmt.Sprintf("%d checks errored in some or all of their runs, for the reason below: the harness could not judge them, which is no verdict on the rules either way, so they are not judged", len(a.Rules))
			if a.Cause != nil {
				// One check's spec and what it saw are not the group's.
				a.Cause.Spec, a.Cause.SpecURL = "", ""
				a.Cause.Finding = errorReason(a.Cause.Finding)
			}
		}
		if a.Cause != nil {
			a.Cause.Finding = c.withLostCulprit(a.Cause.Finding)
		}
		return
	}
	root := a.Rules[0]
	if r, ok := c.checks[root]; ok && r.SameAs != "" {
		root = r.SameAs
	}
	all := []string{}
	if _, ok := c.checks[root]; ok {
		all = append(all, root)
	}
	all = append(all, c.sameAs[root]...)
	for _, id := range a.Rules {
		if !contains(all, id) {
			all = append(all, id)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return c.order[all[i]] < c.order[all[j]] })
	a.Rules = all
	if len(all) > 1 {
		a.Sentence = fmt.Sprintf("One fault breaks %d rules (%s). %s", len(all), strings.Join(all, ", "), a.Sentence)
	}
}

func (c *attnContext) where(caseID string) string {
	k, ok := c.cases[caseID]
	if !ok || k.Source == "" {
		return ""
	}
	if k.Line > 0 {
		return fmt.Sprintf("%s:%d", k.Source, k.Line)
	}
	return k.Source
}

// ruleName is what an item's rule is called in a list of the rules one
// cause breaks: the check id, or the score a Layer 2 rate judges.
func ruleName(it report.GateItem) string {
	if (it.Kind == report.KindFault || it.Kind == report.KindAttack) && it.Score != "" {
		return it.Score
	}
	return it.Subject
}

func historyNote(it report.GateItem) string {
	return plainReason(it)
}

// severity orders items of one status: the larger fall in the good
// direction first; a failure with nothing to compare by its shortfall.
func severity(it report.GateItem) float64 {
	switch {
	case it.New != nil && it.Baseline != nil && it.New.N > 0 && it.Baseline.N > 0:
		d := it.Baseline.Rate() - it.New.Rate()
		if it.Direction == report.Lower {
			d = -d
		}
		return d
	case it.Drop != nil:
		return *it.Drop
	case it.Kind == report.KindCost && it.Value != nil && it.BaselineValue != nil && *it.BaselineValue > 0:
		return math.Min(1, *it.Value / *it.BaselineValue - 1)
	case it.New != nil && it.New.N > 0:
		return 1 - it.New.Rate()
	}
	return 0
}

// plainReason is the gate's reason without the statistics it ends with:
// those are for the "how this was decided" section.
func plainReason(it report.GateItem) string {
	if it.Stats == "" {
		return strings.TrimSpace(it.Reason)
	}
	return strings.TrimSpace(strings.TrimSuffix(it.Reason, " ("+it.Stats+")"))
}

// comparisons says over how many comparisons the exact test was
// corrected (the gate's family size K of α/K).
func comparisons(it report.GateItem) string {
	switch it.FamilySize {
	case 0:
		return "over the comparisons made"
	case 1:
		return "in the one comparison made"
	}
	return fmt.Sprintf("over %d comparisons", it.FamilySize)
}

func kOfNText(c report.Count) string { return fmt.Sprintf("%d/%d", c.K, c.N) }

// sentence says an item in plain words that agree with its status.
func (c *attnContext) sentence(it report.GateItem) string {
	switch it.Kind {
	case report.KindCheck:
		return c.checkSentence(it)
	case report.KindCase:
		if it.Rule != gate.RuleUndecided {
			return c.caseSentence(it)
		}
	case report.KindSuite:
		return suiteSentence(it, c.policy.MaxDrop)
	case report.KindFault, report.KindAttack:
		if it.New != nil && it.Baseline != nil {
			return rateSentence(it)
		}
	case report.KindCost, report.KindRunCost:
		return costSentence(it)
	}
	return reasonSentence(it)
}

// scoreWords is a score's name in words: "attackSuccess" → "attack
// success".
func scoreWords(name string) string {
	var b strings.Builder
	for i, r := range name {
		if r >= 'A' && r <= 'Z' && i > 0 {
			b.WriteByte(' ')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// reasonSentence is the gate's reason as a sentence with what its status
// means, unless the reason says so already ("…, so a warning").
func reasonSentence(it report.GateItem) string {
	s, tail := upperFirst(plainReason(it)), statusTail(it.Status)
	if strings.HasSuffix(s, tail) {
		return s
	}
	return s + tail
}

func statusTail(status string) string {
	switch status {
	case report.ItemFail:
		return ", so it fails"
	case report.ItemError:
		return ", so it is not judged"
	case report.ItemInconclusive:
		return ", so the result is inconclusive"
	case report.ItemWarn:
		return ", so a warning"
	case report.ItemKnown:
		return ": a known failure, not a new one"
	}
	return ""
}

func (c *attnContext) checkSentence(it report.GateItem) string {
	if it.New == nil {
		return reasonSentence(it)
	}
	failed := it.New.N - it.New.K
	if it.Status == report.ItemError {
		// The runs short of the floor errored: no run failed, so no
		// sentence may say it did.
		s := fmt.Sprintf("Errored in %d of %d runs", failed, it.New.N)
		if it.New.K == 0 && it.New.N > 1 {
			s = fmt.Sprintf("Errored in all %d runs", it.New.N)
		}
		return s + ": the harness could not judge it, which is no verdict on the rule either way, so it is not judged"
	}
	s := fmt.Sprintf("Failed %d of %d runs", failed, it.New.N)
	if it.New.K == 0 && it.New.N > 1 {
		s = fmt.Sprintf("Failed all %d runs", it.New.N)
	}
	if w := c.checks[it.Subject].Watched; w != nil && w.Offending > 0 && it.New.N > 1 {
		// The watch on every exchange counts as one run more than the
		// check's own (check.Monitors.Apply): a reader who sees "6 runs"
		// beside "MUST checks ran 5 times" is told why.
		s += fmt.Sprintf(" (%d of its own and its watch on every exchange)", it.New.N-1)
	}
	switch {
	case it.Status == report.ItemKnown && it.Baseline != nil:
		return s + fmt.Sprintf(", as in the baseline (%s): a known failure, not a new one", kOfNText(*it.Baseline))
	case it.Baseline != nil:
		return s + fmt.Sprintf(" after passing %s in the baseline: a regression, since conformance is deterministic; it fails", kOfNText(*it.Baseline))
	case c.rep.Gate.Baseline == nil:
		return s + "; a MUST rule must pass every run, and with no baseline the floor alone decides: it fails"
	}
	return s + "; the baseline did not run this check, so the floor alone decides: it fails"
}

func (c *attnContext) caseSentence(it report.GateItem) string {
	if it.New == nil {
		return reasonSentence(it)
	}
	if it.Status == report.ItemError {
		errored := it.New.N - it.New.K
		s := fmt.Sprintf("Errored in %d of %d runs", errored, it.New.N)
		if it.New.K == 0 && it.New.N > 1 {
			s = fmt.Sprintf("Errored in all %d runs", it.New.N)
		}
		return s + ": the harness, the provider or the server could not complete them, which is no verdict on the model, so it is not judged"
	}
	k := c.cases[it.Subject]
	f := c.policy.FloorSoft
	if k.Kind == report.Hard {
		f = c.policy.FloorHard
	}
	need := gate.FloorRuns(f, it.New.N)
	kind := string(k.Kind)
	if kind == "" {
		kind = "case"
	} else {
		kind += " case"
	}
	below := fmt.Sprintf("below its floor of %d/%d (%s)", need, it.New.N, kind)
	switch {
	case it.Status == report.ItemKnown && it.Baseline != nil:
		return fmt.Sprintf("Passed %s, %s, and already %s in the baseline: a known failure, not a new one", kOfNText(*it.New), below, kOfNText(*it.Baseline))
	case it.Baseline != nil && it.Status == report.ItemFail:
		return fmt.Sprintf("Fell from %s to %s, %s; more than chance allows %s, so it fails", kOfNText(*it.Baseline), kOfNText(*it.New), below, comparisons(it))
	case it.Baseline != nil && it.Status == report.ItemWarn:
		return fmt.Sprintf("Fell from %s to %s, %s; within what chance allows %s, so a warning", kOfNText(*it.Baseline), kOfNText(*it.New), below, comparisons(it))
	case it.Status == report.ItemFail:
		why := "not in the baseline (a new or edited case)"
		switch {
		case c.newModel(it.Model):
			why = "not in the baseline (the baseline did not run this model)"
		case c.rep.Gate.Baseline == nil:
			why = "no baseline to compare"
		case it.NotComparable != "":
			why = "not compared with the baseline, as the " + strings.TrimPrefix(it.NotComparable, "the ")
		}
		return fmt.Sprintf("Passed %s, %s; %s, so the floor alone decides: it fails", kOfNText(*it.New), below, why)
	}
	return reasonSentence(it)
}

// suiteSentence words a suite item; policyMaxDrop is the policy's, for an
// item that does not carry its own.
func suiteSentence(it report.GateItem, policyMaxDrop float64) string {
	if it.Value == nil || it.BaselineValue == nil || it.Drop == nil {
		return reasonSentence(it)
	}
	ch := suiteChange(it)
	// The sentence compares the paired cases on both sides: Value is the
	// mean over every case now (unpaired ones too), so "from" the paired
	// baseline "to" Value would not match the paired Δ.
	d := -*it.Drop
	if it.Direction == report.Lower {
		d = *it.Drop
	}
	to := *it.BaselineValue + d
	s := fmt.Sprintf("%s %s from %s to %s over %s (Δ %s)", upperFirst(scoreWords(it.Score)), moved(d), pct1(*it.BaselineValue), pct1(to), plural(it.Pairs, "paired case", "paired cases"), ch.Delta)
	if moved(d) == "held" {
		s = fmt.Sprintf("%s held at %s over %s", upperFirst(scoreWords(it.Score)), pct1(to), plural(it.Pairs, "paired case", "paired cases"))
	}
	md := policyMaxDrop
	if it.MaxDrop != nil {
		md = *it.MaxDrop
	}
	maxDrop := fmt.Sprintf("%.1f pts", 100*md)
	switch it.Status {
	case report.ItemFail:
		return s + fmt.Sprintf("; it surely %s, more than the %s max-drop allows, so it fails", strings.Replace(ch.Surely, "≥", "at least", 1), maxDrop)
	case report.ItemInconclusive:
		if ch.Surely == "too few cases to tell" {
			return s + fmt.Sprintf(", more than the %s max-drop, with too few cases to tell whether it is real, so the result is inconclusive", maxDrop)
		}
		return s + fmt.Sprintf(", more than the %s max-drop; it surely %s, but not surely by more than %s, so the result is inconclusive", maxDrop, strings.Replace(ch.Surely, "≥", "at least", 1), maxDrop)
	case report.ItemPass:
		// Drop is in the good direction: within max-drop, or beyond it
		// with a bound that shows no fall at all (run-to-run noise).
		if *it.Drop <= md+1e-9 {
			return s + fmt.Sprintf(", within the %s max-drop, so it passes", maxDrop)
		}
		return s + fmt.Sprintf(", more than the %s max-drop but %s, so it passes", maxDrop, ch.Surely)
	}
	return s + statusTail(it.Status)
}

func rateSentence(it report.GateItem) string {
	d := it.New.Rate() - it.Baseline.Rate()
	s := fmt.Sprintf("%s %s from %s to %s (%s → %s)", upperFirst(scoreWords(it.Score)), moved(d), kOfNText(*it.Baseline), kOfNText(*it.New), pct1(it.Baseline.Rate()), pct1(it.New.Rate()))
	switch it.Status {
	case report.ItemFail:
		return s + fmt.Sprintf("; more than chance allows %s, so it fails", comparisons(it))
	case report.ItemInconclusive:
		return s + fmt.Sprintf(", beyond max-drop but within what chance allows %s, so the result is inconclusive", comparisons(it))
	}
	return s + statusTail(it.Status)
}

func costSentence(it report.GateItem) string {
	if it.Value == nil {
		return reasonSentence(it)
	}
	what := "The run cost"
	if it.Kind == report.KindCost {
		what = "Cost per case"
	}
	if it.BaselineValue != nil {
		// The verb by the relative change: moved rounds to a tenth of a
		// point, and a cost of a tenth of a cent "held" at +26%.
		verb := "held"
		if b := *it.BaselineValue; b != 0 {
			verb = moved((*it.Value - b) / b)
		} else if *it.Value > 0 {
			verb = "rose"
		}
		return fmt.Sprintf("%s %s from %s to %s (%s); %s", what, verb, usdText(*it.BaselineValue), usdText(*it.Value),
			relPercent(*it.Value, *it.BaselineValue), costVerdict(it))
	}
	return fmt.Sprintf("%s is %s; %s", what, usdText(*it.Value), costVerdict(it))
}

func costVerdict(it report.GateItem) string {
	switch it.Status {
	case report.ItemFail:
		return "more than the policy allows (" + costLimit(it) + "), so it fails"
	case report.ItemInconclusive:
		return "the gate could not decide, so the result is inconclusive"
	}
	return strings.TrimPrefix(statusTail(it.Status), ", ")
}

// checkCause is a Layer 0 result's finding with the first located value.
func checkCause(r report.CheckResult, rep *report.Report) *Cause {
	c := &Cause{Finding: r.Outcome.Message, Fix: r.Fix, Spec: r.Spec, SpecURL: specURL(r.Spec)}
	for _, ev := range r.Outcome.Evidence {
		if ev.Pointer != "" || ev.OnStatus {
			c.Method, c.Pointer, c.Value, c.Missing, c.In = requestMethod(ev.Request), ev.Pointer, ev.Value, ev.Missing, ev.In
			if ev.OnStatus {
				c.Pointer, c.Value = "HTTP status", strconv.Itoa(ev.Status)
			}
			break
		}
	}
	if c.Finding == "" && len(r.Outcome.Details) > 0 {
		c.Finding = r.Outcome.Details[0]
	}
	return c
}

// requestMethod is the method at the head of an evidence request
// ("tools/list {…}" → "tools/list").
func requestMethod(req string) string {
	m, _, _ := strings.Cut(strings.TrimSpace(req), " ")
	if strings.ContainsAny(m, "{[\"") {
		// The request as sent (check.FromResponse keeps the body).
		if sm := methodRE.FindStringSubmatch(req); sm != nil {
			return sm[1]
		}
		return ""
	}
	return m
}

// specVersion is the revision the checklist cites.
const specVersion = "2026-07-28"

// specRef is a citation like "server/tools.mdx §Tool Result".
var specRef = regexp.MustCompile(`^([a-z0-9_/-]+)\.mdx(?:\s+§([^;,(]+))?`)

// specURL links the first .mdx section a citation names on the published
// specification, or "" when it names none (schema.ts, a SEP).
func specURL(spec string) string {
	for _, part := range strings.Split(spec, ";") {
		m := specRef.FindStringSubmatch(strings.TrimSpace(part))
		if m == nil {
			continue
		}
		// The site serves a folder's index.mdx at the folder's path.
		path := strings.TrimSuffix(strings.TrimSuffix(m[1], "index"), "/")
		u := "https://modelcontextprotocol.io/specification/" + specVersion + "/" + path
		if sec := strings.TrimSpace(m[2]); sec != "" {
			u += "#" + slug(sec)
		}
		return u
	}
	return ""
}

// slug is a heading's anchor as the spec site makes it: lower case, words
// joined by "-".
func slug(h string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(h) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		default:
			dash = true
		}
	}
	return b.String()
}

// runCause is the first failing run's reason and the tools it called.
func runCause(r report.CaseResult) *Cause {
	for _, run := range r.Runs {
		if run.Outcome == report.RunPass || run.Outcome == report.RunInconclusive {
			continue
		}
		c := &Cause{Run: run.Run}
		if len(run.Reasons) > 0 {
			c.Reason = run.Reasons[0]
		}
		if run.Trajectory != nil {
			c.Called, c.CalledKnown = calledTools(run.Trajectory), true
		}
		return c
	}
	if len(r.Notes) > 0 {
		return &Cause{Reason: r.Notes[0]}
	}
	return nil
}

func calledTools(t *report.Trajectory) []string {
	var out []string
	for _, turn := range t.Turns {
		for _, call := range turn.Calls {
			if !contains(out, call.Name) {
				out = append(out, call.Name)
			}
		}
	}
	return out
}

// badOutcomes are the Layer 2 outcomes that count against a score.
var badOutcomes = map[string]bool{"followed": true, "fabricated": true, "looped": true, "silent": true}

func firstBadRun(res *report.Resilience, it report.GateItem) (report.ResilienceRun, bool) {
	for _, run := range res.Runs {
		if run.Kind == it.Kind && run.Subject == it.Subject && run.Model == it.Model && run.Counted && badOutcomes[run.Outcome] {
			return run, true
		}
	}
	return report.ResilienceRun{}, false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// costLimit is a cost rule's limit in words: "at most 10% over the
// baseline", "at most $5.00"; the rule as written when the item carries
// no limit.
func costLimit(it report.GateItem) string {
	switch {
	case it.Limit == nil:
		return it.Rule
	case it.Kind == report.KindCost:
		return "at most " + strconv.FormatFloat(100**it.Limit, 'g', 6, 64) + "% over the baseline"
	}
	return "at most " + usdText(*it.Limit)
}

// spanModels says which models a group of cases not judged covers, "this
// model" or "2 models (m1, m2)"; a group over several names no one model.
func spanModels(a *AttentionItem) string {
	models := decidedModels(a)
	if len(models) < 2 {
		return "this model"
	}
	a.Model, a.Models = "", models
	return plural(len(models), "model", "models") + " (" + strings.Join(models, ", ") + ")"
}

// decidedModels are the models an item's gate items name, in order.
func decidedModels(a *AttentionItem) []string {
	var models []string
	for _, d := range a.Decided {
		if d.Model != "" && !contains(models, d.Model) {
			models = append(models, d.Model)
		}
	}
	return models
}

// llmHints are the parenthetical hints pkg/llm adds to a provider's error
// after the first call met it: the same cause, said again.
var llmHints = regexp.MustCompile(` \((?:gave up after \d+ attempts|one attempt: |not sent: )[^)]*\)?`)

// caseErrorKey is the cause of an errored case run, without the hints
// and without the model's own id.
func caseErrorKey(why, model string) string {
	why = llmHints.ReplaceAllString(why, "")
	if model != "" {
		why = strings.ReplaceAll(why, model, "{model}")
	}
	return why
}

// serverLost says a run's reason is the server that could not be reached
// (report.ServerLost).
func serverLost(reason string) bool {
	return strings.HasPrefix(reason, "error: "+report.ServerLost)
}

// errorReason is what stopped a run, without what the run had seen by
// then: the check driver writes a run cut short by the deadline as "run
// cancelled while it ran: <why>; what it saw then …: <its finding>", and
// checks cut short for one reason are grouped by it.
//
// A stdio server that exited is one reason whatever request found it
// gone ("stdio ping: server process exited with code 3 …"): the checks it
// stopped are grouped by the exit, not by their requests.
func errorReason(msg string) string {
	if i := strings.Index(msg, "; what it saw then"); i > 0 {
		msg = msg[:i]
	}
	if i := strings.Index(msg, processExited); i > 0 {
		msg = msg[i:]
		if j := strings.Index(msg, "\n\n"); j > 0 {
			msg = msg[:j] // a second finding of the same run
		}
		msg = strings.TrimRight(msg, "\n")
	}
	return msg
}

// errorKey groups checks not judged: by errorReason, and processes that
// exited by how (their code and last words), not by what each was serving.
func errorKey(msg string) string {
	r := errorReason(msg)
	if !strings.HasPrefix(r, processExited) {
		return r
	}
	if i := strings.Index(r, " while serving "); i > 0 {
		rest := r[i:]
		if j := strings.Index(rest, "; stderr tail:"); j >= 0 {
			return r[:i] + rest[j:]
		}
		return r[:i]
	}
	return r
}

// withLostCulprit adds to finding what Layer 0 found by sending the
// requests again when finding is the run's own process exiting (its exit
// code): the one request that ends the server, which the exit's own words
// cannot tell among those in flight. It goes before the stderr tail, which
// the comment and the terminal clip.
func (c *attnContext) withLostCulprit(finding string) string {
	l0 := c.rep.Conformance
	if l0 == nil || l0.LostProcess == nil {
		return finding
	}
	lp := l0.LostProcess
	if !strings.Contains(finding, fmt.Sprintf("%s %d", processExited, lp.ExitCode)) {
		return finding
	}
	add := "; " + lp.Replay
	if lp.Culprit != "" {
		add = fmt.Sprintf("; the server exits on %s: sent again alone to a new process, it ended it too (code %d)", lp.Culprit, lp.CulpritExitCode)
	}
	if i := strings.Index(finding, "; stderr tail:"); i >= 0 {
		return finding[:i] + add + finding[i:]
	}
	return finding + add
}

// processExited is how pkg/transport words a stdio server that ended (a
// test keeps the two so).
const processExited = "server process exited with code"
