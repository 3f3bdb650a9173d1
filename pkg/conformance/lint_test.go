package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcp-eval/mcp-eval-action/golden-examples/refserver"
	"github.com/mcp-eval/mcp-eval-action/internal/interop"
	"github.com/mcp-eval/mcp-eval-action/pkg/check"
)

// relisting serves the reference server with the tools of its tools/list
// answers replaced by tools: the rest of the server (discover, calls) is
// the correct one, so only the lint has anything to find.
type relisting struct {
	next  http.Handler
	tools string // a JSON array
}

func (h relisting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct{ Method string }
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/list" {
		h.next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	h.next.ServeHTTP(rec, r)
	var msg map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &msg); err != nil {
		http.Error(w, "the fixture wants a JSON answer to tools/list: "+err.Error(), 500)
		return
	}
	res, _ := msg["result"].(map[string]any)
	res["tools"] = json.RawMessage(h.tools)
	delete(res, "nextCursor")
	out, _ := json.Marshal(msg)
	for k, vs := range rec.Header() {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(out)
}

// On the reference server the lint finds what is there, over both
// transports: send_email's two parameters without a description (a
// finding the quick start shows), and not search_invoices' customer_id,
// which a $ref to a described definition describes; every other LINT
// check passes.
func TestLintOnTheReferenceServer(t *testing.T) {
	for _, kind := range []string{"http", "stdio"} {
		t.Run(kind, func(t *testing.T) {
			_, res := runChecks(t, refTarget(t, kind), 1, "LINT")
			if len(res) != len(lintFamily.checks) {
				t.Fatalf("%d LINT results, want %d", len(res), len(lintFamily.checks))
			}
			l2 := res["LINT-2"]
			if all := l2.Outcome.Message + " " + strings.Join(l2.Outcome.Details, " "); l2.Verdict != check.Warned ||
				strings.Contains(all, "search_invoices") ||
				!strings.Contains(all, `tool "send_email": 2 of 3 parameters have no description: "body", "subject"`) {
				t.Errorf("LINT-2: %s %s", l2.Verdict, all)
			}
			delete(res, "LINT-2")
			for id, r := range res {
				if r.Verdict != check.Passed || r.Family != "LINT" || r.FamilyTitle != "tool descriptions" || r.Level != check.Should {
					t.Errorf("%s: %s %q %v", id, r.Verdict, r.Outcome.Message, r.Outcome.Details)
				}
			}
		})
	}
}

