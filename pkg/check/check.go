// Package check defines what a conformance check is and what it reports,
// separate from the checks themselves (package conformance) and from the
// driver that runs them. A check is an immutable value with an id from the
// spec checklist, a level, the transports it applies to, a spec reference,
// a one-line doc and a run function; it reports through a Pass and never
// prints, exits or opens files. Checks and their families (Family, with
// the title reports head them with) make a Registry, which Execute
// validates before it runs anything: an id in a report is always a
// registered check.
package check

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Level is how binding a rule is. What a check reports is report data,
// read by the gate and the renderers without this package, so the result
// types live in package report and are aliased here.
type Level = report.Level

const (
	Must   = report.Must   // MUST / MUST NOT / derived MUST: a failure fails the run
	Should = report.Should // SHOULD / SHOULD NOT: a failure is reported as a warning
	Info   = report.Info   // not normative; reported for the reader
)

// Transports is the set of transports a check applies to.
type Transports uint8

const (
	Stdio Transports = 1 << iota
	HTTP
	Both = Stdio | HTTP
)

// Has reports whether ts includes the transport named "stdio" or "http".
func (ts Transports) Has(kind string) bool {
	switch kind {
	case "stdio":
		return ts&Stdio != 0
	case "http":
		return ts&HTTP != 0
	}
	return false
}

func (ts Transports) String() string {
	switch ts {
	case Both:
		return "both"
	case Stdio:
		return "stdio"
	case HTTP:
		return "http"
	}
	return "none"
}

// Check is one rule of the checklist made executable.
type Check struct {
	// ID is the checklist id, e.g. "DISC-1"; the family is the part before
	// the dash, and the check lives in the file named after the family.
	ID         string
	Level      Level
	Transports Transports
	// Spec names the spec page and section, e.g.
	// "server/discover.mdx §DiscoverResult".
	Spec string
	// Doc is one line: what the rule requires.
	Doc string
	// Fix is a one-line hint for a server author, as a verb phrase.
	Fix string
	// Seed names the seed assertion (1-7) the check implements, 0 if none.
	Seed int
	// Exclusive names the transports on which the check runs with no
	// other check in flight: it judges what the shared server does
	// between its own requests (a concurrent check's requests would read
	// as the server's), or it loads the server. The driver runs these
	// runs one at a time after every other run has returned.
	Exclusive Transports
	// Waits marks a check whose runs spend most of their time waiting
	// (a process's turns, a stream, a quiet period, a process start), tens
	// to hundreds of milliseconds each; the driver starts them before the
	// others so that the waits overlap the quick checks instead of ending
	// the run.
	Waits bool
	// Follows names checks whose run of the same repetition has returned
	// before a run of this check starts, on the transports it names, when
	// the driver's caller keeps the order for this check (Options.Follow):
	// the check takes over something those checks share and are then done
	// with (a stdio process, conformance's quiet.go), and may leave it
	// unfit for them. A named check that is not selected, or has no run
	// of that repetition (a SHOULD check runs once), is not waited for.
	Follows Follows
	// Run performs the check once.
	Run func(p *Pass) error
	// Monitor, when set, also judges the rule on every exchange of the
	// run (see Monitor).
	Monitor *Monitor
}

// Follows is an order between the runs of one repetition: IDs run first,
// on the transports On names.
type Follows struct {
	On  Transports
	IDs []string
}

// on is the ids to wait for on transport (nil if none).
func (f Follows) on(transport string) []string {
	if !f.On.Has(transport) {
		return nil
	}
	return f.IDs
}

// Family is the id's prefix, e.g. "DISC".
func (c *Check) Family() string {
	f, _, _ := strings.Cut(c.ID, "-")
	return f
}

// Verdict is the outcome of one run of a check.
type Verdict = report.CheckVerdict

const (
	Passed  = report.CheckPassed
	Failed  = report.CheckFailed
	Warned  = report.CheckWarned
	Skipped = report.CheckSkipped
	Errored = report.CheckErrored // the harness could not run the check
	Noted   = report.CheckNoted   // an info check's finding: never a warning
)

