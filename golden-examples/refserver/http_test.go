package refserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHTTPDiscover(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	r := ht.call(t, "discover-1", "server/discover", params(nil), nil)
	res := wantResult(t, r, "server/discover")
	if got := r.last(t)["id"]; got != "discover-1" {
		t.Errorf("id = %v, want the string discover-1 (RPC-1)", got)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if got := asSlice(res["supportedVersions"]); len(got) != 1 || got[0] != ProtocolVersion {
		t.Errorf("supportedVersions = %v (DISC-3)", got)
	}
	caps := asMap(res["capabilities"])
	if keys := sortedKeys(caps); strings.Join(keys, ",") != "completions,extensions,logging,prompts,resources,tools" {
		t.Errorf("capabilities = %v (DISC-6)", keys)
	}
	if get(caps, "tools", "listChanged") != true || get(caps, "resources", "subscribe") != true || get(caps, "resources", "listChanged") != true {
		t.Errorf("capabilities = %s", compactJSON(caps))
	}
	if str(res["instructions"]) == "" {
		t.Errorf("instructions missing")
	}
	if _, ok := res["serverInfo"]; ok {
		t.Errorf("top-level serverInfo is a pre-final leftover (DISC-5)")
	}
	// Integer ids keep their type too.
	r = ht.call(t, 7, "server/discover", params(nil), nil)
	if id, ok := r.last(t)["id"].(json.Number); !ok || id.String() != "7" {
		t.Errorf("id = %#v, want the number 7 (RPC-1)", r.last(t)["id"])
	}
}

// listAll follows nextCursor and returns every item and every page result.
func listAll(t *testing.T, ht *httpTarget, method, key string) ([]any, []map[string]any) {
	t.Helper()
	var items []any
	var pages []map[string]any
	extra := map[string]any{}
	for i := 0; i < 10; i++ {
		res := wantResult(t, ht.call(t, i+1, method, params(extra), nil), method)
		pages = append(pages, res)
		items = append(items, asSlice(res[key])...)
		next, ok := res["nextCursor"].(string)
		if !ok {
			return items, pages
		}
		extra = map[string]any{"cursor": next}
	}
	t.Fatalf("%s: more than 10 pages", method)
	return nil, nil
}

func TestHTTPPaginatedLists(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	tools, pages := listAll(t, ht, "tools/list", "tools")
	var names []string
	for _, tl := range tools {
		names = append(names, str(asMap(tl)["name"]))
	}
	if got := strings.Join(names, ","); got != "get_weather,search_invoices,send_email,lookup_region,slow_count" {
		t.Errorf("tools = %s (TOOL-3)", got)
	}
	if len(pages) != 2 {
		t.Errorf("tools/list gave %d pages, want 2 with page size 3", len(pages))
	}
	for _, p := range pages {
		if p["cacheScope"] != pages[0]["cacheScope"] {
			t.Errorf("cacheScope differs between pages (CACHE-3)")
		}
	}
	// PAGE-3: the same cursor gives the same page; TOOL-3: same order twice.
	cursor := str(pages[0]["nextCursor"])
	a := wantResult(t, ht.call(t, 1, "tools/list", params(map[string]any{"cursor": cursor}), nil), "tools/list")
	b := wantResult(t, ht.call(t, 2, "tools/list", params(map[string]any{"cursor": cursor}), nil), "tools/list")
	if compactJSON(a["tools"]) != compactJSON(b["tools"]) || compactJSON(a["tools"]) != compactJSON(pages[1]["tools"]) {
		t.Errorf("the same cursor gave different pages (PAGE-3)")
	}

	for _, c := range []struct{ method, key, want string }{
		{"prompts/list", "prompts", "summarize_invoices"},
		{"resources/list", "resources", summaryURI},
		{"resources/templates/list", "resourceTemplates", customerURITemplate},
	} {
		items, pages := listAll(t, ht, c.method, c.key)
		if len(items) != 1 || len(pages) != 1 {
			t.Fatalf("%s: %d items on %d pages", c.method, len(items), len(pages))
		}
		m := asMap(items[0])
		if m["name"] != c.want && m["uri"] != c.want && m["uriTemplate"] != c.want {
			t.Errorf("%s: got %s", c.method, compactJSON(m))
		}
		if pages[0]["cacheScope"] != "public" {
			t.Errorf("%s: cacheScope = %v, want public", c.method, pages[0]["cacheScope"])
		}
	}
}

func TestHTTPInvalidCursors(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	first := wantResult(t, ht.call(t, 1, "tools/list", params(nil), nil), "tools/list")
	valid := str(first["nextCursor"])
	flip := "A"
	if strings.HasSuffix(valid, "A") {
		flip = "B"
	}
	tampered := valid[:len(valid)-1] + flip
	for _, c := range []struct {
		method string
		cursor any
	}{
		{"tools/list", "%%bogus%%"},
		{"tools/list", ""}, // PAGE-1: "" is a cursor, and this server never issues it
		{"tools/list", tampered},
		{"tools/list", 3},
		{"prompts/list", valid}, // a tools cursor is not a prompts cursor
		{"resources/list", "x"},
		{"resources/templates/list", "x"},
	} {
		r := ht.call(t, 2, c.method, params(map[string]any{"cursor": c.cursor}), nil)
		wantError(t, r, http.StatusOK, CodeInvalidParams, c.method) // PAGE-2
	}
}

func TestHTTPToolCalls(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	outputs := map[string]*schema{}
	for _, tl := range ht.srv.tools {
		if tl.output != nil {
			outputs[tl.name] = tl.output()
		}
	}
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		r := ht.call(t, "c", "tools/call", params(map[string]any{"name": name, "arguments": args}), nil)
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type = %q, want a plain JSON response without notifications", name, ct)
		}
		return wantResult(t, r, "tools/call")
	}
	checkStructured := func(name string, res map[string]any) {
		t.Helper()
		if res["isError"] != false {
			t.Fatalf("%s failed: %s", name, compactJSON(res))
		}
		sc := res["structuredContent"]
		if err := outputs[name].validate(sc); err != nil {
			t.Errorf("%s: structuredContent breaks outputSchema (CALL-4): %v", name, err)
		}
		text := str(get(asSlice(res["content"])[0], "text"))
		if !jsonEqual(mustDecode(t, text), sc) {
			t.Errorf("%s: text block is not the serialized structuredContent (CALL-5)", name)
		}
	}

	w := call("get_weather", map[string]any{"location": "Seattle, WA"})
	checkStructured("get_weather", w)
	if w2 := call("get_weather", map[string]any{"location": "Seattle, WA"}); compactJSON(w2) != compactJSON(w) {
		t.Errorf("get_weather is not deterministic")
	}
	f := call("get_weather", map[string]any{"location": "Seattle, WA", "units": "fahrenheit"})
	checkStructured("get_weather", f)
	if get(f, "structuredContent", "units") != "fahrenheit" {
		t.Errorf("units not honoured: %s", compactJSON(f))
	}

	inv := call("search_invoices", map[string]any{"customer_id": "C1234"})
	checkStructured("search_invoices", inv)
	all := asSlice(get(inv, "structuredContent", "invoices"))
	if len(all) < 3 || num(get(inv, "structuredContent", "total")) != float64(len(all)) {
		t.Errorf("search_invoices: %s", compactJSON(inv))
	}
	lim := call("search_invoices", map[string]any{"customer_id": "C1234", "limit": 1})
	checkStructured("search_invoices", lim)
	if n := len(asSlice(get(lim, "structuredContent", "invoices"))); n != 1 {
		t.Errorf("limit 1 gave %d invoices", n)
	}
	for _, status := range []string{"paid", "open", "overdue"} {
		res := call("search_invoices", map[string]any{"customer_id": "C1234", "status": status})
		checkStructured("search_invoices", res)
		for _, i := range asSlice(get(res, "structuredContent", "invoices")) {
			if get(i, "status") != status {
				t.Errorf("status filter %s returned %v", status, get(i, "status"))
			}
		}
	}

	region := ht.call(t, 1, "tools/call", params(map[string]any{"name": "lookup_region", "arguments": map[string]any{"region": "us-west1", "query": "users"}}),
		func(h http.Header) { h.Set("Mcp-Param-Region", "us-west1") })
	if res := wantResult(t, region, "tools/call"); !strings.Contains(str(get(asSlice(res["content"])[0], "text")), "us-west1") {
		t.Errorf("lookup_region: %s", compactJSON(res))
	}
	count := call("slow_count", map[string]any{"n": 3})
	checkStructured("slow_count", count)
}

