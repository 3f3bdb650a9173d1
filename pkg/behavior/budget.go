package behavior

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

// Budget caps a run's spend (eval.budget). Zero fields are no cap.
type Budget struct {
	MaxTokens int
	MaxUSD    float64
}

// ErrBudget is wrapped by the error a Gate returns once the cap is reached.
var ErrBudget = errors.New("budget reached")

// meter counts what a run spends and enforces the cap: once reached, no
// further provider call starts. Calls already in flight finish, so the
// spend can pass the cap by at most the calls in flight (the concurrency
// limit); the report shows the exact figure.
type meter struct {
	cap    Budget
	prices *Prices

	mu      sync.Mutex
	calls   int
	tokens  int
	usd     float64
	unknown map[string]bool // models used without a price
	reached string          // why the cap was reached, "" before
}

func newMeter(cap Budget, prices *Prices) *meter {
	return &meter{cap: cap, prices: prices, unknown: map[string]bool{}}
}

// gate is the Agent/Judge hook: an error once the cap is reached.
func (m *meter) gate() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reached != "" {
		return fmt.Errorf("%w: %s", ErrBudget, m.reached)
	}
	return nil
}

// add records one call's usage by model.
func (m *meter) add(model string, u llm.Usage) {
	if strings.HasPrefix(model, BaselinePrefix) {
		return // the built-in baseline is not a provider: no call, no cost
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	m.tokens += tokensOf(u)
	if p, ok := m.price(model); ok {
		m.usd += p.Cost(u)
	} else {
		m.unknown[model] = true
	}
	switch {
	case m.reached != "":
	case m.cap.MaxTokens > 0 && m.tokens >= m.cap.MaxTokens:
		m.reached = fmt.Sprintf("%d tokens used, the cap is eval.budget.max-tokens %d", m.tokens, m.cap.MaxTokens)
	case m.cap.MaxUSD > 0 && m.usd >= m.cap.MaxUSD:
		m.reached = fmt.Sprintf("$%.4f spent, the cap is eval.budget.max-usd %g", m.usd, m.cap.MaxUSD)
	}
}

// price is free for the built-in baseline, which calls no provider.
func (m *meter) price(model string) (Price, bool) {
	if strings.HasPrefix(model, BaselinePrefix) {
		return Price{Model: model}, true
	}
	return m.prices.Lookup(model)
}

func (m *meter) snapshot() (calls, tokens int, usd float64, unknown []string, reached string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.unknown {
		unknown = append(unknown, k)
	}
	sort.Strings(unknown)
	return m.calls, m.tokens, m.usd, unknown, m.reached
}

func tokensOf(u llm.Usage) int {
	return u.InputTokens + u.CachedInputTokens + u.CacheWriteTokens + u.OutputTokens
}

// Preview is the spend estimate made before a run: the provider calls the
// runs not found in the cache will make, times estimated tokens, times
// price. It is an estimate (how many turns a model takes is not known
// ahead); the cap, not the preview, is what bounds a run.
type Preview struct {
	Runs      int // case runs in the matrix
	Reused    int // of them, answered from the cache
	Calls     int // estimated provider calls, judge included
	Tokens    int
	USD       float64
	USDKnown  bool     // false when a model has no price
	NoPrice   []string // models without a price
	PricesVer string
}

// String is the one-line preview the CLI prints before the run.
func (p Preview) String() string {
	cost := "cost unknown (no price for " + strings.Join(p.NoPrice, ", ") + ")"
	if p.USDKnown {
		cost = fmt.Sprintf("≈ $%.4f", p.USD)
	}
	return fmt.Sprintf("spend preview: %d runs (%d from the cache) → ≈ %d provider calls, ≈ %d tokens, %s (prices of %s)",
		p.Runs, p.Reused, p.Calls, p.Tokens, cost, p.PricesVer)
}

// Token estimates for the preview: a common rule of thumb is four
// characters per token for English and JSON.
const (
	charsPerToken      = 4
	outputPerTurn      = 150 // a tool call or a short answer
	judgeOutputTokens  = 80
	judgeOverheadChars = 2000 // the judge prompt and a compact transcript
)

// estimate adds one run's expected calls: one turn per expected step plus
// the answer, each re-reading the tools and the conversation so far.
// judge is the judge's model, "" when the run is not judged.
func (p *Preview) estimate(model, judge string, prices *Prices, toolsChars, promptChars, steps int) {
	turns := steps + 1
	if strings.HasPrefix(model, BaselinePrefix) {
		turns = 0 // the built-in baseline calls no provider
	}
	in := 0
	for t := 0; t < turns; t++ {
		in += (len(SystemPrompt) + toolsChars + promptChars + t*600) / charsPerToken
	}
	u := llm.Usage{InputTokens: in, OutputTokens: turns * outputPerTurn}
	p.Calls += turns
	p.Tokens += tokensOf(u)
	p.addCost(model, prices, u)
	if judge != "" {
		ju := llm.Usage{InputTokens: (judgeOverheadChars + promptChars) / charsPerToken, OutputTokens: judgeOutputTokens}
		p.Calls++
		p.Tokens += tokensOf(ju)
		p.addCost(judge, prices, ju)
	}
}

func (p *Preview) addCost(model string, prices *Prices, u llm.Usage) {
	if strings.HasPrefix(model, BaselinePrefix) {
		return
	}
	pr, ok := prices.Lookup(model)
	if !ok {
		for _, n := range p.NoPrice {
			if n == model {
				return
			}
		}
		p.NoPrice = append(p.NoPrice, model)
		p.USDKnown = false
		return
	}
	p.USD += pr.Cost(u)
}
