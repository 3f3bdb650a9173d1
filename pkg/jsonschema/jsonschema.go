// Package jsonschema compiles and applies the JSON Schemas an MCP server
// sends (tool inputSchema and outputSchema) the way basic/index.mdx §JSON
// Schema Usage asks a client to: JSON Schema 2020-12 unless the schema
// declares another dialect, $ref resolved only within the document (a
// reference to another document is an error and is never fetched, SCHEMA-2),
// and every compile and validation bounded in size, depth, number of
// subschemas and time, so that a hostile schema cannot hang or exhaust the
// harness (SCHEMA-3). An unknown dialect is reported as such, not as an
// invalid schema (SCHEMA-4).
//
// It wraps github.com/santhosh-tekuri/jsonschema/v6 with a loader that
// refuses every URL: the library's default loader would read file:// URLs,
// and nothing here may reach the network or the disk because a server said
// so. MCP also gives the official 2026-07-28 schema as an oracle for wire
// messages.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	lib "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Kind classifies why a schema could not be used.
type Kind string

const (
	// Invalid: not a valid schema of its dialect (SCHEMA-1).
	Invalid Kind = "invalid"
	// Unresolvable: a same-document $ref names nothing (SCHEMA-2).
	Unresolvable Kind = "unresolvable $ref"
	// External: a $ref to another document, which is never fetched
	// (SCHEMA-2).
	External Kind = "unresolvable external $ref"
	// OverBounds: the schema (or an instance) is larger, deeper or slower
	// than the limits, or its $refs loop without consuming the instance
	// (SCHEMA-3).
	OverBounds Kind = "over bounds"
	// DialectUnsupported: the schema declares a $schema this package does
	// not implement (SCHEMA-4).
	DialectUnsupported Kind = "dialect unsupported"
)

// Error says why a schema could not be compiled or an instance could not be
// judged. A failed validation is a *ValidationError instead.
type Error struct {
	Kind Kind
	// Detail is a short lower-case explanation.
	Detail string
	// Refs are the $ref values (External, Unresolvable) or the $schema
	// (DialectUnsupported) at fault.
	Refs []string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return string(e.Kind)
	}
	return string(e.Kind) + ": " + e.Detail
}

// KindOf returns the Kind of a compile error, "" for other errors.
func KindOf(err error) Kind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return ""
}

// Limits bound the work spent on one schema. The zero value of a field
// means its default.
type Limits struct {
	// MaxBytes bounds the schema document (default 1 MiB).
	MaxBytes int
	// MaxDepth bounds how deeply subschemas nest (default 64).
	MaxDepth int
	// MaxSubschemas bounds the number of subschemas, counted before
	// compiling (default 5000).
	MaxSubschemas int
	// MaxExpansion bounds the subschemas one instance location may be
	// evaluated against, with every $ref inlined (default 200000).
	MaxExpansion int
	// MaxInstanceBytes bounds an instance to validate (default 4 MiB).
	MaxInstanceBytes int
	// Timeout bounds one compile and one validation (default 2s).
	Timeout time.Duration
}

// Default limits.
const (
	DefaultMaxBytes         = 1 << 20
	DefaultMaxDepth         = 64
	DefaultMaxSubschemas    = 5000
	DefaultMaxExpansion     = 200_000
	DefaultMaxInstanceBytes = 4 << 20
	DefaultTimeout          = 2 * time.Second
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxSubschemas <= 0 {
		l.MaxSubschemas = DefaultMaxSubschemas
	}
	if l.MaxExpansion <= 0 {
		l.MaxExpansion = DefaultMaxExpansion
	}
	if l.MaxInstanceBytes <= 0 {
		l.MaxInstanceBytes = DefaultMaxInstanceBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// Dialect URIs (the $schema values this package implements).
const (
	Draft2020 = "https://json-schema.org/draft/2020-12/schema"
	Draft2019 = "https://json-schema.org/draft/2019-09/schema"
	Draft7    = "http://json-schema.org/draft-07/schema#"
	Draft6    = "http://json-schema.org/draft-06/schema#"
	Draft4    = "http://json-schema.org/draft-04/schema#"
)

// dialects maps a normalized $schema (no scheme, no empty fragment) to the
// library's draft.
var dialects = map[string]struct {
	name  string
	draft *lib.Draft
}{
	"json-schema.org/draft/2020-12/schema": {Draft2020, lib.Draft2020},
	"json-schema.org/draft/2019-09/schema": {Draft2019, lib.Draft2019},
	"json-schema.org/draft-07/schema":      {Draft7, lib.Draft7},
	"json-schema.org/draft-06/schema":      {Draft6, lib.Draft6},
	"json-schema.org/draft-04/schema":      {Draft4, lib.Draft4},
}

// dialectOf returns the dialect a declared $schema names, ok false when it
// is not one this package implements.
func dialectOf(declared string) (string, *lib.Draft, bool) {
	s := strings.TrimSuffix(declared, "#")
	if rest, ok := strings.CutPrefix(s, "https://"); ok {
		s = rest
	} else if rest, ok := strings.CutPrefix(s, "http://"); ok {
		s = rest
	} else {
		return "", nil, false
	}
	d, ok := dialects[s]
	return d.name, d.draft, ok
}

// Schema is a compiled schema, safe for concurrent use.
type Schema struct {
	sch     *lib.Schema
	dialect string
	lim     Limits
}

// Dialect is the $schema the schema was compiled under.
func (s *Schema) Dialect() string { return s.dialect }

// base is the location the document is compiled under. A relative $ref
// resolves against it and is then refused by the loader like any other
// document; baseDir is stripped again when the ref is reported.
const (
	baseDir = "mcp-eval:///"
	base    = baseDir + "schema.json"
)

// refusingLoader is the only URLLoader a compiler gets: it records what it
// was asked for and refuses it. Nothing is ever fetched or opened.
type refusingLoader struct {
	mu   sync.Mutex
	urls []string
}

func (l *refusingLoader) Load(url string) (any, error) {
	l.mu.Lock()
	l.urls = append(l.urls, url)
	l.mu.Unlock()
	return nil, errors.New("external references are never fetched")
}

func (l *refusingLoader) asked() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.urls)
}

