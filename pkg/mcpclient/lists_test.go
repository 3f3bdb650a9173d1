package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
)

// modernFake answers server/discover and pages tools/list, recording every
// request body.
func modernFake(s *seen, pages map[string]string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m := s.record(r)
		switch m["method"] {
		case "server/discover":
			writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+idOf(m)+`,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}}`)
		case "tools/list":
			key := "<none>"
			if p, ok := m["params"].(map[string]any); ok {
				if c, ok := p["cursor"].(string); ok {
					key = c
				}
			}
			page, ok := pages[key]
			if !ok {
				writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+idOf(m)+`,"error":{"code":-32602,"message":"Invalid cursor"}}`)
				return
			}
			writeJSON(w, 200, `{"jsonrpc":"2.0","id":`+idOf(m)+`,"result":`+page+`}`)
		}
	}
}

func TestListFollowsEmptyStringCursor(t *testing.T) {
	s := &seen{}
	pages := map[string]string{
		"<none>": `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":""}`,
		"":       `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"p3"}`,
		"p3":     `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[{"name":"c","inputSchema":{"type":"object","properties":{"x":{"type":"number","x-mcp-header":"X"}}}}]}`,
	}
	c, err := connectTo(t, modernFake(s, pages), Config{})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := c.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.List.Pages) != 3 || len(tools.Tools) != 2 || tools.Tools[1].Name != "b" {
		t.Fatalf("pages %d tools %+v: an empty-string nextCursor is a cursor, not the end", len(tools.List.Pages), tools.Tools)
	}
	if len(tools.Dropped) != 1 || tools.Dropped[0].Name != "c" {
		t.Fatalf("tool c has x-mcp-header on a number and must be dropped (TOOL-6): %+v", tools.Dropped)
	}
}

func TestListStopsOnRepeatedCursor(t *testing.T) {
	s := &seen{}
	pages := map[string]string{
		"<none>": `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[],"nextCursor":"loop"}`,
		"loop":   `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[],"nextCursor":"loop"}`,
	}
	c, err := connectTo(t, modernFake(s, pages), Config{})
	if err != nil {
		t.Fatal(err)
	}
	lr, err := c.List(context.Background(), "tools/list", "tools")
	if err != nil || !lr.Truncated || len(lr.Pages) != 2 {
		t.Fatalf("err %v truncated %v pages %d", err, lr.Truncated, len(lr.Pages))
	}
}

// A member spelt otherwise than nextCursor is no cursor: the walk ends
// there rather than following a key the spec does not have.
func TestListFollowsOnlyNextCursor(t *testing.T) {
	s := &seen{}
	pages := map[string]string{
		"<none>": `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"}`,
		"p2":     `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[{"name":"b","inputSchema":{"type":"object"}}],"NextCursor":"p3"}`,
		"p3":     `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[{"name":"c","inputSchema":{"type":"object"}}]}`,
	}
	c, err := connectTo(t, modernFake(s, pages), Config{})
	if err != nil {
		t.Fatal(err)
	}
	lr, err := c.List(context.Background(), "tools/list", "tools")
	if err != nil || lr.Truncated || len(lr.Pages) != 2 || len(lr.Items) != 2 {
		t.Fatalf("err %v truncated %v pages %d items %d: want the two pages up to the one whose cursor is spelt NextCursor", err, lr.Truncated, len(lr.Pages), len(lr.Items))
	}
}

var traceparentRE = regexp.MustCompile(`^00-([0-9a-f]{32})-([0-9a-f]{16})-01$`)

func TestTraceContextOneTraceNewSpanPerRequest(t *testing.T) {
	s := &seen{}
	tc := NewTrace()
	tc.TraceState, tc.Baggage = "vendor=1", "case=weather-1"
	c, err := connectTo(t, modernFake(s, map[string]string{"<none>": `{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[]}`}), Config{Trace: tc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := map[string]bool{}
	for _, body := range s.body {
		meta := body["params"].(map[string]any)["_meta"].(map[string]any)
		m := traceparentRE.FindStringSubmatch(meta["traceparent"].(string))
		if m == nil || m[1] != tc.TraceID {
			t.Fatalf("traceparent %v does not carry trace %s", meta["traceparent"], tc.TraceID)
		}
		spans[m[2]] = true
		if meta["tracestate"] != "vendor=1" || meta["baggage"] != "case=weather-1" {
			t.Fatalf("tracestate/baggage missing: %v", meta)
		}
		var info Implementation
		b, _ := json.Marshal(meta[MetaClientInfo])
		_ = json.Unmarshal(b, &info)
		if info.Name != "mcp-eval" {
			t.Fatalf("clientInfo = %+v", info)
		}
	}
	if len(spans) != len(s.body) {
		t.Fatalf("%d requests but %d distinct span ids", len(s.body), len(spans))
	}
}
