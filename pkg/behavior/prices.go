package behavior

import (
	"bytes"
	_ "embed"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
)

//go:embed prices.yaml
var pricesYAML []byte

// Price is one model's list price in USD per million tokens.
type Price struct {
	Model      string  `yaml:"model"`
	Input      float64 `yaml:"input"`
	Cached     float64 `yaml:"cached"`
	CacheWrite float64 `yaml:"cache_write"`
	Output     float64 `yaml:"output"`
	Source     string  `yaml:"source"`
	Checked    string  `yaml:"checked"`
}

// Prices is a dated price table.
type Prices struct {
	Version string  `yaml:"version"`
	Models  []Price `yaml:"models"`
}

// DefaultPrices is the table shipped in the binary (prices.yaml).
func DefaultPrices() *Prices {
	p, err := ParsePrices(pricesYAML)
	if err != nil {
		panic("behavior: the embedded prices.yaml is invalid: " + err.Error()) // a test keeps it valid
	}
	return p
}

// ParsePrices reads a price table; unknown keys are errors.
func ParsePrices(b []byte) (*Prices, error) {
	var p Prices
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	for i, m := range p.Models {
		if !strings.Contains(m.Model, ":") || m.Input < 0 || m.Output < 0 || m.Cached < 0 || m.CacheWrite < 0 {
			return nil, fmt.Errorf("price table: row %d (%q): want model ENDPOINT:MODEL and non-negative prices", i+1, m.Model)
		}
	}
	return &p, nil
}

// snapshot is a dated model version: -2025-08-07 or -20250929.
var snapshot = regexp.MustCompile(`^-(\d{4}-\d{2}-\d{2}|\d{8})$`)

// Lookup finds a model's price: an exact row, or a row whose model this
// is a dated snapshot of. Anything else is unknown — a similar name (gpt-5
// vs gpt-5-pro) can cost ten times more.
func (p *Prices) Lookup(model string) (Price, bool) {
	if p == nil {
		return Price{}, false
	}
	for _, m := range p.Models {
		if model == m.Model || (strings.HasPrefix(model, m.Model) && snapshot.MatchString(model[len(m.Model):])) {
			return m, true
		}
	}
	return Price{}, false
}

// Cost is the USD cost of usage at price p.
func (p Price) Cost(u llm.Usage) float64 {
	return (float64(u.InputTokens)*p.Input + float64(u.CachedInputTokens)*p.Cached +
		float64(u.CacheWriteTokens)*p.CacheWrite + float64(u.OutputTokens)*p.Output) / 1e6
}
