package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Finding a request that answers input_required, and answering it. The
// harness declares what it can answer without a human or a model: form
// elicitation (it declines), sampling (a fixed text) and roots (none).

// mrtrCaps are the client capabilities MRTR checks declare.
var mrtrCaps = json.RawMessage(`{"elicitation":{"form":{}},"sampling":{},"roots":{}}`)

// mrtrTarget is a request that answered input_required.
type mrtrTarget struct {
	method string // tools/call, resources/read or prompts/get
	name   string // tool or prompt name, or resource URI
	params map[string]any
	prompt *mcpclient.Prompt // for prompts/get: the listed prompt, whose arguments the search fills
	tool   *mcpclient.Tool   // for tools/call: the listed tool, whose arguments the search builds
	first  *mcpclient.Result // the input_required answer
}

func (t *mrtrTarget) label() string {
	return fmt.Sprintf("%s %q", t.method, jsonrpc.Clip(t.name, 80))
}

func (t *mrtrTarget) ev() *check.Evidence { return check.FromResponse(t.first.Response) }

// at is the input_required answer's evidence located at tokens (after
// "result"); absent: at a member it lacks.
func (t *mrtrTarget) at(absent bool, tokens ...any) *check.Evidence {
	return atProblem(t.ev(), t.first.Response, problem{at: check.Pointer(append([]any{"result"}, tokens...)...), absent: absent})
}

// The MRTR checks judge every item the run can reach: the tools the user
// allows (--call-tool) and the read-only ones, then the listed resources,
// then the prompts, each in the server's order. The search that finds
// which items ask for input runs once per run (Env.Memo) and is bounded in
// time, not in items, so that a server with thousands of tools cannot
// stretch the run past its deadline:
//   - it tries mrtrSearchWorkers items at once, for at most a quarter of
//     the time left to the run's deadline, and at most mrtrSearchMax;
//   - the checks judge the items found, in that order, until half of the
//     time left when the search began has passed; each run of a check
//     judges for at most a twelfth of that judging window (twelve checks
//     judge items, MRTR-2 … MRTR-9 and META-3, META-4, STATE-2, CACHE-2,
//     and they must share it), and at least the first item found.
//
// A check that could not judge every item says which it did not.
const (
	mrtrSearchWorkers = 4
	mrtrSearchMax     = time.Minute
	mrtrNoDeadline    = 4 * time.Minute // the time left assumed when the run has no deadline
	mrtrMaxReported   = 10              // failing items named one by one; the rest are counted
	mrtrJudgeShares   = 12              // MRTR-2 … MRTR-9, META-3, META-4, STATE-2, CACHE-2 judge items
)

// mrtrSearchKey memoises the search per run.
type mrtrSearchKey struct{}

// mrtrFound is what the search found.
type mrtrFound struct {
	targets   []*mrtrTarget // items that answered input_required, in candidate order
	reachable int           // items the search could try
	tried     int           // items tried before the budget ran out
	broken    int           // items that gave no usable answer (timeout, malformed)
	noArgs    int           // tools the harness cannot build valid arguments for
	budget    time.Duration // the search's time budget
	judgeBy   time.Time     // the checks judge items until then
	window    time.Duration // from the search's end to judgeBy
	err       error         // the server became unreachable
}

// mrtrCandidates lists every item the run can reach, in judging order:
// the tools the user allowed, the read-only ones (as callTargets orders
// them), the listed resources, the prompts. A tool's arguments are built
// by the search, within its budget: compiling thousands of schemas takes
// time too.
func mrtrCandidates(p *check.Pass) []mrtrTarget {
	var allowed, readOnly, out []mrtrTarget
	for _, t := range p.Env.CallableTools() {
		c := mrtrTarget{method: "tools/call", name: t.Name, tool: &t}
		if p.Env.CallTools[t.Name] {
			allowed = append(allowed, c)
		} else {
			readOnly = append(readOnly, c)
		}
	}
	out = append(allowed, readOnly...)
	for _, r := range p.Env.Facts.Resources {
		out = append(out, mrtrTarget{method: "resources/read", name: r.URI, params: map[string]any{"uri": r.URI}})
	}
	for _, pr := range p.Env.Facts.Prompts {
		out = append(out, mrtrTarget{method: "prompts/get", name: pr.Name, prompt: &pr})
	}
	return out
}