// TestHTTPToolErrors: unknown tool is a protocol error (CALL-2); bad
// arguments are a tool execution error with isError (CALL-3).
func TestHTTPToolErrors(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	r := ht.call(t, 1, "tools/call", params(map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}), nil)
	wantError(t, r, http.StatusOK, CodeInvalidParams, "tools/call")

	for _, c := range []struct {
		tool string
		args map[string]any
		hint string
	}{
		{"get_weather", map[string]any{}, "location"},
		{"get_weather", map[string]any{"location": 42}, "type string"},
		{"get_weather", map[string]any{"location": "Paris", "units": "kelvin"}, "one of"},
		{"get_weather", map[string]any{"location": "   "}, "blank"},
		{"get_weather", map[string]any{"location": "???"}, "unknown location"},
		{"get_weather", map[string]any{"location": "Paris", "extra": true}, "unexpected property"},
		{"search_invoices", map[string]any{"customer_id": "X1"}, "pattern"},
		{"search_invoices", map[string]any{"customer_id": "C1234", "limit": 51}, "<= 50"},
		{"search_invoices", map[string]any{"customer_id": "C1234", "limit": 2.5}, "integer"},
		{"search_invoices", map[string]any{"customer_id": "C1234", "status": "late"}, "one of"},
		{"send_email", map[string]any{"to": "nobody", "subject": "s", "body": "b"}, "email"},
		{"slow_count", map[string]any{"n": 0}, ">= 1"},
		{"slow_count", map[string]any{"n": 21}, "<= 20"},
	} {
		res := wantResult(t, ht.call(t, 1, "tools/call", params(map[string]any{"name": c.tool, "arguments": c.args}), nil), "tools/call")
		text := str(get(asSlice(res["content"])[0], "text"))
		if res["isError"] != true || !strings.Contains(text, c.hint) {
			t.Errorf("%s %v: got %s, want isError with %q", c.tool, c.args, compactJSON(res), c.hint)
		}
		if _, ok := res["structuredContent"]; ok {
			t.Errorf("%s: error result carries structuredContent", c.tool)
		}
	}
	r = ht.call(t, 1, "tools/call", params(map[string]any{"name": "get_weather", "arguments": []any{"Paris"}}), nil)
	wantError(t, r, http.StatusOK, CodeInvalidParams, "tools/call")
}

