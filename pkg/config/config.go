// Package config reads mcp-eval.yaml, the one configuration file of a
// repository's evaluation. Unknown keys are errors with file:line, so a typo
// never silently turns a setting off. Precedence is flag > action input or
// environment > file; this package only reads the file.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcp-eval/mcp-eval-action/pkg/didyoumean"
	"github.com/mcp-eval/mcp-eval-action/pkg/gate"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/yamlsyntax"
)

// DefaultFile is looked for at the repository root.
const DefaultFile = "mcp-eval.yaml"

// Config is mcp-eval.yaml. The zero value of every field is its documented
// default; config.schema.json describes the same shape for editors.
type Config struct {
	Server      Server      `yaml:"server"`
	Layers      LayerList   `yaml:"layers"` // empty or ["auto"]: by event
	Conformance Conformance `yaml:"conformance"`
	Golden      string      `yaml:"golden"`
	Models      Models      `yaml:"models"`
	Gate        Gate        `yaml:"gate"`
	Baseline    Baseline    `yaml:"baseline"`
	Comment     *bool       `yaml:"comment"`
	Output      Output      `yaml:"output"`
	// Endpoints name model endpoints beyond the built-in openai:,
	// anthropic: and openai-compatible:MODEL@URL forms (Layer 1).
	Endpoints map[string]Endpoint `yaml:"endpoints"`
	// Eval configures Layer 1.
	Eval Eval `yaml:"eval"`
	// Pricing overrides the built-in price table (Layers 1-3).
	Pricing Pricing `yaml:"pricing"`
	// Waivers accept named check failures until a date; the gate applies
	// them and records them in the report.
	Waivers []Waiver `yaml:"waivers"`
}

// Waiver is one entry of waivers: a check failure accepted, on one
// transport or both, or a case below its floor, for one model or every
// one, until a date, for a reason.
type Waiver struct {
	Check     string `yaml:"check"`
	Case      string `yaml:"case"`
	Model     string `yaml:"model"`
	Transport string `yaml:"transport"`
	Reason    string `yaml:"reason"`
	Until     string `yaml:"until"` // YYYY-MM-DD, inclusive
	// Line is where the entry starts, for errors found after loading
	// (an unknown check id).
	Line int `yaml:"-"`
}

// UnmarshalYAML reads one waiver strictly (every key known, the values
// the gate can apply), naming the entry's line on error.
func (w *Waiver) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return valueError(n.Line, "waivers: each entry is a map {check, transport, reason, until} or {case, model, reason, until}")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var dst *string
		switch k.Value {
		case "check":
			dst = &w.Check
		case "case":
			dst = &w.Case
		case "model":
			dst = &w.Model
		case "transport":
			dst = &w.Transport
		case "reason":
			dst = &w.Reason
		case "until":
			dst = &w.Until
		default:
			return valueError(k.Line, fmt.Sprintf("waivers: unknown key %q (want check, transport, reason, until; or case, model, reason, until)", k.Value))
		}
		if v.Kind != yaml.ScalarNode {
			return valueError(v.Line, fmt.Sprintf("waivers: %s wants a single value", k.Value))
		}
		// The text as written: YAML reads 2026-12-31 as a timestamp.
		*dst = v.Value
	}
	w.Line = n.Line
	if err := gate.CheckWaiver(w.Gate()); err != nil {
		return valueError(n.Line, "waivers: "+strings.TrimPrefix(err.Error(), gate.ErrPolicy.Error()+": "))
	}
	return nil
}

// Gate is the waiver as the gate applies it.
func (w Waiver) Gate() report.GateWaiver {
	return report.GateWaiver{Check: w.Check, Case: w.Case, Model: w.Model, Transport: w.Transport, Reason: w.Reason, Until: w.Until}
}

// Pricing names a price override file: the format of pkg/pricing's
// prices.yaml, with dated rows; its models replace or add to the built-in
// table's for the budget, the spend preview and telemetry alike. The path
// is relative to the config file.
type Pricing struct {
	File string `yaml:"file"`
}

// Dialects are the wire dialects an endpoint may speak (pkg/llm speaks
// them; a test there keeps the two lists one).
var Dialects = []string{"openai-responses", "openai-chat", "anthropic-messages"}

