// Package pricing turns a model call's normalised token usage into US
// dollars, from a versioned price table with dated rows, prompt-length
// tiers and cache prices. The table ships in the binary (prices.yaml); a
// user's override file replaces or adds models. A model the table does not
// know has no price: its Quote says "unknown" and why, and is never $0.
//
//	t := pricing.Default()                         // or Default().With(override)
//	q := t.Quote("anthropic:claude-sonnet-5", time.Now(), usage)
//	if !q.Known { warn(q.Unknown) }
//
// Usage is llm.Usage as the provider layer normalises it: InputTokens are
// the uncached input tokens, CachedInputTokens those read from the cache,
// CacheWriteTokens those written to it, OutputTokens every output token
// (reasoning included) and ReasoningTokens the reasoning part of them,
// which is reported, never charged twice.
package pricing

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcp-eval/mcp-eval-action/pkg/yamlsyntax"
)

// Table is a parsed price table. It is immutable once built, so it may be
// shared between goroutines.
type Table struct {
	version string
	models  []model
}

type model struct {
	provider, id string
	match        []string
	source       string
	checked      string
	rows         []row // by from, ascending
}

// row is the price of a model from a date (zero: since the beginning).
type row struct {
	from  time.Time
	base  rates
	tiers []tier // by above, ascending
}

type tier struct {
	above int
	rates rates
}

// rates are USD per million tokens.
type rates struct {
	input, cacheRead, cacheWrite, output float64
}

// The file format (prices.yaml and override files).
type fileTable struct {
	Version  string      `yaml:"version"`
	Currency string      `yaml:"currency"`
	Models   []fileModel `yaml:"models"`
}

type fileModel struct {
	Provider string    `yaml:"provider"`
	ID       string    `yaml:"id"`
	Match    []string  `yaml:"match"`
	Source   string    `yaml:"source"`
	Checked  string    `yaml:"checked"`
	Prices   []fileRow `yaml:"prices"`
}

type fileRow struct {
	From       string     `yaml:"from"`
	Input      *float64   `yaml:"input"`
	CacheRead  *float64   `yaml:"cache-read"`
	CacheWrite *float64   `yaml:"cache-write"`
	Output     *float64   `yaml:"output"`
	Tiers      []fileTier `yaml:"tiers"`
}

type fileTier struct {
	Above      int      `yaml:"above"`
	Input      *float64 `yaml:"input"`
	CacheRead  *float64 `yaml:"cache-read"`
	CacheWrite *float64 `yaml:"cache-write"`
	Output     *float64 `yaml:"output"`
}

//go:embed prices.yaml
var builtin []byte

// Default is the table shipped with this version of mcp-eval. A test
// parses it, so it cannot fail at run time.
func Default() *Table {
	t, err := Parse(builtin, "prices.yaml")
	if err != nil {
		panic("pricing: the embedded prices.yaml is invalid: " + err.Error())
	}
	return t
}

// MaxFileBytes bounds an override file: a price table is small.
const MaxFileBytes = 1 << 20

// ErrTable marks a price file that cannot be used; the CLI exits 2.
var ErrTable = errors.New("invalid price table")

// Load reads an override file (same format as prices.yaml).
func Load(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrTable, path, MaxFileBytes)
	}
	return Parse(data, path)
}

// Parse reads a price table, rejecting unknown keys, negative or missing
// rates, rows out of date order and duplicate models, all at once. Every
// problem is reported as NAME:LINE: what is wrong, and how to fix it.
func Parse(data []byte, name string) (*Table, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		// yaml.v3's own line for a syntax error is often above the fault.
		if line, ok := yamlsyntax.Locate(data, err); ok {
			return nil, fmt.Errorf("%w: %s:%d: YAML syntax: %s (check the indentation and quoting on this line)", ErrTable, name, line, yamlsyntax.Problem(err))
		}
		return nil, fmt.Errorf("%w: %s", ErrTable, yamlErrors(name, err))
	}
	var ft fileTable
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a typo must not silently drop a price
	if err := dec.Decode(&ft); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s:1: the file is empty: give it a version and models (see pkg/pricing/prices.yaml)", ErrTable, name)
		}
		return nil, fmt.Errorf("%w: %s", ErrTable, yamlErrors(name, err))
	}
	pos := positions(&root)
	var errs []string
	bad := func(line int, format string, a ...any) {
		errs = append(errs, fmt.Sprintf("%s:%d: %s", name, max(line, 1), fmt.Sprintf(format, a...)))
	}
	if strings.TrimSpace(ft.Version) == "" {
		bad(pos.top, "version is missing: give the table a version, e.g. the date it was checked (version: \"2026-11-29\")")
	}
	if ft.Currency != "" && ft.Currency != "USD" {
		bad(pos.top, "currency %q is not supported: only USD", ft.Currency)
	}
	t := &Table{version: ft.Version}
	seen := map[string]int{}
	for i, fm := range ft.Models {
		where := fmt.Sprintf("models[%d] (%s:%s)", i, fm.Provider, fm.ID)
		line := pos.model(i)
		if fm.Provider == "" || fm.ID == "" {
			bad(line, "%s: provider and id are required, e.g. provider: openai, id: gpt-5-mini", where)
			continue
		}
		key := fm.Provider + ":" + fm.ID
		if first, ok := seen[key]; ok {
			bad(line, "%s: listed twice (first on line %d): keep one entry and give it one dated row per price change", where, first)
		} else {
			seen[key] = line
		}
		m := model{provider: fm.Provider, id: fm.ID, match: fm.Match, source: fm.Source, checked: fm.Checked}
		if len(m.match) == 0 {
			m.match = []string{fm.ID}
		}
		for _, p := range m.match {
			if p == "" || p == "*" || strings.Contains(strings.TrimSuffix(p, "*"), "*") {
				bad(line, "%s: match %q must be a model name, optionally ending in one *", where, p)
			}
		}
		if len(fm.Prices) == 0 {
			bad(line, "%s: no prices: add a row, e.g. prices: [{input: 1.25, output: 10}]", where)
		}
		for j, fr := range fm.Prices {
			rl := pos.row(i, j)
			r, err := fr.row(j)
			if err != nil {
				bad(rl, "%s prices[%d]: %v", where, j, err)
				continue
			}
			if n := len(m.rows); n > 0 && !r.from.After(m.rows[n-1].from) {
				bad(rl, "%s prices[%d]: from %s is not after the previous row's: rows go oldest first, one per date", where, j, fr.From)
			}
			m.rows = append(m.rows, r)
		}
		t.models = append(t.models, m)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrTable, strings.Join(errs, "\n"))
	}
	return t, nil
}

