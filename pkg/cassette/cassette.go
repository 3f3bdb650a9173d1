// Package cassette records the model exchanges of a run and answers them
// again without a model: an llm.Provider decorator, wrapped around every
// provider of Layers 1 and 2 (the models and the judge) by the pipeline.
//
// A Recorder stores each exchange, keyed by where it happened (model,
// case, run, Layer 2 scenario, turn), as the neutral llm.Request and
// llm.Response: no HTTP, so no key, header or auth token is ever in it,
// and what the run's redactor knows is taken out of the rest. The request
// holds the whole transcript so far, so every exchange carries the tool
// calls and results that led to it.
//
// A Player answers a request only when it is equal, as canonical JSON and
// ignoring the fields IgnoredFields lists, to the one recorded at the same
// place; anything else is a *StaleError that says where and what differed.
// It never invents an answer. Tool calls are not recorded for replay: they
// still go to the live server, so a changed tool list, description or
// result changes the next request and makes the cassette stale there.
//
// Quick start:
//
//	rec := cassette.NewRecorder(redactor)
//	p = rec.Wrap(p, false) // every model and judge of the run
//	… run …
//	info, err := rec.Save(dir)
//
//	pl, err := cassette.Open(dir)
//	p := pl.Provider("openai:gpt-5-mini", false) // no key needed
//	… run …
//	pl.Stale() // the first stale turn of each case run
package cassette

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/atomicfile"
	"github.com/mcp-eval/mcp-eval-action/pkg/llm"
	"github.com/mcp-eval/mcp-eval-action/pkg/redact"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/telemetry"
)

// FileName is the cassette's file in its directory.
const FileName = "cassette.json"

// Version is the cassette format; a reader refuses any other.
const Version = 1

// Bounds. A cassette is read back from a repository or an artifact, so it
// is untrusted: the file, and each exchange, have a size limit. An
// exchange beyond MaxExchangeBytes, or beyond MaxBytes in all, is not kept
// (the Recorder counts it in Info.Dropped); replay then reports that turn
// stale, as "not recorded".
const (
	MaxExchangeBytes = 1 << 20
	MaxBytes         = 128 << 20
	MaxExchanges     = 100_000
)

// IgnoredFields are the request fields replay does not compare: ids the
// provider minted (which a replayed answer repeats anyway). Everything
// else of llm.Request is compared: the system prompt, every message and
// its text, tool calls and arguments, tool results, the tools offered
// (names, descriptions, schemas), the tool choice, the sampling and the
// judge's output schema. docs/cassettes.md lists the same.
var IgnoredFields = []string{"Messages[].Calls[].ID", "Messages[].Results[].CallID"}

// File is the cassette on disk.
type File struct {
	Version   int        `json:"version"`
	Exchanges []Exchange `json:"exchanges"`
}

// Exchange is one model call.
type Exchange struct {
	Place
	// Request is the canonical JSON of the llm.Request (IgnoredFields
	// removed, secrets redacted).
	Request json.RawMessage `json:"request"`
	// Response is the llm.Response as JSON; Error the call's error, with
	// InvalidOutput when it wrapped llm.ErrInvalidOutput.
	Response      json.RawMessage `json:"response,omitempty"`
	Error         string          `json:"error,omitempty"`
	InvalidOutput bool            `json:"invalidOutput,omitempty"`
}

// Place is where a model call happened.
type Place struct {
	Model string `json:"model"`
	Judge bool   `json:"judge,omitempty"`
	Case  string `json:"case"`
	Run   int    `json:"run"`
	// Scenario is "" for Layer 1, else the Layer 2 fault or attack.
	Scenario string `json:"scenario,omitempty"`
	// Turn is the model turn of the run, from 1 (the judge's calls are
	// turn 1: each is a conversation of its own).
	Turn int `json:"turn"`
}

func (p Place) String() string {
	s := fmt.Sprintf("case %s, run %d, turn %d", p.Case, p.Run, p.Turn)
	if p.Judge {
		s = fmt.Sprintf("case %s, run %d, judge call", p.Case, p.Run)
	}
	if p.Scenario != "" {
		s += " (" + p.Scenario + ")"
	}
	return s + " of " + p.Model
}

// slot is a Place without the turn: one conversation's calls.
type slot struct {
	model, kase, scenario string
	judge                 bool
	run                   int
}

func (p Place) slot() slot {
	return slot{model: p.Model, judge: p.Judge, kase: p.Case, run: p.Run, scenario: p.Scenario}
}

