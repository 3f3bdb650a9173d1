package check

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
)

func TestLocateFollowsRFC6901(t *testing.T) {
	doc := []byte(`{"jsonrpc":"2.0", "id":7, "result": {"a/b":{"m~n":[10, {"x" : "é\"}"}]}, "": 1, "ttlMs" :-1}}`)
	for ptr, want := range map[string]string{
		"":                      string(doc),
		"/result/ttlMs":         "-1",
		"/result/a~1b/m~0n/0":   "10",
		"/result/a~1b/m~0n/1":   `{"x" : "é\"}"}`,
		"/result/a~1b/m~0n/1/x": `"é\"}"`,
		"/result/":              "1",
	} {
		start, end, ok := Locate(doc, ptr)
		if !ok || string(doc[start:end]) != want {
			t.Errorf("Locate(%q) = %q %v, want %q", ptr, doc[start:end], ok, want)
		}
	}
	for _, ptr := range []string{"/result/ttlms", "/result/a~1b/m~0n/2", "/result/a~1b/m~0n/01", "/id/0", "result", "/result/a~2b"} {
		if _, _, ok := Locate(doc, ptr); ok {
			t.Errorf("Locate(%q) found something", ptr)
		}
	}
	if got := Pointer("result", "a/b", "m~n", 1); got != "/result/a~1b/m~0n/1" {
		t.Errorf("Pointer = %q", got)
	}
}

func TestAtCentresTheExcerptOnTheFault(t *testing.T) {
	// The fault at the end of a long message, as resources/read with a
	// large text and ttlMs last: an excerpt from the start misses it.
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"text":"` + strings.Repeat("ab", 800) + `"}],"ttlMs":-1}}`)
	ev := At(&Evidence{Request: "resources/read"}, msg, "/result/ttlMs")
	if ev.Pointer != "/result/ttlMs" || ev.Value != "-1" || ev.Request != "resources/read" {
		t.Fatalf("evidence %+v", ev)
	}
	if !strings.Contains(ev.Response, `"ttlMs":-1`) || !strings.HasPrefix(ev.Response, "…") || len(ev.Response) > pointedExcerpt+2*len("…") {
		t.Fatalf("excerpt not centred on the value or not bounded: %d bytes %q", len(ev.Response), ev.Response)
	}
	// A value longer than the excerpt is shown from its start.
	ev = At(nil, msg, "/result/contents/0/text")
	if !strings.HasPrefix(ev.Response, `…"abab`) || !strings.HasSuffix(ev.Value, "…") || len(ev.Value) > valueClip+len("…") {
		t.Fatalf("long value: %q / %q", ev.Value, ev.Response)
	}
	// Cut on rune boundaries, invalid UTF-8 replaced.
	msg = []byte(`{"result":{"s":"` + strings.Repeat("é", 600) + "\xff" + `","bad":true}}`)
	ev = At(nil, msg, "/result/bad")
	if !strings.Contains(ev.Response, `"bad":true`) || !utf8.ValidString(ev.Response) || !strings.Contains(ev.Response, "é�") {
		t.Fatalf("excerpt %q", ev.Response)
	}
}

func TestAbsentAndUnresolvedPointers(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":{"contents":[]}}`)
	if ev := Absent(nil, msg, "/result/ttlMs"); !ev.Missing || ev.Value != "" || ev.Response != string(msg) {
		t.Fatalf("absent member: %+v", ev)
	}
	// A member said to be missing that is there, a parent that is not an
	// object, a pointer At cannot resolve: only the pointer is kept.
	for _, ev := range []*Evidence{Absent(nil, msg, "/result/contents"), Absent(nil, msg, "/result/contents/x"), At(nil, msg, "/result/ttlMs")} {
		if ev.Missing || ev.Value != "" || ev.Pointer == "" {
			t.Fatalf("unresolved pointer looks located: %+v", ev)
		}
	}
}

func TestAtMessageLocatesInANotification(t *testing.T) {
	var n jsonrpc.Message
	if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`+strings.Repeat("x", 900)+`","level":"debug"}}`), &n); err != nil {
		t.Fatal(err)
	}
	resp := &Evidence{Request: "tools/call", Response: `{"jsonrpc":"2.0","id":3,"result":{}}`}
	ev := AtMessage(resp, &n, "/params/level")
	if ev.In != "notification notifications/message" || ev.Pointer != "/params/level" || ev.Value != `"debug"` {
		t.Fatalf("evidence %+v", ev)
	}
	// The response excerpt stays the response's; the message excerpt is
	// centred on the value at the end of a long message.
	if ev.Response != resp.Response || !strings.HasPrefix(ev.Message, "…") || !strings.Contains(ev.Message, `"level":"debug"`) {
		t.Fatalf("excerpts: response %q message %q", ev.Response, ev.Message)
	}
	if resp.In != "" || resp.Pointer != "" {
		t.Fatalf("AtMessage changed its input: %+v", resp)
	}
	if ev := AtMessage(nil, &n, "/params/levl"); ev.Value != "" || ev.Message != "" || ev.In == "" {
		t.Fatalf("unresolved pointer looks located: %+v", ev)
	}
}