// Endpoint is a model endpoint: which wire dialect it speaks, where, and
// how to authenticate. Keys come from environment variables only.
type Endpoint struct {
	Dialect    string            `yaml:"dialect"` // openai-responses | openai-chat | anthropic-messages
	BaseURL    string            `yaml:"base-url"`
	KeyEnv     string            `yaml:"key-env"`    // environment variable holding the key
	KeyHeader  string            `yaml:"key-header"` // default Authorization: Bearer; e.g. api-key (Azure), x-api-key
	APIVersion string            `yaml:"api-version"`
	Headers    map[string]string `yaml:"headers"`
}

// Eval configures Layer 1: runs per case, the judge, stubs, the cache and
// the budget.
type Eval struct {
	Runs        int               `yaml:"runs"`
	Judge       string            `yaml:"judge"`
	Concurrency int               `yaml:"concurrency"`
	MaxSteps    int               `yaml:"max-steps"`
	Stubs       map[string]string `yaml:"stubs"` // tool name → canned result text, for tools that must never run
	CacheDir    string            `yaml:"cache-dir"`
	// Cassette is a directory holding a committed cassette (--record):
	// on a fork pull request, `layers: auto` replays Layers 1 and 2 from
	// it instead of skipping them.
	Cassette string `yaml:"cassette"`
	Budget   Budget `yaml:"budget"`
	// RateLimits bound calls per provider (the part of a model name
	// before the first colon: openai, anthropic, openai-compatible, or an
	// endpoints: name), on top of Concurrency.
	RateLimits map[string]RateLimit `yaml:"rate-limits"`
}

// RateLimit is one provider's limit: calls in flight and calls per minute
// (0: no limit of that kind).
type RateLimit struct {
	Concurrency int `yaml:"concurrency"`
	PerMinute   int `yaml:"per-minute"`
}

// Budget caps a run's spend; past it the remaining cases are inconclusive.
type Budget struct {
	MaxTokens int     `yaml:"max-tokens"`
	MaxUSD    float64 `yaml:"max-usd"`
}

// Server names the server under test: url for Streamable HTTP, command for
// stdio.
type Server struct {
	URL     string `yaml:"url"`
	Command string `yaml:"command"`
	// Build runs once, in Cwd, before the server is first started (e.g.
	// "go build -o bin/server ./cmd/server"), so that the many fresh
	// processes Layer 0 starts do not each compile the server.
	Build   string            `yaml:"build"`
	Cwd     string            `yaml:"cwd"`
	Env     map[string]string `yaml:"env"`
	PassEnv []string          `yaml:"pass-env"`
	// Headers values may name environment variables as ${NAME}, so tokens
	// stay out of the file.
	Headers map[string]string `yaml:"headers"`
	// User says who a stdio server runs as: auto (the default, also
	// empty), unprivileged or current; target.ResolveUser applies it.
	User string `yaml:"user"`
}

// serverUsers are the values of server.user (target.UserPolicy).
var serverUsers = []string{"auto", "unprivileged", "current"}

// Conformance configures Layer 0.
type Conformance struct {
	Runs      int      `yaml:"runs"`
	CallTools []string `yaml:"call-tools"`
	Only      []string `yaml:"only"`
	// ToolTokens is how the tool surface's tokens are counted: estimate
	// (the default: the embedded tokenizer only) or exact (also each
	// model's provider, at its token-counting endpoint, where the run
	// holds that provider's key).
	ToolTokens string `yaml:"tool-tokens"`
}

// Values of conformance.tool-tokens.
const (
	ToolTokensEstimate = "estimate"
	ToolTokensExact    = "exact"
)

// CheckToolTokens accepts "" (unset), estimate and exact.
func CheckToolTokens(v string) error {
	switch v {
	case "", ToolTokensEstimate, ToolTokensExact:
		return nil
	}
	return fmt.Errorf("tool-tokens is %q, want estimate or exact", v)
}

// Models says which models run on which trigger.
type Models struct {
	Default  []string `yaml:"default"`  // pushes and labelled PRs
	Nightly  []string `yaml:"nightly"`  // the daily schedule: the primary model
	Weekly   []string `yaml:"weekly"`   // the weekly schedule: the whole matrix
	Dispatch []string `yaml:"dispatch"` // workflow_dispatch
}

