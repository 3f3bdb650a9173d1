package pipeline

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/behavior"
	"github.com/mcp-eval/mcp-eval-action/pkg/config"
	"github.com/mcp-eval/mcp-eval-action/pkg/conformance"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
)

// Settings is what one source says about a run: a command's defaults,
// mcp-eval.yaml, the action's inputs and environment, the command line.
// The zero value of a field means "this source says nothing about it", so
// sources stack with Overlay: defaults < file < inputs < flags. Paths are
// absolute or relative to the working directory: each source resolves its
// own (the file's are relative to the file, the inputs' to the workspace).
type Settings struct {
	// The server under test: URL for Streamable HTTP, Command for stdio.
	URL     string
	Headers []string // "Name: value"; values are secrets and never printed
	Command string
	Cwd     string
	// ServerEnv are K=V given to a stdio server; PassEnv names variables
	// of mcp-eval's environment passed through (beyond the allowlist).
	ServerEnv []string
	PassEnv   []string
	Build     string
	// User is the server-user policy: auto, unprivileged or current.
	User             string
	MaxResponseBytes int64

	Layers []string // auto, all, 0-3 or names

	// Layer 0.
	ConformanceRuns        int
	ConformanceConcurrency int
	Only                   []string
	// CallTools add up over the sources: each allows calling more tools.
	CallTools []string
	// ToolTokens is estimate or exact (config.ToolTokensExact): exact also
	// asks the models' providers to count the tool surface.
	ToolTokens string

	// Layers 1 and 2.
	Golden string
	// GoldenShown is how messages name the golden file when it is a copy
	// ("" names Golden): golden init runs a temporary copy of the draft it
	// writes to --out, and its warnings named the temporary path.
	GoldenShown string
	Models      []string
	// ModelSets are the file's models per trigger; Trigger and Schedule
	// (the action's) pick one when Models is empty.
	ModelSets          *config.Models
	Trigger, Schedule  string
	Judge              string
	Runs               int // per case
	MaxSteps           int
	Concurrency        int // Layer 1 runs in flight
	MaxTokens          int
	MaxUSD             float64
	CacheDir           string
	Reuse              *behavior.Reuse
	Stubs              map[string]string
	RateLimits         map[string]behavior.RateLimit
	Endpoints          map[string]config.Endpoint
	KeyEnvs            []string // variables named by endpoints' key-env: secrets
	PreviewOnly        bool
	MaxDrop            *float64
	FailOnInconclusive *bool
	FailOnLegacy       *bool
	History            int
	MaxCostIncrease    *float64
	MaxCostPerRun      *float64
	// The tool-surface gates and the lint mode (gate.Policy).
	MaxToolTokens         *int
	MaxToolTokensIncrease *float64
	Lint                  string
	// Waivers come from mcp-eval.yaml only.
	Waivers []report.GateWaiver
	// ServerFrom names the setting the server came from when it is not a
	// flag ("server.url in mcp-eval.yaml", "the server-url input"), for
	// errors: a URL from a file nobody looks at is the last one doubted.
	ServerFrom string
	// Prices is a price override file; PricesFrom names the setting it
	// came from, for errors (--prices, pricing.file, the prices input).
	Prices, PricesFrom string
	// Baseline is a local report.json of the last green run.
	Baseline string
	// Shard is "i/n" (--shard, the shard input): run one share of
	// Layers 1 and 2.
	Shard string
	// Record is a directory to store the run's model exchanges in (a
	// cassette); Replay one to answer them from, with no model and no
	// key. Cassette is the committed cassette of the config
	// (eval.cassette), replayed when ForkReplay says the run is a fork
	// pull request that may not call models.
	Record, Replay, Cassette string
	ForkReplay               bool
	// HistoryDir is a directory of earlier reports (or one report) for
	// trends and the gate's drift warnings.
	HistoryDir string

	// Outputs.
	Report, JUnit, Markdown, HTML string
	RunURL                        string

	Timeout, RequestTimeout, ProbeTimeout time.Duration
	Notes                                 []string
}

// Overlay returns s with every field that o sets replaced by o's value:
// o is the later, stronger source. CallTools and Notes add up.
func (s Settings) Overlay(o Settings) Settings {
	out := s
	if o.URL != "" || o.Command != "" {
		// A source that names a server names all of it: the file's
		// headers or environment are not the flag's server's.
		out.URL, out.Headers, out.Command, out.Cwd, out.ServerEnv, out.PassEnv, out.Build, out.ServerFrom = "", nil, "", "", nil, nil, "", ""
	}
	dst, src := reflect.ValueOf(&out).Elem(), reflect.ValueOf(o)
	for i := range src.NumField() {
		f := src.Field(i)
		if f.IsZero() {
			continue
		}
		switch src.Type().Field(i).Name {
		case "CallTools", "Notes":
			// A fresh slice: appending to s's could write into the
			// caller's backing array.
			dst.Field(i).Set(reflect.AppendSlice(reflect.AppendSlice(reflect.MakeSlice(f.Type(), 0, 0), dst.Field(i)), f))
		default:
			dst.Field(i).Set(f)
		}
	}
	return out
}