// TestHTTPProgressAndLogging: slow_count streams SSE with progress and logs
// only when asked (PROG-1, LOG-1, LOG-2, HTTP-5).
func TestHTTPProgressAndLogging(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	m := meta(nil)
	m["progressToken"] = 99
	m[metaLogLevel] = "info"
	r := ht.call(t, "count", "tools/call", map[string]any{"_meta": m, "name": "slow_count", "arguments": map[string]any{"n": 5}}, nil)
	if ct := r.header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q, want text/event-stream", ct)
	}
	if r.header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("X-Accel-Buffering missing (HTTP-5)")
	}
	res := wantResult(t, r, "tools/call")
	if get(res, "structuredContent", "count") == nil {
		t.Errorf("final result: %s", compactJSON(res))
	}
	last := 0.0
	progress, logs := 0, 0
	for _, msg := range r.msgs[:len(r.msgs)-1] {
		checkMessage(t, msg, "tools/call")
		switch msg["method"] {
		case "notifications/progress":
			progress++
			p := asMap(msg["params"])
			if tok, ok := p["progressToken"].(json.Number); !ok || tok.String() != "99" {
				t.Errorf("progressToken = %#v, want the number 99 (PROG-1)", p["progressToken"])
			}
			if num(p["progress"]) <= last || num(p["total"]) != 5 {
				t.Errorf("progress %v after %v, total %v (PROG-1)", p["progress"], last, p["total"])
			}
			last = num(p["progress"])
		case "notifications/message":
			logs++
			if lvl := str(get(msg, "params", "level")); levelRank(lvl) < levelRank("info") {
				t.Errorf("log at %s below the requested info (LOG-2)", lvl)
			}
		default:
			t.Errorf("unexpected message before the response: %s", compactJSON(msg))
		}
	}
	if progress != 5 || logs != 2 {
		t.Errorf("got %d progress and %d log notifications, want 5 and 2", progress, logs)
	}

	// LOG-1: no logLevel, no notifications/message (progress only).
	m = meta(nil)
	m["progressToken"] = "tok"
	r = ht.call(t, 2, "tools/call", map[string]any{"_meta": m, "name": "slow_count", "arguments": map[string]any{"n": 2}}, nil)
	for _, msg := range r.msgs {
		if msg["method"] == "notifications/message" {
			t.Errorf("log sent without logLevel (LOG-1)")
		}
	}
	if len(r.msgs) != 3 {
		t.Errorf("got %d messages, want 2 progress + response", len(r.msgs))
	}

	// debug gets every level.
	m = meta(nil)
	m[metaLogLevel] = "debug"
	r = ht.call(t, 3, "tools/call", map[string]any{"_meta": m, "name": "slow_count", "arguments": map[string]any{"n": 2}}, nil)
	if len(r.msgs) != 5 { // info, debug, debug, notice, response
		t.Errorf("debug level: got %d messages, want 5", len(r.msgs))
	}

	// LOG-4: unknown level.
	m = meta(nil)
	m[metaLogLevel] = "verbose"
	r = ht.call(t, 4, "tools/call", map[string]any{"_meta": m, "name": "slow_count", "arguments": map[string]any{"n": 1}}, nil)
	wantError(t, r, http.StatusOK, CodeInvalidParams, "tools/call")
}

func emailArgs() map[string]any {
	return map[string]any{"to": "alice@example.com", "subject": "Hello", "body": "Hi Alice"}
}

