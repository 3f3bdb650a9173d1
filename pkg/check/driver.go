package check

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// DefaultConcurrency is Options.Concurrency's default.
const DefaultConcurrency = 16

// Options configure a driver run. The zero value is the documented default.
type Options struct {
	// Runs is how often each MUST check runs (default 5); it passes only at
	// Runs/Runs. SHOULD and info checks run once.
	Runs int
	// Concurrency bounds check runs in flight (default 16: most runs wait
	// on the server, so more in flight than cores keeps both busy; 16 ran
	// the bundled server's HTTP check in 0.27-0.31 s against 0.36-0.38 s
	// at 8, docs/benchmarks.md). The runs of checks marked Waits have a
	// bound of their own, Waits, and take their first places first: they
	// spend their time on processes of their own, turns, streams and
	// quiet periods, not on the shared connection the quick runs load,
	// and they end the run when they start last (the bundled server's
	// stdio check: 0.57-0.67 s, against 0.68-0.72 s with one bound of 16
	// for all). The quick runs start beside them, not once all but Waits
	// of them have returned (the bundled server's stdio check: 1.03-1.08
	// s, against 1.12-1.13 s). Checks marked Exclusive always run alone.
	Concurrency int
	// Waits bounds the runs of checks marked Waits in flight (default:
	// twice Concurrency; conformance.Run makes it Concurrency on a stdio
	// server whose start is dear).
	Waits int
	// Only, when set, limits the run to these ids or families ("DISC").
	Only []string
	// Follow says for which checks the order Check.Follows asks for is
	// kept; the others run as if they followed nothing (nil: none is kept).
	// conformance.Run keeps it where a check gains more from taking over
	// what others are done with than waiting for them costs.
	Follow func(*Check) bool
	// Returned, when set, is told when run r of c has returned (or was
	// cancelled), on the goroutine that ran it, before the runs that
	// follow it start: conformance.Run stops a repetition's shared stdio
	// process once no check left in the repetition can use it.
	Returned func(c *Check, run int)
}

// Result is one check's aggregated outcome over its runs.
type Result = report.CheckResult

// Selected are the checks of the registry that apply to the transport
// and that only (ids or families; empty: all) names, in registry order.
func (r Registry) Selected(transport string, only []string) []*Check {
	var out []*Check
	for _, c := range r.Checks {
		if c.Transports.Has(transport) && wanted(c, only) {
			out = append(out, c)
		}
	}
	return out
}

