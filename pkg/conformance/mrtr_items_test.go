package conformance

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// The reference server with more MRTR items than send_email
// (refserver.MRTRItems, example-server --mrtr-items): the checks must judge
// every item, not the first that asks for input.

// mrtrItemsTarget is the reference server with these extra items (the
// --mrtr-items syntax) and these rules broken on send_email.
func mrtrItemsTarget(t *testing.T, kind, items string, breaks ...string) Target {
	t.Helper()
	if kind == "http" {
		parsed, err := refserver.ParseMRTRItems(items)
		if err != nil {
			t.Fatal(err)
		}
		br := map[string]bool{}
		for _, b := range breaks {
			br[b] = true
		}
		srv := refserver.New(refserver.Options{MRTRItems: parsed, Break: br})
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(func() { hs.Close(); srv.Close() })
		return Target{URL: hs.URL + "/mcp"}
	}
	argv := []string{exampleServer, "--mrtr-items", items}
	if len(breaks) > 0 {
		argv = append(argv, "--break", strings.Join(breaks, ","))
	}
	return Target{Argv: argv}
}

// A fault on the second or third of three MRTR items (tools and prompts,
// all reachable without --call-tool) fails the check of its rule, naming
// that item; the same server without the fault passes, having judged all
// three.
func TestMRTRFaultOnALaterItem(t *testing.T) {
	cases := []struct {
		id, items, faulty string
	}{
		{"MRTR-2", "tool:ask_a,tool:ask_b:MRTR-2,prompt:ask_c", `tools/call "ask_b"`},
		{"MRTR-3", "tool:ask_a,prompt:ask_b,prompt:ask_c:MRTR-3", `prompts/get "ask_c"`},
		{"MRTR-4", "tool:ask_a,tool:ask_b:MRTR-4,prompt:ask_c", `tools/call "ask_b"`},
		{"MRTR-5", "tool:ask_a,prompt:ask_b,prompt:ask_c:MRTR-5", `prompts/get "ask_c"`},
		{"MRTR-6", "tool:ask_a,tool:ask_b,tool:ask_c:MRTR-6", `tools/call "ask_c"`},
		{"MRTR-7", "tool:ask_a,prompt:ask_b:MRTR-7,tool:ask_c", `prompts/get "ask_b"`},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			want := check.Failed
			if c.id == "MRTR-6" {
				want = check.Warned // a SHOULD
			}
			for _, kind := range []string{"http", "stdio"} {
				_, bad := featRun(t, mrtrItemsTarget(t, kind, c.items), 2, nil, c.id)
				r := bad[c.id]
				if r.Verdict != want || !strings.Contains(r.Outcome.Message, c.faulty) {
					t.Errorf("%s over %s, items %s: %s %q, want %s naming %s", c.id, kind, c.items, r.Verdict, r.Outcome.Message, want, c.faulty)
				}
				for _, d := range r.Outcome.Details {
					if strings.Contains(d, `"ask_a"`) {
						t.Errorf("%s over %s: the correct item ask_a is blamed: %q", c.id, kind, d)
					}
				}
			}
		})
	}
	for _, kind := range []string{"http", "stdio"} {
		rep, good := featRun(t, mrtrItemsTarget(t, kind, "tool:ask_a,tool:ask_b,prompt:ask_c"), 2, nil, "MRTR")
		for _, r := range rep.Checks {
			if r.ID == "MRTR-8" {
				continue // ask_* answer JSON, not SSE, without logs
			}
			if r.Verdict != check.Passed {
				t.Errorf("%s over %s on the correct items: %s %q %v", r.ID, kind, r.Verdict, r.Outcome.Message, r.Outcome.Details)
			}
		}
		for _, id := range []string{"MRTR-2", "MRTR-3", "MRTR-4", "MRTR-5", "MRTR-6", "MRTR-7", "MRTR-9"} {
			if msg := good[id].Outcome.Message; !strings.HasPrefix(msg, "3 items judged") {
				t.Errorf("%s over %s: %q, want 3 items judged", id, kind, msg)
			}
		}
	}
}