// Gate configures the regression gate.
type Gate struct {
	MaxDrop            *MaxDrop `yaml:"max-drop"`
	FailOnInconclusive bool     `yaml:"fail-on-inconclusive"`
	History            int      `yaml:"history"`
	// MaxCostIncrease caps the rise of a model's cost per case over the
	// baseline (a fraction); MaxCostPerRun caps a run's model cost in USD.
	// Unset: no cost gate. An unknown cost makes them inconclusive.
	MaxCostIncrease *Fraction `yaml:"max-cost-increase"`
	MaxCostPerRun   *USD      `yaml:"max-cost-per-run"`
	// MaxToolTokens caps the tokens of the tools array sent with every
	// model request; MaxToolTokensIncrease caps its rise over the
	// baseline (a fraction or a percentage). Unset: not gated.
	MaxToolTokens         *int          `yaml:"max-tool-tokens"`
	MaxToolTokensIncrease *TokensGrowth `yaml:"max-tool-tokens-increase"`
	// Lint is what a description-lint finding does: off, warn (the
	// default) or fail.
	Lint string `yaml:"lint"`
}

// TokensGrowth is a max-tool-tokens-increase: a number (0.1) or a
// percentage string ("10%").
type TokensGrowth float64

// UnmarshalYAML accepts a YAML number or string and parses its text.
func (f *TokensGrowth) UnmarshalYAML(n *yaml.Node) error {
	v, err := scalar(n, gate.ParseToolTokensIncrease)
	*f = TokensGrowth(v)
	return err
}

// MaxDrop is a gate.max-drop: a fraction (0.02) or points ("2%"), read by
// the parser of the --max-drop flag and the max-drop input.
type MaxDrop float64

// UnmarshalYAML accepts a YAML number or string and parses its text.
func (m *MaxDrop) UnmarshalYAML(n *yaml.Node) error {
	v, err := scalar(n, gate.ParseMaxDrop)
	*m = MaxDrop(v)
	return err
}

// Fraction is a max-cost-increase as the file may write it: a number
// (0.25) or a percentage string ("25%"), read by the same parser as the
// flag and the action input.
type Fraction float64

// UnmarshalYAML accepts a YAML number or string and parses its text.
func (f *Fraction) UnmarshalYAML(n *yaml.Node) error {
	v, err := scalar(n, gate.ParseCostIncrease)
	*f = Fraction(v)
	return err
}

// USD is a max-cost-per-run: a number of US dollars (5) or a string with
// a dollar sign ("$2.50").
type USD float64

// UnmarshalYAML accepts a YAML number or string and parses its text.
func (u *USD) UnmarshalYAML(n *yaml.Node) error {
	v, err := scalar(n, gate.ParseUSD)
	*u = USD(v)
	return err
}

// scalar parses one scalar node's text, and on failure names its line.
func scalar(n *yaml.Node, parse func(string) (float64, error)) (float64, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, valueError(n.Line, "want a number or a string, not a list or a map")
	}
	v, err := parse(n.Value)
	if err != nil {
		return 0, valueError(n.Line, "gate."+strings.TrimPrefix(err.Error(), gate.ErrPolicy.Error()+": "))
	}
	return v, nil
}

// LayerList is `layers:` as a list ([conformance, behavior]) or as the
// action's input and --layers write it, one string ("all", "0,1").
type LayerList []string

// UnmarshalYAML accepts a sequence of names or one comma-separated string.
func (l *LayerList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = nil
		for _, f := range strings.Split(n.Value, ",") {
			if f = strings.TrimSpace(f); f != "" {
				*l = append(*l, f)
			}
		}
		return nil
	case yaml.SequenceNode:
		var s []string
		if err := n.Decode(&s); err != nil {
			return valueError(n.Line, "layers: want names like [conformance, behavior], or one string like all")
		}
		*l = s
		return nil
	}
	return valueError(n.Line, "layers: want a list like [conformance, behavior], or one string like all")
}

