package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/target"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Target says how to reach the server under test; package target opens
// it, for this layer as for every other.
type Target = target.Target

// Options configure a conformance run. The zero value is the default.
type Options struct {
	check.Options
	// CallTools allows calling these tools although they are not
	// annotated readOnlyHint: true.
	CallTools []string
	// RequestTimeout and ProbeTimeout are passed to the client.
	RequestTimeout time.Duration
	ProbeTimeout   time.Duration
	// Observer, when set, is passed to every client the run connects
	// (mcpclient.Config.Observer), so Layer 3 records the latency of each
	// request by method (telemetry.Recorder.ObserveMCP). It only watches:
	// no check reads it.
	Observer func(mcpclient.Call)
	// Listed, when set, is called once with the tools the server listed
	// as soon as the run has them, before any check runs, so that the
	// caller can work on them beside the checks (the pipeline counts their
	// tokens: a tenth of a second for 1,000 tools, no longer after the
	// last check). It must return at once. It gets no tools when the
	// server listed none or tools/list failed, and is not called when no
	// check runs (a legacy server, one answering under wrong ids).
	Listed func([]mcpclient.Tool)
	// Stops, when set, is where the run's stdio processes are stopped
	// beside the checks done with them (transport.CloseAside); else a set
	// of the run's own. Either way Run returns once they are gone. The
	// pipeline passes the one of its whole run: what Layer 0 found about
	// how the server's processes end applies to those of Layers 1 and 2.
	Stops *transport.Stops
	// plan, when set, replaces the plan Run chooses from a start's cost
	// (quietPlan): the tests compare sharing with a process of each
	// check's own.
	plan *quietPlan
	// machineCPU, when set, replaces transport.MachineCPU: the tests
	// choose how busy the machine looks while the run's own process
	// starts.
	machineCPU func() (time.Duration, bool)
}

// Verdicts of a whole run.
const (
	VerdictPass = report.ConformancePass // every MUST passed N/N
	VerdictFail = report.ConformanceFail // a MUST failed at least once
	// VerdictIncomplete: no MUST failed, one errored (not judged) in a run.
	VerdictIncomplete = report.ConformanceIncomplete
	VerdictLegacy     = report.ConformanceLegacy // the server does not speak 2026-07-28
)

// Report is Layer 0's result. It is report data, read without this
// package, so package report owns it.
type Report = report.Conformance