// MRTR-7 tampers with the items that carry a requestState, wherever they
// come: here only the third does, after two stateless items.
func TestMRTR7PicksTheItemThatCarriesState(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		_, bad := featRun(t, mrtrItemsTarget(t, kind, "tool:ask_a:stateless,prompt:ask_b:stateless,tool:ask_c:MRTR-7"), 2, nil, "MRTR-7")
		if r := bad["MRTR-7"]; r.Verdict != check.Failed || !strings.Contains(r.Outcome.Message, `tools/call "ask_c"`) {
			t.Errorf("over %s, only ask_c carries state and accepts a tampered one: %s %q, want a failure naming ask_c", kind, r.Verdict, r.Outcome.Message)
		}
		_, good := featRun(t, mrtrItemsTarget(t, kind, "tool:ask_a:stateless,prompt:ask_b:stateless,tool:ask_c"), 2, nil, "MRTR-7")
		if r := good["MRTR-7"]; r.Verdict != check.Passed || !strings.Contains(r.Outcome.Message, `tools/call "ask_c": a tampered requestState was rejected`) {
			t.Errorf("over %s, ask_c rejects a tampered state: %s %q", kind, r.Verdict, r.Outcome.Message)
		}
		_, none := featRun(t, mrtrItemsTarget(t, kind, "tool:ask_a:stateless,prompt:ask_b:stateless"), 2, nil, "MRTR-7")
		if r := none["MRTR-7"]; r.Verdict != check.Skipped || !strings.Contains(r.Outcome.Message, "no requestState") {
			t.Errorf("over %s, no item carries state: %s %q, want a skip saying so", kind, r.Verdict, r.Outcome.Message)
		}
	}
}

// MRTR-4's verdict depends on the items the allowed tools make reachable,
// not on which of them comes first: a faulty read-only item fails it
// whether or not --call-tool also allows the correct send_email, and a
// faulty send_email fails it only when it is allowed.
func TestMRTR4VerdictDoesNotDependOnAllowedTools(t *testing.T) {
	for _, c := range []struct {
		name   string
		items  string
		breaks []string
		allow  []string
		want   check.Verdict
	}{
		{"faulty item, send_email not allowed", "tool:ask_a:MRTR-4", nil, nil, check.Failed},
		{"faulty item, correct send_email allowed first", "tool:ask_a:MRTR-4", nil, []string{"send_email"}, check.Failed},
		{"faulty send_email not allowed", "tool:ask_a", []string{"MRTR-4"}, nil, check.Passed},
		{"faulty send_email allowed", "tool:ask_a", []string{"MRTR-4"}, []string{"send_email"}, check.Failed},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, got := featRun(t, mrtrItemsTarget(t, "http", c.items, c.breaks...), 2, c.allow, "MRTR-4")
			if r := got["MRTR-4"]; r.Verdict != c.want {
				t.Errorf("MRTR-4: %s %q %v, want %s", r.Verdict, r.Outcome.Message, r.Outcome.Details, c.want)
			}
		})
	}
}

// A server with 10,000 read-only tools that all ask for input cannot
// stretch the run past its deadline: the search and the judging stop at
// their share of it, the checks still pass on what they judged, and their
// messages say what was left out. META-3, META-4, STATE-2 and CACHE-2
// judge the same items within the same deadline.
func TestMRTRManyItemsStayWithinTheDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 tools")
	}
	items, err := refserver.ParseMRTRItems("tool:bulk:x10000")
	if err != nil {
		t.Fatal(err)
	}
	srv := refserver.New(refserver.Options{MRTRItems: items, PageSize: 500})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { hs.Close(); srv.Close() })
	deadline := 24 * time.Second
	if raceEnabled {
		// Listing 10,000 tools alone takes most of 24 s under the race
		// detector, before any MRTR check starts.
		deadline = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	rep, _, err := Run(ctx, Target{URL: hs.URL + "/mcp"}, Options{Options: check.Options{Runs: 2, Only: []string{"MRTR", "META-3", "META-4", "STATE-2", "CACHE-2"}}, ProbeTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took >= deadline {
		t.Fatalf("the run took %s, past its deadline of %s", took, deadline)
	}
	t.Logf("10,000 MRTR tools: the run took %s of %s", took, deadline)
	most := 0
	for _, r := range rep.Checks {
		if r.ID == "MRTR-1" || r.ID == "MRTR-8" {
			continue
		}
		msg := r.Outcome.Message
		if r.Verdict != check.Passed {
			t.Errorf("%s: %s %q", r.ID, r.Verdict, msg)
			continue
		}
		var judged int
		if _, err := fmt.Sscanf(msg, "%d item", &judged); err != nil || judged < 1 {
			t.Errorf("%s: %q does not say how many items were judged", r.ID, msg)
			continue
		}
		if judged < 10000 && !strings.Contains(msg, "were not judged") && !strings.Contains(msg, "reachable items before its time budget") {
			t.Errorf("%s judged %d of 10000 items without saying why the rest were not: %q", r.ID, judged, msg)
		}
		t.Logf("%s judged %d items", r.ID, judged)
		most = max(most, judged)
	}
	if most <= 8 {
		t.Errorf("no check judged more than %d items: the old cap of 8 tries is back", most)
	}
}