// valueError is a value a field's own parser refused, at its line: a
// *yaml.TypeError, so that yaml.v3 goes on decoding and every refused
// value of the file is said at once (typeErrors), not one per run.
func valueError(line int, msg string) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", line, msg)}}
}

// Baseline configures where the last green report comes from.
type Baseline struct {
	Artifact string `yaml:"artifact"`
	File     string `yaml:"file"`
	MaxRuns  int    `yaml:"max-runs"`
}

// Output names the files a run writes, relative to the workspace.
type Output struct {
	Report   string `yaml:"report"`
	JUnit    string `yaml:"junit"`
	Markdown string `yaml:"markdown"`
	HTML     string `yaml:"html"` // the self-contained HTML report
}

// MaxBytes bounds the file: a configuration is small.
const MaxBytes = 1 << 20

// Error is a problem in the file, with its position and a fix.
type Error struct {
	File string
	Line int
	Msg  string
	Hint string
	// key is the dotted key a value problem is about ("" when unknown).
	key string
}

func (e *Error) Error() string {
	pos := e.File
	if e.Line > 0 {
		pos = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	s := pos + ": " + e.Msg
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Options are what Parse checks beyond the file itself.
type Options struct {
	// KnownCheck, when set, says whether a waiver's check id names a
	// check (pkg/config knows no registry): one with a typo would never
	// waive. Unknown ones are said with the file's other problems.
	KnownCheck func(id string) bool
	// CheckIDs are the ids a mistyped one is matched against.
	CheckIDs []string
	// CheckModel, when set, says what is wrong with a model spec of the
	// file (models:, eval.judge) given its endpoints: (pkg/config knows
	// no provider); nil when nothing is.
	CheckModel func(spec string, endpoints map[string]Endpoint) error
}

// Load reads and validates a config file.
func Load(path string) (*Config, error) { return LoadWith(path, Options{}) }

// LoadWith is Load with opts.
func LoadWith(path string, opts Options) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading config %s: %w", path, err)
	}
	if len(b) > MaxBytes {
		return nil, &Error{File: path, Msg: fmt.Sprintf("larger than %d bytes", MaxBytes)}
	}
	return ParseWith(path, b, opts)
}

var (
	yamlLine     = regexp.MustCompile(`line (\d+): (.*)`)
	unknownField = regexp.MustCompile(`^field (\S+) not found in type config\.(\w+)$`)
)

// typeErrors are every key and value yaml.v3 refused, each at its own
// line. An unknown key gets the key of its section it most likely meant,
// or the section's keys.
func typeErrors(path string, errs []string, src []byte) []*Error {
	var root yaml.Node
	_ = yaml.Unmarshal(src, &root) // it decoded as far as these errors: it parses
	var out []*Error
	for _, e := range errs {
		m := yamlLine.FindStringSubmatch(e)
		if m == nil {
			continue
		}
		var line int
		fmt.Sscan(m[1], &line)
		msg := m[2]
		if u := unknownField.FindStringSubmatch(msg); u != nil {
			keys := sectionKeys(u[2])
			where := sectionName(u[2])
			if at, ok := keyPath(&root, line, u[1]); ok {
				// As the file writes it: "endpoints.fake", not "section
				// Endpoint" (a Go type's name).
				where = cmp.Or(at, "the top level")
			}
			msg = fmt.Sprintf("unknown key %q in %s", u[1], where)
			if near, ok := didyoumean.Nearest(u[1], keys); ok {
				msg += fmt.Sprintf(": did you mean %s?", near)
			} else if len(keys) > 0 {
				msg += fmt.Sprintf(": its keys are %s", strings.Join(keys, ", "))
			}
			out = append(out, &Error{File: path, Line: line, Msg: msg, Hint: "the README's Configuration section lists every key"})
			continue
		}
		msg = strings.Replace(msg, "in type config.", "in section ", 1)
		if keys := refusedAt(&root, line); len(keys) == 1 && strings.HasPrefix(msg, "cannot unmarshal") {
			// yaml.v3 names the line and the type, not the key: on a
			// flow-style line of several keys, which one.
			msg = keys[0] + ": " + msg
		}
		out = append(out, &Error{File: path, Line: line, Msg: msg})
	}
	return out
}

