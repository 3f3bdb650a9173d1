package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// TestEveryMutantsPointersResolve runs the whole registry against every
// mutant of the reference server (every --break id) and holds the evidence
// of every failed or warned result to its word: a pointer names a value
// that is in the response it was recorded with (re-resolved here from the
// recorded excerpt when the excerpt is the whole message, by an RFC 6901
// walk of its own), the value recorded is the one there, and an excerpt cut
// around it still shows it. A check that points where nothing is, or an
// excerpt that stops before the fault, fails here.
func TestEveryMutantsPointersResolve(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole registry once per mutant")
	}
	byID := map[string]*check.Check{}
	for _, c := range Registry() {
		byID[c.ID] = c
	}
	ids := make([]string, 0, len(refserver.Mutants))
	for id := range refserver.Mutants {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var mu sync.Mutex
	pointed, repeats := 0, 0
	located := map[string]bool{}   // mutant ids whose own check's finding is located
	ownSaid := map[string]string{} // what the mutant's own check reported, for the failure message
	// The subtests run in parallel (most of a run is waiting on the
	// server); the totals are judged once they all ended.
	t.Run("mutants", func(t *testing.T) {
		for _, id := range ids {
			mutantPointers(t, id, byID, func(pt, rep int, own bool, said string) {
				mu.Lock()
				defer mu.Unlock()
				pointed += pt
				repeats += rep
				located[id] = located[id] || own
				ownSaid[id] = said
			})
		}
	})
	// The mutants whose faults are response values are found by their own
	// checks, which point at them; every other mutant says why it cannot be
	// located, so that a new mutant is classified one way or the other.
	for _, id := range locatedMutants {
		if !located[id] {
			t.Errorf("the finding of %s on its own mutant names no pointer (it reported %s)", id, ownSaid[id])
		}
	}
	for _, id := range ids {
		if !slices.Contains(locatedMutants, id) && unlocatedMutants[id] == "" && byID[id] != nil {
			t.Errorf("mutant %s is in neither locatedMutants nor unlocatedMutants: say whether its check's finding points at a response value", id)
		}
	}
	if pointed < 20 || repeats == 0 {
		t.Errorf("%d pointers and %d repeated faults over %d mutants: the test judged too little", pointed, repeats, len(ids))
	}
	t.Logf("%d located findings, %d results that repeat another's fault, over %d mutants", pointed, repeats, len(ids))
}

// locatedMutants are the mutants whose fault is a value in a response, or
// in a notification the server sent on the exchange (the finding's In
// names it; a notification that should not have come is pointed at by
// its /method): their own check's finding must point at it.
var locatedMutants = []string{
	"CACHE-1", "CACHE-2", "CACHE-3", "CANC-1",
	"CALL-1", "CALL-2", "CALL-3", "CALL-4", "CALL-5", "CALL-6",
	"COMP-1", "COMP-2", "COMP-3",
	"DISC-1", "DISC-2", "DISC-3", "DISC-6", "DISC-7", "DISC-8", "DISC-9",
	"ERR-1", "ERR-2", "ERR-3", "ERR-4",
	"HDR-1", "HDR-2", "HDR-3", "HDR-4", "HDR-5", "HTTP-2", "HTTP-5",
	"LOG-1", "LOG-2", "LOG-3", "LOG-4",
	"META-1", "META-2", "META-3", "META-4",
	"MRTR-1", "MRTR-2", "MRTR-3", "MRTR-4", "MRTR-5", "MRTR-6", "MRTR-7",
	"OTEL-1", "OTEL-2",
	"PAGE-2", "PROG-1",
	"PROMPT-1", "PROMPT-2",
	"REM-1", "REM-2",
	"RES-1", "RES-2", "RES-3", "RES-4",
	"RPC-1", "RPC-2", "RPC-3", "RPC-4", "RPC-5",
	"RSRC-1", "RSRC-2", "RSRC-3", "RSRC-4",
	"SCHEMA-1", "SCHEMA-2", "SCHEMA-3",
	"STATE-1", "STDIO-5",
	"SUB-2", "SUB-3", "SUB-4", "SUB-5",
	"TOOL-1", "TOOL-2", "TOOL-3", "TOOL-4", "TOOL-5", "TOOL-6", "TOOL-7",
	"VER-1", "VER-2", "VER-3",
}