// Run connects to the server, decides its era, and runs every check that
// applies. An error means the harness could not test the server at all
// (unreachable, not an MCP server); a non-conformant server is a Report
// with verdict fail. The tools are those the server listed (none for a
// legacy server): the whole-run report hashes them into its tool-surface
// hash, and they are not part of the Layer 0 JSON.
func Run(ctx context.Context, target Target, opts Options) (*Report, []mcpclient.Tool, error) {
	start := time.Now()
	if opts.Runs <= 0 {
		opts.Runs = 5
	}
	opts.CallTools = allowedCallTools(opts.CallTools)
	// Before the server starts: a broken registry or a selection that
	// names nothing is the caller's error, not a finding about the server.
	reg := registry()
	if err := check.Validate(reg); err != nil {
		return nil, nil, err
	}
	if err := reg.Known(opts.Only); err != nil {
		return nil, nil, &SelectionError{fmt.Errorf("selecting checks: %w", err)}
	}
	selected := reg.Selected(target.Kind(), opts.Only)
	if len(opts.Only) > 0 && len(selected) == 0 {
		// A run that checks nothing must not read as a pass.
		return nil, nil, &SelectionError{noneSelected(reg, opts.Only, target.Kind())}
	}
	// A process a check is done with is stopped beside the check
	// (CloseAside), not by it: a server that needs SIGTERM, or takes its
	// time to exit on EOF, held each check that closed one for the 2 s
	// grace (the bundled server ignoring EOF: 10.3 s a run). The run
	// returns once every process it started is gone.
	stops := cmp.Or(opts.Stops, &transport.Stops{})
	defer stops.Wait()
	aside := func(t transport.Transport) {
		if st, ok := t.(*transport.StdioTransport); ok {
			st.CloseAside(stops)
		}
	}
	ccfg := mcpclient.Config{RequestTimeout: opts.RequestTimeout, ProbeTimeout: opts.ProbeTimeout, Trace: mcpclient.NewTraceFor(ctx)}
	if opts.Observer != nil {
		ccfg.Observer = func(c mcpclient.Call) {
			c.Probe = true
			opts.Observer(c)
		}
	}
	// The monitors watch every exchange of the run, the probe's and every
	// Fresh connection's included.
	monitors := check.NewMonitors(reg, target.Kind(), opts.Only)
	watch := func(t transport.Transport) {
		if w, ok := t.(transport.Watchable); ok {
			w.Watch(monitors.Watcher())
		}
	}
	machineCPU := opts.machineCPU
	if machineCPU == nil {
		machineCPU = transport.MachineCPU
	}
	busyBefore, busyKnown := machineCPU()
	opened := time.Now()
	tr, err := target.Open(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	watch(tr)
	client, err := mcpclient.Connect(ctx, tr, ccfg)
	// What a start costs (spawn and probe on stdio): how many quiet
	// processes a repetition opens, and how many waiting runs are in
	// flight, depend on it (quiet.go).
	var startCPU time.Duration
	if st, ok := tr.(*transport.StdioTransport); ok {
		startCPU, _ = st.CPU()
	}
	firstStart := time.Since(opened)
	// What the whole machine spent meanwhile: a start that waits on a
	// daemon's processes uses none of its own group's CPU (startsAtOnce).
	busy := time.Duration(-1)
	if busyAfter, ok := machineCPU(); ok && busyKnown {
		busy = busyAfter - busyBefore
	}
	dear := dearStart(target.Kind(), firstStart, startCPU)
	probeWait := opts.ProbeTimeout
	if probeWait <= 0 {
		probeWait = mcpclient.DefaultProbeTimeout
	}
	silence := freshSilence(probeWait, firstStart)
	if transport.KindOf(err) == transport.KindBadID && probeWrongID(client) {
		// A server that answers with ids other than the requests' is
		// reachable and non-conformant: a finding (RPC-1), not a server
		// that could not be tested.
		defer client.Close()
		return wrongIDReport(reg, target, client, opts, err, start), nil, nil
	}
	var fallbackNote string
	var firstProbe []mcpclient.ProbeStep
	if err != nil {
		tr.Close()
		// A server that answered the probe with a JSON-RPC error and then
		// rejected initialize too speaks JSON-RPC but is not legacy: most
		// likely a modern server without (a usable) server/discover, which
		// DISC-1 and DISC-3 should report rather than the run dying.
		if !errors.Is(err, mcpclient.ErrInitializeRejected) {
			return nil, nil, err
		}
		firstProbe = client.Info().Probe
		fallbackNote = "the server answered neither server/discover usefully nor initialize (" + err.Error() + "); checked as a modern server"
		if tr, err = target.Open(ctx, false); err != nil {
			return nil, nil, err
		}
		watch(tr)
		forced := ccfg
		forced.ForceEra = mcpclient.EraModern
		client, _ = mcpclient.Connect(ctx, tr, forced)
	}
	closeOwn := sync.OnceFunc(func() { client.Close() })
	defer closeOwn()
	aside(client.Transport())
	info := client.Info()
	rep := &Report{
		Target: target.Describe(), Transport: target.Kind(), Era: info.Era, ProtocolVersion: info.ProtocolVersion,
		ServerInfo: info.ServerInfo, Runs: opts.Runs, CallTools: opts.CallTools, Checks: []check.Result{}, Unobservable: Unobservable(), Deprecated: []DeprecatedUse{},
		Probe: append(append([]mcpclient.ProbeStep{}, firstProbe...), info.Probe...), Notes: append([]string{}, info.Notes...),
	}
	if fallbackNote != "" {
		rep.Notes = append(rep.Notes, fallbackNote)
	}
	if info.Era == mcpclient.EraLegacy {
		rep.Verdict = VerdictLegacy
		rep.Legacy = legacyReport(ctx, client, target, ccfg)
		rep.DurationMs = ms(time.Since(start))
		return rep, nil, nil
	}
	want := max(2, runtime.NumCPU())
	if target.Kind() == "stdio" {
		want = startsAtOnce(runtime.NumCPU(), firstStart, busy)
	}
	places := newStartPlaces(runtime.NumCPU(), want, machineCPU)
	spawn := places.spawn
	// openIn starts a new connection and connects it with cfg; open does
	// so in one of the places of spawn. Starting stdio processes is
	// bounded by what the cores can take (startsAtOnce, startPlaces): a
	// runtime such as Node takes a few hundred ms of CPU to start, and
	// starting many at once makes every one of them slower. Only the start
	// (spawn and probe) is bounded, not the use.
	// The fresh pool takes its places itself (freshPool.startOne).
	openIn := func(ctx context.Context, cfg mcpclient.Config) (*mcpclient.Client, error) {
		done := places.measure()
		t, err := target.Open(ctx, true)
		if err != nil {
			done(false)
			return nil, err
		}
		watch(t)
		aside(t)
		c, err := mcpclient.Connect(ctx, t, cfg)
		done(err == nil)
		return c, err
	}
	open := func(ctx context.Context, cfg mcpclient.Config) (*mcpclient.Client, error) {
		if target.Kind() == "stdio" {
			release, err := startSlot(ctx, spawn, nil)
			if err != nil {
				return nil, err
			}
			defer release()
		}
		return openIn(ctx, cfg)
	}
	// The legacy handshake goes out as a 2025-11-25 client sends it: no
	// _meta at all, so no trace context either.
	legacyCfg := ccfg
	legacyCfg.ForceEra, legacyCfg.Trace = mcpclient.EraLegacy, nil
	freshLegacy := func(ctx context.Context) (*mcpclient.Client, func(), error) {
		// Waited for in full, unlike the pool's processes: one process,
		// and what it answers (or not) to initialize is what META-1 and
		// REM-2 judge, so a start slower than the first (docker run -i
		// looks idle while the daemon works) must not pass for silence.
		c, err := open(ctx, legacyCfg)
		if c == nil {
			return nil, nil, err
		}
		return c, func() { c.Close() }, err
	}
	// On stdio the legacy side is observed as soon as the run's own
	// process is up, before any repetition asks for one, not when META-1
	// or REM-2 first asks: a start that waits for a core then held up the
	// first repetition's META-1 and every REM-2 behind the others (a Node
	// server: its start came last, at 3.2 s of a 3.9 s run). Not beside
	// the run's own start: that one stays alone (two cold `npx -y` or `go
	// run` starts at once share a cache, and dearStart times it).
	memo := &check.Memo{}
	if target.Kind() == "stdio" && slices.ContainsFunc(selected, func(c *check.Check) bool { return c == META1 || c == REM2 }) {
		// legacySideOf's entry: a check that asks waits for this.
		defer beside(ctx, memo, legacySideKey{}, func(ctx context.Context) any {
			return observeLegacySide(ctx, check.Env{FreshLegacy: freshLegacy})
		})()
	}
	// A new HTTP connection speaks as the shared client does, without a
	// server/discover of its own: the server keeps no state per
	// connection, so its discover answer is the one the run already has
	// (the checks that judge a first message do so on stdio). fresh: a
	// new connection for every request (Env.Fresh's); else one kept alive.
	openTwin := func(ctx context.Context, fresh bool) (*mcpclient.Client, error) {
		t, err := target.Open(ctx, fresh)
		if err != nil {
			return nil, err
		}
		watch(t)
		return client.Twin(t), nil
	}
	// On stdio the fresh processes are started ahead, as many as may
	// start at once, so a check finds one ready instead of waiting for a
	// start (a Node server takes a few hundred ms).
	//
	// Not when a start is dear: then the starts keep the cores busy
	// anyway, so one started ahead saves little wait, and the two still
	// ahead when the last check has taken its process are 1-2 s of CPU
	// (two of a Node server's 41 starts) nothing uses.
	ahead := cap(spawn)
	if dear {
		ahead = 0
	}
	freshCfg := ccfg
	freshCfg.KnownModern = true
	freshCfg.KeepModern = fallbackNote != ""
	pool := newFreshPool(ctx, ahead, spawn, func(ctx context.Context) (*mcpclient.Client, error) {
		return openIn(transport.WithIdleSilence(ctx, silence), freshCfg)
	})
	defer pool.close()
	plan := planFor(dear)
	if opts.plan != nil {
		plan = *opts.plan
	}
	memo.Do(quietPlanKey{}, func() any { return plan })
	env := check.Env{
		Client: client, Transport: target.Kind(), CallTools: map[string]bool{}, Memo: memo,
		Fresh: func(ctx context.Context) (*mcpclient.Client, func(), error) {
			var c *mcpclient.Client
			var err error
			if target.Kind() == "stdio" {
				c, err = pool.take(ctx)
			} else {
				c, err = openTwin(ctx, true)
			}
			if err != nil {
				if c != nil {
					c.Close()
				}
				return nil, nil, err
			}
			return c, func() { c.Close() }, nil
		},
		FreshLegacy: freshLegacy,
	}
	for _, n := range opts.CallTools {
		env.CallTools[n] = true
	}
	if target.Kind() == "http" {
		// One connection per repetition for its lists (Env.Lists), opened
		// when first asked for, kept alive from one page and list to the
		// next, and closed when the run ends. (A connection per request
		// made the TS SDK's everything server accept 60 connections a
		// run instead of 49, 1-2 ms of its CPU each.)
		var mu sync.Mutex
		var opened []*mcpclient.Client
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range opened {
				c.Close()
			}
		}()
		env.Lists = func(run int) (*mcpclient.Client, error) {
			v, _ := memo.Do(repListsKey{run}, func() any {
				c, err := openTwin(ctx, false)
				if c != nil {
					mu.Lock()
					opened = append(opened, c)
					mu.Unlock()
				}
				return repConn{c, err}
			}).(repConn)
			return v.c, v.err
		}
	}
	switch t := tr.(type) {
	case *transport.HTTPTransport:
		env.HTTP = t
	case *transport.StdioTransport:
		env.Stdio = t
	}
	env.Facts = check.GatherFacts(ctx, client)
	if err := env.Facts.Refused(); err != nil {
		// Every check reads these lists: without them each would skip
		// or judge a server that lists nothing.
		return nil, nil, fmt.Errorf("listing what every check reads: %w (a proxy or rate limiter answered in the server's stead, twice: run again, or test the server without it)", err)
	}
	rep.Notes = append(rep.Notes, unknownCallToolNotes(opts.CallTools, env.Facts)...)
	pool.setAfterProbe(afterProbeBounds(env.Facts, silence, env.Facts.Took))
	tools := env.Facts.Tools
	if opts.Listed != nil {
		opts.Listed(tools)
	}
	if poisonWanted(selected) {
		// The POISON checks come last, alone: their scan of this listing
		// is made now, beside the other checks (poisonFirst's entry).
		defer beside(ctx, memo, poisonFirstKey{}, func(context.Context) any { return poisonScanFirst(env.Facts) })()
	}
	rep.Deprecated = deprecatedUses(env.Facts)
	// The SUB checks' listens of a repetition share one process on stdio,
	// stopped when the repetition's last SUB check returned; closeAll stops
	// what a check that never ran (a cancelled run) left.
	subs := subCount(memo, target.Kind(), selected, opts.Runs)
	// The emitter search is made on the first quiet process opened when a
	// selected check needs it, not on a process of its own.
	progWant(memo, target.Kind(), selected)
	// REM-2 and REM-3's exchange opens each repetition's quiet process
	// when one of them is selected.
	remWant(memo, target.Kind(), selected)
	// A check of handChain hands its process on only to one that runs.
	handWant(memo, selected, opts.Runs, plan.follows)
	if dear && opts.Waits <= 0 {
		// Starts that cost hundreds of ms of CPU each keep the cores
		// busy already: more waiting runs in flight than quick ones would
		// mostly mean more live server processes (not measured apart).
		opts.Waits = cmp.Or(opts.Concurrency, check.DefaultConcurrency)
	}
	// The order Check.Follows asks for is kept where processes are
	// shared (quietPlan).
	opts.Follow = plan.follows
	users := quietCount(target.Kind(), selected, opts.Runs)
	if users != nil {
		next := opts.Returned
		opts.Returned = func(c *check.Check, run int) {
			users.returned(memo, c, run)
			if next != nil {
				next(c, run)
			}
		}
	}
	rep.Checks, err = check.Execute(ctx, reg, env, opts.Options)
	subs.closeAll()
	if env.Stdio != nil && err == nil {
		rep.LostProcess = lostProcess(ctx, env.Stdio, func(ctx context.Context) (*mcpclient.Client, error) { return open(ctx, freshCfg) })
	}
	// Read before the run's own process is stopped: a line it writes on
	// its way out ends a silence.
	var silenced *transport.Silence
	if env.Stdio != nil {
		silenced = env.Stdio.Silenced()
	}
	// What every process writes on its way out reaches the monitors
	// before they are read, the run's own and those started ahead that
	// no check took included; all stop at once.
	closeOwn()
	pool.close()
	stops.Wait()
	if err != nil {
		return nil, nil, err
	}
	rep.LegacySide = reportedLegacySide(env)
	if rep.LegacySide != nil && rep.LegacySide.DualEra {
		rep.Notes = append(rep.Notes, "dual-era: "+rep.LegacySide.Observed+"; REM-2, REM-4 and META-1 apply the rules for dual-era servers")
	}
	monitors.Apply(rep.Checks)
	rep.Verdict = VerdictPass
	for _, r := range rep.Checks {
		switch {
		case r.Level != check.Must:
		case r.FailedARun():
			rep.Verdict = VerdictFail
		case r.Unjudged() && rep.Verdict == VerdictPass:
			rep.Verdict = VerdictIncomplete
		}
	}
	rep.Notes = append(rep.Notes, client.Info().Notes[len(info.Notes):]...)
	if rep.LostProcess != nil {
		rep.Notes = append(rep.Notes, lostNote(rep.LostProcess))
	}
	if silenced != nil {
		// Said once here; the checks that came later failed after a
		// second with the same cause instead of each waiting it out.
		rep.Notes = append(rep.Notes, "the server stopped answering on the shared process: "+silenced.String()+"; later requests on it waited 1 s each for it to revive, not their deadline")
	}
	rep.DurationMs = ms(time.Since(start))
	return rep, tools, nil
}