// refusedAt are the dotted keys whose values on line, not mappings, do
// not decode on their own (decodesAlone), outside lists.
func refusedAt(root *yaml.Node, line int) []string {
	var out []string
	var walk func(n *yaml.Node, at string)
	walk = func(n *yaml.Node, at string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, at)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i].Value, n.Content[i+1]
				if at != "" {
					k = at + "." + k
				}
				if v.Kind == yaml.MappingNode {
					walk(v, k) // its own keys say which failed
				} else if v.Line == line && !decodesAlone(root, k) {
					out = append(out, k)
				}
			}
		}
	}
	walk(root, "")
	return out
}

// keyPath is the dotted path of the mapping that holds key at line
// ("endpoints.fake"; "" at the top level), as the file writes it.
func keyPath(root *yaml.Node, line int, key string) (string, bool) {
	var walk func(n *yaml.Node, at []string) (string, bool)
	walk = func(n *yaml.Node, at []string) (string, bool) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if p, ok := walk(c, at); ok {
					return p, ok
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if k.Line == line && k.Value == key {
					return strings.Join(at, "."), true
				}
				if p, ok := walk(n.Content[i+1], append(slices.Clone(at), k.Value)); ok {
					return p, ok
				}
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				if p, ok := walk(c, at); ok {
					return p, ok
				}
			}
		}
		return "", false
	}
	return walk(root, nil)
}

// sectionName is how a message names the section of Go type name.
func sectionName(typ string) string {
	if typ == "Config" {
		return "the top level"
	}
	return "section " + typ
}

// sectionKeys are the YAML keys of the config struct type named typ.
func sectionKeys(typ string) []string {
	var keys []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type) bool
	walk = func(t reflect.Type) bool {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return false
		}
		seen[t] = true
		if t.Name() == typ {
			for i := range t.NumField() {
				if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
					keys = append(keys, k)
				}
			}
			return true
		}
		for i := range t.NumField() {
			if walk(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	walk(reflect.TypeOf(Config{}))
	return keys
}

// Parse decodes b (named path in messages) strictly and validates it.
func Parse(path string, b []byte) (*Config, error) { return ParseWith(path, b, Options{}) }

// ParseWith is Parse with opts.
func ParseWith(path string, b []byte, opts Options) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return &c, nil // an empty file is all defaults
		}
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			// What did decode is checked too: every problem in one round,
			// but not again a value already refused (a pointer field
			// yaml.v3 allocated before its value failed reads as 0). On
			// a refused line, a value that decodes on its own was not the
			// one refused: a flow-style line holds several keys.
			refused := typeErrors(path, te.Errors, b)
			errs := refused
			var root yaml.Node
			_ = yaml.Unmarshal(b, &root)
			for _, v := range c.validate(path, b, opts) {
				if !slices.ContainsFunc(refused, func(r *Error) bool { return r.Line == v.Line }) || decodesAlone(&root, v.key) {
					errs = append(errs, v)
				}
			}
			if err := joinErrors(errs); err != nil {
				return nil, err
			}
		}
		// yaml.v3 names the line above the construct that holds a syntax
		// error, not the line to fix.
		if line, ok := yamlsyntax.Locate(b, err); ok {
			return nil, &Error{File: path, Line: line, Msg: "YAML syntax: " + yamlsyntax.Problem(err), Hint: "check the indentation and quoting on this line"}
		}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			var line int
			fmt.Sscan(m[1], &line)
			return nil, &Error{File: path, Line: line, Msg: m[2]}
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	if err := joinErrors(c.validate(path, b, opts)); err != nil {
		return nil, err
	}
	return &c, nil
}

// joinErrors says every problem of the file at once, in file order, one
// a line (nil when there is none): a file with three mistakes is fixed in
// one round, not three.
func joinErrors(errs []*Error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Line < errs[j].Line })
	if len(errs) > maxErrors {
		more := len(errs) - maxErrors
		errs = append(errs[:maxErrors:maxErrors], &Error{File: errs[0].File, Msg: fmt.Sprintf("… and %d more problems", more)})
	}
	return Errors(errs)
}

// maxErrors bounds what one file reports: past it, it is probably not a
// config at all.
const maxErrors = 50