// Execute runs every check of the registry that applies to the transport,
// MUST checks opts.Runs times, and returns the results in registry order
// whatever the concurrency. Runs of one check may overlap: each run sends
// its own requests, and a check that cannot share the server with others
// is marked Exclusive. An invalid registry, or a selection that names no
// check or family, is an error before any check runs.
func Execute(ctx context.Context, registry Registry, env Env, opts Options) ([]Result, error) {
	if err := Validate(registry); err != nil {
		return nil, err
	}
	if err := registry.Known(opts.Only); err != nil {
		return nil, fmt.Errorf("selecting checks: %w", err)
	}
	if env.Memo == nil {
		env.Memo = &Memo{}
	}
	if env.Observed == nil {
		env.Observed = NewObservations(ctx)
		env.Observed.seed(env.Facts, env.Lists != nil)
	}
	if opts.Runs <= 0 {
		opts.Runs = 5
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.Waits <= 0 {
		opts.Waits = 2 * opts.Concurrency
	}
	selected := registry.Selected(env.Transport, opts.Only)
	outcomes := make([][]Outcome, len(selected))
	// located[i][run]: every finding of that run points at a response value.
	located := make([][]bool, len(selected))
	took := make([]time.Duration, len(selected))
	var mu sync.Mutex
	run := func(i, r int) {
		c := selected[i]
		start := time.Now()
		var o Outcome
		all := false
		if ctx.Err() != nil {
			o = Outcome{Verdict: Errored, Message: "run cancelled: " + ctx.Err().Error()}
		} else {
			o, all = runOnce(ctx, c, env, r)
		}
		mu.Lock()
		outcomes[i][r], located[i][r] = o, all
		took[i] += time.Since(start)
		mu.Unlock()
		if opts.Returned != nil {
			opts.Returned(c, r)
		}
	}
	waits, quick, alone := schedule(selected, env.Transport, opts.Runs)
	for i, c := range selected {
		n := runsOf(c, opts.Runs)
		outcomes[i] = make([]Outcome, n)
		located[i] = make([]bool, n)
	}
	// done[i][r] is closed when run r of selected[i] has returned.
	done := make([][]chan struct{}, len(selected))
	index := map[string]int{}
	for i, c := range selected {
		index[c.ID] = i
		done[i] = make([]chan struct{}, len(outcomes[i]))
		for r := range done[i] {
			done[i][r] = make(chan struct{})
		}
	}
	// after is what run r of selected[i] waits for before it takes a
	// place: the runs of the same repetition of the checks it follows.
	after := func(i, r int) []chan struct{} {
		if opts.Follow == nil || !opts.Follow(selected[i]) {
			return nil
		}
		var out []chan struct{}
		for _, id := range selected[i].Follows.on(env.Transport) {
			if d, ok := index[id]; ok && r < len(done[d]) {
				out = append(out, done[d][r])
			}
		}
		return out
	}
	// Each list is launched in its order by a goroutine of its own. The
	// quick list starts once the waiting runs have taken their first
	// places (or all of them): the waiting runs start first, and the quick
	// ones beside them rather than after most of them have returned. A
	// run that follows others waits for them in a goroutine of its own,
	// holding no place, so the order cannot stall the run, and then takes
	// a place like any other.
	var wg sync.WaitGroup
	launch := func(jobs []job, places int, after0 <-chan struct{}) <-chan struct{} {
		sem := make(chan struct{}, places)
		// begun is closed once the first places runs (or all, if fewer)
		// that follow nothing have begun.
		begun := make(chan struct{})
		first := 0
		for _, j := range jobs {
			if len(after(j.check, j.run)) == 0 {
				first++
			}
		}
		first = min(first, places)
		if first == 0 {
			close(begun)
		}
		var n atomic.Int64
		wg.Add(len(jobs))
		start := func(j job, counted bool) {
			defer wg.Done()
			defer close(done[j.check][j.run])
			defer func() { <-sem }()
			if counted && n.Add(1) == int64(first) {
				close(begun)
			}
			run(j.check, j.run)
		}
		go func() {
			<-after0
			for _, j := range jobs {
				if deps := after(j.check, j.run); len(deps) > 0 {
					go func() {
						for _, d := range deps {
							<-d
						}
						sem <- struct{}{}
						start(j, false)
					}()
					continue
				}
				sem <- struct{}{}
				go start(j, true)
			}
		}()
		return begun
	}
	now := make(chan struct{})
	close(now)
	launch(quick, opts.Concurrency, launch(waits, opts.Waits, now))
	wg.Wait()
	for _, j := range alone {
		run(j.check, j.run)
	}
	results := make([]Result, len(selected))
	allLocated := make([]bool, len(selected))
	for i, c := range selected {
		var worst int
		results[i], worst = aggregate(c, outcomes[i], took[i])
		results[i].FamilyTitle = registry.Title(c.Family())
		allLocated[i] = located[i][worst]
	}
	markRepeats(results, allLocated)
	return results, nil
}

// runsOf is how often c runs: runs times for a MUST check, once otherwise.
func runsOf(c *Check, runs int) int {
	if c.Level == Must {
		return runs
	}
	return 1
}

// job is one run of one selected check.
type job struct{ check, run int }

// schedule sorts the runs of the selected checks, each list in registry
// order (a check's runs together): those that mostly wait, the rest, and
// apart the runs that must have the server to themselves on this
// transport, which run one at a time once the others have returned, so
// that no other run waits on them and nothing they leave behind reaches
// another check.
func schedule(selected []*Check, transport string, runs int) (waits, quick, alone []job) {
	for i, c := range selected {
		for r := range runsOf(c, runs) {
			switch j := (job{i, r}); {
			case c.Exclusive.Has(transport):
				alone = append(alone, j)
			case c.Waits:
				waits = append(waits, j)
			default:
				quick = append(quick, j)
			}
		}
	}
	return waits, quick, alone
}

// aggregate folds a check's runs into one result: the worst outcome is
// shown, and runs that disagree make the check flaky. A check that skipped
// skipped in every run (it does not apply), so it counts once.
// It also returns the index of the run shown.
func aggregate(c *Check, runs []Outcome, took time.Duration) (Result, int) {
	r := Result{ID: c.ID, Level: c.Level, Family: c.Family(), Spec: c.Spec, Doc: c.Doc, Fix: c.Fix, Seed: c.Seed, Runs: len(runs), Counts: map[Verdict]int{}}
	var worst, skip *Outcome
	shown := 0
	for i := range runs {
		r.Counts[runs[i].Verdict]++
		if w := pick(worst, &runs[i]); w != worst {
			worst, shown = w, i
		}
		if runs[i].Verdict == Skipped && skip == nil {
			skip = &runs[i]
		}
	}
	if r.Counts[Skipped] == len(runs) {
		r.Runs, r.Counts = 1, map[Verdict]int{Skipped: 1}
	}
	r.Outcome = *worst
	r.Verdict = worst.Verdict
	if n := r.Counts[Skipped]; n > 0 && n < len(runs) && skip.Message != "" && (worst.Verdict == Passed || worst.Verdict == Noted) {
		// Where the rule applied it held; where it did not, the run
		// says why (server/discover failed: DISC-1's), which the shown
		// pass cannot.
		r.Outcome.Message = fmt.Sprintf("skipped in %d of %d runs (%s); %s", n, len(runs), skip.Message, cmp.Or(worst.Message, c.Doc))
	}
	// Flaky: the server's behaviour judged differently from one run to
	// the next. Runs that errored judged nothing: a check that passed 1
	// of 5 and errored in 4 (its server crashed) is not judged in 4, not
	// flaky.
	judged := len(r.Counts)
	if r.Counts[Errored] > 0 {
		judged--
	}
	r.Flaky = judged > 1
	r.DurationMs = float64(took.Microseconds()) / 1000
	return r, shown
}

// ResultOf is the result of a check that did not run through Execute
// but whose one outcome is known (a run stopped before the checks).
func ResultOf(r Registry, c *Check, o Outcome) Result {
	res, _ := aggregate(c, []Outcome{o}, 0)
	res.FamilyTitle = r.Title(c.Family())
	return res
}

func wanted(c *Check, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if o == c.ID || o == c.Family() {
			return true
		}
	}
	return false
}

