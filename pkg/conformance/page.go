package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// PAGE: pagination (server/utilities/pagination.mdx, checklist §1.7).

var pageFamily = family{name: "PAGE", title: "pagination", checks: []*check.Check{PAGE1, PAGE2, PAGE3}}

// pageList is one paginated list method and the member holding its items.
type pageList struct {
	method, key string
}

// pageAllLists are the paginated methods (PAGE-1).
var pageAllLists = []pageList{
	{"tools/list", "tools"},
	{"resources/list", "resources"},
	{"resources/templates/list", "resourceTemplates"},
	{"prompts/list", "prompts"},
}

// pageKey is the key of method's entries ("" for a method that is no list).
func pageKey(method string) string {
	for _, l := range pageAllLists {
		if l.method == method {
			return l.key
		}
	}
	return ""
}

// pageLists are the lists the server answered when the facts were gathered.
func pageLists(f *check.Facts) []pageList {
	errs := map[string]error{
		"tools/list": f.ToolsErr, "resources/list": f.ResourcesErr,
		"resources/templates/list": f.TemplatesErr, "prompts/list": f.PromptsErr,
	}
	var out []pageList
	for _, l := range pageAllLists {
		if errs[l.method] == nil {
			out = append(out, l)
		}
	}
	return out
}

// pageVehicle is the list request the checks that vary a request's
// envelope (_meta, version, capabilities) send, judging only its error or
// its absence: the first list served ("" when none is), unless that list
// is long (more than pageVehicleMax items when the run gathered its
// facts). A server of 1,000 tools spends tens of ms on every tools/list
// and the harness as long decoding it, so there the list with the fewest
// items is sent instead, among those of declared capabilities when there
// are any (an undeclared list that answers may be a fallback handler that
// says little about the real ones). Short lists keep the first, so a
// server whose tools/list alone mishandles the envelope is still caught
// where it usually is.
func pageVehicle(f *check.Facts) string {
	lists := pageLists(f)
	if len(lists) == 0 {
		return ""
	}
	if _, items := pageSize(f, lists[0].method); items <= pageVehicleMax {
		return lists[0].method
	}
	best, n, declared := "", 0, false
	for _, l := range lists {
		capability, items := pageSize(f, l.method)
		d := f.Has(capability)
		if best == "" || (d && !declared) || (d == declared && items < n) {
			best, n, declared = l.method, items, d
		}
	}
	return best
}

// pageSize is the capability a list belongs to and how many items it had
// when the run gathered its facts.
func pageSize(f *check.Facts, method string) (capability string, items int) {
	switch method {
	case "tools/list":
		return "tools", len(f.Tools) + len(f.Dropped)
	case "resources/list":
		return "resources", len(f.Resources)
	case "resources/templates/list":
		return "resources", len(f.Templates)
	case "prompts/list":
		return "prompts", len(f.Prompts)
	}
	return "", 0
}

// pageVehicleMax is the length above which a list is too dear a vehicle.
const pageVehicleMax = 100

// pageName names one page of a list for messages.
func pageName(method string, i int, pg mcpclient.Page) string {
	if pg.Cursor == nil {
		return fmt.Sprintf("%s page %d", method, i+1)
	}
	return fmt.Sprintf("%s page %d (cursor %q)", method, i+1, jsonrpc.Clip(*pg.Cursor, 40))
}

var PAGE1 = &check.Check{
	ID: "PAGE-1", Level: check.Info, Transports: check.Both,
	Spec: "server/utilities/pagination.mdx §Response Format, §Implementation Guidelines",
	Doc:  "nextCursor is absent on the last page and a string otherwise (an empty string is a valid cursor), and following it ends",
	Fix:  "leave nextCursor out on the last page and send it as a string otherwise",
	Run: func(p *check.Pass) error {
		lists := pageLists(p.Env.Facts)
		if len(lists) == 0 {
			p.Skipf("the server answers none of the paginated lists")
			return nil
		}
		for _, l := range lists {
			lr, err := p.List(l.method, l.key)
			if lr == nil {
				return err
			}
			for i, pg := range lr.Pages {
				if pg.Response == nil || pg.Response.Result == nil {
					continue
				}
				var m map[string]json.RawMessage
				if json.Unmarshal(pg.Response.Result, &m) != nil {
					continue
				}
				raw, ok := m["nextCursor"]
				if !ok {
					continue
				}
				var s string
				switch {
				case bytes.Equal(bytes.TrimSpace(raw), []byte("null")):
					p.Failf(check.FromResponseAt(pg.Response, "/result/nextCursor"), "%s has nextCursor null; leave it out when the list is complete", pageName(l.method, i, pg))
				case json.Unmarshal(raw, &s) != nil:
					p.Failf(check.FromResponseAt(pg.Response, "/result/nextCursor"), "%s has nextCursor %s, want a string", pageName(l.method, i, pg), shown(raw))
				case s == "":
					p.Passf(check.FromResponse(pg.Response), "%s has an empty-string nextCursor, a valid cursor that was followed", pageName(l.method, i, pg))
				}
			}
			if schemaTransportErr(err) {
				// The process exited or went silent, or the run's time
				// ran out: no answer to the cursor, so nothing rejected
				// it (a concurrent request may have ended the process:
				// the run's lostProcess says which). What was found
				// before stands.
				if p.Found() {
					return nil
				}
				return err
			}
			if err != nil {
				if last := lr.Pages[len(lr.Pages)-1]; last.Cursor != nil {
					p.Failf(check.FromResponseAt(last.Response, respAnswerAt(last.Response)), "%s: the server rejected its own nextCursor: %v", l.method, err)
				}
				continue
			}
			if lr.Truncated {
				p.Failf(check.FromResponse(lr.Pages[len(lr.Pages)-1].Response), "%s did not end: stopped after %d pages (a repeated or endless nextCursor)", l.method, len(lr.Pages))
			}
		}
		return nil
	},
}

