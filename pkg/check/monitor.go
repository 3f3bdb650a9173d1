package check

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/report"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// Monitor is the part of a check that watches every exchange of the run,
// not only the requests the check makes itself: a rule that holds on
// every exchange (response ids, resultType, caching hints, notifications
// nobody asked for) is broken as much by the answer to another check's
// request as by the answer to its own. It belongs to its check (Check.
// Monitor), so the check id names one place in code; what it finds
// counts as one more failed run of that check, with the first offending
// exchange as evidence.
type Monitor struct {
	// Doc says what is watched, for readers of the code and the docs.
	Doc string
	// Watch judges one exchange. applies is false when the rule does not
	// bear on it (a legacy request, no result); problem is "" when the
	// exchange keeps the rule. It runs on the goroutine that saw the
	// exchange, concurrently with others: it must only read x.
	Watch func(x *Exchange) (applies bool, problem string)
	// Locate, when set, names the response value a problem is about (an
	// RFC 6901 pointer into the response message; missing when the
	// finding is that the member is absent), so that the monitor's
	// evidence points at it as a check's own does.
	Locate func(x *Exchange) (ptr string, missing bool)
	// LocateIn, when set, names a value in another message of the
	// exchange than the response (a notification the request should not
	// have got): the message and a pointer into it (AtMessage; missing:
	// AbsentMessage).
	LocateIn func(x *Exchange) (m *jsonrpc.Message, ptr string, missing bool)
}

// Exchange is one exchange as a monitor sees it: what the transport
// carried, with the request's envelope read once for every monitor.
type Exchange struct {
	transport.Seen
	// Method and ID are the request's ("" and nil for a stray).
	Method string
	ID     json.RawMessage
	// Meta is the request's params._meta (nil when none).
	Meta map[string]json.RawMessage
	// Result is the response's result as an object (nil when the
	// response is an error, absent, or its result is not an object);
	// RawResult is the result as it came.
	Result    map[string]json.RawMessage
	RawResult json.RawMessage
}

// Modern reports whether the request declared 2026-07-28 in _meta: only
// such a request binds the server to the rules of that revision (a dual-
// era server answers a legacy request as legacy).
func (x *Exchange) Modern() bool {
	var v string
	return x.Out != nil && json.Unmarshal(x.Meta[mcpclient.MetaProtocolVersion], &v) == nil && v == mcpclient.Latest
}

// Response is the final response, nil when none came.
func (x *Exchange) Response() *jsonrpc.Message {
	if x.Exchange == nil {
		return nil
	}
	return x.Exchange.Response
}

// Evidence is the exchange as report evidence.
func (x *Exchange) Evidence() *Evidence {
	ev := &Evidence{Transport: x.Transport}
	if x.Line != nil {
		// The line as the server wrote it (its excerpt).
		ev.Response = x.Line.Excerpt
		return ev
	}
	if x.Out != nil {
		ev.Request = excerpt(x.Out.Body, 400)
		if x.Out.Header != nil {
			ev.Headers = pickHeaders(x.Out.Header)
		}
	}
	if ex := x.Exchange; ex != nil {
		switch {
		case ex.HTTP != nil:
			ev.Status = ex.HTTP.Status
			ev.Response = excerpt(ex.HTTP.Body, 600)
		case ex.Response != nil:
			ev.Response = messageExcerpt(ex.Response, 600)
		}
	}
	return ev
}