func pick(cur, o *Outcome) *Outcome {
	if cur == nil || severity(o.Verdict) > severity(cur.Verdict) {
		return o
	}
	return cur
}

// runOnce runs a check once; located says that every finding of the run
// points at a response value (see markRepeats).
func runOnce(ctx context.Context, c *Check, env Env, run int) (out Outcome, located bool) {
	p := NewPass(ctx, c, env)
	p.Run = run
	defer func() {
		if v := recover(); v != nil {
			// A check must never take the run down with it; a panic is
			// a harness bug, reported as such with its stack.
			out, located = Outcome{Verdict: Errored, Message: fmt.Sprintf("check panicked: %v", v), Details: []string{string(debug.Stack())}}, false
		}
	}()
	out = p.Outcome(c.Run(p))
	if err := cutShort(ctx); err != nil && (out.Verdict == Failed || out.Verdict == Warned) {
		// The run's deadline passed or it was cancelled while this run
		// was in flight: the harness then stops the server's processes
		// and abandons requests, and a check sees that as a server that
		// exited or went silent. What it found cannot be told apart from
		// what the harness did, so it is not the server's finding.
		// The renderers group runs cut short for one reason by the text
		// before "; what it saw then" (render.errorReason).
		found := out.Message
		out = Outcome{Verdict: Errored, Message: "run cancelled while it ran: " + err.Error() + "; what it saw then may be the harness stopping the server: " + found}
	}
	return out, p.unlocated == 0 && out.Verdict != Errored
}

// deadlineSlack is how close to the run's deadline a run that returns
// counts as cut short by it: a wait set to end at the deadline (a
// request's timeout) may fire a little before the context's own timer
// does, and the run then returns a timeout while ctx.Err() is still nil
// (OTEL-1 failed so in one of three runs with --timeout 400ms).
const deadlineSlack = 100 * time.Millisecond

// cutShort is why the run's context ended, or is about to: nil while it
// has more than deadlineSlack left.
func cutShort(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= deadlineSlack {
		return context.DeadlineExceeded
	}
	return nil
}