// Compile parses and compiles a schema document within lim. The error is an
// *Error; compiling never touches the network or the file system.
func Compile(doc []byte, lim Limits) (*Schema, error) {
	lim = lim.withDefaults()
	if len(doc) > lim.MaxBytes {
		return nil, &Error{Kind: OverBounds, Detail: fmt.Sprintf("the schema is %d bytes, over the limit of %d", len(doc), lim.MaxBytes)}
	}
	// Bound the nesting before decoding anything: a subschema is at most
	// two JSON levels below its parent ("properties" → name → schema).
	if depth, ok := jsonDepth(doc, 2*lim.MaxDepth+8); !ok {
		return nil, &Error{Kind: OverBounds, Detail: fmt.Sprintf("the schema nests deeper than %d JSON levels", depth)}
	}
	v, err := lib.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, &Error{Kind: Invalid, Detail: "not JSON: " + err.Error()}
	}
	return CompileValue(v, lim)
}

// CompileValue compiles a decoded schema (as from encoding/json with
// UseNumber, or lib.UnmarshalJSON).
func CompileValue(v any, lim Limits) (*Schema, error) {
	lim = lim.withDefaults()
	switch v.(type) {
	case bool, map[string]any:
	default:
		return nil, &Error{Kind: Invalid, Detail: fmt.Sprintf("a schema is an object or a boolean, not %s", typeName(v))}
	}
	dialect, draft := Draft2020, lib.Draft2020
	if obj, ok := v.(map[string]any); ok {
		if raw, has := obj["$schema"]; has {
			s, isStr := raw.(string)
			if !isStr {
				return nil, &Error{Kind: Invalid, Detail: fmt.Sprintf("$schema is %s, want a URI string", typeName(raw))}
			}
			var known bool
			if dialect, draft, known = dialectOf(s); !known {
				return nil, &Error{Kind: DialectUnsupported, Detail: fmt.Sprintf("$schema %q is not a dialect the harness implements (2020-12, 2019-09, draft-07, draft-06, draft-04)", clip(s, 120)), Refs: []string{s}}
			}
		}
	}
	w := &walker{lim: lim, nodes: map[string]map[string]any{}, anchors: map[string]string{}, kids: map[string][]string{}}
	if err := w.walk(v, "", 0); err != nil {
		return nil, err
	}
	if cycle := w.refCycle(); cycle != nil {
		return nil, &Error{Kind: OverBounds, Detail: "$ref cycle that never consumes the instance: " + strings.Join(cycle, " → "), Refs: cycle}
	}
	if n := w.expansion(lim.MaxExpansion); n > lim.MaxExpansion {
		return nil, &Error{Kind: OverBounds, Detail: fmt.Sprintf("$ref and composition keywords expand to more than %d subschema evaluations", lim.MaxExpansion)}
	}
	type outcome struct {
		sch *lib.Schema
		err error
	}
	loader := &refusingLoader{}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{err: fmt.Errorf("the schema compiler failed: %v", r)}
			}
		}()
		c := lib.NewCompiler()
		c.DefaultDraft(draft)
		c.UseLoader(loader)
		c.UseRegexpEngine(ecmaRegexp)
		annotateFormats(c)
		if err := c.AddResource(base, v); err != nil {
			done <- outcome{err: err}
			return
		}
		sch, err := c.Compile(base)
		done <- outcome{sch, err}
	}()
	timer := time.NewTimer(lim.Timeout)
	defer timer.Stop()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, classify(o.err, loader.asked())
		}
		return &Schema{sch: o.sch, dialect: dialect, lim: lim}, nil
	case <-timer.C:
		return nil, &Error{Kind: OverBounds, Detail: fmt.Sprintf("compiling took longer than %v", lim.Timeout)}
	}
}