// Each LINT check warns on the tools that break its rule, names the tool
// (the pair, for LINT-5) and points at the member in the response; the
// Layer 0 verdict stays pass.
func TestLintFindsBadDescriptions(t *testing.T) {
	tools := `[
	 {"name":"get","inputSchema":{"type":"object"}},
	 {"name":"fetch_item","description":"Fetch.","inputSchema":{"type":"object"}},
	 {"name":"search_orders","description":"Search the orders of a customer by status and date range.",
	  "inputSchema":{"type":"object","required":["x","customer","filter"],"properties":{
	    "x":{"type":"string"},
	    "customer":{"type":"string"},
	    "filter":{},
	    "status":{"type":"string","enum":["open","closed"],"description":"order status"},
	    "prio":{"type":"integer","enum":[1,2,3]},
	    "region":{"type":"string","enum":["EU","US"],"description":"EU is Europe, US is the United States"}}}},
	 {"name":"find_orders","description":"Search the orders of one customer by status and by date range.",
	  "inputSchema":{"type":"object","properties":{"q":{"type":"string","description":"free text"}}}}
	]`
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	rep, res := runChecks(t, serveHTTP(t, relisting{next: srv.Handler(), tools: tools}), 1, "LINT")
	if rep.Verdict != VerdictPass {
		t.Errorf("lint findings moved the Layer 0 verdict: %s", rep.Verdict)
	}
	want := map[string][]string{
		"LINT-1": {`tool "get" has no description`, `tool "fetch_item" is described in one word: "Fetch."`},
		"LINT-2": {`tool "search_orders": 4 of 6 parameters have no description: "customer", "filter", "prio", "x"`},
		"LINT-3": {`required parameter "filter" has no description and no type, enum or format says what shape of value it takes`, `required parameter "x" has no description and its name says nothing of the value`},
		"LINT-4": {`parameter "prio" has enum values a model cannot read ("1", "2", "3")`},
		"LINT-5": {`tools "search_orders" and "find_orders" have near-duplicate descriptions (similarity 0.`},
	}
	for id, phrases := range want {
		r := res[id]
		all := strings.Join(append([]string{r.Outcome.Message}, r.Outcome.Details...), "\n")
		if r.Verdict != check.Warned {
			t.Errorf("%s: %s, want warn: %s", id, r.Verdict, all)
		}
		for _, p := range phrases {
			if !strings.Contains(all, p) {
				t.Errorf("%s does not say %q:\n%s", id, p, all)
			}
		}
		if len(r.Outcome.Evidence) == 0 || !strings.HasPrefix(r.Outcome.Evidence[0].Pointer, "/result/tools/") {
			t.Errorf("%s: evidence does not point into the listing: %+v", id, r.Outcome.Evidence)
		}
	}
	if strings.Contains(res["LINT-3"].Outcome.Message+strings.Join(res["LINT-3"].Outcome.Details, ""), `"customer"`) {
		t.Errorf("LINT-3 flagged a typed parameter with a telling name: %s", res["LINT-3"].Outcome.Message)
	}
	if strings.Contains(res["LINT-4"].Outcome.Message+strings.Join(res["LINT-4"].Outcome.Details, ""), "region") {
		t.Errorf("LINT-4 flagged an enum its description explains: %s", res["LINT-4"].Outcome.Message)
	}
	if p := res["LINT-1"].Outcome.Evidence[0]; p.Pointer != "/result/tools/0/description" || !p.Missing {
		t.Errorf("LINT-1's first evidence: %+v, want the missing /result/tools/0/description", p)
	}
}

// A tool listed twice is TOOL-5's finding; the lint reads the first and
// does not find the second a near-duplicate of it, nor lint it again.
// A second, different definition under the name is linted, and is not
// a near-duplicate of the first either.
func TestLintReadsATwiceListedToolOnce(t *testing.T) {
	tools := `[
	 {"name":"get_order","description":"Get one order of a customer by its order id.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}}},
	 {"name":"get_order","description":"Get one order of a customer by its order id.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}}},
	 {"name":"list_regions","description":"List the sales regions with their codes and names.","inputSchema":{"type":"object"}}
	]`
	srv := refserver.New(refserver.Options{})
	t.Cleanup(srv.Close)
	_, res := runChecks(t, serveHTTP(t, relisting{next: srv.Handler(), tools: tools}), 1, "LINT", "TOOL-5")
	if r := res["TOOL-5"]; r.Verdict != check.Warned || !strings.Contains(r.Outcome.Message, `"get_order"`) {
		t.Errorf("TOOL-5 on a tool listed twice: %s: %s", r.Verdict, r.Outcome.Message)
	}
	if r := res["LINT-5"]; r.Verdict != check.Passed {
		t.Errorf("LINT-5 on a tool listed twice: %s: %s", r.Verdict, r.Outcome.Message)
	}
	if r := res["LINT-2"]; r.Verdict != check.Warned || len(r.Outcome.Details) != 0 {
		t.Errorf("LINT-2 on a tool listed twice: %s: %s %q, want one finding", r.Verdict, r.Outcome.Message, r.Outcome.Details)
	}

	tools = `[
	 {"name":"get_order","description":"Get one order of a customer by its order id.","inputSchema":{"type":"object","properties":{"id":{"type":"string","description":"the order id"}}}},
	 {"name":"get_order","description":"Get one order of a customer by its order id, with lines.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}}}
	]`
	_, res = runChecks(t, serveHTTP(t, relisting{next: srv.Handler(), tools: tools}), 1, "LINT-2", "LINT-5")
	if r := res["LINT-5"]; r.Verdict != check.Passed {
		t.Errorf("LINT-5 on two definitions of one name: %s: %s", r.Verdict, r.Outcome.Message)
	}
	if r := res["LINT-2"]; r.Verdict != check.Warned || !strings.Contains(r.Outcome.Message, `"id"`) {
		t.Errorf("LINT-2 did not lint the second definition of a name: %s: %s", r.Verdict, r.Outcome.Message)
	}
}