// unlocatedMutants are the mutants whose own check's finding has no
// pointer, and why: a pointer names a value in the JSON-RPC response
// message, and these faults are not one.
var unlocatedMutants = map[string]string{
	// An HTTP status or header (the finding marks onStatus or names the
	// header).
	"HTTP-1": "a 405 with an empty body: no message",
	"HTTP-3": "the Content-Type header",
	"HTTP-4": "the HTTP status of a notification's answer",
	"HTTP-6": "the HTTP status (onStatus); the error code is right",
	"HTTP-7": "the HTTP status (onStatus); the error code is right",
	"REM-3":  "the HTTP status of a notification's answer (over HTTP; on stdio the answer is located)",
	"REM-4":  "the status of GET and DELETE, and the Mcp-Session-Id header",
	// A message that did not come, came too late, or a process.
	"RESIL-1": "no answer after a dropped request",
	"STDIO-4": "the process did not exit",
	"SUB-1":   "the listen stream ended (or was answered) right after the acknowledgment",
	"SUB-7":   "an answer after the client cancelled: a matter of order, not of a value",
	"CANC-2":  "progress that kept coming after the cancellation",
	"MRTR-8":  "messages after the input_required result on its SSE stream",
	// Not JSON.
	"RPC-6":   "invalid UTF-8 bytes, named by their offset",
	"STDIO-1": "a stdout line that is not JSON",
	// A request the server wrote on stdout, kept by the transport as the
	// raw line of an anomaly, not as a message to point into.
	"STDIO-2": "a ping request the server wrote on stdout (the raw line is the evidence)",
	// Flagged by other checks: PAGE-3's moved page shows as a repeated or
	// reordered tool (TOOL-3, TOOL-5, located), its own verdict depends on
	// which page moves; SCHEMA-4 is informational (an unsupported dialect
	// is no warning).
	"PAGE-3":   "flagged, located, by TOOL-3 and TOOL-5",
	"SCHEMA-4": "informational",
}

// mutantPointers runs the registry against one mutant and checks its
// located evidence; tally gets the number of pointers, of repeats, and
// whether the mutant's own check pointed at its fault.
func mutantPointers(t *testing.T, id string, byID map[string]*check.Check, tally func(pointed, repeats int, own bool, said string)) {
	kind := "http" // in process: the cheaper run
	if c := byID[id]; c != nil && !c.Transports.Has("http") {
		kind = "stdio"
	}
	t.Run(id+"/"+kind, func(t *testing.T) {
		t.Parallel()
		rep := fullRun(t, refTarget(t, kind, id))
		pointed, repeats, own, said := 0, 0, false, "nothing: it did not run"
		for _, r := range rep.Checks {
			if r.ID == id {
				said = fmt.Sprintf("%s: %s %v", r.Verdict, r.Outcome.Message, r.Counts)
			}
			if r.Verdict != check.Failed && r.Verdict != check.Warned {
				continue
			}
			if r.SameAs != "" {
				repeats++
				t.Logf("%s repeats the fault of %s", r.ID, r.SameAs)
				assertSameAs(t, rep, r)
			}
			for i, ev := range r.Outcome.Evidence {
				if ev.Pointer == "" {
					continue
				}
				pointed++
				own = own || r.ID == id
				if why := pointerProblem(ev); why != "" {
					t.Errorf("%s on mutant %s, evidence #%d at %s in %q: %s\n  value %s\n  response %s\n  message %s", r.ID, id, i, ev.Pointer, ev.In, why, ev.Value, ev.Response, ev.Message)
				}
			}
		}
		tally(pointed, repeats, own, said)
	})
}

