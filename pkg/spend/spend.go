// Package spend is a run's model spend across every layer: the budget
// meter that every model and judge call of Layers 1 and 2 passes through,
// and the preview estimated before any call. Both price with the run's
// one price table (pkg/pricing), the same one telemetry costs calls with,
// so the preview, the cap and the report never disagree on a price.
//
//	m := spend.NewMeter(spend.Budget{MaxUSD: 2}, table, time.Now)
//	agent.Before, agent.After = m.Gate, m.Hook(spend.Layer1, "openai:gpt-5-mini")
//	rep.Spend = spend.Record(preview, m)
package spend

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/pricing"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Budget caps a run's spend (eval.budget). Zero fields are no cap.
type Budget struct {
	MaxTokens int
	MaxUSD    float64
}

// ErrBudget is wrapped by the error Gate returns once the cap is reached.
var ErrBudget = errors.New("budget reached")

// The parts of a run whose calls are counted apart, in report order.
const (
	Layer1      = "Layer 1"
	Judge       = "judge"
	Layer2      = "Layer 2"
	Layer2Judge = "Layer 2 judge"
	// Draft is the prompts `golden init --models` has a model word.
	Draft = "drafting"
)

var partOrder = []string{Layer1, Judge, Layer2, Layer2Judge, Draft}

// figures are one part's or one model's calls, tokens and money.
type figures struct {
	calls, tokens int
	usd           float64
	unknown       map[string]bool // models without a price
}

func (f *figures) add(model string, calls int, u llm.Usage, q pricing.Quote) {
	f.calls += calls
	f.tokens += Tokens(u)
	if q.Known {
		f.usd += q.USD
		return
	}
	if f.unknown == nil {
		f.unknown = map[string]bool{}
	}
	f.unknown[model] = true
}

func (f *figures) report() report.SpendFigures {
	out := report.SpendFigures{Calls: f.calls, Tokens: f.tokens}
	if len(f.unknown) == 0 {
		v := round6(f.usd)
		out.USD = &v
	} else {
		out.USDUnknown = "no price for " + strings.Join(sortedKeys(f.unknown), ", ")
	}
	return out
}

// tally is figures in total, by part and by model.
type tally struct {
	total   figures
	byPart  map[string]*figures
	byModel map[string]*figures
}

func (t *tally) add(part, model string, calls int, u llm.Usage, q pricing.Quote) {
	if t.byPart == nil {
		t.byPart, t.byModel = map[string]*figures{}, map[string]*figures{}
	}
	for _, f := range []*figures{&t.total, get(t.byPart, part), get(t.byModel, model)} {
		f.add(model, calls, u, q)
	}
}

func get(m map[string]*figures, k string) *figures {
	if m[k] == nil {
		m[k] = &figures{}
	}
	return m[k]
}

// Meter counts what a run spends and enforces the cap: once reached, no
// further provider call starts, in any layer. Calls already in flight
// finish, so the spend can pass the cap by at most the calls in flight
// (the concurrency limit); the report shows the exact figure.
type Meter struct {
	cap    Budget
	prices *pricing.Table
	now    func() time.Time

	mu      sync.Mutex
	used    tally
	reached string // why the cap was reached, "" before
}

// NewMeter meters a run under cap, pricing each call with prices at the
// time now says it ended (nil: time.Now).
func NewMeter(cap Budget, prices *pricing.Table, now func() time.Time) *Meter {
	if prices == nil {
		prices = pricing.Default()
	}
	if now == nil {
		now = time.Now
	}
	return &Meter{cap: cap, prices: prices, now: now}
}

// Prices is the table the meter prices with.
func (m *Meter) Prices() *pricing.Table { return m.prices }

// Cap is the budget the meter enforces.
func (m *Meter) Cap() Budget { return m.cap }

// Gate is the Agent/Judge Before hook: an error once the cap is reached.
func (m *Meter) Gate() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reached != "" {
		return fmt.Errorf("%w: %s", ErrBudget, m.reached)
	}
	return nil
}