// FromConfig is what mcp-eval.yaml says; its paths are relative to dir,
// the file's directory. Header values keep their ${NAME} references:
// Resolve expands them, so that the expansion is done, and its values
// redacted, in one place.
func FromConfig(cfg *config.Config, dir string) Settings {
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	s := cfg.Server
	out := Settings{URL: s.URL, Command: s.Command, Build: s.Build, PassEnv: s.PassEnv}
	if s.Command != "" {
		out.Cwd = rel(s.Cwd)
		if out.Cwd == "" {
			out.Cwd = dir
		}
	}
	keys := make([]string, 0, len(s.Headers))
	for k := range s.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Headers = append(out.Headers, k+": "+s.Headers[k])
	}
	keys = keys[:0]
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.ServerEnv = append(out.ServerEnv, k+"="+s.Env[k])
	}
	out.User = s.User
	out.Layers = cfg.Layers
	c := cfg.Conformance
	out.ConformanceRuns, out.CallTools, out.Only, out.ToolTokens = c.Runs, c.CallTools, c.Only, c.ToolTokens
	out.Golden = rel(cfg.Golden)
	m := cfg.Models
	out.ModelSets = &m
	e := cfg.Eval
	out.Judge, out.Runs, out.MaxSteps, out.Concurrency = e.Judge, e.Runs, e.MaxSteps, e.Concurrency
	out.Stubs = e.Stubs
	out.CacheDir = rel(e.CacheDir)
	out.Cassette = rel(e.Cassette)
	if out.CacheDir == "" {
		out.CacheDir = filepath.Join(dir, DefaultCacheDir)
	}
	out.MaxTokens, out.MaxUSD = e.Budget.MaxTokens, e.Budget.MaxUSD
	if len(e.RateLimits) > 0 {
		out.RateLimits = map[string]behavior.RateLimit{}
		for k, v := range e.RateLimits {
			out.RateLimits[k] = behavior.RateLimit{Concurrency: v.Concurrency, PerMinute: v.PerMinute}
		}
	}
	if cfg.Pricing.File != "" {
		out.Prices, out.PricesFrom = rel(cfg.Pricing.File), "pricing.file in the config"
	}
	out.Endpoints = cfg.Endpoints
	for _, ep := range cfg.Endpoints {
		if ep.KeyEnv != "" {
			out.KeyEnvs = append(out.KeyEnvs, ep.KeyEnv)
		}
	}
	g := cfg.Gate
	out.History = g.History
	if g.MaxDrop != nil {
		out.MaxDrop = ptr(float64(*g.MaxDrop))
	}
	if g.MaxCostIncrease != nil {
		out.MaxCostIncrease = ptr(float64(*g.MaxCostIncrease))
	}
	if g.MaxCostPerRun != nil {
		out.MaxCostPerRun = ptr(float64(*g.MaxCostPerRun))
	}
	if g.FailOnInconclusive {
		out.FailOnInconclusive = ptr(true)
	}
	out.MaxToolTokens, out.Lint = g.MaxToolTokens, g.Lint
	if g.MaxToolTokensIncrease != nil {
		out.MaxToolTokensIncrease = ptr(float64(*g.MaxToolTokensIncrease))
	}
	for _, w := range cfg.Waivers {
		out.Waivers = append(out.Waivers, w.Gate())
	}
	out.Baseline = rel(cfg.Baseline.File)
	o := cfg.Output
	out.Report, out.JUnit, out.Markdown, out.HTML = rel(o.Report), rel(o.JUnit), rel(o.Markdown), rel(o.HTML)
	return out
}

// LoadConfig reads mcp-eval.yaml at path into Settings. A waiver must
// name a check of the registry: one with a typo would never waive.
func LoadConfig(path string) (Settings, error) {
	var ids []string
	for _, c := range conformance.Registry() {
		ids = append(ids, c.ID)
	}
	cfg, err := config.LoadWith(path, config.Options{CheckIDs: ids,
		KnownCheck: func(id string) bool { return conformance.KnownIDs([]string{id}) == nil },
		CheckModel: llm.CheckSpec})
	if err != nil {
		return Settings{}, err
	}
	s := FromConfig(cfg, filepath.Dir(path))
	switch {
	case s.URL != "":
		s.ServerFrom = "server.url in " + filepath.Base(path)
	case s.Command != "":
		s.ServerFrom = "server.command in " + filepath.Base(path)
	}
	return s, nil
}

func ptr[T any](v T) *T { return &v }

// policy applies the settings to the default gate policy.
func (s Settings) policy() (gate.Policy, error) {
	p := gate.DefaultPolicy()
	if s.MaxDrop != nil {
		p.MaxDrop = *s.MaxDrop
	}
	if s.FailOnInconclusive != nil {
		p.FailOnInconclusive = *s.FailOnInconclusive
	}
	if s.FailOnLegacy != nil {
		p.FailOnLegacy = *s.FailOnLegacy
	}
	if s.History > 0 {
		p.HistoryDepth = s.History
	}
	p.MaxCostIncrease, p.MaxCostPerRun = s.MaxCostIncrease, s.MaxCostPerRun
	p.MaxToolTokens, p.MaxToolTokensIncrease, p.Waivers = s.MaxToolTokens, s.MaxToolTokensIncrease, s.Waivers
	if s.Lint != "" {
		p.Lint = s.Lint
	}
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("gate policy: %w", err)
	}
	return p, nil
}