// pageBogusCursor is a cursor no server issues.
const pageBogusCursor = "%%bogus%%"

var PAGE2 = &check.Check{
	ID: "PAGE-2", Level: check.Should, Transports: check.Both,
	Spec: "server/utilities/pagination.mdx §Error Handling",
	Doc:  "an invalid cursor gets error -32602",
	Fix:  "reject cursors the server did not issue with -32602 (Invalid params)",
	Run: func(p *check.Pass) error {
		lists := pageLists(p.Env.Facts)
		if len(lists) == 0 {
			p.Skipf("the server answers none of the paginated lists")
			return nil
		}
		var ok passTally
		for _, l := range lists {
			resp, err := p.Env.Client.Do(p.Ctx, l.method, map[string]any{"cursor": pageBogusCursor})
			if err != nil {
				return err
			}
			ev := check.FromResponse(resp)
			switch {
			case resp.Error == nil:
				p.Failf(check.FromResponseAt(resp, "/result"), "%s accepted the cursor %q with a result, want error -32602", l.method, pageBogusCursor)
			case resp.Error.Code != jsonrpc.CodeInvalidParams:
				p.Failf(check.FromResponseAt(resp, "/error/code"), "%s answered the cursor %q with error %d (%s), want -32602", l.method, pageBogusCursor, resp.Error.Code, jsonrpc.CodeName(resp.Error.Code))
			default:
				ok.add(ev)
			}
		}
		ok.report(p, "%d lists rejected a bogus cursor with -32602", ok.n)
		return nil
	},
}

var PAGE3 = &check.Check{
	ID: "PAGE-3", Level: check.Should, Transports: check.Both,
	Spec: "server/utilities/pagination.mdx §Implementation Guidelines",
	Doc:  "cursors are stable: the same cursor sent again while the list is unchanged returns the same page",
	Fix:  "make a cursor name a position, not a one-time token or a moving window",
	Run: func(p *check.Pass) error {
		tested := 0
		for _, l := range pageLists(p.Env.Facts) {
			// The first page is the repetition's walk's; the cursor it
			// gives is sent twice by this check, back to back.
			lr, err := p.List(l.method, l.key)
			var first *mcpclient.Response
			if lr != nil && len(lr.Pages) > 0 {
				first = lr.Pages[0].Response
			}
			if first == nil {
				if err != nil {
					return err
				}
				continue
			}
			if first.Error != nil {
				continue
			}
			var body struct {
				NextCursor *string `json:"nextCursor"`
			}
			if json.Unmarshal(first.Result, &body) != nil || body.NextCursor == nil {
				continue
			}
			cursor := *body.NextCursor
			var pages [2]*mcpclient.Response
			for i := range pages {
				if pages[i], err = p.Env.Client.Do(p.Ctx, l.method, map[string]any{"cursor": cursor}); err != nil {
					return err
				}
			}
			tested++
			a, b := pages[0], pages[1]
			switch {
			case a.Error != nil || b.Error != nil:
				bad := a
				if a.Error == nil {
					bad = b
				}
				p.Failf(check.FromResponseAt(bad, "/error/code"), "%s with its own cursor %q got error %d on one of two identical requests", l.method, jsonrpc.Clip(cursor, 40), bad.Error.Code)
			case !pageSame(a.Result, b.Result, l.key):
				p.Failf(check.FromResponseAt(b, check.Pointer("result", l.key)), "%s returned different items for the same cursor %q sent twice", l.method, jsonrpc.Clip(cursor, 40))
			default:
				p.Passf(check.FromResponse(b), "%s returned the same page for a cursor sent twice", l.method)
			}
		}
		if tested == 0 {
			p.Skipf("no list has a second page to request twice")
		}
		return nil
	},
}

// pageSame reports whether two results hold the same items, compared as
// JSON values. The nextCursor may differ: a cursor is opaque and may be
// minted anew (a nonce, a timestamp) for the same position.
func pageSame(a, b json.RawMessage, key string) bool {
	pick := func(r json.RawMessage) string {
		var m map[string]any
		_ = json.Unmarshal(r, &m)
		out, _ := json.Marshal(m[key])
		return string(out)
	}
	return pick(a) == pick(b)
}