// Add records one call of model, counted under part.
func (m *Meter) Add(part, model string, u llm.Usage) {
	q := m.prices.Quote(model, m.now(), u)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used.add(part, model, 1, u, q)
	switch {
	case m.reached != "":
	case m.cap.MaxTokens > 0 && m.used.total.tokens >= m.cap.MaxTokens:
		m.reached = fmt.Sprintf("%d tokens used, the cap is eval.budget.max-tokens %d", m.used.total.tokens, m.cap.MaxTokens)
	case m.cap.MaxUSD > 0 && m.used.total.usd >= m.cap.MaxUSD:
		m.reached = fmt.Sprintf("$%.4f spent, the cap is eval.budget.max-usd %g", m.used.total.usd, m.cap.MaxUSD)
	}
}

// Hook is an After hook that adds each call to part as model's.
func (m *Meter) Hook(part, model string) func(llm.Usage) {
	return func(u llm.Usage) { m.Add(part, model, u) }
}

// Reached is why the cap was reached, "" while it is not.
func (m *Meter) Reached() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reached
}

// Calls is the number of provider calls made so far, per part.
func (m *Meter) Calls() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for k, f := range m.used.byPart {
		out[k] = f.calls
	}
	return out
}

// Used is what the run spent so far, in total.
func (m *Meter) Used() report.SpendFigures {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used.total.report()
}

// Preview is the spend estimate made before a run: the provider calls the
// runs the cache cannot answer will make, times estimated tokens, times
// price. It is an estimate (how many turns a model takes is not known
// ahead); the cap, not the preview, is what bounds a run.
type Preview struct {
	Runs   int // runs planned, every layer
	Reused int // of them, answered from the cache
	prices *pricing.Table
	at     time.Time
	est    tally
}

// NewPreview starts an empty estimate priced with prices at time at.
func NewPreview(prices *pricing.Table, at time.Time) *Preview {
	return &Preview{prices: prices, at: at}
}

// Add estimates calls calls of model, under part, using u in all.
func (p *Preview) Add(part, model string, calls int, u llm.Usage) {
	if calls <= 0 {
		return
	}
	p.est.add(part, model, calls, u, p.prices.Quote(model, p.at, u))
}

// Calls and Tokens are the estimated totals.
func (p *Preview) Calls() int  { return p.est.total.calls }
func (p *Preview) Tokens() int { return p.est.total.tokens }

// Unpriced lists the models the preview has no price for.
func (p *Preview) Unpriced() []string { return sortedKeys(p.est.total.unknown) }

// Check refuses a money cap that cannot be enforced: a model without a
// price would spend without the meter seeing any of it.
func (p *Preview) Check(b Budget) error {
	if b.MaxUSD > 0 && len(p.est.total.unknown) > 0 {
		return fmt.Errorf("a dollar cap is set (--max-usd or eval.budget.max-usd) but no price is known for %s in price table %s, so the cap cannot be enforced: add the model to a price override file (pricing.file, --prices), cap tokens instead (--max-tokens or eval.budget.max-tokens), or use a priced model",
			strings.Join(p.Unpriced(), ", "), p.prices.Version())
	}
	return nil
}

// String is the one-line preview the CLI prints before the run.
func (p *Preview) String() string {
	cost := "cost unknown (no price for " + strings.Join(p.Unpriced(), ", ") + ")"
	if len(p.est.total.unknown) == 0 {
		cost = fmt.Sprintf("≈ $%.4f", p.est.total.usd)
	}
	var parts []string
	for _, name := range partOrder {
		if f := p.est.byPart[name]; f != nil && f.calls > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", name, f.calls))
		}
	}
	by := ""
	if len(parts) > 0 {
		by = " (" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprintf("spend preview: %d runs (%d from the cache) → ≈ %d provider calls%s, ≈ %d tokens, %s (prices of %s)",
		p.Runs, p.Reused, p.est.total.calls, by, p.est.total.tokens, cost, p.prices.Version())
}