// Errors are several problems of one file, in file order.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// validate checks values the YAML types cannot, each pointing at its
// key's line; it says every one it finds.
func (c *Config) validate(path string, src []byte, opts Options) []*Error {
	var errs []*Error
	var root yaml.Node
	_ = yaml.Unmarshal(src, &root) // decoded once already: it parses
	at := func(key, msg, hint string) {
		errs = append(errs, &Error{File: path, Line: lineOf(&root, key), Msg: msg, Hint: hint, key: key})
	}
	if opts.KnownCheck != nil {
		for _, w := range c.Waivers {
			if w.Check == "" || opts.KnownCheck(w.Check) {
				continue
			}
			msg := fmt.Sprintf("waivers: %s is not a check of Layer 0", w.Check)
			if near, ok := didyoumean.Nearest(w.Check, opts.CheckIDs); ok {
				msg += fmt.Sprintf(": did you mean %s?", near)
			}
			errs = append(errs, &Error{File: path, Line: w.Line, Msg: msg, Hint: "the ids are in the report's conformance.checks, or mcp-eval check -v"})
		}
	}
	if c.Server.URL != "" && c.Server.Command != "" {
		at("server.url", "server.url and server.command are exclusive", "test one server per config")
	}
	if c.Server.User != "" && !slices.Contains(serverUsers, c.Server.User) {
		at("server.user", fmt.Sprintf("server.user is %q, want auto, unprivileged or current", c.Server.User),
			"auto runs the server as uid 65534 when mcp-eval runs as root in the GitHub Action or with secrets in its environment; current runs it as mcp-eval's own user")
	}
	if c.Conformance.Runs < 0 || c.Conformance.Runs > 100 {
		at("conformance.runs", fmt.Sprintf("conformance.runs is %d, want 1..100", c.Conformance.Runs), "")
	}
	if err := CheckToolTokens(c.Conformance.ToolTokens); err != nil {
		at("conformance.tool-tokens", "conformance."+err.Error(), "exact also asks each model's provider to count the tools, on runs that hold its key; estimate counts with the embedded tokenizer only")
	}
	if v := c.Gate.MaxToolTokens; v != nil && *v < 1 {
		at("gate.max-tool-tokens", fmt.Sprintf("gate.max-tool-tokens is %d, want a whole number of tokens ≥ 1", *v), "")
	}
	if err := gate.CheckLint(c.Gate.Lint); err != nil {
		at("gate.lint", "gate."+strings.TrimPrefix(err.Error(), gate.ErrPolicy.Error()+": "), "off ignores the description lint, warn shows it, fail fails the gate on it")
	}
	if r := c.Eval.Runs; r < 0 || r > 100 {
		at("eval.runs", fmt.Sprintf("eval.runs is %d, want 1..100", r), "5 is the default: enough for a pass rate, few enough to pay for")
	}
	for _, v := range []struct {
		key string
		val int
	}{{"eval.max-steps", c.Eval.MaxSteps}, {"eval.concurrency", c.Eval.Concurrency}, {"eval.budget.max-tokens", c.Eval.Budget.MaxTokens}} {
		if v.val < 0 {
			at(v.key, fmt.Sprintf("%s is %d, want a whole number ≥ 0 (0: the default)", v.key, v.val), "")
		}
	}
	if c.Eval.Budget.MaxUSD < 0 {
		at("eval.budget.max-usd", fmt.Sprintf("eval.budget.max-usd is %v, want dollars ≥ 0 (0: no cap)", c.Eval.Budget.MaxUSD), "")
	}
	names := make([]string, 0, len(c.Endpoints))
	for name := range c.Endpoints {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ep, key := c.Endpoints[name], "endpoints."+name
		if d := ep.Dialect; d != "" && !slices.Contains(Dialects, d) {
			msg := fmt.Sprintf("%s.dialect is %q", key, d)
			near, ok := didyoumean.Nearest(d, Dialects)
			for _, known := range Dialects {
				// "anthropic" for anthropic-messages: too far for the edit
				// distance, but what was meant.
				if !ok && len(d) >= 4 && strings.HasPrefix(known, strings.ToLower(d)) {
					near, ok = known, true
				}
			}
			if ok {
				msg += fmt.Sprintf(": did you mean %s?", near)
			}
			at(key+".dialect", msg, "use openai-responses, openai-chat or anthropic-messages; absent, openai-chat")
		}
		if b := ep.BaseURL; b != "" {
			// Its text is not shown unless it parsed without credentials:
			// a mistyped URL may hold a key.
			u, err := url.Parse(strings.TrimRight(b, "/"))
			switch {
			case err != nil:
				at(key+".base-url", key+".base-url is not an http(s) URL", "write it with its scheme, e.g. https://api.openai.com/v1")
			case u.User != nil:
				at(key+".base-url", key+".base-url carries credentials", "put the key in an environment variable named by key-env")
			case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
				at(key+".base-url", fmt.Sprintf("%s.base-url %q is not an http(s) URL", key, b), "write it with its scheme, e.g. https://api.openai.com/v1")
			}
		}
	}
	if opts.CheckModel != nil {
		for _, set := range []struct {
			key   string
			specs []string
		}{{"models.default", c.Models.Default}, {"models.nightly", c.Models.Nightly}, {"models.weekly", c.Models.Weekly}, {"models.dispatch", c.Models.Dispatch}} {
			for i, spec := range set.specs {
				if err := opts.CheckModel(spec, c.Endpoints); err != nil {
					errs = append(errs, &Error{File: path, Line: lineOfItem(&root, set.key, i), Msg: set.key + ": " + err.Error(), key: set.key})
				}
			}
		}
		if j := c.Eval.Judge; j != "" && j != "none" {
			if err := opts.CheckModel(j, c.Endpoints); err != nil {
				at("eval.judge", "eval.judge: "+err.Error(), "")
			}
		}
	}
	for _, l := range c.Layers {
		switch l {
		// What --layers and the action's input accept (pipeline, action).
		case "auto", "all", "0", "1", "2", "3", "conformance", "behavior", "behaviour", "resilience", "telemetry":
		default:
			at("layers", fmt.Sprintf("unknown layer %q", l), "use auto, all, 0-3 or conformance, behavior, resilience, telemetry")
		}
	}
	return errs
}