// annotatedFormats are the formats the library would assert under
// draft-07 and earlier. Format assertion is optional there and off by
// default in 2020-12; the harness treats format as an annotation in every
// dialect, so that no server fails on a validator's reading of "uri".
var annotatedFormats = []string{
	"date", "date-time", "duration", "email", "hostname", "idn-email", "idn-hostname", "ipv4", "ipv6",
	"iri", "iri-reference", "json-pointer", "period", "relative-json-pointer", "semver", "time",
	"uri", "uri-reference", "uri-template", "uuid",
}

func annotateFormats(c *lib.Compiler) {
	for _, name := range annotatedFormats {
		c.RegisterFormat(&lib.Format{Name: name, Validate: func(any) error { return nil }})
	}
}

// classify turns a library compile error into an *Error.
func classify(err error, asked []string) *Error {
	if len(asked) > 0 {
		var shown []string
		for _, u := range asked {
			shown = append(shown, strings.TrimPrefix(u, baseDir))
		}
		sort.Strings(shown)
		shown = slices.Compact(shown)
		return &Error{Kind: External, Detail: fmt.Sprintf("%s (never fetched)", quoteList(shown, 3)), Refs: shown}
	}
	if sve, ok := errors.AsType[*lib.SchemaValidationError](err); ok {
		detail := "not valid against its dialect's metaschema"
		if ve, ok := errors.AsType[*lib.ValidationError](sve.Err); ok {
			if ps := problems(ve); len(ps) > 0 {
				detail += ": " + joinProblems(ps, 3)
			}
		}
		return &Error{Kind: Invalid, Detail: detail}
	}
	if e, ok := errors.AsType[*lib.JSONPointerNotFoundError](err); ok {
		ref := strings.TrimPrefix(e.URL, base)
		return &Error{Kind: Unresolvable, Detail: fmt.Sprintf("%q names nothing in the document", ref), Refs: []string{ref}}
	}
	if e, ok := errors.AsType[*lib.AnchorNotFoundError](err); ok {
		ref := strings.TrimPrefix(e.URL, base)
		return &Error{Kind: Unresolvable, Detail: fmt.Sprintf("%q names no anchor in the document", ref), Refs: []string{ref}}
	}
	if e, ok := errors.AsType[*lib.LoadURLError](err); ok {
		ref := strings.TrimPrefix(e.URL, baseDir)
		return &Error{Kind: External, Detail: fmt.Sprintf("%q (never fetched)", ref), Refs: []string{ref}}
	}
	msg := strings.ReplaceAll(err.Error(), base, "")
	return &Error{Kind: Invalid, Detail: clip(msg, 300)}
}

// Problem is one reason an instance failed validation.
type Problem struct {
	// At is a JSON pointer into the instance ("" is the root).
	At string
	// Msg says what was wrong.
	Msg string
}

func (p Problem) String() string {
	at := p.At
	if at == "" {
		at = "/"
	}
	return "at " + at + ": " + p.Msg
}

// ValidationError is a failed validation: the instance does not match.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string { return joinProblems(e.Problems, 3) }

func joinProblems(ps []Problem, n int) string {
	var parts []string
	for i, p := range ps {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(ps)-n))
			break
		}
		parts = append(parts, p.String())
	}
	return strings.Join(parts, "; ")
}

var printer = message.NewPrinter(language.English)

// problems flattens a library validation error into its leaves, the most
// specific reasons, deepest instance location first.
func problems(ve *lib.ValidationError) []Problem {
	var out []Problem
	seen := map[string]bool{}
	var add func(Problem)
	var visit func(e *lib.ValidationError)
	visit = func(e *lib.ValidationError) {
		if len(e.Causes) == 0 {
			add(Problem{At: pointer(e.InstanceLocation), Msg: clip(e.ErrorKind.LocalizedString(printer), 200)})
			return
		}
		causes := e.Causes
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			if causes = plausibleBranches(causes); causes == nil {
				if p, ok := discriminatorSummary(e.Causes); ok {
					add(p)
					return
				}
				causes = e.Causes
			}
		}
		for _, c := range causes {
			visit(c)
		}
	}
	add = func(p Problem) {
		if k := p.At + "\x00" + p.Msg; !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	visit(ve)
	return out
}