func TestAbsentMessageNamesTheFirstMissingMember(t *testing.T) {
	var bare, noID jsonrpc.Message
	_ = json.Unmarshal([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), &bare)
	_ = json.Unmarshal([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"other":1}}}`), &noID)
	ptr := Pointer("params", "_meta", "io.modelcontextprotocol/subscriptionId")
	for m, want := range map[*jsonrpc.Message]string{&bare: "/params", &noID: ptr} {
		ev := AbsentMessage(nil, m, ptr)
		if !ev.Missing || ev.Pointer != want || ev.In != "notification notifications/tools/list_changed" || ev.Message == "" {
			t.Errorf("absent in %s: %+v, want missing at %s", m.Params, ev, want)
		}
	}
	// There after all, or under a parent that is no object: only the pointer.
	for _, p := range []string{"/params/_meta/other", "/params/_meta/other/x"} {
		if ev := AbsentMessage(nil, &noID, p); ev.Missing || ev.Message != "" || ev.Pointer != p {
			t.Errorf("AbsentMessage(%s) = %+v", p, ev)
		}
	}
}

// TestExecuteMarksARepeatedFault drives Execute: two checks that report
// the same value at the same pointer of the same request are one fault;
// a check with a fault of its own, or one located elsewhere, is not.
func TestExecuteMarksARepeatedFault(t *testing.T) {
	resp := []byte(`{"jsonrpc":"2.0","id":9,"result":{"ttlMs":-1,"cacheScope":"nope"}}`)
	req := func(id int) *Evidence {
		return &Evidence{Transport: "stdio", Request: `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"resources/read","params":{"_meta":{"traceparent":"00-` + strings.Repeat(string(rune('a'+id)), 32) + `-01"},"uri":"x"}}`}
	}
	at := func(id int, ptr string) func(p *Pass) error {
		return func(p *Pass) error { p.Failf(At(req(id), resp, ptr), "bad %s", ptr); return nil }
	}
	status := func(id, code int) func(p *Pass) error {
		return func(p *Pass) error {
			ev := req(id)
			ev.Transport, ev.Status, ev.OnStatus = "http", code, true
			p.Failf(ev, "HTTP %d", code)
			return nil
		}
	}
	mk := func(id string, run func(p *Pass) error) *Check {
		return &Check{ID: id, Level: Must, Transports: Both, Spec: "s", Doc: "d", Run: run}
	}
	reg := Registry{Families: []Family{{ID: "A", Title: "a"}}, Checks: []*Check{
		mk("A-1", at(1, "/result/ttlMs")),
		mk("A-2", at(2, "/result/ttlMs")),      // the same fault: sameAs A-1
		mk("A-3", at(3, "/result/cacheScope")), // another place
		mk("A-4", func(p *Pass) error { // the same fault and one of its own
			p.Failf(At(req(4), resp, "/result/ttlMs"), "bad")
			p.Failf(nil, "and something else")
			return nil
		}),
		mk("A-5", func(p *Pass) error { // the same place, another request
			p.Failf(At(&Evidence{Transport: "stdio", Request: `{"id":5,"method":"resources/read","params":{"uri":"y"}}`}, resp, "/result/ttlMs"), "bad")
			return nil
		}),
		mk("A-6", func(p *Pass) error { p.Passf(At(req(6), resp, "/result/ttlMs"), "fine"); return nil }),
		// The same HTTP status for the same request (META-1 and ERR-4 on
		// a -32602 that came with HTTP 200): one fault.
		mk("A-7", status(7, 200)),
		mk("A-8", status(8, 200)),
		mk("A-9", status(9, 500)),
	}}
	results, err := Execute(context.Background(), reg, Env{Transport: "stdio"}, Options{Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A-1": "", "A-2": "A-1", "A-3": "", "A-4": "", "A-5": "", "A-6": "", "A-7": "", "A-8": "A-7", "A-9": ""}
	for _, r := range results {
		if r.SameAs != want[r.ID] {
			t.Errorf("%s sameAs %q, want %q", r.ID, r.SameAs, want[r.ID])
		}
	}
}