// Record is the report's spend section: the preview, what the meter saw,
// the cap, per part and per model. reused and fresh count Layer 1's runs.
func Record(p *Preview, m *Meter, reused, fresh int) *report.Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &report.Spend{Preview: p.est.total.report(), Used: m.used.total.report(),
		MaxTokens: m.cap.MaxTokens, MaxUSD: m.cap.MaxUSD, Prices: m.prices.Version(), ReusedRuns: reused, FreshRuns: fresh}
	if m.reached != "" {
		s.Reached, s.Reason = true, m.reached
	}
	s.Layers = parts(partOrder, p.est.byPart, m.used.byPart)
	var models []string
	for k := range p.est.byModel {
		models = append(models, k)
	}
	for k := range m.used.byModel {
		if p.est.byModel[k] == nil {
			models = append(models, k)
		}
	}
	sort.Strings(models)
	s.Models = parts(models, p.est.byModel, m.used.byModel)
	return s
}

func parts(names []string, est, used map[string]*figures) []report.SpendPart {
	var out []report.SpendPart
	for _, n := range names {
		e, u := est[n], used[n]
		if e == nil && u == nil {
			continue
		}
		sp := report.SpendPart{Name: n}
		if e != nil {
			sp.Preview = e.report()
		} else {
			sp.Preview = (&figures{}).report()
		}
		if u != nil {
			sp.Used = u.report()
		} else {
			sp.Used = (&figures{}).report()
		}
		out = append(out, sp)
	}
	return out
}

// Tokens is every token of a call: input, cached, cache-write and output.
func Tokens(u llm.Usage) int {
	return u.InputTokens + u.CachedInputTokens + u.CacheWriteTokens + u.OutputTokens
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Token estimates for the preview: a common rule of thumb is four
// characters per token for English and JSON.
const (
	charsPerToken      = 4
	outputPerTurn      = 150 // a tool call or a short answer
	turnGrowthChars    = 600 // what each turn adds to the conversation
	judgeOutputTokens  = 80
	judgeOverheadChars = 2000 // the judge prompt and a compact transcript
)

// Run adds one run's expected calls: turns model turns under part, each
// re-reading contextChars (system prompt, tool list) and promptChars and
// the conversation so far; then judgeCalls calls of judge under
// judgePart (judge "" or judgeCalls 0: not judged).
func (p *Preview) Run(part, model string, turns, contextChars, promptChars int, judgePart, judge string, judgeCalls int) {
	in := 0
	for t := 0; t < turns; t++ {
		in += (contextChars + promptChars + t*turnGrowthChars) / charsPerToken
	}
	p.Add(part, model, turns, llm.Usage{InputTokens: in, OutputTokens: turns * outputPerTurn})
	if judge != "" && judgeCalls > 0 {
		p.Add(judgePart, judge, judgeCalls, llm.Usage{InputTokens: judgeCalls * (judgeOverheadChars + promptChars) / charsPerToken, OutputTokens: judgeCalls * judgeOutputTokens})
	}
}

// Merge adds q's estimate (runs, calls, tokens, money) to p's.
func (p *Preview) Merge(q *Preview) {
	p.Runs += q.Runs
	p.Reused += q.Reused
	p.est.merge(&q.est)
}

func (t *tally) merge(o *tally) {
	if t.byPart == nil {
		t.byPart, t.byModel = map[string]*figures{}, map[string]*figures{}
	}
	t.total.merge(&o.total)
	for k, f := range o.byPart {
		get(t.byPart, k).merge(f)
	}
	for k, f := range o.byModel {
		get(t.byModel, k).merge(f)
	}
}

func (f *figures) merge(o *figures) {
	f.calls += o.calls
	f.tokens += o.tokens
	f.usd += o.usd
	for k := range o.unknown {
		if f.unknown == nil {
			f.unknown = map[string]bool{}
		}
		f.unknown[k] = true
	}
}