// severity orders verdicts so that the worst one reported wins.
func severity(v Verdict) int {
	switch v {
	case Passed:
		return 1
	case Warned, Noted:
		return 2
	case Failed:
		return 3
	case Errored:
		return 4
	}
	return 0
}

// Evidence is what was sent and what came back, kept short.
type Evidence = report.Evidence

// Outcome is the result of one run of one check.
type Outcome = report.Outcome

// Pass is a check's view of one run: the server under test and a place to
// report. A check calls Failf / Warnf / Passf / Skipf any number of times;
// the worst verdict wins, and a run that reports nothing passes.
type Pass struct {
	Ctx   context.Context
	Check *Check
	// Env is the server under test and the shared facts.
	Env Env
	// Run is which repetition this is (0 for a check that runs once):
	// the observations it shares with the other checks of the same
	// repetition (Pass.Do).
	Run int
	out Outcome
	// unlocated counts the findings (failures and warnings) whose evidence
	// names no pointer or was not kept: faults of this result alone,
	// which make it no repeat of another result's (sameAs).
	unlocated int
	// findings counts the failures, warnings, notes and skips reported so
	// far: Cases re-sends a case that had any, so that every repetition
	// sees it.
	findings int
}

// NewPass is for drivers.
func NewPass(ctx context.Context, c *Check, env Env) *Pass {
	return &Pass{Ctx: ctx, Check: c, Env: env}
}

func (p *Pass) add(v Verdict, ev *Evidence, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if v != Passed {
		p.findings++
	}
	if p.Check.Level == Info && (v == Warned || v == Failed) {
		// An info rule binds nothing: what it finds is a note for the
		// reader, counted as info and never as a warning.
		v = Noted
	}
	cur := p.out.Verdict
	if v != Passed {
		p.out.SkipCause = ""
	}
	lead := false // this finding takes the headline
	switch {
	case cur == "" || cur == Skipped || severity(v) > severity(cur):
		lead = true
		// A worse verdict takes the headline; what was wrong before stays
		// as a detail, what passed before no longer matters.
		if cur != "" && cur != Skipped && cur != Passed {
			p.out.Details = append(p.out.Details, p.out.Message)
		} else {
			p.out.Details = nil
		}
		if cur == Passed || cur == Skipped {
			p.out.Evidence = nil
		}
		p.out.Verdict, p.out.Message = v, msg
	case v == cur && v != Passed, severity(v) < severity(cur) && v != Passed:
		p.out.Details = append(p.out.Details, msg)
	case v == Passed:
		return // a pass under a worse verdict adds nothing
	}
	kept := ev != nil && (len(p.out.Evidence) < maxEvidence || lead)
	switch {
	case kept && lead && len(p.out.Evidence) > 0:
		// The headline's evidence leads, as its message does: a reader
		// takes the first evidence for the message's (a warning's before
		// a failure made the failure's cause read as the warning's).
		p.out.Evidence = append([]Evidence{*ev}, p.out.Evidence[:min(len(p.out.Evidence), maxEvidence-1)]...)
	case kept:
		p.out.Evidence = append(p.out.Evidence, *ev)
	}
	if v != Passed && (!kept || (ev.Pointer == "" && !ev.OnStatus)) {
		p.unlocated++
	}
}

// maxEvidence bounds what one run keeps; the first items are the telling
// ones.
const maxEvidence = 5

// KeepsEvidence says whether the evidence of the next finding would be
// kept: past maxEvidence it is dropped, so a check that reports a finding
// per item of a long list need not build (and locate) evidence nobody
// keeps. Passing nil then counts exactly as a dropped evidence does.
func (p *Pass) KeepsEvidence() bool {
	switch p.out.Verdict {
	case "", Passed, Skipped:
		return true
	}
	return len(p.out.Evidence) < maxEvidence
}

// Failf reports a violation of the rule. For a SHOULD rule it becomes a
// warning, for an info rule a note (Noted).
func (p *Pass) Failf(ev *Evidence, format string, args ...any) {
	v := Failed
	if p.Check.Level != Must {
		v = Warned
	}
	p.add(v, ev, format, args...)
}

// Found says whether this run has reported a violation or a warning so
// far: a check that then meets a transport error returns it only when it
// found nothing, so that the error does not hide what it saw first.
func (p *Pass) Found() bool {
	return p.out.Verdict == Failed || p.out.Verdict == Warned || p.out.Verdict == Noted
}