// beside begins key's entry in memo, computed by compute, in the
// background, and returns what stops it and waits for it: work a check will
// ask for, begun before any check asks. A panic in compute is recovered, so
// that it cannot take the run down from outside a check: the entry is then
// nil, and the check that asks makes the work again in its own run, which
// reports the panic (check.Execute).
func beside(ctx context.Context, memo *check.Memo, key any, compute func(context.Context) any) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = recover() }()
		memo.Do(key, func() any { return compute(ctx) })
	}()
	return func() {
		// Whatever the run did with it, nothing outlives the run.
		cancel()
		<-done
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// DeprecatedUse is a feature the server uses that 2026-07-28 deprecates
// (deprecated.mdx): an info finding with the earliest removal.
type DeprecatedUse = report.DeprecatedUse

// deprecatedUses lists what the discover result shows of deprecated
// features. Sampling and Roots show only when a tool asks for them through
// MRTR, which the harness sees only for tools it may call; the MRTR checks
// report those.
func deprecatedUses(f *check.Facts) []DeprecatedUse {
	out := []DeprecatedUse{}
	if f.Has("logging") {
		out = append(out, DeprecatedUse{
			Feature:         "Logging (SEP-2577)",
			Evidence:        "capabilities.logging is declared",
			Migration:       "log to stderr on stdio; use OpenTelemetry for observability",
			EarliestRemoval: "first revision released on or after 2027-07-28",
		})
	}
	return out
}

// wrongIDReport is the report on a server whose answer to the probe
// carried another id than the request's: RPC-1 failed with that exchange
// as evidence. No other check is run, since no answer of such a server
// can be matched to its request; each says so.
func wrongIDReport(reg check.Registry, target Target, client *mcpclient.Client, opts Options, err error, start time.Time) *Report {
	info := client.Info()
	rep := &Report{
		Target: target.Describe(), Transport: target.Kind(), Era: mcpclient.EraModern, ProtocolVersion: info.ProtocolVersion,
		Runs: opts.Runs, CallTools: opts.CallTools, Checks: []check.Result{}, Unobservable: Unobservable(), Deprecated: []DeprecatedUse{},
		Probe: append([]mcpclient.ProbeStep{}, info.Probe...), Notes: append([]string{}, info.Notes...),
		Verdict: VerdictFail,
	}
	why := err.Error()
	var te *transport.Error
	if errors.As(err, &te) && te.Err != nil {
		why = te.Err.Error()
	}
	failed := check.Outcome{Verdict: check.Failed, Message: "server/discover was answered under another id than the request's (" + why + "): a response MUST carry its request's id with its JSON type"}
	if ev := check.FromResponse(info.Discover); ev != nil {
		failed.Evidence = []check.Evidence{*ev}
	}
	skipped := check.Outcome{Verdict: check.Skipped, Message: "not run: the server answers under ids other than the requests' (RPC-1), so no answer can be matched to its request"}
	rep.Notes = append(rep.Notes, "the server answered the probe under another id than the request's; only RPC-1 is reported (fix it and run again)")
	sawRPC1 := false
	for _, c := range reg.Selected(target.Kind(), opts.Only) {
		o := skipped
		if c.ID == RPC1.ID {
			o, sawRPC1 = failed, true
		}
		rep.Checks = append(rep.Checks, check.ResultOf(reg, c, o))
	}
	if !sawRPC1 {
		rep.Checks = append([]check.Result{check.ResultOf(reg, RPC1, failed)}, rep.Checks...)
	}
	rep.DurationMs = ms(time.Since(start))
	return rep
}

// probeWrongID reports whether the probe's server/discover got an answer
// under another id than its own.
func probeWrongID(c *mcpclient.Client) bool {
	d := c.Info().Discover
	return d != nil && d.Exchange != nil && d.Exchange.Response != nil && !jsonrpc.SameID(d.Exchange.Response.ID, d.ID)
}

// repListsKey names the connection repetition run walks its lists on
// (check.Env.Lists) in the run's Memo: on HTTP that walk is also the
// fresh connection's that TOOL-2, RSRC-1 and PROMPT-1 judge.
type repListsKey struct{ run int }

type repConn struct {
	c   *mcpclient.Client
	err error
}

// SelectionError is a choice of checks (--only) that names nothing, or
// nothing that runs over the target's transport: the caller's mistake,
// found before the server is started.
type SelectionError struct{ Err error }

func (e *SelectionError) Error() string { return e.Err.Error() }
func (e *SelectionError) Unwrap() error { return e.Err }

// noneSelected says why only selects no check over transport, with one
// it selects over the other.
func noneSelected(reg check.Registry, only []string, transport string) error {
	label := map[string]string{"http": "Streamable HTTP", "stdio": "stdio"}
	other := "http"
	if transport == "http" {
		other = "stdio"
	}
	if sel := reg.Selected(other, only); len(sel) > 0 {
		return fmt.Errorf("--only %s selects no check that runs over %s: %s, for one, runs over %s only (leave it out, or test the server over %s)", strings.Join(only, ","), label[transport], sel[0].ID, label[other], label[other])
	}
	return fmt.Errorf("--only %s selects no check that runs over %s", strings.Join(only, ","), label[transport])
}
