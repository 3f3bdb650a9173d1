package pricing

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

// Quote is the price of one model call.
type Quote struct {
	// USD is the cost; meaningful only when Known.
	USD   float64
	Known bool
	// Basis says which price was used, e.g. "anthropic:claude-sonnet-5
	// from 2026-09-01, prompt above 200000 tokens" — so a reader can check it.
	Basis string
	// Unknown says why there is no price ("" when Known).
	Unknown string
}

// perMillion: rates are per million tokens.
const perMillion = 1e6

// Quote prices one call of model (a model spec as configured,
// "PROVIDER:MODEL", e.g. "openai:gpt-5-mini") made at time at, with the
// row in force on at's UTC date. Tiers are chosen per request: the
// prompt is the input, cache-read and cache-write tokens together.
func (t *Table) Quote(modelSpec string, at time.Time, u llm.Usage) Quote {
	m, ok := t.lookup(modelSpec)
	if !ok {
		return Quote{Unknown: fmt.Sprintf("no price for %s in price table %s: add it to a price override file", modelSpec, t.version)}
	}
	r, ok := m.rowAt(at)
	if !ok {
		return Quote{Unknown: fmt.Sprintf("no price for %s on %s: the table's first row for %s:%s starts %s", modelSpec, at.UTC().Format(time.DateOnly), m.provider, m.id, m.rows[0].from.Format(time.DateOnly))}
	}
	if u.InputTokens < 0 || u.CachedInputTokens < 0 || u.CacheWriteTokens < 0 || u.OutputTokens < 0 {
		return Quote{Unknown: fmt.Sprintf("usage of %s has a negative token count: not priced", modelSpec)}
	}
	prompt := u.InputTokens + u.CachedInputTokens + u.CacheWriteTokens
	rt, above := r.base, 0
	for _, tr := range r.tiers {
		if prompt > tr.above {
			rt, above = tr.rates, tr.above
		}
	}
	usd := (float64(u.InputTokens)*rt.input + float64(u.CachedInputTokens)*rt.cacheRead +
		float64(u.CacheWriteTokens)*rt.cacheWrite + float64(u.OutputTokens)*rt.output) / perMillion
	basis := m.provider + ":" + m.id
	if !r.from.IsZero() {
		basis += " from " + r.from.Format(time.DateOnly)
	}
	if above > 0 {
		basis += fmt.Sprintf(", prompt above %d tokens", above)
	}
	return Quote{USD: usd, Known: true, Basis: basis + " (table " + t.version + ")"}
}

// Known reports whether the table prices modelSpec at all (on some date).
func (t *Table) Known(modelSpec string) bool {
	_, ok := t.lookup(modelSpec)
	return ok
}

// lookup finds the model for a spec: the provider must be equal, and of
// the patterns that match the model name the most specific wins (an exact
// name over any prefix, a longer prefix over a shorter); on a tie the
// model listed later, so an override beats the built-in table.
func (t *Table) lookup(spec string) (model, bool) {
	provider, name, ok := strings.Cut(spec, ":")
	if !ok || provider == "" || name == "" {
		return model{}, false
	}
	best, bestScore := -1, -1
	for i, m := range t.models {
		if m.provider != provider {
			continue
		}
		for _, p := range m.match {
			if s := score(p, name); s >= 0 && s >= bestScore {
				best, bestScore = i, s
			}
		}
	}
	if best < 0 {
		return model{}, false
	}
	return t.models[best], true
}

// score is how specifically pattern matches name, -1 for no match.
func score(pattern, name string) int {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		if strings.HasPrefix(name, prefix) {
			return len(prefix)
		}
		return -1
	}
	if pattern == name {
		return 1 << 20 // any exact name beats any prefix
	}
	return -1
}

// rowAt is the row in force on at's UTC date.
func (m model) rowAt(at time.Time) (row, bool) {
	for i := len(m.rows) - 1; i >= 0; i-- {
		if !m.rows[i].from.After(at) { // from is midnight UTC
			return m.rows[i], true
		}
	}
	return row{}, false
}
