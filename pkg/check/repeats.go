package check

import (
	"regexp"
	"strconv"
	"strings"
)

// One wire fault often breaks two rules: a -32022 whose data.supported is
// a string breaks VER-1 and ERR-4, a ttlMs of -1 breaks CACHE-1 and the
// ReadResourceResult schema (RSRC-2). Each check is right to fail, but a
// reader (and a summary) should see one fault to fix, so a result whose
// every finding points at a response value an earlier result already
// showed names that result in SameAs.

// fault is a located fault: the request (without what differs between
// two sends of the same request), the transport, and where in the
// response and what was there.
type fault struct {
	transport, request, where string
	// clipped: request is the start of a longer request.
	clipped bool
}

func faultOf(ev Evidence) fault {
	where := "at\x00" + ev.In + "\x00" + ev.Pointer + "\x00" + ev.Value + "\x00" + strconv.FormatBool(ev.Missing)
	if ev.OnStatus {
		where = "status\x00" + strconv.Itoa(ev.Status)
	}
	req, clipped := strings.CutSuffix(ev.Request, "…")
	return fault{transport: ev.Transport, request: perSendRE.ReplaceAllString(req, ""), where: where, clipped: clipped}
}

// perSendRE finds the request members that differ between two sends of
// the same request: the id and the trace context of _meta. Excerpts may be
// clipped, so requests are compared as text rather than decoded.
var perSendRE = regexp.MustCompile(`"(id|traceparent|tracestate)"\s*:\s*("(\\.|[^"\\])*"|-?[0-9.eE+-]+|null),?`)

// same reports whether two faults are one: the same place and value in the
// answer to the same request. A clipped request is the same as one it
// starts (where the excerpt was cut depends on how long the id was).
func (f fault) same(g fault) bool {
	if f.transport != g.transport || f.where != g.where {
		return false
	}
	switch {
	case f.request == g.request:
		return true
	case f.clipped && strings.HasPrefix(g.request, f.request):
		return true
	case g.clipped && strings.HasPrefix(f.request, g.request):
		return true
	}
	return false
}

// markRepeats sets SameAs on each failed or warned result whose findings
// all point at response values (located[i]) that one earlier failed or
// warned result's evidence shows too. SameAs names the first such result,
// never a result that is itself a repeat.
func markRepeats(results []Result, located []bool) {
	faults := make([][]fault, len(results))
	for i := range results {
		r := &results[i]
		if r.Verdict != Failed && r.Verdict != Warned {
			continue
		}
		for _, ev := range r.Outcome.Evidence {
			if ev.Pointer != "" || ev.OnStatus {
				faults[i] = append(faults[i], faultOf(ev))
			}
		}
		if !located[i] || len(faults[i]) == 0 {
			continue
		}
		for j := 0; j < i; j++ {
			if len(faults[j]) == 0 || results[j].SameAs != "" || !covers(faults[j], faults[i]) {
				continue
			}
			r.SameAs = results[j].ID
			break
		}
	}
}

// covers reports whether every fault of sub is one of set.
func covers(set, sub []fault) bool {
	for _, f := range sub {
		found := false
		for _, g := range set {
			if f.same(g) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// shownBy reports whether ev, a located finding, is a fault the result
// with that id shows.
func shownBy(results []Result, id string, ev Evidence) bool {
	if ev.Pointer == "" && !ev.OnStatus {
		return false
	}
	for _, o := range results {
		if o.ID != id {
			continue
		}
		var faults []fault
		for _, e := range o.Outcome.Evidence {
			if e.Pointer != "" || e.OnStatus {
				faults = append(faults, faultOf(e))
			}
		}
		return covers(faults, []fault{faultOf(ev)})
	}
	return false
}