// Warnf reports something suspicious that does not break the rule (a
// deviation the spec allows, a leniency taken); for an info rule a note.
func (p *Pass) Warnf(ev *Evidence, format string, args ...any) { p.add(Warned, ev, format, args...) }

// Passf records what was verified; it does not lower a worse verdict.
func (p *Pass) Passf(ev *Evidence, format string, args ...any) { p.add(Passed, ev, format, args...) }

// Skipf says why the check could not apply to this server (no tool fits,
// the feature is not advertised, calling a tool needs permission).
func (p *Pass) Skipf(format string, args ...any) {
	p.findings++
	if p.out.Verdict == "" {
		p.out.Verdict = Skipped
		p.out.Message = fmt.Sprintf(format, args...)
	}
}

// SkipNeedsCall says the check could not apply because calling a tool
// needs permission, when that is so: some listed tool was not allowed.
// With every tool allowed (or none listed) it is a plain skip whose
// message says what was missing, so a summary never tells the user to
// allow tools that are allowed already.
func (p *Pass) SkipNeedsCall(format string, args ...any) {
	if p.out.Verdict != "" {
		return
	}
	p.Skipf(format, args...)
	if p.Env.Uncalled() > 0 {
		p.out.SkipCause = report.SkipNeedsCall
	}
}

// Outcome returns the run's result; err is what Run returned. An error
// that is the server's own answer breaking the exchange (see
// serverFault) is a failure of the rule the check was judging when it
// came; any other error means the run was not judged.
func (p *Pass) Outcome(err error) Outcome {
	if err != nil && serverFault(err) {
		p.Failf(nil, "%s", err.Error())
		err = nil
	}
	out := p.out
	if err != nil {
		out.Verdict = Errored
		out.Message = err.Error()
	}
	if out.Verdict == "" {
		out.Verdict = Passed
	}
	if out.Verdict == Skipped {
		out.Details, out.Evidence = nil, nil
	} else {
		out.SkipCause = ""
	}
	return out
}

var (
	idRE     = regexp.MustCompile(`^[A-Z]+-[0-9]+$`)
	familyRE = regexp.MustCompile(`^[A-Z]+$`)
)

// Family is one family of checks as data: the id prefix its checks share
// and the title a report heads them with. The package that defines the
// checks defines the family, so that a renderer needs no table of its own.
type Family struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Registry is what a driver runs: the families, and every check in report
// order. It is a plain value; Validate says whether it can be run.
type Registry struct {
	Families []Family
	Checks   []*Check
}

// Title is the title of a family, "" for a family the registry does not
// have.
func (r Registry) Title(family string) string {
	for _, f := range r.Families {
		if f.ID == family {
			return f.Title
		}
	}
	return ""
}

// Known returns an error naming the first of ids that is neither a check
// id nor a family of the registry, so that a typo in a selection (Options.
// Only) is refused instead of running nothing.
func (r Registry) Known(ids []string) error {
	known := map[string]bool{}
	for _, f := range r.Families {
		known[f.ID] = true
	}
	for _, c := range r.Checks {
		known[c.ID] = true
	}
	for _, id := range ids {
		if !known[id] {
			return fmt.Errorf("%q names no check or family (ids look like DISC-1, families like DISC)", id)
		}
	}
	return nil
}