// GatherFacts reads what checks share: the discover result, and every list
// the server serves. Errors are kept in Facts for the checks to judge.
func GatherFacts(ctx context.Context, c *mcpclient.Client) *Facts {
	info := c.Info()
	f := &Facts{Discover: info.DiscoverResult, Capabilities: map[string]json.RawMessage{}}
	// A gateway's refusal of the facts' walk (a 429 or 503 met by
	// chance) is asked again, once: every check of the run reads these
	// facts, and each would skip as if the server served no tools.
	again := func(err error) bool {
		if !transport.GatewayRefused(err) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(gatewayPause):
			return true
		}
	}
	if info.Discover != nil {
		f.DiscoverRaw = info.Discover.Result
	}
	if f.Discover == nil {
		// Connected without a usable probe (a server checked as modern
		// although its discover was off): ask once more for the facts.
		resp, err := c.Do(ctx, "server/discover", nil)
		if again(err) {
			resp, err = c.Do(ctx, "server/discover", nil)
		}
		if err == nil && resp.Error == nil {
			var dr mcpclient.DiscoverResult
			if json.Unmarshal(resp.Result, &dr) == nil {
				f.Discover, f.DiscoverRaw = &dr, resp.Result
			}
		}
		f.saw(observeKey{method: "server/discover", params: "null"}, observed{resp: resp, err: err})
	} else if d := info.Discover; d != nil && (d.Result != nil || d.Error != nil) {
		// The probe's server/discover, sent on this client as Pass.Do
		// sends it (the same params, _meta and headers; only its id and
		// its wait differ): it is repetition 0's.
		f.saw(observeKey{method: "server/discover", params: "null"}, observed{resp: d})
	}
	caps := info.Capabilities
	if f.Discover != nil {
		caps = f.Discover.Capabilities
	}
	_ = json.Unmarshal(caps, &f.Capabilities)
	tools, err := c.ListTools(ctx)
	if again(err) {
		tools, err = c.ListTools(ctx)
	}
	f.ToolsErr = err
	if tools != nil {
		f.Tools, f.Dropped = tools.Tools, tools.Dropped
		f.ToolsCut = tools.List != nil && tools.List.Truncated
		f.saw(observeKey{method: "tools/list", list: toolsTyped}, observed{tools: tools, err: err})
	}
	var lr *mcpclient.ListResult
	f.Resources, lr, f.ResourcesErr = c.ListResources(ctx)
	if again(f.ResourcesErr) {
		f.Resources, lr, f.ResourcesErr = c.ListResources(ctx)
	}
	f.sawList("resources/list", "resources", lr, f.Resources == nil, f.ResourcesErr)
	f.Templates, lr, f.TemplatesErr = c.ListResourceTemplates(ctx)
	if again(f.TemplatesErr) {
		f.Templates, lr, f.TemplatesErr = c.ListResourceTemplates(ctx)
	}
	f.sawList("resources/templates/list", "resourceTemplates", lr, f.Templates == nil, f.TemplatesErr)
	f.Prompts, lr, f.PromptsErr = c.ListPrompts(ctx)
	if again(f.PromptsErr) {
		f.Prompts, lr, f.PromptsErr = c.ListPrompts(ctx)
	}
	f.sawList("prompts/list", "prompts", lr, f.Prompts == nil, f.PromptsErr)
	return f
}

// Refused is the error of a list the facts could not read because a
// gateway refused it (after asking again), nil when none.
func (f *Facts) Refused() error {
	for _, err := range []error{f.ToolsErr, f.ResourcesErr, f.TemplatesErr, f.PromptsErr} {
		if transport.GatewayRefused(err) {
			return err
		}
	}
	return nil
}

// gatewayPause is how long the facts' walk waits before asking again
// after a gateway's refusal.
const gatewayPause = 200 * time.Millisecond

// sawList keeps a typed list's walk as Pass.List would have observed it:
// the walk's own error (failed, from a list that got no entries decoded),
// not an entry that does not decode, which Client.List does not report.
func (f *Facts) sawList(method, key string, lr *mcpclient.ListResult, failed bool, err error) {
	if lr == nil {
		return
	}
	if !failed {
		err = nil
	}
	f.saw(observeKey{method: method, list: key}, observed{list: lr, err: err})
}

func (f *Facts) saw(k observeKey, v observed) { f.seen = append(f.seen, seenFact{k, v}) }

// Took is how long the slowest answer to a request of method took among
// those GatherFacts read (every page of a list; 0 when it read none).
func (f *Facts) Took(method string) time.Duration {
	var d time.Duration
	took := func(r *mcpclient.Response) {
		if r != nil && r.Exchange != nil {
			d = max(d, r.Exchange.Elapsed)
		}
	}
	for _, s := range f.seen {
		if s.key.method != method {
			continue
		}
		took(s.v.resp)
		list := s.v.list
		if s.v.tools != nil {
			list = s.v.tools.List
		}
		if list != nil {
			for _, pg := range list.Pages {
				took(pg.Response)
			}
		}
	}
	return d
}
