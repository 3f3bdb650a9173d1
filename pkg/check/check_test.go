package check

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

func pass(level Level) *Pass {
	return NewPass(context.Background(), &Check{ID: "X-1", Level: level}, Env{})
}

func TestWorstVerdictWinsAndKeepsDetails(t *testing.T) {
	p := pass(Must)
	p.Passf(nil, "fine")
	p.Warnf(&Evidence{Request: "w"}, "odd")
	p.Failf(&Evidence{Request: "f"}, "broken %d", 1)
	p.Failf(nil, "broken %d", 2)
	p.Passf(nil, "fine again")
	o := p.Outcome(nil)
	if o.Verdict != Failed || o.Message != "broken 1" {
		t.Fatalf("outcome %+v", o)
	}
	if strings.Join(o.Details, "|") != "odd|broken 2" {
		t.Fatalf("details %q", o.Details)
	}
	if len(o.Evidence) != 2 {
		t.Fatalf("evidence %+v", o.Evidence)
	}
}

func TestFailOnShouldIsAWarningAndSkipIsFinalOnlyAlone(t *testing.T) {
	p := pass(Should)
	p.Failf(nil, "not ideal")
	if o := p.Outcome(nil); o.Verdict != Warned {
		t.Fatalf("a SHOULD failure is a warning, got %s", o.Verdict)
	}
	p = pass(Must)
	p.Skipf("nothing fits")
	p.Failf(nil, "but then this")
	if o := p.Outcome(nil); o.Verdict != Failed {
		t.Fatalf("a failure after a skip must count, got %s", o.Verdict)
	}
	p = pass(Must)
	if o := p.Outcome(errors.New("boom")); o.Verdict != Errored || o.Message != "boom" {
		t.Fatalf("a returned error is a harness error, got %+v", o)
	}
	if o := pass(Must).Outcome(nil); o.Verdict != Passed {
		t.Fatalf("nothing reported is a pass, got %s", o.Verdict)
	}
}