// placeOf is the place of a call: the case run from the context (set by
// the Layer 1 and 2 runners), the turn from the transcript (one more than
// the assistant turns in it), so that it does not depend on the order
// concurrent runs were scheduled in.
func placeOf(ctx context.Context, model string, judge bool, req *llm.Request) Place {
	pl := telemetry.PlaceOf(ctx)
	turn := 1
	for _, m := range req.Messages {
		if m.Role == llm.Assistant {
			turn++
		}
	}
	return Place{Model: model, Judge: judge, Case: pl.Case, Run: pl.Run, Scenario: pl.Scenario, Turn: turn}
}

// canonical is req as compared: canonical JSON without IgnoredFields,
// redacted.
func canonical(req *llm.Request, r *redact.Redactor) (json.RawMessage, error) {
	c := *req
	c.Messages = make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		if len(m.Calls) > 0 {
			calls := append([]llm.ToolCall(nil), m.Calls...)
			for k := range calls {
				calls[k].ID = ""
			}
			m.Calls = calls
		}
		if len(m.Results) > 0 {
			res := append([]llm.ToolResult(nil), m.Results...)
			for k := range res {
				res[k].CallID = ""
			}
			m.Results = res
		}
		c.Messages[i] = m
	}
	return canonicalJSON(&c, r)
}

func canonicalJSON(v any, r *redact.Redactor) (json.RawMessage, error) {
	b, err := report.CanonicalJSON(v)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return b, nil
	}
	var tree any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	if err := r.JSON(&tree); err != nil {
		return nil, err
	}
	return report.CanonicalJSON(tree)
}

// Info describes a saved or opened cassette.
type Info struct {
	Path string
	// Hash is the SHA-256 of the file, "sha256:<hex>": a replayed report
	// records it, and the gate compares only reports replayed from the
	// same one.
	Hash      string
	Exchanges int
	Bytes     int64
	// Dropped counts exchanges not kept (beyond the size bounds).
	Dropped int
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return report.HashPrefix + hex.EncodeToString(sum[:])
}

// HashFile is the hash of the cassette in dir as Open computes it (the
// one a replayed report records), without parsing it: what a baseline
// replayed from the same cassette is recognised by.
func HashFile(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, FileName))
	if err != nil {
		return "", fmt.Errorf("cassette: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return "", fmt.Errorf("cassette %s: %w", dir, err)
	}
	if len(b) > MaxBytes {
		return "", fmt.Errorf("cassette in %s is larger than %d MiB", dir, MaxBytes>>20)
	}
	return hashOf(b), nil
}

// Open reads the cassette in dir, bounded and checked.
func Open(dir string) (*Player, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cassette: %w (record one with --record %s)", err, dir)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", path, err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("cassette %s is larger than %d MiB", path, MaxBytes>>20)
	}
	var file File
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("cassette %s is not a cassette: %w", path, err)
	}
	if file.Version != Version {
		return nil, fmt.Errorf("cassette %s has version %d; this mcp-eval reads version %d: record it again", path, file.Version, Version)
	}
	if len(file.Exchanges) > MaxExchanges {
		return nil, fmt.Errorf("cassette %s has more than %d exchanges", path, MaxExchanges)
	}
	pl := &Player{info: Info{Path: path, Hash: hashOf(b), Exchanges: len(file.Exchanges), Bytes: int64(len(b))},
		slots: map[slot][]*recorded{}, stale: map[slot]Stale{}}
	for i, e := range file.Exchanges {
		if e.Model == "" || e.Turn < 1 || len(e.Request) == 0 || (len(e.Response) == 0 && e.Error == "") {
			return nil, fmt.Errorf("cassette %s: exchange %d is incomplete (model, turn, request and a response or an error are required)", path, i+1)
		}
		// Canonical again: the file may have been edited or re-indented.
		req, err := report.CanonicalJSON(e.Request)
		if err != nil {
			return nil, fmt.Errorf("cassette %s: exchange %d (%s): %w", path, i+1, e.Place, err)
		}
		e.Request = req
		s := e.slot()
		pl.slots[s] = append(pl.slots[s], &recorded{Exchange: e})
	}
	return pl, nil
}

// Recorder stores the exchanges of a run.
type Recorder struct {
	redact  *redact.Redactor
	mu      sync.Mutex
	ex      []Exchange
	bytes   int
	dropped int
}

// NewRecorder records with r taking secrets out (nil: none known).
func NewRecorder(r *redact.Redactor) *Recorder { return &Recorder{redact: r} }

// Wrap returns p recording every exchange; judge marks the judge.
func (r *Recorder) Wrap(p llm.Provider, judge bool) llm.Provider {
	return &recording{p: p, rec: r, judge: judge}
}

type recording struct {
	p     llm.Provider
	rec   *Recorder
	judge bool
}

func (w *recording) ID() string { return w.p.ID() }

func (w *recording) Revision() string { return llm.Revision(w.p) }