// plausibleBranches drops the branches of an anyOf/oneOf that failed on a
// discriminator ("type": "text" against an image block, "method" of an
// input request), so the problems name what is wrong with the branch the
// instance was meant to match. All branches stay when none is left.
func plausibleBranches(branches []*lib.ValidationError) []*lib.ValidationError {
	var keep []*lib.ValidationError
	for _, b := range branches {
		if !discriminatorMismatch(b) {
			keep = append(keep, b)
		}
	}
	return keep
}

// discriminatorSummary says in one problem that a discriminator matched no
// branch: got "txt", want one of "text", "image", ...
func discriminatorSummary(branches []*lib.ValidationError) (Problem, bool) {
	var at string
	var got any
	var wants []string
	for _, b := range branches {
		e := findDiscriminator(b)
		if e == nil {
			return Problem{}, false
		}
		at = pointer(e.InstanceLocation)
		switch k := e.ErrorKind.(type) {
		case *kind.Const:
			got = k.Got
			wants = append(wants, show(k.Want))
		case *kind.Enum:
			got = k.Got
			for _, w := range k.Want {
				wants = append(wants, show(w))
			}
		}
	}
	return Problem{At: at, Msg: fmt.Sprintf("got %s, want one of %s", show(got), strings.Join(wants, ", "))}, true
}

func findDiscriminator(e *lib.ValidationError) *lib.ValidationError {
	switch e.ErrorKind.(type) {
	case *kind.Const, *kind.Enum:
		if n := len(e.InstanceLocation); n > 0 && (e.InstanceLocation[n-1] == "type" || e.InstanceLocation[n-1] == "method") {
			return e
		}
	}
	for _, c := range e.Causes {
		if d := findDiscriminator(c); d != nil {
			return d
		}
	}
	return nil
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b), 60)
}

func discriminatorMismatch(e *lib.ValidationError) bool { return findDiscriminator(e) != nil }

func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return sb.String()
}

// Validate checks a JSON instance. It returns nil when the instance is
// valid, a *ValidationError when it is not, and an *Error when it could not
// be judged (not JSON, over the bounds).
func (s *Schema) Validate(instance []byte) error {
	if len(instance) > s.lim.MaxInstanceBytes {
		return &Error{Kind: OverBounds, Detail: fmt.Sprintf("the instance is %d bytes, over the limit of %d", len(instance), s.lim.MaxInstanceBytes)}
	}
	v, err := lib.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return &Error{Kind: Invalid, Detail: "the instance is not JSON: " + err.Error()}
	}
	return s.ValidateValue(v)
}

// ValidateValue checks a decoded instance (numbers as json.Number or
// float64), within the time budget.
func (s *Schema) ValidateValue(v any) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- &Error{Kind: OverBounds, Detail: fmt.Sprintf("the validator failed: %v", r)}
			}
		}()
		done <- s.sch.Validate(v)
	}()
	timer := time.NewTimer(s.lim.Timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		if ve, ok := errors.AsType[*lib.ValidationError](err); ok {
			if c := refCycleIn(ve); c != nil {
				return &Error{Kind: OverBounds, Detail: "$ref cycle: " + clip(c.LocalizedString(printer), 200)}
			}
			return &ValidationError{Problems: problems(ve)}
		}
		if e, ok := errors.AsType[*Error](err); ok {
			return e
		}
		return &Error{Kind: Invalid, Detail: clip(err.Error(), 300)}
	case <-timer.C:
		return &Error{Kind: OverBounds, Detail: fmt.Sprintf("validation took longer than %v", s.lim.Timeout)}
	}
}

// ValidateAny is ValidateValue for a value of any Go type that encoding/json
// can encode (structs, maps).
func (s *Schema) ValidateAny(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return &Error{Kind: Invalid, Detail: "the instance cannot be encoded: " + err.Error()}
	}
	return s.Validate(b)
}

// refCycleIn finds the library's own reference-cycle verdict, which it
// gives at validation time for loops the static walk could not see.
func refCycleIn(e *lib.ValidationError) *kind.RefCycle {
	if c, ok := e.ErrorKind.(*kind.RefCycle); ok {
		return c
	}
	for _, cause := range e.Causes {
		if c := refCycleIn(cause); c != nil {
			return c
		}
	}
	return nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number, float64, int:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func quoteList(ss []string, n int) string {
	var parts []string
	for i, s := range ss {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(ss)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%q", clip(s, 200)))
	}
	return strings.Join(parts, ", ")
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