func emailParams(caps map[string]any, extra map[string]any) map[string]any {
	p := map[string]any{"_meta": meta(caps), "name": "send_email", "arguments": emailArgs()}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// TestHTTPMRTR walks send_email's multi round-trip flow (MRTR-1..7, META-3/4).
func TestHTTPMRTR(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	elicit := map[string]any{"elicitation": map[string]any{}}

	first := wantResult(t, ht.call(t, 1, "tools/call", emailParams(elicit, nil), nil), "tools/call")
	if first["resultType"] != "input_required" {
		t.Fatalf("first call: %s", compactJSON(first))
	}
	req := asMap(get(first, "inputRequests", "confirm"))
	assertDef(t, req, "ElicitRequest")
	if req["method"] != "elicitation/create" || get(req, "params", "mode") != "form" ||
		get(req, "params", "requestedSchema", "properties", "confirm", "type") != "boolean" {
		t.Errorf("input request: %s", compactJSON(req))
	}
	state := str(first["requestState"])
	if state == "" {
		t.Fatalf("no requestState")
	}

	// STATE-2: the retry goes over a new connection.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	retry := func(id int, extra map[string]any) *httpReply {
		p := emailParams(elicit, extra)
		return ht.post(t, fresh, encodeRequest(t, id, "tools/call", p), baselineHeaders("tools/call", p))
	}
	accept := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	done := wantResult(t, retry(2, map[string]any{"inputResponses": accept, "requestState": state}), "tools/call")
	if done["resultType"] != "complete" || done["isError"] != false || !strings.Contains(str(get(asSlice(done["content"])[0], "text")), "Queued email to alice@example.com") {
		t.Errorf("accepted retry: %s", compactJSON(done))
	}

	for action, want := range map[string]string{"decline": "declined", "cancel": "cancelled"} {
		res := wantResult(t, retry(3, map[string]any{"requestState": state,
			"inputResponses": map[string]any{"confirm": map[string]any{"action": action}}}), "tools/call")
		if res["resultType"] != "complete" || res["isError"] != false || !strings.Contains(str(get(asSlice(res["content"])[0], "text")), want) {
			t.Errorf("%s: %s", action, compactJSON(res))
		}
	}
	no := wantResult(t, retry(4, map[string]any{"requestState": state,
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": false}}}}), "tools/call")
	if !strings.Contains(str(get(asSlice(no["content"])[0], "text")), "not sent") {
		t.Errorf("confirm=false: %s", compactJSON(no))
	}

	// MRTR-6: a retry without the answer is asked again; extra keys are ignored.
	again := wantResult(t, retry(5, map[string]any{"requestState": state, "inputResponses": map[string]any{"other": map[string]any{"action": "accept"}}}), "tools/call")
	if again["resultType"] != "input_required" {
		t.Errorf("retry without the answer: %s", compactJSON(again))
	}

	// MRTR-7: a tampered state, or one issued for other arguments, is rejected.
	flipped := []byte(state)
	flipped[len(flipped)/3] ^= 1
	r := retry(6, map[string]any{"inputResponses": accept, "requestState": string(flipped)})
	wantError(t, r, http.StatusOK, CodeInvalidParams, "tools/call")
	p := emailParams(elicit, map[string]any{"inputResponses": accept, "requestState": state})
	p["arguments"].(map[string]any)["to"] = "mallory@example.com"
	wantError(t, ht.post(t, fresh, encodeRequest(t, 7, "tools/call", p), baselineHeaders("tools/call", p)), http.StatusOK, CodeInvalidParams, "tools/call")

	// META-4/MRTR-4: no elicitation capability on this request → -32021,
	// even right after a request that declared it (META-3).
	for _, caps := range []map[string]any{nil, {"elicitation": map[string]any{"url": map[string]any{}}}, {"sampling": map[string]any{}}} {
		e := wantError(t, ht.call(t, 8, "tools/call", emailParams(caps, nil), nil), http.StatusBadRequest, CodeMissingRequiredClientCapability, "tools/call")
		if get(e, "data", "requiredCapabilities", "elicitation") == nil {
			t.Errorf("data.requiredCapabilities = %s", compactJSON(e["data"]))
		}
	}
	// Explicit form mode is fine.
	res := wantResult(t, ht.call(t, 9, "tools/call", emailParams(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}, nil), nil), "tools/call")
	if res["resultType"] != "input_required" {
		t.Errorf("form elicitation: %s", compactJSON(res))
	}
}

// TestHTTPExpiredState: requestState carries a short expiry (mrtr.mdx).
func TestHTTPExpiredState(t *testing.T) {
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	opts := testOptions()
	opts.Now = func() time.Time { return now }
	opts.StateKey = []byte("0123456789abcdef0123456789abcdef")
	ht := newHTTPTarget(t, opts)
	elicit := map[string]any{"elicitation": map[string]any{}}
	first := wantResult(t, ht.call(t, 1, "tools/call", emailParams(elicit, nil), nil), "tools/call")
	now = now.Add(11 * time.Minute)
	accept := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	r := ht.call(t, 2, "tools/call", emailParams(elicit, map[string]any{"inputResponses": accept, "requestState": first["requestState"]}), nil)
	e := wantError(t, r, http.StatusOK, CodeInvalidParams, "tools/call")
	if !strings.Contains(str(e["message"]), "expired") {
		t.Errorf("message = %v", e["message"])
	}
}

// TestHTTPHeaderValidation covers HDR-1..HDR-5.
func TestHTTPHeaderValidation(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	weather := params(map[string]any{"name": "get_weather", "arguments": map[string]any{"location": "Paris"}})
	region := func(v any) map[string]any {
		args := map[string]any{"query": "q"}
		if v != "<absent>" {
			args["region"] = v
		}
		return params(map[string]any{"name": "lookup_region", "arguments": args})
	}
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	cases := []struct {
		name   string
		method string
		p      map[string]any
		edit   func(http.Header)
		code   int // 0 = accepted
	}{
		{"no protocol version header", "tools/list", params(nil), func(h http.Header) { h.Del(headerProtocolVersion) }, CodeHeaderMismatch},
		{"version header differs from _meta", "tools/list", params(nil), func(h http.Header) { h.Set(headerProtocolVersion, "2025-11-25") }, CodeHeaderMismatch},
		{"no Mcp-Method", "tools/list", params(nil), func(h http.Header) { h.Del(headerMethod) }, CodeHeaderMismatch},
		{"Mcp-Method differs", "tools/list", params(nil), func(h http.Header) { h.Set(headerMethod, "prompts/list") }, CodeHeaderMismatch},
		{"Mcp-Method value is case-sensitive", "tools/call", weather, func(h http.Header) { h.Set(headerMethod, "TOOLS/CALL") }, CodeHeaderMismatch},
		{"header names are case-insensitive", "tools/call", weather, func(h http.Header) {
			h.Del(headerMethod)
			h.Del(headerName)
			h["mcp-method"] = []string{"tools/call"}
			h["MCP-NAME"] = []string{"get_weather"}
		}, 0},
		{"repeated Mcp-Method", "tools/list", params(nil), func(h http.Header) { h.Add(headerMethod, "tools/list") }, CodeHeaderMismatch},
		{"no Mcp-Name", "tools/call", weather, func(h http.Header) { h.Del(headerName) }, CodeHeaderMismatch},
		{"Mcp-Name differs", "tools/call", weather, func(h http.Header) { h.Set(headerName, "foo") }, CodeHeaderMismatch},
		{"Mcp-Name base64", "tools/call", weather, func(h http.Header) { h.Set(headerName, b64("get_weather")) }, 0},
		{"Mcp-Name invalid base64", "tools/call", weather, func(h http.Header) { h.Set(headerName, "=?base64?!!!?=") }, CodeHeaderMismatch},
		{"Mcp-Name sentinel is case-sensitive", "tools/call", weather, func(h http.Header) {
			h.Set(headerName, "=?BASE64?"+base64.StdEncoding.EncodeToString([]byte("get_weather"))+"?=")
		}, CodeHeaderMismatch},
		{"Mcp-Name surrounding whitespace", "tools/call", weather, func(h http.Header) { h.Set(headerName, "  get_weather  ") }, 0},
		{"Mcp-Name raw non-ASCII", "prompts/get", params(map[string]any{"name": "café"}), func(h http.Header) { h.Set(headerName, "café") }, CodeHeaderMismatch},
		{"Mcp-Name for prompts/get", "prompts/get", params(map[string]any{"name": "summarize_invoices", "arguments": map[string]any{"customer_id": "C1234"}}), func(h http.Header) { h.Set(headerName, "other") }, CodeHeaderMismatch},
		{"Mcp-Name for resources/read", "resources/read", params(map[string]any{"uri": summaryURI}), func(h http.Header) { h.Set(headerName, "summarize_invoices") }, CodeHeaderMismatch},
		{"Mcp-Param present and equal", "tools/call", region("us-west1"), func(h http.Header) { h.Set("Mcp-Param-Region", "us-west1") }, 0},
		{"Mcp-Param name case-insensitive", "tools/call", region("us-west1"), func(h http.Header) { h["mcp-param-region"] = []string{"us-west1"} }, 0},
		{"Mcp-Param missing", "tools/call", region("us-west1"), nil, CodeHeaderMismatch},
		{"Mcp-Param differs", "tools/call", region("us-west1"), func(h http.Header) { h.Set("Mcp-Param-Region", "eu-west1") }, CodeHeaderMismatch},
		{"Mcp-Param base64", "tools/call", region("Zürich"), func(h http.Header) { h.Set("Mcp-Param-Region", b64("Zürich")) }, 0},
		{"Mcp-Param base64 of padded value", "tools/call", region(" padded "), func(h http.Header) { h.Set("Mcp-Param-Region", b64(" padded ")) }, 0},
		{"Mcp-Param invalid base64", "tools/call", region("x"), func(h http.Header) { h.Set("Mcp-Param-Region", "=?base64?%%?=") }, CodeHeaderMismatch},
		{"Mcp-Param raw non-ASCII", "tools/call", region("Zürich"), func(h http.Header) { h.Set("Mcp-Param-Region", "Zürich") }, CodeHeaderMismatch},
		{"argument absent, no header", "tools/call", region("<absent>"), nil, 0},
		{"argument null, no header", "tools/call", region(nil), nil, 0},
		{"argument absent, header sent", "tools/call", region("<absent>"), func(h http.Header) { h.Set("Mcp-Param-Region", "us-west1") }, CodeHeaderMismatch},
		{"unrelated Mcp-Param ignored", "tools/call", weather, func(h http.Header) { h.Set("Mcp-Param-Other", "x") }, 0},
		{"Mcp-Session-Id ignored", "tools/list", params(nil), func(h http.Header) { h.Set("Mcp-Session-Id", "abc") }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ht.call(t, 1, c.method, c.p, c.edit)
			if c.code != 0 {
				wantError(t, r, http.StatusBadRequest, c.code, c.method)
				return
			}
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if e := asMap(r.last(t)["error"]); int(num(e["code"])) == CodeHeaderMismatch {
				t.Fatalf("rejected: %s", r.body)
			}
			checkMessage(t, r.last(t), c.method)
		})
	}
}

// TestHTTPEnvelopeErrors covers META-1, VER-1..VER-3, REM-1, REM-2, HTTP-6.
func TestHTTPEnvelopeErrors(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	for _, method := range []string{"tools/list", "server/discover"} {
		for name, p := range map[string]map[string]any{
			"no version":          {"_meta": map[string]any{metaClientCapabilities: map[string]any{}}},
			"no capabilities":     {"_meta": map[string]any{metaProtocolVersion: ProtocolVersion}},
			"no _meta":            {},
			"_meta not an object": {"_meta": "x"},
		} {
			// AMB-11: with the header present but no body version, both
			// -32602 and -32020 fit; this server answers -32602 (META-1).
			r := ht.call(t, 1, method, p, nil)
			if e := wantError(t, r, http.StatusBadRequest, CodeInvalidParams, method); e == nil {
				t.Errorf("%s: %s", method, name)
			}
		}
		r := ht.post(t, http.DefaultClient, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`"}`), baselineHeaders(method, nil))
		wantError(t, r, http.StatusBadRequest, CodeInvalidParams, method)
	}

	// VER-1/VER-2/VER-3 on one connection: supported, unsupported, supported.
	for _, method := range []string{"server/discover", "tools/list"} {
		wantResult(t, ht.call(t, 1, method, params(nil), nil), method)
		m := meta(nil)
		m[metaProtocolVersion] = "1900-01-01"
		r := ht.call(t, 2, method, map[string]any{"_meta": m}, func(h http.Header) { h.Set(headerProtocolVersion, "1900-01-01") })
		e := wantError(t, r, http.StatusBadRequest, CodeUnsupportedProtocolVersion, method)
		if get(e, "data", "requested") != "1900-01-01" || compactJSON(get(e, "data", "supported")) != `["2026-07-28"]` {
			t.Errorf("data = %s", compactJSON(e["data"]))
		}
		wantResult(t, ht.call(t, 3, method, params(nil), nil), method)
	}

	// REM-1/REM-2/HTTP-6: removed and unknown methods → 404 + -32601.
	for _, method := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "tasks/list", "tasks/result", "no/such"} {
		e := wantError(t, ht.call(t, 1, method, params(nil), nil), http.StatusNotFound, CodeMethodNotFound, method)
		if method == "initialize" && !strings.Contains(str(e["message"]), ProtocolVersion) {
			t.Errorf("initialize error does not name the supported versions (REM-2): %v", e["message"])
		}
	}
	// REM-2: a legacy initialize (no Mcp-Method, no _meta) fails header validation.
	legacy := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	r := ht.post(t, http.DefaultClient, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`), legacy)
	wantError(t, r, http.StatusBadRequest, CodeHeaderMismatch, "initialize")
}

// TestHTTPTransport covers HTTP-1..HTTP-4 and REM-4 and body limits.
func TestHTTPTransport(t *testing.T) {
	opts := testOptions()
	opts.MaxBodyBytes = 4096
	opts.AllowedOrigins = []string{"https://inspector.example"}
	ht := newHTTPTarget(t, opts)

	for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		req, _ := http.NewRequest(method, ht.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("%s: status %d, Allow %q (REM-4)", method, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}

	for origin, want := range map[string]int{
		"https://evil.example":      http.StatusForbidden,
		"http://localhost.evil.com": http.StatusForbidden,
		"null":                      http.StatusForbidden,
		"https://localhost":         http.StatusForbidden,
		"http://localhost:3000":     http.StatusOK,
		"http://127.0.0.1":          http.StatusOK,
		"http://[::1]:8080":         http.StatusOK,
		"https://inspector.example": http.StatusOK,
	} {
		r := ht.call(t, 1, "tools/list", params(nil), func(h http.Header) { h.Set("Origin", origin) })
		if r.status != want {
			t.Errorf("Origin %s: status %d, want %d (HTTP-2)", origin, r.status, want)
		}
	}

	// HTTP-4/RPC-3: notifications get 202 and no body.
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		r := ht.post(t, http.DefaultClient, []byte(body), http.Header{"Content-Type": {"application/json"}})
		if r.status != http.StatusAccepted || len(r.body) != 0 {
			t.Errorf("notification: status %d body %q", r.status, r.body)
		}
	}

	for body, code := range map[string]int{
		`{not json`: CodeParseError,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"x\"}": CodeParseError,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`:       CodeInvalidRequest,
		`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`:         CodeInvalidRequest,
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                   CodeInvalidRequest,
		`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`:      CodeInvalidRequest,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`:       CodeInvalidRequest,
	} {
		r := ht.post(t, http.DefaultClient, []byte(body), baselineHeaders("tools/list", nil))
		wantError(t, r, http.StatusBadRequest, code, "tools/list")
		if code == CodeParseError {
			if _, hasID := r.last(t)["id"]; hasID {
				t.Errorf("parse error carries an id (RPC-5)")
			}
		}
	}

	big := params(map[string]any{"name": "get_weather", "arguments": map[string]any{"location": strings.Repeat("a", 8192)}})
	r := ht.call(t, 1, "tools/call", big, nil)
	if r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: status %d", r.status)
	}
}

func TestHTTPResources(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	for uri, mime := range map[string]string{summaryURI: "text/markdown", "example://invoices/C1234": "application/json"} {
		res := wantResult(t, ht.call(t, 1, "resources/read", params(map[string]any{"uri": uri}), nil), "resources/read")
		contents := asSlice(res["contents"])
		if len(contents) != 1 || get(contents[0], "uri") != uri || get(contents[0], "mimeType") != mime || str(get(contents[0], "text")) == "" {
			t.Errorf("read %s: %s", uri, compactJSON(res))
		}
	}
	// RSRC-3: unknown → -32602 with data.uri, never -32002 or empty contents.
	for _, uri := range []string{"example://invoices/nope", "example://invoices/C12345", "file:///etc/passwd"} {
		e := wantError(t, ht.call(t, 1, "resources/read", params(map[string]any{"uri": uri}), nil), http.StatusOK, CodeInvalidParams, "resources/read")
		if get(e, "data", "uri") != uri {
			t.Errorf("data.uri = %v", get(e, "data", "uri"))
		}
	}
	// A non-ASCII URI travels base64-encoded in Mcp-Name (HDR-4).
	uri := "example://invoices/çà"
	r := ht.call(t, 1, "resources/read", params(map[string]any{"uri": uri}), func(h http.Header) {
		h.Set(headerName, "=?base64?"+base64.StdEncoding.EncodeToString([]byte(uri))+"?=")
	})
	wantError(t, r, http.StatusOK, CodeInvalidParams, "resources/read")
}

func TestHTTPPromptsAndCompletion(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	res := wantResult(t, ht.call(t, 1, "prompts/get", params(map[string]any{"name": "summarize_invoices", "arguments": map[string]any{"customer_id": "C1234"}}), nil), "prompts/get")
	msgs := asSlice(res["messages"])
	if len(msgs) != 2 || get(msgs[1], "content", "type") != "resource" {
		t.Errorf("prompts/get: %s", compactJSON(res))
	}
	if _, ok := res["ttlMs"]; ok {
		t.Errorf("GetPromptResult carries ttlMs (CACHE-4)")
	}
	for _, p := range []map[string]any{
		{"name": "nope", "arguments": map[string]any{"customer_id": "C1234"}},
		{"name": "summarize_invoices"},
		{"name": "summarize_invoices", "arguments": map[string]any{"customer_id": "bad"}},
		{"name": "summarize_invoices", "arguments": map[string]any{"customer_id": 1234}},
	} {
		wantError(t, ht.call(t, 2, "prompts/get", params(p), nil), http.StatusOK, CodeInvalidParams, "prompts/get") // PROMPT-2
	}

	complete := func(ref map[string]any, value string) map[string]any {
		t.Helper()
		p := params(map[string]any{"ref": ref, "argument": map[string]any{"name": "customer_id", "value": value}})
		return asMap(wantResult(t, ht.call(t, 3, "completion/complete", p, nil), "completion/complete")["completion"])
	}
	promptRef := map[string]any{"type": "ref/prompt", "name": "summarize_invoices"}
	c := complete(promptRef, "")
	if len(asSlice(c["values"])) != 100 || num(c["total"]) != 250 || c["hasMore"] != true {
		t.Errorf("empty prefix: %d values, total %v, hasMore %v (COMP-1)", len(asSlice(c["values"])), c["total"], c["hasMore"])
	}
	c = complete(map[string]any{"type": "ref/resource", "uri": customerURITemplate}, "c12")
	if len(asSlice(c["values"])) != 50 || c["hasMore"] != false || asSlice(c["values"])[0] != "C1200" {
		t.Errorf("prefix c12: %s", compactJSON(c))
	}
	for _, ref := range []map[string]any{{"type": "ref/prompt", "name": "nope"}, {"type": "ref/resource", "uri": "example://x/{y}"}, {"type": "ref/other"}} {
		p := params(map[string]any{"ref": ref, "argument": map[string]any{"name": "customer_id", "value": ""}})
		wantError(t, ht.call(t, 4, "completion/complete", p, nil), http.StatusOK, CodeInvalidParams, "completion/complete") // COMP-2
	}
}

// TestHTTPListen covers SUB-1..SUB-6 and keep-alives on Streamable HTTP.
func TestHTTPListen(t *testing.T) {
	opts := testOptions()
	opts.KeepAliveInterval = 10 * time.Millisecond
	ht := newHTTPTarget(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	filter := map[string]any{
		"toolsListChanged":      true,
		"promptsListChanged":    true,
		"resourceSubscriptions": []any{summaryURI, "file:///unknown"},
	}
	st := ht.openStream(t, ctx, "listen-1", "subscriptions/listen", params(map[string]any{"notifications": filter}))
	if ct := st.resp.Header.Get("Content-Type"); ct != "text/event-stream" || st.resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("listen response headers: %v (SUB-1)", st.resp.Header)
	}
	ack := st.next(t, 2*time.Second)
	checkMessage(t, ack, "subscriptions/listen")
	if ack["method"] != "notifications/subscriptions/acknowledged" || get(ack, "params", "_meta", metaSubscriptionID) != "listen-1" {
		t.Fatalf("first event: %s (SUB-2)", compactJSON(ack))
	}
	if got := compactJSON(get(ack, "params", "notifications")); got != `{"resourceSubscriptions":["example://invoices/summary"],"toolsListChanged":true}` {
		t.Errorf("acknowledged filter = %s (SUB-2 subset)", got)
	}

	// Other requests are served while the stream is open.
	wantResult(t, ht.call(t, 2, "tools/list", params(nil), nil), "tools/list")
	select {
	case c := <-st.comments:
		if c != ": keepalive" {
			t.Errorf("comment = %q", c)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("no keep-alive comment (SUB-8)")
	}

	// A second subscription with an integer id keeps the id's type.
	st2 := ht.openStream(t, ctx, 42, "subscriptions/listen", params(map[string]any{"notifications": map[string]any{}}))
	ack2 := st2.next(t, 2*time.Second)
	if id, ok := get(ack2, "params", "_meta", metaSubscriptionID).(json.Number); !ok || id.String() != "42" {
		t.Errorf("subscriptionId = %#v, want the number 42", get(ack2, "params", "_meta", metaSubscriptionID))
	}

	// Server-side teardown: closing result, then the stream ends (SUB-6).
	ht.srv.Close()
	for _, s := range []*sseStream{st, st2} {
		final := s.next(t, 2*time.Second)
		checkMessage(t, final, "subscriptions/listen")
		if get(final, "result", "_meta", metaSubscriptionID) == nil || !jsonEqual(final["id"], get(final, "result", "_meta", metaSubscriptionID)) {
			t.Errorf("closing result: %s", compactJSON(final))
		}
		select {
		case <-s.done:
		case <-time.After(2 * time.Second):
			t.Errorf("stream still open after the closing result")
		}
	}
	// The server still answers ordinary requests after Close.
	wantResult(t, ht.call(t, 3, "server/discover", params(nil), nil), "server/discover")
}

// TestHTTPClientDisconnect: closing the stream cancels the request (CANC-3)
// and the server stays healthy.
func TestHTTPClientDisconnect(t *testing.T) {
	opts := testOptions()
	opts.StepDelay = 50 * time.Millisecond
	ht := newHTTPTarget(t, opts)
	ctx, cancel := context.WithCancel(context.Background())
	m := meta(nil)
	m["progressToken"] = "p"
	st := ht.openStream(t, ctx, 1, "tools/call", map[string]any{"_meta": m, "name": "slow_count", "arguments": map[string]any{"n": 20}})
	st.next(t, 2*time.Second)
	lst := ht.openStream(t, ctx, 2, "subscriptions/listen", params(map[string]any{"notifications": map[string]any{}}))
	lst.next(t, 2*time.Second)
	cancel()
	<-st.done
	<-lst.done
	wantResult(t, ht.call(t, 3, "tools/list", params(nil), nil), "tools/list")
}

// TestHTTPStatelessCapabilities: META-3 on one keep-alive connection.
func TestHTTPStatelessCapabilities(t *testing.T) {
	ht := newHTTPTarget(t, testOptions())
	a := wantResult(t, ht.call(t, 1, "tools/call", emailParams(map[string]any{"elicitation": map[string]any{}}, nil), nil), "tools/call")
	if a["resultType"] != "input_required" {
		t.Fatalf("A: %s", compactJSON(a))
	}
	wantError(t, ht.call(t, 2, "tools/call", emailParams(nil, nil), nil), http.StatusBadRequest, CodeMissingRequiredClientCapability, "tools/call")
}

// TestMutantSwitches: each switch breaks what it says, and only that.
func TestMutantSwitches(t *testing.T) {
	opts := testOptions()
	opts.Break = map[string]bool{"RES-1": true}
	ht := newHTTPTarget(t, opts)
	r := ht.call(t, 1, "server/discover", params(nil), nil)
	if _, ok := asMap(r.last(t)["result"])["resultType"]; ok {
		t.Errorf("OmitResultType kept resultType")
	}
	if !bytes.Contains(r.body, []byte(metaServerInfo)) {
		t.Errorf("OmitResultType dropped more than resultType")
	}

	opts = testOptions()
	opts.Break = map[string]bool{"TOOL-3": true}
	opts.PageSize = 10
	ht = newHTTPTarget(t, opts)
	orders := map[string]bool{}
	for i := 0; i < 30 && len(orders) < 2; i++ {
		var names []string
		for _, tl := range asSlice(wantResult(t, ht.call(t, i, "tools/list", params(nil), nil), "tools/list")["tools"]) {
			names = append(names, str(get(tl, "name")))
		}
		if len(names) != 5 {
			t.Fatalf("ShuffleTools changed the set: %v", names)
		}
		orders[strings.Join(names, ",")] = true
	}
	if len(orders) < 2 {
		t.Errorf("ShuffleTools never changed the order in 30 calls")
	}
}
