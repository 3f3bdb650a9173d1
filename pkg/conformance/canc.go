package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// CANC: cancellation (basic/patterns/cancellation.mdx, checklist §1.13).

var CANC1 = &check.Check{
	ID: "CANC-1", Level: check.Must, Transports: check.Both,
	Spec:    "basic/patterns/cancellation.mdx; schema.ts CancelledNotification",
	Doc:     "the server sends notifications/cancelled only to end a subscriptions/listen stream",
	Fix:     "never cancel the client's ordinary requests; send notifications/cancelled only to end a listen stream",
	Monitor: canc1Monitor,
	// Its runs judge the repetition's shared observations (resSamples:
	// discover, the lists, a read, a get, the shared tool call, a
	// completion) and every page of tools/list; the monitor judges every
	// other request of the run the client reports (the emitter search's
	// calls with a progress token; on stdio PROG-1's and STDIO-5's too),
	// so CANC-1 sends nothing of its own.
	Run: func(p *check.Pass) error {
		judged := map[*mcpclient.Response]bool{}
		judge := func(method string, resp *mcpclient.Response) {
			if resp.Exchange == nil || judged[resp] {
				return // a list's first page is also a shared observation
			}
			judged[resp] = true
			if n := cancOwn(p.Env.Transport, resp.ID, resp.Exchange.Notifications); n != nil {
				p.Failf(check.AtMessage(check.FromResponse(resp), n, "/method"), "%s", cancOwnMessage(n, method))
			}
		}
		samples, err := resSamples(p)
		if err != nil {
			return err
		}
		for _, s := range samples {
			judge(s.what, s.resp)
		}
		if p.Env.Facts.Has("tools") {
			lr, err := p.List("tools/list", "tools")
			walked := false
			if lr != nil {
				for _, pg := range lr.Pages {
					if pg.Response != nil {
						judge("tools/list", pg.Response)
						walked = true
					}
				}
			}
			if !walked && err != nil {
				return err
			}
		}
		return nil
	},
}

// cancOwn is the first notifications/cancelled that came with the answer
// to the request under id, nil when none did. On HTTP every one on the
// request's stream counts. On stdio only one whose requestId is the
// request's own: a notification is handed to the one request in flight
// when no pending request carries its requestId, and the SUB listens,
// which cancellations may end, go through the raw layer, so the end of a
// listen may be handed to an unrelated request.
func cancOwn(kind string, id json.RawMessage, notes []*jsonrpc.Message) *jsonrpc.Message {
	for _, n := range notes {
		if n.Method != "notifications/cancelled" {
			continue
		}
		if kind != "stdio" || jsonrpc.SameID(progParams(n)["requestId"], id) {
			return n
		}
	}
	return nil
}

func cancOwnMessage(n *jsonrpc.Message, method string) string {
	return fmt.Sprintf("the server sent notifications/cancelled (requestId %s) while answering %s; it may only end a listen stream", jsonrpc.Clip(string(progParams(n)["requestId"]), 40), method)
}

// canc1Monitor watches every 2026-07-28 request of the run but
// subscriptions/listen, whose stream a cancellation may end.
var canc1Monitor = &check.Monitor{
	Doc: "no request of the run but subscriptions/listen gets notifications/cancelled",
	Watch: func(x *check.Exchange) (bool, string) {
		if !x.Modern() || x.Exchange == nil || x.Exchange.Ambiguous || x.Method == "subscriptions/listen" {
			return false, ""
		}
		if n := cancOwn(x.Transport, x.ID, x.Exchange.Notifications); n != nil {
			return true, cancOwnMessage(n, x.Method)
		}
		return true, ""
	},
	LocateIn: func(x *check.Exchange) (*jsonrpc.Message, string, bool) {
		if n := cancOwn(x.Transport, x.ID, x.Exchange.Notifications); n != nil {
			return n, "/method", false
		}
		return nil, "", false
	},
}

// cancQuiet is how long CANC-2 watches, after the server has read the
// cancellation, for messages of the cancelled request.
const cancQuiet = 60 * time.Millisecond

