package conformance

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// PROG: progress notifications (basic/patterns/progress.mdx, checklist
// §1.13).

// progToken is the token PROG-1 sends: an integer, so a server that echoes
// it as a string is caught.
const progToken = 424242

var PROG1 = &check.Check{
	ID: "PROG-1", Level: check.Must, Transports: check.Both,
	Waits:   true, // its observations are turns on the repetition's quiet processes
	Spec:    "basic/patterns/progress.mdx",
	Doc:     "notifications/progress come only for a request's progressToken, echo it with its JSON type, strictly increase, and stop at the final response",
	Fix:     "send progress only while the request runs, with its progressToken unchanged and a growing progress value",
	Monitor: prog1Monitor,
	Run: func(p *check.Pass) error {
		es := progFindEmitters(p)
		if es.progress == nil {
			return progSkipNoEmitter(p, es, "notifications/progress")
		}
		call := map[string]any{"name": es.progress.Tool.Name, "arguments": es.progress.Args}
		c, closeFn, err := progClient(p)
		if err != nil {
			return err
		}
		defer closeFn()
		obs, err := progObserve(p.Ctx, c, "tools/call", call, logWindow, mcpclient.WithProgressToken(progToken))
		if err != nil {
			return err
		}
		want := json.RawMessage("424242")
		last, have := 0.0, false
		for _, m := range progByMethod(obs.Before, "notifications/progress") {
			pm := progParams(m)
			if got := pm["progressToken"]; !jsonrpc.SameID(got, want) {
				ev := check.AtMessage(obs.Ev, m, "/params/progressToken")
				if got == nil {
					ev = check.AbsentMessage(obs.Ev, m, "/params/progressToken")
				}
				p.Failf(ev, "a progress notification carried token %s, want %s (same value and JSON type)", jsonrpc.Clip(string(got), 40), want)
				continue
			}
			var v float64
			if json.Unmarshal(pm["progress"], &v) != nil {
				p.Failf(check.AtMessage(obs.Ev, m, "/params/progress"), "a progress notification has progress %s, want a number", jsonrpc.Clip(string(pm["progress"]), 40))
				continue
			}
			if have && v <= last {
				p.Failf(check.AtMessage(obs.Ev, m, "/params/progress"), "progress went from %v to %v; it must strictly increase", last, v)
			}
			last, have = v, true
		}
		if late := progByMethod(obs.After, "notifications/progress"); len(late) > 0 {
			p.Failf(check.AtMessage(obs.Ev, late[0], "/method"), "%d progress notification(s) arrived after the final response", len(late))
		}
		// Without a progressToken there must be no progress at all.
		obs2, err := progObserve(p.Ctx, c, "tools/call", call, logWindow)
		if err != nil {
			return err
		}
		if stray := progByMethod(append(obs2.Before, obs2.After...), "notifications/progress"); len(stray) > 0 {
			p.Failf(check.AtMessage(obs2.Ev, stray[0], "/method"), "tools/call %s without a progressToken got %d progress notification(s)", es.progress.Tool.Name, len(stray))
		}
		return nil
	},
}

var progFamily = family{name: "PROG", title: "progress", checks: []*check.Check{PROG1}}

// prog1Monitor watches the progress notifications of every 2026-07-28
// request of the run: none without a progressToken, and the request's
// token echoed with its JSON type.
var prog1Monitor = &check.Monitor{
	Doc: "no request of the run gets notifications/progress without a progressToken, or under another token",
	Watch: func(x *check.Exchange) (bool, string) {
		if !x.Modern() || x.Exchange == nil || x.Exchange.Ambiguous {
			return false, ""
		}
		token := x.Meta["progressToken"]
		for _, m := range progByMethod(x.Exchange.Notifications, "notifications/progress") {
			got := progParams(m)["progressToken"]
			if token == nil {
				return true, fmt.Sprintf("%s without a progressToken got notifications/progress (token %s)", x.Method, jsonrpc.Clip(string(got), 40))
			}
			if !jsonrpc.SameID(got, token) {
				return true, fmt.Sprintf("%s with progressToken %s got notifications/progress with token %s (same value and JSON type)", x.Method, jsonrpc.Clip(string(token), 40), jsonrpc.Clip(string(got), 40))
			}
		}
		return true, ""
	},
	// The same notification Watch names: the first without a token asked
	// for, or under another token.
	LocateIn: func(x *check.Exchange) (*jsonrpc.Message, string, bool) {
		token := x.Meta["progressToken"]
		for _, m := range progByMethod(x.Exchange.Notifications, "notifications/progress") {
			switch got := progParams(m)["progressToken"]; {
			case token == nil:
				return m, "/method", false
			case !jsonrpc.SameID(got, token):
				return m, "/params/progressToken", got == nil
			}
		}
		return nil, "", false
	},
}