// The lint runs on servers written by others and judges them without a
// harness error: each result is pass or warn.
func TestLintOnRealServers(t *testing.T) {
	for _, tg := range interop.Targets() {
		if tg.Era != interop.Modern || tg.Transport != interop.Stdio {
			continue
		}
		t.Run(tg.Name, func(t *testing.T) {
			tg.Require(t)
			argv, dir, err := tg.Command()
			if err != nil {
				t.Fatal(err)
			}
			// Node starts slowly on a loaded machine: the deadlines of the
			// real-server tests, not the reference server's.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rep, _, err := Run(ctx, Target{Argv: argv, Dir: dir}, Options{Options: check.Options{Runs: 1, Only: []string{"LINT"}}, ProbeTimeout: 30 * time.Second, RequestTimeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Checks) != len(lintFamily.checks) {
				t.Fatalf("%d LINT results", len(rep.Checks))
			}
			for _, r := range rep.Checks {
				id := r.ID
				if r.Verdict != check.Passed && r.Verdict != check.Warned {
					t.Errorf("%s: %s %s", id, r.Verdict, r.Outcome.Message)
				}
				t.Logf("%s %s: %s", id, r.Verdict, r.Outcome.Message)
			}
		})
	}
}

// lintPairs keeps only the best pairs; they must be the ones, in the order,
// that scoring every pair and sorting them stably gives.
func TestLintPairsKeepsTheBestInOrder(t *testing.T) {
	var ts []lintTool
	words := []string{"records", "table", "key", "limit", "text", "customer", "invoice", "search", "lookup", "weather"}
	for i := range 60 {
		d := fmt.Sprintf("Look up %s %s %s %s", words[i%10], words[(i/10)%10], words[(i*7)%10], words[(i*3)%10])
		if i%9 == 0 {
			d = "short one" // under three content words: never compared
		}
		ts = append(ts, lintTool{Name: fmt.Sprint("t", i), Description: d})
	}
	type pair struct {
		a, b  int
		score float64
	}
	var all []pair
	for i := range ts {
		for j := i + 1; j < len(ts); j++ {
			si, sj := map[string]bool{}, map[string]bool{}
			for _, w := range lintSplit(ts[i].Description) {
				if len(w) > 1 && !lintStop[w] {
					si[w] = true
				}
			}
			for _, w := range lintSplit(ts[j].Description) {
				if len(w) > 1 && !lintStop[w] {
					sj[w] = true
				}
			}
			if len(si) < 3 || len(sj) < 3 {
				continue
			}
			inter := 0
			for w := range si {
				if sj[w] {
					inter++
				}
			}
			if s := float64(inter) / float64(len(si)+len(sj)-inter); s >= lintSimilar {
				all = append(all, pair{i, j, s})
			}
		}
	}
	sort.SliceStable(all, func(a, b int) bool { return all[a].score > all[b].score })
	if len(all) <= lintMaxPairs {
		t.Fatalf("the corpus makes only %d similar pairs: it does not test the bound", len(all))
	}
	top, more := lintPairs(ts, lintMaxPairs)
	if len(top) != lintMaxPairs || more != len(all)-lintMaxPairs {
		t.Fatalf("got %d pairs and %d more, want %d and %d", len(top), more, lintMaxPairs, len(all)-lintMaxPairs)
	}
	for k, p := range top {
		if w := all[k]; p.A != w.a || p.B != w.b || p.Score != w.score {
			t.Errorf("pair %d: got %d,%d %.3f, want %d,%d %.3f", k, p.A, p.B, p.Score, w.a, w.b, w.score)
		}
	}
}