// mrtrSearch sends every reachable item once, several at once, within the
// search budget, and keeps those that answered input_required.
func mrtrSearch(p *check.Pass) *mrtrFound {
	return p.Env.Memo.Do(mrtrSearchKey{}, func() any {
		cands := mrtrCandidates(p)
		start := time.Now()
		left := mrtrNoDeadline
		if d, ok := p.Ctx.Deadline(); ok {
			left = time.Until(d)
		}
		f := &mrtrFound{reachable: len(cands), budget: min(left/4, mrtrSearchMax), judgeBy: start.Add(left / 2)}
		ctx, cancel := context.WithTimeout(p.Ctx, f.budget)
		defer cancel()
		found := make([]*mrtrTarget, len(cands))
		var mu sync.Mutex
		next := 0
		var wg sync.WaitGroup
		for range min(mrtrSearchWorkers, len(cands)) {
			wg.Go(func() {
				for {
					mu.Lock()
					i := next
					next++
					mu.Unlock()
					if i >= len(cands) || ctx.Err() != nil {
						return
					}
					c := cands[i]
					if c.tool != nil {
						args, ok := mrtrToolArgs(p.Env, *c.tool)
						if !ok {
							mu.Lock()
							f.tried++
							f.noArgs++
							mu.Unlock()
							continue
						}
						c.params = map[string]any{"name": c.tool.Name, "arguments": args}
					}
					if c.prompt != nil {
						sub := *p
						sub.Ctx = ctx
						c.params = map[string]any{"name": c.prompt.Name, "arguments": promptArgs(&sub, *c.prompt)}
					}
					res, err := mrtrSendCtx(ctx, p, c.method, c.params, mrtrCaps)
					mu.Lock()
					switch {
					case ctx.Err() != nil:
						// cut by the budget: not tried
					case err != nil && mrtrUnreachable(err):
						f.tried++
						if f.err == nil {
							f.err = fmt.Errorf("looking for a request that asks for input (%s): %w", c.label(), err)
						}
						cancel()
					case err != nil && schemaTransportErr(err):
						f.tried++
						f.broken++
					default:
						f.tried++
						// A malformed input_required result is a target
						// too: MRTR-2 and MRTR-3 judge its shape.
						if res != nil && res.ResultType == mcpclient.ResultInputRequired {
							c.first = res
							found[i] = &c
						}
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		f.window = time.Until(f.judgeBy)
		for _, t := range found {
			if t != nil {
				f.targets = append(f.targets, t)
			}
		}
		return f
	}).(*mrtrFound)
}

// mrtrToolArgs builds valid arguments for a tool, as callTargets does.
func mrtrToolArgs(env check.Env, t mcpclient.Tool) (map[string]any, bool) {
	input, err := schemaCompileTool(env, t.InputSchema)
	if err != nil {
		return nil, false
	}
	return callSynthArgs(t.InputSchema, input)
}

// mrtrUnreachable is a transport error after which no request can succeed.
func mrtrUnreachable(err error) bool {
	switch transport.KindOf(err) {
	case transport.KindProcessExited, transport.KindClosed, transport.KindConnect:
		return true
	}
	return false
}

// mrtrSkipNone skips a check when no reachable item asked for input. It
// points to --call-tool only when some tool was not allowed.
func mrtrSkipNone(p *check.Pass, f *mrtrFound) {
	hint, skip := "", p.Skipf
	if h := uncalledHint(p.Env, "allow an MRTR tool"); h != "" {
		// Recorded as a skip that needs permission (report skipCause).
		hint, skip = "; "+h, p.SkipNeedsCall
	}
	switch {
	case f.reachable == 0:
		skip("nothing to try: no callable tool with arguments the harness can build, no listed resource, no prompt%s", hint)
	case f.tried < f.reachable:
		skip("none of the %d items tried answered input_required; %d of %d reachable items were not tried: the search's time budget (%s, a quarter of the time left to the run's deadline) ran out%s", f.tried, f.reachable-f.tried, f.reachable, f.budget.Round(time.Millisecond), hint)
	default:
		skip("none of the %d reachable items (callable tools, listed resources, prompts) answered input_required%s%s", f.reachable, mrtrCoverage(f, 0), hint)
	}
}

// mrtrStatus is what judging one item gave.
type mrtrStatus int

const (
	mrtrOK  mrtrStatus = iota // the item keeps the rule
	mrtrBad                   // the item broke it (reported through the mrtrJudge)
	mrtrNA                    // the rule does not apply to the item (the note says why)
)

// mrtrJudge reports one check's findings over many items: the first
// mrtrMaxReported failing items one by one, the rest counted. Findings
// wait until their item is judged to the end, so that an item cut short by
// the judging deadline reports nothing.
type mrtrJudge struct {
	p *check.Pass
	// runCtx is the run's context, for the requests a judge shares
	// (mrtrShare): p.Ctx may be the check's judging deadline.
	runCtx     context.Context
	badItems   int
	suppressed int
	pending    []func()
	held       int // findings of the current item beyond the limit
}

func (j *mrtrJudge) quiet() bool { return j.badItems >= mrtrMaxReported }

// Failf reports a violation on the item being judged.
func (j *mrtrJudge) Failf(ev *check.Evidence, format string, args ...any) {
	j.hold(j.p.Failf, ev, fmt.Sprintf(format, args...))
}

// Warnf reports a deviation the rule allows on the item being judged.
func (j *mrtrJudge) Warnf(ev *check.Evidence, format string, args ...any) {
	j.hold(j.p.Warnf, ev, fmt.Sprintf(format, args...))
}

func (j *mrtrJudge) hold(report func(*check.Evidence, string, ...any), ev *check.Evidence, msg string) {
	if j.quiet() {
		j.held++
		return
	}
	j.pending = append(j.pending, func() { report(ev, "%s", msg) })
}

// settle reports the current item's findings (keep) or drops them.
func (j *mrtrJudge) settle(keep bool) {
	if keep {
		for _, f := range j.pending {
			f()
		}
		j.suppressed += j.held
	}
	j.pending, j.held = nil, 0
}

// mrtrJudgeFunc judges one item; ok is the pass line (or, for mrtrNA, why
// the rule does not apply) and ev its evidence.
type mrtrJudgeFunc func(j *mrtrJudge, t *mrtrTarget) (st mrtrStatus, ok string, ev *check.Evidence, err error)

// mrtrFirst is which input_required answer of an item a check judges.
type mrtrFirst int

const (
	// mrtrSearched: the search's answer. For the checks that send a
	// request of their own built from the item's params (MRTR-8, META-3,
	// META-4, STATE-2, CACHE-2) or only read (MRTR-9, which reads the one
	// answer no other check retries).
	mrtrSearched mrtrFirst = iota
	// mrtrShared: the item sent again once per repetition, the answer
	// shared by the checks of that repetition (mrtrAgainShared).
	mrtrShared
	// mrtrOwn: the item sent again by this check alone, for a check whose
	// retries use the requestState and may spend it (MRTR-6).
	mrtrOwn
)

// mrtrEach runs judge over every item the search found, within the
// judging deadline, and sums up: one pass line naming the items judged,
// or, after findings, a detail saying what was not judged. first says
// which input_required answer each item is judged on: a repetition judges
// an answer of its own, sent again, and a requestState may be single-use,
// so a check that spends it must not judge an answer another check spends.
func mrtrEach(p *check.Pass, first mrtrFirst, judge mrtrJudgeFunc) error {
	f := mrtrSearch(p)
	if f.err != nil {
		return f.err
	}
	if len(f.targets) == 0 {
		mrtrSkipNone(p, f)
		return nil
	}
	// The first item is judged under the run's context; the others under
	// the judging deadline, and one it cuts short counts as not judged.
	runCtx := p.Ctx
	j := &mrtrJudge{p: p, runCtx: runCtx}
	var judged, bad []string
	var notes []string
	var okEv *check.Evidence
	var okLine string
	unjudged := 0
	defer func() { p.Ctx = runCtx }()
	by := f.judgeBy
	if share := time.Now().Add(f.window / mrtrJudgeShares); share.Before(by) {
		by = share
	}
	jctx, cancel := context.WithDeadline(runCtx, by)
	defer cancel()
	cut := func() bool { return p.Ctx == jctx && jctx.Err() != nil && runCtx.Err() == nil }
	for i, t := range f.targets {
		if i > 0 {
			if jctx.Err() != nil {
				unjudged = len(f.targets) - i
				break
			}
			p.Ctx = jctx
		}
		var (
			st       = mrtrNA
			line     string
			ev       *check.Evidence
			err      error
			sameItem = t
		)
		switch first {
		case mrtrShared:
			t, line, err = mrtrAgainShared(p, runCtx, t)
		case mrtrOwn:
			t, line, err = mrtrAgain(p, t)
		}
		if err == nil && t != nil {
			st, line, ev, err = judge(j, t)
		}
		if cut() {
			j.settle(false)
			unjudged = len(f.targets) - i
			break
		}
		if err != nil {
			return err
		}
		j.settle(true)
		switch st {
		case mrtrOK:
			judged = append(judged, sameItem.label())
			if okLine == "" {
				okLine, okEv = line, ev
			}
		case mrtrBad:
			judged = append(judged, sameItem.label())
			bad = append(bad, sameItem.label())
			j.badItems++
		case mrtrNA:
			notes = append(notes, line)
		}
	}
	p.Ctx = runCtx
	coverage := mrtrCoverage(f, unjudged)
	if len(judged) == 0 {
		why := "no item could be judged"
		if len(notes) > 0 {
			why = notes[0]
			if len(notes) > 1 {
				why += fmt.Sprintf(" (and %d more items)", len(notes)-1)
			}
		}
		p.Skipf("%s%s", why, coverage)
		return nil
	}
	if len(bad) > 0 {
		if j.suppressed > 0 {
			p.Warnf(nil, "%d of %d judged items broke the rule; the first %d are shown, %d more findings are not", len(bad), len(judged), mrtrMaxReported, j.suppressed)
		}
		if coverage != "" {
			p.Warnf(nil, "%s", strings.TrimPrefix(coverage, "; "))
		}
		return nil
	}
	if len(judged) == 1 && coverage == "" {
		p.Passf(okEv, "%s", okLine)
		return nil
	}
	p.Passf(okEv, "%s judged (%s); the first: %s%s", mrtrItems(len(judged)), mrtrList(judged), okLine, coverage)
	return nil
}

// mrtrAgain sends an item found by the search once more; nil with a note
// when it no longer asks for input.
func mrtrAgain(p *check.Pass, t *mrtrTarget) (*mrtrTarget, string, error) {
	return mrtrAgainCtx(p.Ctx, p, t)
}

func mrtrAgainCtx(ctx context.Context, p *check.Pass, t *mrtrTarget) (*mrtrTarget, string, error) {
	res, err := mrtrSendCtx(ctx, p, t.method, t.params, mrtrCaps)
	if err != nil && schemaTransportErr(err) {
		return nil, "", err
	}
	if res == nil || res.ResultType != mcpclient.ResultInputRequired {
		got := "an error"
		if res != nil {
			got = fmt.Sprintf("resultType %q", jsonrpc.Clip(res.ResultType, 40))
		}
		return nil, fmt.Sprintf("%s answered input_required once, then %s", t.label(), got), nil
	}
	c := *t
	c.first = res
	return &c, "", nil
}

// mrtrFirstKey is the Memo key of one repetition's shared re-send of an
// item the search found (its *mrtrTarget, the same in every repetition).
type mrtrFirstKey struct {
	run int
	t   *mrtrTarget
}

// mrtrFirstAnswer is what mrtrAgain gave for a shared re-send.
type mrtrFirstAnswer struct {
	t    *mrtrTarget
	note string
	err  error
}

// mrtrAgainShared is mrtrAgain sent once per repetition and item, its
// answer judged by every check of that repetition that asks (mrtrShared):
// MRTR-2 and MRTR-3 only read it; MRTR-4 reads it and then sends a new
// request with clientCapabilities {}, which starts no retry of it; MRTR-7
// reads whether it has a requestState and tampers with an answer of its
// own (a server may revoke a flow whose state failed verification, which
// must not fail another check's retry); MRTR-5 alone retries it with its
// real requestState. One consumer only: a single-use requestState spent by
// one check would make a second one's retry fail (or pass) by which came
// first. MRTR-6 spends the state twice and keeps its own re-send.
//
// The checks of a repetition run concurrently: the shared *mrtrTarget and
// its Result are read, never changed (mrtrRetry and Client.Continue copy
// the params).
func mrtrAgainShared(p *check.Pass, runCtx context.Context, t *mrtrTarget) (*mrtrTarget, string, error) {
	v, err := mrtrShare(p, runCtx, mrtrFirstKey{p.Run, t}, func(ctx context.Context) any {
		var a mrtrFirstAnswer
		a.t, a.note, a.err = mrtrAgainCtx(ctx, p, t)
		return a
	})
	if err != nil {
		return nil, "", err
	}
	a := v.(mrtrFirstAnswer)
	return a.t, a.note, a.err
}

// mrtrSharedReq is a request one repetition's checks share; done closes when
// fetch returned v.
type mrtrSharedReq struct {
	done chan struct{}
	v    any
}

// mrtrShare runs fetch once per key (Env.Memo) for every check that asks.
// fetch runs under the run's context (runCtx), not the asking check's
// judging deadline, whose end must not cut the answer the others wait
// for; each check waits under its own p.Ctx, so a check whose share of the
// judging window ends stops waiting and counts the item as not judged, as
// when it sent the request itself (the error is p.Ctx's).
func mrtrShare(p *check.Pass, runCtx context.Context, key any, fetch func(ctx context.Context) any) (any, error) {
	s := p.Env.Memo.Do(key, func() any {
		s := &mrtrSharedReq{done: make(chan struct{})}
		go func() {
			defer close(s.done)
			s.v = fetch(runCtx)
		}()
		return s
	}).(*mrtrSharedReq)
	select {
	case <-s.done:
		return s.v, nil
	case <-p.Ctx.Done():
		return nil, p.Ctx.Err()
	}
}

// mrtrCoverage says what the search and the judging left out, "" when
// every reachable item was tried and every item found was judged.
func mrtrCoverage(f *mrtrFound, unjudged int) string {
	var parts []string
	if f.tried < f.reachable {
		parts = append(parts, fmt.Sprintf("the search tried %d of %d reachable items before its time budget (%s, a quarter of the time left to the run's deadline) ran out", f.tried, f.reachable, f.budget.Round(time.Millisecond)))
	}
	if unjudged > 0 {
		parts = append(parts, fmt.Sprintf("%d of the %d items that answered input_required were not judged: this check's share of the run's deadline ran out (judged in order: allowed tools, read-only tools, resources, prompts)", unjudged, len(f.targets)))
	}
	if f.broken > 0 {
		parts = append(parts, fmt.Sprintf("%d items gave no usable answer during the search", f.broken))
	}
	if f.noArgs > 0 {
		parts = append(parts, fmt.Sprintf("%d tools were not called: the harness cannot build valid arguments from their inputSchema", f.noArgs))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// mrtrItems is "1 item" or "N items".
func mrtrItems(n int) string {
	if n == 1 {
		return "1 item"
	}
	return fmt.Sprintf("%d items", n)
}

// mrtrList names up to five items.
func mrtrList(labels []string) string {
	if len(labels) <= 5 {
		return strings.Join(labels, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(labels[:5], ", "), len(labels)-5)
}

// mrtrSend sends one of the three MRTR methods with these capabilities.
func mrtrSend(p *check.Pass, method string, params map[string]any, caps json.RawMessage) (*mcpclient.Result, error) {
	return mrtrSendCtx(p.Ctx, p, method, params, caps)
}

func mrtrSendCtx(ctx context.Context, p *check.Pass, method string, params map[string]any, caps json.RawMessage) (*mcpclient.Result, error) {
	opt := mcpclient.WithCapabilities(caps)
	switch method {
	case "tools/call":
		return p.Env.Client.CallTool(ctx, params["name"].(string), params["arguments"], opt)
	case "resources/read":
		return p.Env.Client.ReadResource(ctx, params["uri"].(string), opt)
	default:
		args, _ := params["arguments"].(map[string]string)
		return p.Env.Client.GetPrompt(ctx, params["name"].(string), args, opt)
	}
}

// mrtrAnswers answers every input request the harness can: elicitations
// are declined (never accepting keeps calls free of side effects), sampling
// gets a fixed text, roots an empty list.
func mrtrAnswers(reqs map[string]json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, raw := range reqs {
		var r struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(raw, &r)
		switch r.Method {
		case "elicitation/create":
			out[k] = json.RawMessage(`{"action":"decline"}`)
		case "sampling/createMessage":
			out[k] = json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"mcp-eval: no model is attached to this test client"},"model":"mcp-eval","stopReason":"endTurn"}`)
		case "roots/list":
			out[k] = json.RawMessage(`{"roots":[]}`)
		}
	}
	return out
}

// mrtrRetry re-sends the target's request with inputResponses and a
// requestState of the caller's choice (raw JSON; nil leaves it out).
func mrtrRetry(p *check.Pass, t *mrtrTarget, responses map[string]json.RawMessage, state json.RawMessage) (*mcpclient.Response, error) {
	params := map[string]any{}
	for k, v := range t.params {
		params[k] = v
	}
	if responses != nil {
		params["inputResponses"] = responses
	}
	if state != nil {
		params["requestState"] = state
	}
	return p.Env.Client.Do(p.Ctx, t.method, params, mcpclient.WithCapabilities(mrtrCaps))
}

// mrtrTamper flips one character in the middle of a requestState, to
// another character of the same class so that it still decodes (base64,
// hex) and only an integrity check can tell.
func mrtrTamper(state string) string {
	if state == "" {
		return "x"
	}
	b := []byte(state)
	i := len(b) / 2
	c := b[i]
	switch {
	case c >= 'a' && c < 'z', c >= 'A' && c < 'Z', c >= '0' && c < '9':
		b[i] = c + 1
	case c == 'z':
		b[i] = 'a'
	case c == 'Z':
		b[i] = 'A'
	case c == '9':
		b[i] = '0'
	case c == 'A':
		b[i] = 'B'
	default:
		b[i] = 'A'
	}
	return string(b)
}

// mrtrOutcome classifies an answer to a retry: "error", "input_required",
// "complete", or "" with a problem for anything else.
func mrtrOutcome(resp *mcpclient.Response) (string, string) {
	if resp.Error != nil {
		return "error", ""
	}
	rt, ok := resp.ResultType()
	switch {
	case !ok:
		return "", "the result has no resultType"
	case rt == mcpclient.ResultComplete, rt == mcpclient.ResultInputRequired:
		return rt, ""
	}
	return "", fmt.Sprintf("resultType %q is neither \"complete\" nor \"input_required\"", jsonrpc.Clip(rt, 40))
}

// mrtrResultDef is the schema definition of a complete result per method.
var mrtrResultDef = map[string]string{
	"tools/call": "CallToolResult", "resources/read": "ReadResourceResult", "prompts/get": "GetPromptResult",
}

// mrtrRPC unwraps a JSON-RPC error from a typed helper's error.
func mrtrRPC(err error) (*mcpclient.RPCError, bool) { return errors.AsType[*mcpclient.RPCError](err) }