// Validate checks a registry before anything runs: well-formed unique
// families with a title; well-formed unique check ids of a known family;
// a level, transports, a spec reference, a doc line and a run function.
func Validate(r Registry) error {
	var errs []string
	families := map[string]bool{}
	for i, f := range r.Families {
		where := fmt.Sprintf("family #%d (%s)", i, f.ID)
		switch {
		case !familyRE.MatchString(f.ID):
			errs = append(errs, where+": id must look like DISC")
		case families[f.ID]:
			errs = append(errs, where+": duplicate family")
		}
		families[f.ID] = true
		if strings.TrimSpace(f.Title) == "" || strings.Contains(f.Title, "\n") {
			errs = append(errs, where+": needs a one-line title")
		}
	}
	seen := map[string]bool{}
	for i, c := range r.Checks {
		if c == nil {
			errs = append(errs, fmt.Sprintf("check #%d: nil", i))
			continue
		}
		where := fmt.Sprintf("check #%d (%s)", i, c.ID)
		switch {
		case !idRE.MatchString(c.ID):
			errs = append(errs, where+": id must look like DISC-1")
		case seen[c.ID]:
			errs = append(errs, where+": duplicate id")
		case !families[c.Family()]:
			errs = append(errs, where+": unknown family "+c.Family())
		}
		seen[c.ID] = true
		if c.Level != Must && c.Level != Should && c.Level != Info {
			errs = append(errs, where+": level must be MUST, SHOULD or info")
		}
		if c.Transports == 0 {
			errs = append(errs, where+": no transports")
		}
		if c.Spec == "" || c.Doc == "" || strings.Contains(c.Doc, "\n") {
			errs = append(errs, where+": needs a spec reference and a one-line doc")
		}
		if c.Run == nil {
			errs = append(errs, where+": no run function")
		}
		if c.Monitor != nil && (c.Monitor.Watch == nil || c.Monitor.Doc == "" || strings.Contains(c.Monitor.Doc, "\n")) {
			errs = append(errs, where+": a monitor needs a watch function and a one-line doc")
		}
	}
	errs = append(errs, validateFollows(r, seen)...)
	if len(errs) > 0 {
		return fmt.Errorf("invalid check registry:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// validateFollows: every id a check follows is a registered check that is
// neither itself nor exclusive (an exclusive check runs after all others
// anyway), the check itself is not exclusive, and the order has no cycle
// (the driver would wait for ever).
func validateFollows(r Registry, known map[string]bool) []string {
	var errs []string
	byID := map[string]*Check{}
	for _, c := range r.Checks {
		if c != nil {
			byID[c.ID] = c
		}
	}
	for _, c := range r.Checks {
		if c == nil || len(c.Follows.IDs) == 0 {
			continue
		}
		where := fmt.Sprintf("check %s follows", c.ID)
		if c.Follows.On == 0 {
			errs = append(errs, where+" checks on no transport")
		}
		if c.Exclusive != 0 {
			errs = append(errs, where+" checks but is exclusive, which runs after every other check anyway")
		}
		for _, id := range c.Follows.IDs {
			switch d := byID[id]; {
			case !known[id]:
				errs = append(errs, where+" unknown check "+id)
			case id == c.ID:
				errs = append(errs, where+" itself")
			case d.Exclusive != 0:
				errs = append(errs, where+" "+id+", which is exclusive")
			}
		}
	}
	// A cycle: depth-first, grey while on the path.
	const grey, black = 1, 2
	state := map[string]int{}
	var visit func(id string, path []string) bool
	visit = func(id string, path []string) bool {
		switch state[id] {
		case grey:
			errs = append(errs, "checks follow each other in a cycle: "+strings.Join(append(path, id), " after "))
			return false
		case black:
			return true
		}
		state[id] = grey
		if c := byID[id]; c != nil {
			for _, d := range c.Follows.IDs {
				if !visit(d, append(path, id)) {
					return false
				}
			}
		}
		state[id] = black
		return true
	}
	for _, c := range r.Checks {
		if c != nil && !visit(c.ID, nil) {
			break
		}
	}
	return errs
}

// serverFault says whether err is the server's answer breaking the
// exchange: bytes that are not JSON-RPC, a response with the wrong id, a
// message over the size limit, an HTTP error without a JSON-RPC body, a
// stream cut before its response, a redirect (but not a gateway's 502,
// 503 or 504, nor a 429). What the server sent is
// then the finding. Waits that ran out, a process that exited, a
// connection that could not be made or was closed, and a cancelled run
// are not: they leave the rule unjudged (the gate's "not judged", exit 2).
func serverFault(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	switch transport.KindOf(err) {
	case transport.KindHTTPStatus:
		// A gateway's "upstream unavailable" or a rate limit says the
		// server could not be reached or asked, not what it answers.
		return !transport.GatewayRefused(err)
	case transport.KindMalformed, transport.KindBadID, transport.KindTooLarge, transport.KindStreamBroken, transport.KindRedirect:
		return true
	}
	return false
}