func TestValidateRegistry(t *testing.T) {
	ok := &Check{ID: "A-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(*Pass) error { return nil }}
	fams := []Family{{ID: "A", Title: "a family"}}
	if err := Validate(Registry{Families: fams, Checks: []*Check{ok}}); err != nil {
		t.Fatal(err)
	}
	stray := &Check{ID: "B-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: ok.Run}
	bad := Registry{
		Families: []Family{fams[0], fams[0], {ID: "c-", Title: "x"}, {ID: "D"}},
		Checks:   []*Check{ok, ok, {ID: "bad", Level: "maybe", Doc: "two\nlines"}, stray, nil, {ID: "A-2", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: ok.Run, Monitor: &Monitor{Doc: "watches"}}},
	}
	err := Validate(bad)
	for _, want := range []string{"a monitor needs a watch function", "duplicate id", "id must look like", "level must be", "no transports", "one-line doc", "no run function",
		"duplicate family", "must look like DISC", "one-line title", "unknown family B", "check #4: nil"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
}

func TestExecuteAggregatesRunsInOrderAndFlagsFlaky(t *testing.T) {
	n := 0
	flaky := &Check{ID: "F-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Exclusive: Both, Run: func(p *Pass) error {
		n++ // Exclusive: runs never overlap, so this needs no lock
		if n == 3 {
			p.Failf(nil, "third run failed")
		}
		return nil
	}}
	slow := &Check{ID: "S-1", Level: Should, Transports: Stdio, Spec: "s", Doc: "d", Run: func(p *Pass) error {
		time.Sleep(10 * time.Millisecond)
		return nil
	}}
	panics := &Check{ID: "P-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error { panic("oops") }}
	skips := &Check{ID: "K-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error { p.Skipf("n/a"); return nil }}
	httpOnly := &Check{ID: "H-1", Level: Must, Transports: HTTP, Spec: "s", Doc: "d", Run: func(p *Pass) error { return nil }}
	sometimes := &Check{ID: "M-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Exclusive: Both, Run: func(p *Pass) error {
		if p.Run%2 == 1 {
			p.Skipf("no list has two pages")
			return nil
		}
		p.Passf(nil, "pages agree")
		return nil
	}}
	reg := Registry{Families: []Family{{"S", "s"}, {"F", "f"}, {"P", "p"}, {"K", "k"}, {"H", "h"}, {"M", "m"}}, Checks: []*Check{slow, flaky, panics, skips, httpOnly, sometimes}}
	res, err := Execute(context.Background(), reg, Env{Transport: "stdio"}, Options{Runs: 5})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range res {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "S-1,F-1,P-1,K-1,M-1" {
		t.Fatalf("order/selection %v", ids)
	}
	if r := res[0]; r.Runs != 1 || r.Verdict != Passed || r.FamilyTitle != "s" {
		t.Errorf("a SHOULD check runs once: %+v", r)
	}
	if r := res[1]; !r.Flaky || r.Verdict != Failed || r.Counts[Passed] != 4 || r.Counts[Failed] != 1 || r.Passes() != 4 {
		t.Errorf("flaky check: %+v", r)
	}
	if r := res[2]; r.Verdict != Errored || !strings.Contains(r.Outcome.Message, "panicked") {
		t.Errorf("a panic is a harness error: %+v", r)
	}
	if r := res[3]; r.Verdict != Skipped || r.Runs != 1 || r.Flaky {
		t.Errorf("a skipping check counts once: %+v", r)
	}
	// Skipped in some runs: the pass is shown, and why the others skipped.
	if r := res[4]; r.Verdict != Passed || r.Counts[Passed] != 3 || r.Counts[Skipped] != 2 || r.Held() != 5 || r.Outcome.Message != "skipped in 2 of 5 runs (no list has two pages); pages agree" {
		t.Errorf("a check that skipped in some runs: %+v", r)
	}
}

// Nothing runs from an invalid registry or for a selection naming nothing.
func TestExecuteRefusesBeforeRunning(t *testing.T) {
	ran := false
	c := &Check{ID: "A-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(*Pass) error { ran = true; return nil }}
	if _, err := Execute(context.Background(), Registry{Checks: []*Check{c}}, Env{Transport: "stdio"}, Options{}); err == nil || !strings.Contains(err.Error(), "unknown family") {
		t.Errorf("a check of no family: %v", err)
	}
	reg := Registry{Families: []Family{{"A", "a"}}, Checks: []*Check{c}}
	if _, err := Execute(context.Background(), reg, Env{Transport: "stdio"}, Options{Only: []string{"A-2"}}); err == nil || !strings.Contains(err.Error(), `"A-2"`) {
		t.Errorf("an unknown selection: %v", err)
	}
	if ran {
		t.Fatal("a check ran although the run was refused")
	}
	if err := reg.Known([]string{"A", "A-1"}); err != nil {
		t.Error(err)
	}
}

// Checks that ask a Memo for one key share one computation.
func TestMemoComputesOnce(t *testing.T) {
	type key struct{}
	var m Memo
	var calls atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v := m.Do(key{}, func() any { calls.Add(1); time.Sleep(5 * time.Millisecond); return 42 }); v != 42 {
				t.Errorf("got %v", v)
			}
		}()
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("computed %d times", calls.Load())
	}
}

// An info rule binds nothing: whatever it reports is a note (verdict
// info), never a warning or a failure, and it still counts as a run that
// did not fail.
func TestInfoFindingsAreNotesNeverWarnings(t *testing.T) {
	for name, report := range map[string]func(p *Pass){
		"Warnf": func(p *Pass) { p.Warnf(nil, "odd") },
		"Failf": func(p *Pass) { p.Failf(nil, "odd") },
	} {
		p := pass(Info)
		p.Passf(nil, "fine")
		report(p)
		if o := p.Outcome(nil); o.Verdict != Noted || o.Message != "odd" {
			t.Errorf("%s on an info check: %+v, want a note", name, o)
		}
	}
	c := &Check{ID: "A-1", Level: Info, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error { p.Warnf(nil, "odd"); return nil }}
	res, err := Execute(context.Background(), Registry{Families: []Family{{ID: "A", Title: "a"}}, Checks: []*Check{c}}, Env{Transport: "stdio"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Verdict != Noted || r.Counts[Warned] != 0 || r.Passes() != r.Runs {
		t.Fatalf("an info check that noted something: %+v", r)
	}
}

// A skip records that calling a tool needs permission only when a listed
// tool was refused; with every tool allowed it is a plain skip.
func TestSkipNeedsCallOnlyWithARefusedTool(t *testing.T) {
	tool := mcpclient.Tool{Name: "send"}
	for _, tc := range []struct {
		allowed map[string]bool
		want    string
	}{{nil, report.SkipNeedsCall}, {map[string]bool{"send": true}, ""}} {
		env := Env{Facts: &Facts{Tools: []mcpclient.Tool{tool}}, CallTools: tc.allowed}
		p := NewPass(context.Background(), &Check{ID: "X-1", Level: Must}, env)
		p.SkipNeedsCall("nothing to call")
		if o := p.Outcome(nil); o.Verdict != Skipped || o.SkipCause != tc.want {
			t.Errorf("allowed %v: %+v, want cause %q", tc.allowed, o, tc.want)
		}
	}
	p := NewPass(context.Background(), &Check{ID: "X-1", Level: Must}, Env{Facts: &Facts{Tools: []mcpclient.Tool{tool}}})
	p.SkipNeedsCall("nothing to call")
	p.Failf(nil, "but then this")
	if o := p.Outcome(nil); o.SkipCause != "" {
		t.Errorf("a failure after the skip keeps its cause: %+v", o)
	}
}

// What the driver promises about order: the runs of a check that waits
// have twice the places of the quick ones, and the quick runs start beside
// them, not once most of them have returned; a check exclusive on the
// transport runs alone once every other run has returned, one run at a
// time; on a transport it is not exclusive on, it runs with the others.
func TestExecuteRunsWaitersBesideQuickOnesAndExclusiveRunsAlone(t *testing.T) {
	var mu sync.Mutex
	var events []string
	inFlight := map[string]int{}
	most := map[string]int{}
	xBeside, wantAlone := false, true
	log := func(id string, d time.Duration) func(p *Pass) error {
		return func(p *Pass) error {
			mu.Lock()
			events = append(events, "start "+id)
			inFlight[id]++
			most[id] = max(most[id], inFlight[id])
			all := inFlight["Q-1"] + inFlight["W-1"] + inFlight["X-1"]
			xBeside = xBeside || id == "X-1" && all > 1
			if id == "X-1" && wantAlone && all != 1 {
				t.Errorf("X-1 run %d ran with %d runs in flight", p.Run, all)
			}
			mu.Unlock()
			time.Sleep(d)
			mu.Lock()
			inFlight[id]--
			events = append(events, "end "+id)
			mu.Unlock()
			return nil
		}
	}
	quick := &Check{ID: "Q-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: log("Q-1", time.Millisecond)}
	alone := &Check{ID: "X-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Exclusive: HTTP, Run: log("X-1", time.Millisecond)}
	// The first two W-1 runs hold their places until a Q-1 run has
	// begun: a driver that starts the quick runs only once most waiting
	// ones have returned fails here instead of hanging.
	quickBegan := make(chan struct{})
	var quickOnce sync.Once
	wait := log("W-1", 20*time.Millisecond)
	waits := &Check{ID: "W-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Waits: true, Run: func(p *Pass) error {
		if p.Run < 2 {
			select {
			case <-quickBegan:
			case <-time.After(5 * time.Second):
				t.Errorf("W-1 run %d: no quick run began while it held its place", p.Run)
			}
		}
		return wait(p)
	}}
	quickRun := quick.Run
	quick.Run = func(p *Pass) error {
		quickOnce.Do(func() { close(quickBegan) })
		return quickRun(p)
	}
	reg := Registry{Families: []Family{{"Q", "q"}, {"X", "x"}, {"W", "w"}}, Checks: []*Check{alone, quick, waits}}

	res, err := Execute(context.Background(), reg, Env{Transport: "http"}, Options{Runs: 5, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ids := []string{res[0].ID, res[1].ID, res[2].ID}; !slices.Equal(ids, []string{"X-1", "Q-1", "W-1"}) {
		t.Errorf("results in registry order: %v", ids)
	}
	if most["W-1"] != 2 || most["Q-1"] != 1 {
		t.Errorf("at most %d W-1 and %d Q-1 runs were in flight, want 2 and 1", most["W-1"], most["Q-1"])
	}
	firstAlone := slices.Index(events, "start X-1")
	if firstAlone < 0 || slices.Contains(events[firstAlone:], "start Q-1") || slices.Contains(events[firstAlone:], "start W-1") {
		t.Errorf("the exclusive runs come after all others: %v", events)
	}
	if n := strings.Count(strings.Join(events, ","), "start X-1"); n != 5 {
		t.Errorf("X-1 ran %d times, want 5", n)
	}

	// On stdio X-1 is not exclusive: it runs beside the others.
	events, wantAlone = nil, false
	if _, err := Execute(context.Background(), reg, Env{Transport: "stdio"}, Options{Runs: 5, Concurrency: 4}); err != nil {
		t.Fatal(err)
	}
	if !xBeside {
		t.Errorf("on stdio no run of X-1 had another run in flight: %v", events)
	}
}

// A check that follows others: on the transports it names, and when the
// caller asks for the order, each of its runs starts once the run of the
// same repetition of every check it follows has returned (a SHOULD check
// it follows only in the first repetition); it holds no place while it
// waits, so one place for all stalls nothing. Elsewhere it runs as if it
// followed nothing.
func TestFollowsOrdersTheRunsOfARepetition(t *testing.T) {
	var mu sync.Mutex
	ended := map[string]bool{}
	mark := func(k string) {
		mu.Lock()
		ended[k] = true
		mu.Unlock()
	}
	seen := func(k string) bool {
		mu.Lock()
		defer mu.Unlock()
		return ended[k]
	}
	var began [3]chan struct{}
	a := &Check{ID: "A-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Waits: true}
	s := &Check{ID: "S-1", Level: Should, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error {
		time.Sleep(5 * time.Millisecond)
		mark("S-1/0")
		return nil
	}}
	b := &Check{ID: "B-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Waits: true,
		Follows: Follows{On: Stdio, IDs: []string{"A-1", "S-1"}}}
	ordered := true
	a.Run = func(p *Pass) error {
		if !ordered {
			// Unordered, B-1's run of the repetition begins while A-1's
			// has not returned.
			select {
			case <-began[p.Run]:
			case <-time.After(5 * time.Second):
				t.Errorf("A-1 run %d: B-1's run did not begin beside it", p.Run)
			}
		}
		time.Sleep(time.Duration(3-p.Run) * 5 * time.Millisecond)
		mark("A-1/" + string(rune('0'+p.Run)))
		return nil
	}
	b.Run = func(p *Pass) error {
		close(began[p.Run])
		if ordered {
			if !seen("A-1/" + string(rune('0'+p.Run))) {
				t.Errorf("B-1 run %d began before A-1's run %d returned", p.Run, p.Run)
			}
			if p.Run == 0 && !seen("S-1/0") {
				t.Errorf("B-1 run 0 began before S-1's only run returned")
			}
		}
		return nil
	}
	// B-1 comes first in the registry: it is launched first and waits.
	reg := Registry{Families: []Family{{"A", "a"}, {"B", "b"}, {"S", "s"}}, Checks: []*Check{b, a, s}}
	for _, tc := range []struct {
		transport string
		follow    bool
	}{{"stdio", true}, {"http", true}, {"stdio", false}} {
		ordered = tc.transport == "stdio" && tc.follow
		ended = map[string]bool{}
		for i := range began {
			began[i] = make(chan struct{})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := Execute(ctx, reg, Env{Transport: tc.transport}, Options{Runs: 3, Concurrency: 1, Waits: 1, Follow: func(c *Check) bool { return tc.follow && c == b }})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Verdict != Passed {
				t.Errorf("%s over %s (follow %v): %s %s", r.ID, tc.transport, tc.follow, r.Verdict, r.Outcome.Message)
			}
		}
	}
}

// Returned hears of every run once, the quick, waiting and exclusive
// ones, after the run and before a run that follows it begins.
func TestReturnedHearsOfEveryRunBeforeItsFollowers(t *testing.T) {
	var mu sync.Mutex
	heard := map[string]int{}
	key := func(id string, run int) string { return id + "/" + string(rune('0'+run)) }
	mk := func(id string, level Level, waits bool, excl Transports, follows []string) *Check {
		return &Check{ID: id, Level: level, Transports: Both, Spec: "s", Doc: "d", Waits: waits, Exclusive: excl,
			Follows: Follows{On: Stdio, IDs: follows}, Run: func(p *Pass) error {
				mu.Lock()
				defer mu.Unlock()
				for _, f := range follows {
					if heard[key(f, p.Run)] != 1 {
						t.Errorf("%s run %d began before Returned heard of %s's run", id, p.Run, f)
					}
				}
				return nil
			}}
	}
	a := mk("A-1", Must, true, 0, nil)
	b := mk("B-1", Must, false, 0, []string{"A-1"})
	s := mk("S-1", Should, false, 0, nil)
	x := mk("X-1", Must, false, Both, nil)
	reg := Registry{Families: []Family{{"A", "a"}, {"B", "b"}, {"S", "s"}, {"X", "x"}}, Checks: []*Check{a, b, s, x}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := Execute(ctx, reg, Env{Transport: "stdio"}, Options{Runs: 3, Follow: func(c *Check) bool { return c == b }, Returned: func(c *Check, run int) {
		mu.Lock()
		heard[key(c.ID, run)]++
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"A-1/0": 1, "A-1/1": 1, "A-1/2": 1, "B-1/0": 1, "B-1/1": 1, "B-1/2": 1, "S-1/0": 1, "X-1/0": 1, "X-1/1": 1, "X-1/2": 1}
	if !maps.Equal(heard, want) {
		t.Errorf("Returned heard %v, want %v", heard, want)
	}
}

// An order the driver could not keep is refused before any run.
func TestValidateFollows(t *testing.T) {
	run := func(*Pass) error { return nil }
	mk := func(id string, f Follows, x Transports) *Check {
		return &Check{ID: id, Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: run, Follows: f, Exclusive: x}
	}
	fams := []Family{{ID: "A", Title: "a"}}
	for _, tc := range []struct {
		checks []*Check
		want   string
	}{
		{[]*Check{mk("A-1", Follows{On: Stdio, IDs: []string{"A-9"}}, 0)}, "A-1 follows unknown check A-9"},
		{[]*Check{mk("A-1", Follows{On: Stdio, IDs: []string{"A-1"}}, 0)}, "A-1 follows itself"},
		{[]*Check{mk("A-1", Follows{IDs: []string{"A-2"}}, 0), mk("A-2", Follows{}, 0)}, "checks on no transport"},
		{[]*Check{mk("A-1", Follows{On: Stdio, IDs: []string{"A-2"}}, 0), mk("A-2", Follows{}, HTTP)}, "A-2, which is exclusive"},
		{[]*Check{mk("A-1", Follows{On: Stdio, IDs: []string{"A-2"}}, Stdio), mk("A-2", Follows{}, 0)}, "but is exclusive"},
		{[]*Check{mk("A-1", Follows{On: Stdio, IDs: []string{"A-2"}}, 0), mk("A-2", Follows{On: HTTP, IDs: []string{"A-3"}}, 0), mk("A-3", Follows{On: Stdio, IDs: []string{"A-1"}}, 0)}, "cycle: A-1 after A-2 after A-3 after A-1"},
	} {
		err := Validate(Registry{Families: fams, Checks: tc.checks})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate: %v, want %q", err, tc.want)
		}
	}
	ok := []*Check{mk("A-1", Follows{On: Stdio, IDs: []string{"A-2", "A-3"}}, 0), mk("A-2", Follows{On: Stdio, IDs: []string{"A-3"}}, 0), mk("A-3", Follows{}, 0)}
	if err := Validate(Registry{Families: fams, Checks: ok}); err != nil {
		t.Errorf("a diamond is no cycle: %v", err)
	}
}

// A run in flight when the run's context ends sees what the harness does
// then (processes stopped, requests abandoned) as the server's doing: what
// it finds is no finding, and the run errors. A pass before the end stays
// a pass, and a run that found a fault before the end but returned after
// it errors too, since the two cannot be told apart.
func TestARunCutShortByTheDeadlineErrorsInsteadOfFailing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var once sync.Once
	cut := &Check{ID: "C-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error {
		once.Do(func() { close(started) })
		<-p.Ctx.Done()
		p.Failf(nil, "server process exited with code 0")
		return nil
	}}
	passes := &Check{ID: "P-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error { return nil }}
	go func() { <-started; cancel() }()
	reg := Registry{Families: []Family{{"C", "c"}, {"P", "p"}}, Checks: []*Check{passes, cut}}
	res, err := Execute(ctx, reg, Env{Transport: "stdio"}, Options{Runs: 3, Concurrency: 1, Waits: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Counts[Passed] != 3 {
		t.Errorf("runs that passed before the end: %+v", r.Counts)
	}
	r := res[1]
	if r.Counts[Failed] != 0 || r.Counts[Errored] != 3 || r.Verdict != Errored {
		t.Fatalf("runs cut short: counts %v, verdict %s; want 3 errored, none failed", r.Counts, r.Verdict)
	}
	if msg := r.Outcome.Message; !strings.Contains(msg, "cancelled while it ran") || !strings.Contains(msg, "server process exited") {
		t.Errorf("message %q: want the cut and what the check saw", msg)
	}
}

// An answer that breaks the exchange (a wrong id, bytes that are not
// JSON-RPC, a message over the limit) is what the server did: the rule
// being judged fails (a SHOULD warns). A wait that ran out or a process
// that exited leaves the run unjudged.
func TestServerFaultsFailAndOtherErrorsLeaveTheRunUnjudged(t *testing.T) {
	for _, tc := range []struct {
		err   error
		level Level
		want  Verdict
	}{
		{&transport.Error{Kind: transport.KindBadID, Op: "stdio tools/list", Err: errors.New("result with id null")}, Must, Failed},
		{&transport.Error{Kind: transport.KindMalformed, Op: "stdio tools/list"}, Should, Warned},
		{fmt.Errorf("listing: %w", &transport.Error{Kind: transport.KindTooLarge, Op: "stdio tools/list", Limit: 1 << 22}), Must, Failed},
		{&transport.Error{Kind: transport.KindHTTPStatus, Op: "POST /mcp (tools/list)", Status: 500}, Must, Failed},
		// A gateway's or a rate limit's status is not the server's answer.
		{&transport.Error{Kind: transport.KindHTTPStatus, Op: "POST /mcp (tools/list)", Status: 503}, Must, Errored},
		{&transport.Error{Kind: transport.KindHTTPStatus, Op: "POST /mcp (tools/list)", Status: 429}, Must, Errored},
		{&transport.Error{Kind: transport.KindTimeout, Op: "stdio tools/list", After: time.Second}, Must, Errored},
		{&transport.Error{Kind: transport.KindProcessExited, Op: "stdio tools/list"}, Must, Errored},
		{fmt.Errorf("run: %w", context.DeadlineExceeded), Must, Errored},
	} {
		c := &Check{ID: "A-1", Level: tc.level, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error { return tc.err }}
		res, err := Execute(context.Background(), Registry{Families: []Family{{"A", "a"}}, Checks: []*Check{c}}, Env{Transport: "stdio"}, Options{Runs: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r := res[0]; r.Verdict != tc.want || r.Outcome.Message != tc.err.Error() {
			t.Errorf("%v (%s): %s %q, want %s with the error as its message", tc.err, tc.level, r.Verdict, r.Outcome.Message, tc.want)
		}
	}
}

// A wait set to end at the run's deadline may fire just before the
// context's own timer: a run that fails then, with ctx.Err() still nil,
// was cut short all the same.
func TestARunFailingJustBeforeTheDeadlineErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var late atomic.Bool
	c := &Check{ID: "C-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error {
		dl, _ := p.Ctx.Deadline()
		time.Sleep(time.Until(dl) - 20*time.Millisecond)
		late.Store(p.Ctx.Err() != nil)
		p.Failf(nil, "tools/list got no response within 10s")
		return nil
	}}
	res, err := Execute(ctx, Registry{Families: []Family{{"C", "c"}}, Checks: []*Check{c}}, Env{Transport: "stdio"}, Options{Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if late.Load() {
		t.Skip("the machine was too slow: the run failed after the deadline, not just before it")
	}
	if r := res[0]; r.Verdict != Errored || !strings.Contains(r.Outcome.Message, "cancelled while it ran") {
		t.Fatalf("%s %q, want an error: the run was cut short", r.Verdict, r.Outcome.Message)
	}
}

// A check that passed in one run and errored in the others (its server
// crashed) is not judged in those runs, not flaky: flaky is the server's
// behaviour judged differently from run to run.
func TestErroredRunsDoNotMakeACheckFlaky(t *testing.T) {
	n := 0
	c := &Check{ID: "E-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Exclusive: Both, Run: func(p *Pass) error {
		n++
		if n > 1 {
			return errors.New("the server process exited")
		}
		return nil
	}}
	reg := Registry{Families: []Family{{"E", "e"}}, Checks: []*Check{c}}
	res, err := Execute(context.Background(), reg, Env{Transport: "stdio"}, Options{Runs: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Flaky || r.Verdict != Errored || r.Counts[Passed] != 1 || r.Counts[Errored] != 4 {
		t.Errorf("1 pass and 4 errors: %s flaky=%v %v, want errored, not flaky", r.Verdict, r.Flaky, r.Counts)
	}
}

// The finding that takes the headline leads the evidence too: a warning
// found first must not stand as the evidence of the failure after it.
func TestHeadlineEvidenceLeads(t *testing.T) {
	c := &Check{ID: "W-1", Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: func(p *Pass) error {
		p.Warnf(&Evidence{Pointer: "/id"}, "a leniency")
		p.Failf(&Evidence{Pointer: "/error/code"}, "the fault")
		p.Warnf(&Evidence{Pointer: "/x"}, "another leniency")
		return nil
	}}
	reg := Registry{Families: []Family{{"W", "w"}}, Checks: []*Check{c}}
	res, err := Execute(context.Background(), reg, Env{Transport: "stdio"}, Options{Runs: 1})
	if err != nil {
		t.Fatal(err)
	}
	o := res[0].Outcome
	if o.Message != "the fault" || len(o.Evidence) != 3 || o.Evidence[0].Pointer != "/error/code" || o.Evidence[1].Pointer != "/id" || o.Evidence[2].Pointer != "/x" {
		t.Fatalf("message %q, evidence %+v: want the fault's evidence first", o.Message, o.Evidence)
	}
}