func (w *recording) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	resp, err := w.p.Complete(ctx, req)
	if ctx.Err() != nil {
		// The run's deadline, not the model's answer: nothing to replay.
		return resp, err
	}
	w.rec.add(placeOf(ctx, w.p.ID(), w.judge, req), req, resp, err)
	return resp, err
}

func (r *Recorder) add(pl Place, req *llm.Request, resp *llm.Response, callErr error) {
	e := Exchange{Place: pl}
	var err error
	if e.Request, err = canonical(req, r.redact); err == nil && resp != nil {
		e.Response, err = canonicalJSON(resp, r.redact)
	}
	if callErr != nil {
		e.Error = r.redact.String(callErr.Error())
		e.InvalidOutput = errors.Is(callErr, llm.ErrInvalidOutput)
	}
	size := len(e.Request) + len(e.Response) + len(e.Error)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || size > MaxExchangeBytes || r.bytes+size > MaxBytes || len(r.ex) >= MaxExchanges {
		r.dropped++
		return
	}
	r.bytes += size
	r.ex = append(r.ex, e)
}

// Save writes the cassette into dir (made if missing), atomically, with
// the exchanges in a stable order so that re-recording an unchanged run
// changes little in a diff.
func (r *Recorder) Save(dir string) (Info, error) {
	r.mu.Lock()
	ex := append([]Exchange(nil), r.ex...)
	dropped := r.dropped
	r.mu.Unlock()
	sort.SliceStable(ex, func(i, j int) bool {
		a, b := ex[i].Place, ex[j].Place
		switch {
		case a.Scenario != b.Scenario:
			return a.Scenario < b.Scenario
		case a.Case != b.Case:
			return a.Case < b.Case
		case a.Run != b.Run:
			return a.Run < b.Run
		case a.Model != b.Model:
			return a.Model < b.Model
		case a.Judge != b.Judge:
			return !a.Judge
		case a.Turn != b.Turn:
			return a.Turn < b.Turn
		}
		return bytes.Compare(ex[i].Request, ex[j].Request) < 0
	})
	// One exchange a line: a diff of a re-recorded cassette shows which
	// exchanges changed, at a third of the size of indented JSON.
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "{\"version\": %d, \"exchanges\": [", Version)
	for i, e := range ex {
		line, err := json.Marshal(e)
		if err != nil {
			return Info{}, fmt.Errorf("cassette: %w", err)
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n")
		buf.Write(line)
	}
	buf.WriteString("\n]}\n")
	b := buf.Bytes()
	if err := atomicfile.MkdirAll(dir); err != nil {
		return Info{}, fmt.Errorf("cassette directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	if err := atomicfile.WriteBytes(path, b); err != nil {
		return Info{}, fmt.Errorf("cassette: %w", err)
	}
	return Info{Path: path, Hash: hashOf(b), Exchanges: len(ex), Bytes: int64(len(b)), Dropped: dropped}, nil
}

// Player answers model requests from a cassette.
type Player struct {
	info   Info
	redact *redact.Redactor
	mu     sync.Mutex
	slots  map[slot][]*recorded
	stale  map[slot]Stale
	served int
}

type recorded struct {
	Exchange
	used int
}

// Stale is the first request of a conversation the cassette could not
// answer.
type Stale struct {
	Place
	// Diff says what differed, short.
	Diff string
}

// StaleError is what a replayed provider returns for a request the
// cassette does not hold.
type StaleError struct{ Stale }

// Unwrap makes a stale request llm.ErrNoAnswer: the run is not measured.
func (e *StaleError) Unwrap() error { return llm.ErrNoAnswer }

func (e *StaleError) Error() string {
	return "cassette stale at " + e.Place.String() + ": " + e.Diff + " (record the cassette again with --record)"
}

// Info describes the opened cassette.
func (p *Player) Info() Info { return p.info }

// Holds reports whether the cassette recorded any exchange of Layer 2
// (layer2) or of Layer 1: a layer it never recorded could only go stale.
func (p *Player) Holds(layer2 bool) bool {
	for s := range p.slots {
		if (s.scenario != "") == layer2 {
			return true
		}
	}
	return false
}

// Served counts the requests answered from the cassette.
func (p *Player) Served() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.served
}

// Redact makes the player compare requests redacted as they were when
// recorded (r: the run's redactor).
func (p *Player) Redact(r *redact.Redactor) { p.redact = r }

// Stale lists the first stale request of each conversation, in a stable
// order.
func (p *Player) Stale() []Stale {
	p.mu.Lock()
	out := make([]Stale, 0, len(p.stale))
	for _, s := range p.stale {
		out = append(out, s)
	}
	p.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Place, out[j].Place
		if a.Case != b.Case {
			return a.Case < b.Case
		}
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Run != b.Run {
			return a.Run < b.Run
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return !a.Judge && b.Judge
	})
	return out
}