// fullRun runs every check once, calling every tool of the reference
// server (it has no side effects), so that the MRTR mutants are reached.
func fullRun(t *testing.T, target Target) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rep, _, err := Run(ctx, target, Options{Options: check.Options{Runs: 1}, CallTools: mrtrTestTools, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("conformance run against %s: %v", target.Describe(), err)
	}
	validateReport(t, rep)
	return rep
}

// pointerProblem says what is wrong with located evidence, "" if nothing.
// When In names another message than the response, the pointer is into
// that message and judged against its excerpt, Message.
func pointerProblem(ev check.Evidence) string {
	if !ev.Missing && ev.Value == "" {
		return "the pointer names nothing in the response (no value was found there)"
	}
	excerpt := ev.Response
	if ev.In != "" {
		excerpt = ev.Message
		if excerpt == "" {
			return "the evidence names the message " + ev.In + " but keeps no excerpt of it"
		}
	}
	whole := !strings.HasPrefix(excerpt, "…") && !strings.HasSuffix(excerpt, "…")
	if !whole {
		// Cut around the value: the value must be in the excerpt.
		if v, clipped := strings.CutSuffix(ev.Value, "…"); !ev.Missing && !strings.Contains(excerpt, v) && !(clipped && strings.Contains(excerpt, v[:len(v)/2])) {
			return "the excerpt does not show the value"
		}
		return ""
	}
	var doc any
	if err := json.Unmarshal([]byte(excerpt), &doc); err != nil {
		return "the excerpt is the whole response but not JSON: " + err.Error()
	}
	if ev.Missing {
		i := strings.LastIndexByte(ev.Pointer, '/')
		parent, ok := walkPointer(doc, ev.Pointer[:i])
		obj, isObj := parent.(map[string]any)
		if !ok || !isObj {
			return "a missing member whose parent is not an object of the response"
		}
		if _, has := obj[unescapeToken(ev.Pointer[i+1:])]; has {
			return "the member said to be missing is there"
		}
		return ""
	}
	got, ok := walkPointer(doc, ev.Pointer)
	if !ok {
		return "the pointer does not resolve in the recorded response"
	}
	if strings.HasSuffix(ev.Value, "…") {
		return "" // clipped: nothing to compare whole
	}
	var want any
	if err := json.Unmarshal([]byte(ev.Value), &want); err != nil {
		return "the recorded value is not JSON: " + err.Error()
	}
	if !reflect.DeepEqual(got, want) {
		b, _ := json.Marshal(got)
		return "the recorded value differs from the response's: " + string(b)
	}
	return ""
}

// walkPointer resolves an RFC 6901 pointer in a decoded JSON document.
func walkPointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = unescapeToken(tok)
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func unescapeToken(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// assertSameAs holds a repeat to its definition: it names an earlier
// failed or warned result that is no repeat itself, and each of its
// located findings is at the pointer and value of one of that result's.
func assertSameAs(t *testing.T, rep *Report, r check.Result) {
	t.Helper()
	idx := slices.IndexFunc(rep.Checks, func(o check.Result) bool { return o.ID == r.SameAs })
	self := slices.IndexFunc(rep.Checks, func(o check.Result) bool { return o.ID == r.ID })
	if idx < 0 || idx >= self {
		t.Errorf("%s is sameAs %s, which is not an earlier result", r.ID, r.SameAs)
		return
	}
	first := rep.Checks[idx]
	if first.SameAs != "" || (first.Verdict != check.Failed && first.Verdict != check.Warned) {
		t.Errorf("%s is sameAs %s, which is %s and sameAs %q", r.ID, first.ID, first.Verdict, first.SameAs)
	}
	for _, ev := range r.Outcome.Evidence {
		found := slices.ContainsFunc(first.Outcome.Evidence, func(o check.Evidence) bool {
			return o.In == ev.In && o.Pointer == ev.Pointer && o.Value == ev.Value && o.Missing == ev.Missing && o.OnStatus == ev.OnStatus && (!ev.OnStatus || o.Status == ev.Status)
		})
		if !found {
			t.Errorf("%s is sameAs %s, but its finding at %q = %s is not among %s's", r.ID, first.ID, ev.Pointer, ev.Value, first.ID)
		}
	}
}