// yamlLine finds the "line N:" yaml.v3 puts in its messages.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlErrors turns a yaml.v3 error into NAME:LINE: lines.
func yamlErrors(name string, err error) string {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var out []string
	for _, m := range msgs {
		line := "1"
		if sm := yamlLine.FindStringSubmatch(m); sm != nil {
			line, m = sm[1], m[len(sm[0]):]
		}
		m = strings.TrimPrefix(m, "yaml: ")
		hint := ""
		switch {
		case strings.Contains(m, "not found in type"):
			hint = ": the keys are version, currency, models; a model has provider, id, match, source, checked, prices; a row has from, input, cache-read, cache-write, output, tiers"
		case strings.Contains(m, "cannot unmarshal"):
			hint = ": rates are numbers (USD per million tokens), dates are quoted or plain 2026-09-01"
		}
		out = append(out, fmt.Sprintf("%s:%s: %s%s", name, line, m, hint))
	}
	return strings.Join(out, "\n")
}

// filePos are the lines of a price file's parts, for errors.
type filePos struct {
	top    int
	models []int
	rows   [][]int
}

func (p filePos) model(i int) int {
	if i < len(p.models) {
		return p.models[i]
	}
	return p.top
}

func (p filePos) row(i, j int) int {
	if i < len(p.rows) && j < len(p.rows[i]) {
		return p.rows[i][j]
	}
	return p.model(i)
}

// positions reads the lines of models[i] and models[i].prices[j].
func positions(root *yaml.Node) filePos {
	var p filePos
	doc := root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	p.top = doc.Line
	models := mapValue(doc, "models")
	if models == nil || models.Kind != yaml.SequenceNode {
		return p
	}
	for _, m := range models.Content {
		p.models = append(p.models, m.Line)
		var rows []int
		if prices := mapValue(m, "prices"); prices != nil && prices.Kind == yaml.SequenceNode {
			for _, r := range prices.Content {
				rows = append(rows, r.Line)
			}
		}
		p.rows = append(p.rows, rows)
	}
	return p
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func (fr fileRow) row(index int) (row, error) {
	var r row
	if fr.From == "" {
		if index > 0 {
			return r, errors.New("from is missing: only the first row may omit it")
		}
	} else {
		d, err := time.Parse(time.DateOnly, fr.From)
		if err != nil {
			return r, fmt.Errorf("from %q is not a date like 2026-09-01", fr.From)
		}
		r.from = d
	}
	var err error
	if r.base, err = makeRates(fr.Input, fr.CacheRead, fr.CacheWrite, fr.Output); err != nil {
		return r, err
	}
	for k, ft := range fr.Tiers {
		if ft.Above <= 0 || (k > 0 && ft.Above <= fr.Tiers[k-1].Above) {
			return r, fmt.Errorf("tiers[%d]: above %d must be positive and larger than the tier before", k, ft.Above)
		}
		tr, err := makeRates(ft.Input, ft.CacheRead, ft.CacheWrite, ft.Output)
		if err != nil {
			return r, fmt.Errorf("tiers[%d]: %v", k, err)
		}
		r.tiers = append(r.tiers, tier{above: ft.Above, rates: tr})
	}
	return r, nil
}

// makeRates requires input and output; cache rates default to the input
// rate, since assuming a discount the provider does not give would
// under-report cost.
func makeRates(input, cacheRead, cacheWrite, output *float64) (rates, error) {
	if input == nil || output == nil {
		return rates{}, errors.New("input and output rates are required (USD per million tokens)")
	}
	r := rates{input: *input, cacheRead: *input, cacheWrite: *input, output: *output}
	if cacheRead != nil {
		r.cacheRead = *cacheRead
	}
	if cacheWrite != nil {
		r.cacheWrite = *cacheWrite
	}
	for _, v := range []float64{r.input, r.cacheRead, r.cacheWrite, r.output} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return rates{}, fmt.Errorf("rate %v is not a non-negative number", v)
		}
	}
	return r, nil
}

// Version names the table a cost came from: the built-in table's version,
// and each override's after a "+".
func (t *Table) Version() string { return t.version }

// With returns a table in which every model of override replaces the
// model with the same provider and id, and the others are added. Neither
// table changes.
func (t *Table) With(override *Table) *Table {
	out := &Table{version: t.version + "+" + override.version}
	replaced := map[string]bool{}
	for _, m := range override.models {
		replaced[m.provider+":"+m.id] = true
	}
	for _, m := range t.models {
		if !replaced[m.provider+":"+m.id] {
			out.models = append(out.models, m)
		}
	}
	out.models = append(out.models, override.models...)
	return out
}

// Models lists provider:id of every model the table prices, sorted.
func (t *Table) Models() []string {
	var out []string
	for _, m := range t.models {
		out = append(out, m.provider+":"+m.id)
	}
	sort.Strings(out)
	return out
}