var CANC2 = &check.Check{
	ID: "CANC-2", Level: check.Must, Transports: check.Stdio,
	Waits: true, // a process of its own, and a quiet period after the cancel
	Spec:  "basic/transports/stdio.mdx §Cancellation; basic/patterns/cancellation.mdx §Behavior Requirements",
	Doc:   "after notifications/cancelled for an in-flight request, no further message for it arrives (a response already on its way is tolerated)",
	Fix:   "stop a request when its cancellation arrives and send nothing more for it",
	Run: func(p *check.Pass) error {
		es := progFindEmitters(p)
		if es.progress == nil {
			return progSkipNoEmitter(p, es, "notifications/progress (nothing stays in flight long enough to cancel)")
		}
		// A process of its own, not a quiet turn: a server that ignores
		// the cancellation may stream progress and an answer for it long
		// after the check stopped watching, into whatever came next.
		c, closeFn, err := p.Env.Fresh(p.Ctx)
		if err != nil {
			return err
		}
		defer closeFn()
		st, ok := c.Transport().(*transport.StdioTransport)
		if !ok {
			return nil
		}
		token := "mcp-eval-canc2"
		args := progArgs(es.progress.Tool.InputSchema, true)
		_, out, err := c.Build("tools/call", map[string]any{"name": es.progress.Tool.Name, "arguments": args}, mcpclient.WithProgressToken(token))
		if err != nil {
			return err
		}
		tap, stop := st.Tap(1024)
		defer stop()
		if err := st.WriteLine(p.Ctx, out.Body); err != nil {
			return err
		}
		tok := jsonrpc.StringID(token)
		mine := func(m *jsonrpc.Message) bool {
			return (m.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(m.ID, out.ID)) ||
				(m.Method == "notifications/progress" && jsonrpc.SameID(progParams(m)["progressToken"], tok))
		}
		ev := &check.Evidence{Transport: "stdio", Request: jsonrpc.Clip(string(out.Body), 400)}
		// Wait for the first progress: the call is in flight.
		wctx, cancel := context.WithTimeout(p.Ctx, 10*time.Second)
		defer cancel()
	started:
		for {
			select {
			case in := <-tap:
				if in.Msg == nil || !mine(in.Msg) {
					continue
				}
				if in.Msg.Kind() == jsonrpc.KindResponse {
					p.Skipf("tool %s finished before it could be cancelled", es.progress.Tool.Name)
					return nil
				}
				break started
			case <-wctx.Done():
				p.Skipf("tool %s sent no progress within 10s", es.progress.Tool.Name)
				return nil
			}
		}
		cancelMsg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": out.ID, "reason": "conformance check"}})
		if err := st.WriteLine(p.Ctx, cancelMsg); err != nil {
			return err
		}
		// The fence: a request written after the cancellation. Before its
		// answer the server may not have read the cancellation yet
		// (cancellation.mdx §Timing), so what comes then is tolerated; what
		// comes after is not.
		_, fenceOut, err := c.Build("server/discover", nil)
		if err != nil {
			return err
		}
		if err := st.WriteLine(p.Ctx, fenceOut.Body); err != nil {
			return err
		}
		var deadline <-chan time.Time
		for {
			select {
			case in := <-tap:
				m := in.Msg
				if m == nil {
					continue
				}
				if deadline == nil && m.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(m.ID, fenceOut.ID) {
					deadline = time.After(cancQuiet)
					continue
				}
				if deadline != nil && mine(m) {
					ev.Response = jsonrpc.Clip(string(in.Raw), 600)
					if m.Kind() == jsonrpc.KindResponse {
						p.Failf(ev, "the cancelled request was answered after the server had read notifications/cancelled")
					} else {
						p.Failf(ev, "progress for the cancelled request kept coming after the server had read notifications/cancelled")
					}
					return nil
				}
			case <-deadline:
				return nil
			case <-wctx.Done():
				return nil
			}
		}
	},
}

var cancFamily = family{name: "CANC", title: "cancellation", checks: []*check.Check{CANC1, CANC2},
	unobservable: map[string]string{
		"CANC-3": "closing an SSE response stream cancels the request, which a client cannot observe (the checklist says so); server health afterwards is covered by every later check",
	}}