// lineOf is the line of the key a dotted path names ("eval.runs": runs
// in eval's mapping, not conformance's), through block and flow style
// alike; 0 when the file does not write it.
func lineOf(root *yaml.Node, dotted string) int {
	if k, _ := keyAt(root, dotted); k != nil {
		return k.Line
	}
	return 0
}

// keyAt is the key node a dotted path names and its value (the last of a
// mapping's keys of that name, as yaml.v3 decodes it); nil, nil when the
// file does not write it.
func keyAt(root *yaml.Node, dotted string) (key, value *yaml.Node) {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, name := range strings.Split(dotted, ".") {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil, nil
		}
		key, value = nil, nil
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == name {
				key, value = n.Content[i], n.Content[i+1]
			}
		}
		n = value
	}
	return key, value
}

// decodesAlone says whether the value a dotted key names decodes into its
// Config field on its own; false when either cannot be found.
func decodesAlone(root *yaml.Node, dotted string) bool {
	_, v := keyAt(root, dotted)
	if v == nil {
		return false
	}
	t := reflect.TypeOf(Config{})
	for _, key := range strings.Split(dotted, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByTag(t, key)
			if !ok {
				return false
			}
			t = f.Type
		default:
			return false
		}
	}
	return v.Decode(reflect.New(t).Interface()) == nil
}

// fieldByTag is t's field whose yaml tag names key.
func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// lineOfItem is the line of the i-th item of the sequence a dotted path
// names, or of its key when the value is not a sequence that long.
func lineOfItem(root *yaml.Node, dotted string, i int) int {
	k, v := keyAt(root, dotted)
	switch {
	case v != nil && v.Kind == yaml.SequenceNode && i < len(v.Content):
		return v.Content[i].Line
	case k != nil:
		return k.Line
	}
	return 0
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandEnv replaces ${NAME} in header values from lookup; a missing
// variable is an error naming it, not an empty header.
func ExpandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	var missing string
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		name := envRef.FindStringSubmatch(m)[1]
		v, ok := lookup(name)
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", fmt.Errorf("environment variable %s is not set", missing)
	}
	return out, nil
}