// Provider is model id answered from the cassette: it needs no key and
// makes no call.
func (p *Player) Provider(id string, judge bool) llm.Provider {
	return &replaying{id: id, judge: judge, p: p}
}

type replaying struct {
	id    string
	judge bool
	p     *Player
}

func (r *replaying) ID() string { return r.id }

func (r *replaying) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return r.p.answer(placeOf(ctx, r.id, r.judge, req), req)
}

func (p *Player) answer(pl Place, req *llm.Request) (*llm.Response, error) {
	got, err := canonical(req, p.redact)
	if err != nil {
		return nil, fmt.Errorf("cassette: the request at %s cannot be compared: %w", pl, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// The conversation's recorded calls at this turn, the unused first:
	// runs that share a place (two faults of one kind) and a judge asked
	// twice alike are answered in the order recorded.
	var same, at []*recorded
	for _, e := range p.slots[pl.slot()] {
		if e.Turn != pl.Turn {
			continue
		}
		at = append(at, e)
		if bytes.Equal(e.Request, got) {
			same = append(same, e)
		}
	}
	sort.SliceStable(same, func(i, j int) bool { return same[i].used < same[j].used })
	if len(same) == 0 {
		st := Stale{Place: pl, Diff: "nothing was recorded there"}
		if len(at) > 0 {
			st.Diff = Diff(at[0].Request, got)
		}
		if _, seen := p.stale[pl.slot()]; !seen {
			p.stale[pl.slot()] = st
		}
		return nil, &StaleError{st}
	}
	e := same[0]
	e.used++
	p.served++
	var resp *llm.Response
	if len(e.Response) > 0 {
		resp = &llm.Response{}
		if err := json.Unmarshal(e.Response, resp); err != nil {
			return nil, fmt.Errorf("cassette: the response recorded at %s is unreadable: %w", pl, err)
		}
	}
	switch {
	case e.InvalidOutput:
		return resp, fmt.Errorf("%w (as recorded: %s)", llm.ErrInvalidOutput, e.Error)
	case e.Error != "":
		return resp, errors.New(e.Error + " (as recorded)")
	case resp == nil:
		return nil, errors.New("cassette: no response recorded at " + pl.String())
	}
	return resp, nil
}

// Diff says, in at most three short lines, where two canonical JSON
// documents differ: each path, and the recorded and the new value around
// the first difference.
func Diff(recorded, now json.RawMessage) string {
	var a, b any
	if json.Unmarshal(recorded, &a) != nil || json.Unmarshal(now, &b) != nil {
		return "the request differs"
	}
	var out []string
	diffTree("", a, b, &out)
	if len(out) == 0 {
		return "the request differs"
	}
	more := ""
	if len(out) > maxDiffs {
		more = fmt.Sprintf("; and %d more", len(out)-maxDiffs)
		out = out[:maxDiffs]
	}
	return strings.Join(out, "; ") + more
}

const (
	maxDiffs   = 3
	diffWindow = 60
)

func diffTree(path string, a, b any, out *[]string) {
	if len(*out) > 50 {
		return
	}
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range x {
				keys[k] = true
			}
			for k := range y {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				p := k
				if path != "" {
					p = path + "." + k
				}
				diffTree(p, x[k], y[k], out)
			}
			return
		}
	case []any:
		if y, ok := b.([]any); ok {
			n := max(len(x), len(y))
			for i := range n {
				var xa, yb any
				if i < len(x) {
					xa = x[i]
				}
				if i < len(y) {
					yb = y[i]
				}
				diffTree(fmt.Sprintf("%s[%d]", path, i), xa, yb, out)
			}
			return
		}
	case string:
		if y, ok := b.(string); ok {
			if x != y {
				ra, rb := around(x, y)
				*out = append(*out, fmt.Sprintf("%s: recorded %q, now %q", path, ra, rb))
			}
			return
		}
	}
	if !equalJSON(a, b) {
		*out = append(*out, fmt.Sprintf("%s: recorded %s, now %s", path, short(a), short(b)))
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func short(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > diffWindow {
		s = s[:diffWindow] + "…"
	}
	return s
}

// around clips two strings to a window from just before their first
// difference.
func around(a, b string) (string, string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := max(0, i-diffWindow/3)
	for start > 0 && start < len(a) && !utf8Start(a[start]) {
		start--
	}
	clipS := func(s string) string {
		if start >= len(s) {
			return "…"
		}
		s = s[start:]
		end := min(len(s), diffWindow)
		for end < len(s) && !utf8Start(s[end]) {
			end--
		}
		pre, post := "", ""
		if start > 0 {
			pre = "…"
		}
		if end < len(s) {
			post = "…"
		}
		return pre + s[:end] + post
	}
	return clipS(a), clipS(b)
}

func utf8Start(c byte) bool { return c&0xC0 != 0x80 }