func newExchange(s transport.Seen) *Exchange {
	x := &Exchange{Seen: s}
	if s.Out != nil {
		x.Method, x.ID = s.Out.Method, s.Out.ID
		var env struct {
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(s.Out.Body, &env) == nil {
			x.Meta = env.Params.Meta
		}
	}
	if r := x.Response(); r != nil && r.Error == nil && r.Result != nil {
		x.RawResult = r.Result
		_ = json.Unmarshal(r.Result, &x.Result)
	}
	return x
}

// Monitors runs the monitors of the selected checks over every exchange a
// run's transports report (Observe), and folds what they found into the
// checks' results (Apply). It is safe for concurrent use.
type Monitors struct {
	mu      sync.Mutex
	watches []*watch
	conns   []*connWatch
}

// connWatch is what one connection's watcher holds back.
type connWatch struct {
	mu     sync.Mutex
	legacy bool
	// held are the stdout lines told since the connection's last
	// exchange: the reader reports a line as it comes, an exchange is
	// reported once its caller has the answer, so a legacy server's
	// request written right after its initialize answer can come before
	// the initialize exchange that makes the connection legacy.
	held []transport.Seen
}

type watch struct {
	check     *Check
	exchanges int
	offending int
	first     string
	evidence  *Evidence
}

// NewMonitors prepares the monitors of the checks that the transport and
// only select (as Execute selects checks).
func NewMonitors(r Registry, transport string, only []string) *Monitors {
	m := &Monitors{}
	for _, c := range r.Selected(transport, only) {
		if c.Monitor != nil {
			m.watches = append(m.watches, &watch{check: c})
		}
	}
	return m
}

// Watcher returns the watcher of one connection (transport.Watchable).
// Once a connection has carried initialize, the legacy handshake, a
// dual-era server may rightly serve the rest of it as legacy: the
// monitors judge none of its later exchanges (REM-2 judges the
// handshake), nor the lines it wrote while that handshake was in flight
// (a line is judged with the connection's next exchange, or by Apply).
func (m *Monitors) Watcher() func(transport.Seen) {
	c := &connWatch{}
	if m != nil {
		m.mu.Lock()
		m.conns = append(m.conns, c)
		m.mu.Unlock()
	}
	return func(s transport.Seen) {
		c.mu.Lock()
		if s.Out != nil && s.Out.Method == "initialize" {
			c.legacy, c.held = true, nil
		}
		if c.legacy {
			c.mu.Unlock()
			return
		}
		if s.Line != nil {
			c.held = append(c.held, s)
			c.mu.Unlock()
			return
		}
		held := c.held
		c.held = nil
		c.mu.Unlock()
		for _, h := range held {
			m.observe(h)
		}
		m.observe(s)
	}
}

// flush judges the lines the connections still hold: no exchange came
// after them.
func (m *Monitors) flush() {
	m.mu.Lock()
	conns := m.conns
	m.mu.Unlock()
	for _, c := range conns {
		c.mu.Lock()
		held := c.held
		c.held = nil
		c.mu.Unlock()
		for _, h := range held {
			m.observe(h)
		}
	}
}

// observe judges one exchange with every monitor.
func (m *Monitors) observe(s transport.Seen) {
	if m == nil || len(m.watches) == 0 {
		return
	}
	x := newExchange(s)
	for _, w := range m.watches {
		applies, problem := watchOnce(w.check.Monitor, x)
		if !applies {
			continue
		}
		m.mu.Lock()
		w.exchanges++
		if problem != "" {
			w.offending++
			if w.first == "" {
				w.first, w.evidence = problem, locate(w.check.Monitor, x)
			}
		}
		m.mu.Unlock()
	}
}

// locate is the exchange's evidence, pointing at the value the monitor's
// problem is about when the monitor can say which.
func locate(mon *Monitor, x *Exchange) *Evidence {
	ev := x.Evidence()
	if mon.LocateIn != nil {
		if m, ptr, missing := mon.LocateIn(x); m != nil {
			if missing {
				return AbsentMessage(ev, m, ptr)
			}
			return AtMessage(ev, m, ptr)
		}
	}
	if mon.Locate == nil {
		return ev
	}
	r := x.Response()
	if r == nil {
		return ev
	}
	ptr, missing := mon.Locate(x)
	if ptr == "" {
		return ev
	}
	msg, err := json.Marshal(r)
	if err != nil {
		return ev
	}
	if missing {
		return Absent(ev, msg, ptr)
	}
	return At(ev, msg, ptr)
}

// watchOnce runs one monitor; a monitor that panics is a harness bug and
// must not take the run down: it judges nothing.
func watchOnce(mon *Monitor, x *Exchange) (applies bool, problem string) {
	defer func() {
		if recover() != nil {
			applies, problem = false, ""
		}
	}()
	return mon.Watch(x)
}

// Apply folds the monitors' findings into results (by check id): a check
// whose monitor saw the rule broken gets one more run, failed, whose
// message and evidence lead its outcome; every watched check records
// what its monitor saw.
func (m *Monitors) Apply(results []Result) {
	if m == nil {
		return
	}
	m.flush()
	m.mu.Lock()
	defer m.mu.Unlock()
	byID := map[string]*watch{}
	for _, w := range m.watches {
		byID[w.check.ID] = w
	}
	for i := range results {
		w := byID[results[i].ID]
		if w == nil {
			continue
		}
		r := &results[i]
		r.Watched = &report.Watched{Exchanges: w.exchanges, Offending: w.offending, First: w.first}
		if w.offending == 0 {
			continue
		}
		v := Failed
		if w.check.Level != Must {
			v = Warned
		}
		msg := fmt.Sprintf("%s (seen on %d of the %d exchanges of the run that the rule applies to)", w.first, w.offending, w.exchanges)
		if r.Verdict == Skipped {
			// The check's own probe did not apply; the monitor's finding
			// is the whole result.
			r.Runs, r.Counts = 0, map[Verdict]int{}
			r.Outcome = Outcome{}
		}
		r.Runs++
		r.Counts[v]++
		// A monitor that saw a fault the earlier result does not show
		// makes this result more than a repeat of it.
		if r.SameAs != "" && !shownBy(results, r.SameAs, *w.evidence) {
			r.SameAs = ""
		}
		o := &r.Outcome
		if severity(v) >= severity(o.Verdict) {
			if o.Verdict != "" && o.Verdict != Passed && o.Message != "" {
				o.Details = append([]string{o.Message}, o.Details...)
			}
			if o.Verdict == Passed {
				o.Details, o.Evidence = nil, nil
			}
			o.Verdict, o.Message = v, msg
			o.Evidence = append([]Evidence{*w.evidence}, o.Evidence...)
			if len(o.Evidence) > maxEvidence {
				o.Evidence = o.Evidence[:maxEvidence]
			}
		} else {
			o.Details = append(o.Details, msg)
		}
		r.Verdict = o.Verdict
	}
}
