package conformance

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// SUB: subscriptions/listen (basic/patterns/subscriptions.mdx, checklist
// §1.12). Each run opens its own listen request and watches it briefly
// after the acknowledgment; the checks that only read a plain listen with
// the same filter (SUB-1, SUB-2, SUB-4) read one per repetition
// (subWatched). On stdio the listens of a repetition share one process that
// carries nothing else, told apart by subscription id (sub_host.go).

// subFollows: a repetition's listens go to its quiet process once its
// turns are over (sub_host.go).
var subFollows = check.Follows{On: check.Stdio, IDs: quietTurnChecks}

var SUB1 = &check.Check{
	ID: "SUB-1", Level: check.Must, Transports: check.HTTP,
	Waits: true, // a listen stream and its grace period
	Spec:  "basic/transports/streamable-http.mdx §Receiving Messages; basic/patterns/subscriptions.mdx",
	Doc:   "subscriptions/listen is answered with a text/event-stream response that stays open",
	Fix:   "answer subscriptions/listen with an SSE stream and keep it open until the client closes it",
	Run: subRun(func(p *check.Pass) error {
		w := subWatched(p, subFullFilter(p.Env.Facts))
		if ok, err := w.open(p); !ok {
			return err
		}
		s, a := w.s, w.a
		if !s.live.SSE {
			p.Failf(w.ev, "subscriptions/listen was answered with Content-Type %q, want text/event-stream", s.live.ContentType)
			return nil
		}
		if a.Final != nil || a.Ended {
			p.Failf(w.ev, "the listen stream ended before it was acknowledged")
			return nil
		}
		for _, m := range w.after {
			if m.Kind() == jsonrpc.KindResponse {
				p.Failf(w.ev, "the server answered the listen request right after acknowledging it; the stream must stay open")
				return nil
			}
		}
		if w.ended {
			p.Failf(w.ev, "the listen stream ended right after the acknowledgment; it must stay open")
		}
		return nil
	}),
}

// subFlags are the boolean members of a SubscriptionFilter and the
// capability whose listChanged declares each.
var subFlags = []struct{ key, capName string }{
	{"toolsListChanged", "tools"}, {"promptsListChanged", "prompts"}, {"resourcesListChanged", "resources"},
}

var SUB2 = &check.Check{
	ID: "SUB-2", Level: check.Must, Transports: check.Both,
	Waits:   true, // a listen stream and its grace period
	Follows: subFollows,
	Spec:    "basic/patterns/subscriptions.mdx §Acknowledgment",
	Doc:     "the first message of a subscription is notifications/subscriptions/acknowledged with the listen id (same JSON type) and a subset of the requested filter",
	Fix:     "acknowledge subscriptions/listen first, with _meta subscriptionId = the request id and only the requested types you support",
	Run: subRun(func(p *check.Pass) error {
		filter := subFullFilter(p.Env.Facts)
		for _, f := range subFlags {
			filter[f.key] = true // ask for all; unsupported ones must be left out
		}
		// On a server that declares every listChanged this is SUB-1's and
		// SUB-4's listen: the repetition's one.
		w := subWatched(p, filter)
		if ok, err := w.open(p); !ok {
			return err
		}
		s, a, sev := w.s, w.a, w.ev
		if a.Ack == nil {
			subNoAckEv(p, sev, a)
			return nil
		}
		for _, m := range a.Before {
			if s.live != nil || jsonrpc.SameID(progSubID(m), s.ID) {
				p.Failf(check.AtMessage(sev, m, "/method"), "%s came before the acknowledgment", jsonrpc.Clip(m.Method, 60))
			}
		}
		if got := progSubID(a.Ack); !jsonrpc.SameID(got, s.ID) {
			p.Failf(subIDAt(sev, a.Ack, got), "the acknowledgment's subscriptionId is %s, want the listen id %s with the same JSON type", subShowID(got), s.ID)
		}
		var ack map[string]json.RawMessage
		_ = json.Unmarshal(progParams(a.Ack)["notifications"], &ack)
		if ack == nil {
			ev := check.AtMessage(sev, a.Ack, "/params/notifications")
			if _, there := progParams(a.Ack)["notifications"]; !there {
				ev = check.AbsentMessage(sev, a.Ack, "/params/notifications")
			}
			p.Failf(ev, "the acknowledgment has no notifications object")
			return nil
		}
		declared := subDeclared(p.Env.Facts)
		for _, f := range subFlags {
			var on bool
			if json.Unmarshal(ack[f.key], &on) != nil || !on {
				continue
			}
			if filter[f.key] != true {
				p.Failf(check.AtMessage(sev, a.Ack, check.Pointer("params", "notifications", f.key)), "the acknowledgment grants %s, which was not requested", f.key)
			}
			ok := map[string]bool{"tools": declared.tools, "prompts": declared.prompts, "resources": declared.resources}[f.capName]
			if !ok && p.Env.Facts.CapabilitiesUnread() == "" {
				p.Warnf(check.AtMessage(sev, a.Ack, check.Pointer("params", "notifications", f.key)), "the acknowledgment grants %s although capabilities.%s.listChanged is not declared; unsupported types must be left out", f.key, f.capName)
			}
		}
		if raw, ok := ack["resourceSubscriptions"]; ok {
			var got []string
			want, _ := filter["resourceSubscriptions"].([]string)
			if json.Unmarshal(raw, &got) != nil {
				p.Failf(check.AtMessage(sev, a.Ack, "/params/notifications/resourceSubscriptions"), "the acknowledgment's resourceSubscriptions is not an array of strings")
			}
			for i, u := range got {
				if !slices.Contains(want, u) {
					p.Failf(check.AtMessage(sev, a.Ack, check.Pointer("params", "notifications", "resourceSubscriptions", i)), "the acknowledgment subscribes to %q, which was not requested", jsonrpc.Clip(u, 100))
				}
			}
		}
		return nil
	}),
}

// subTypeOf maps a list_changed notification to the filter flag it needs.
var subTypeOf = map[string]string{
	"notifications/tools/list_changed":     "toolsListChanged",
	"notifications/prompts/list_changed":   "promptsListChanged",
	"notifications/resources/list_changed": "resourcesListChanged",
}

var SUB3 = &check.Check{
	ID: "SUB-3", Level: check.Must, Transports: check.Both,
	Waits:   true, // a listen stream and its grace period
	Follows: subFollows,
	Spec:    "basic/patterns/subscriptions.mdx; schema.ts SubscriptionFilter",
	Doc:     "a subscription carries no notification type the client did not ask for",
	Fix:     "send only the notification types the listen request opted in to",
	Run: subRun(func(p *check.Pass) error {
		// Ask for one type only, so every other one is unrequested.
		d := subDeclared(p.Env.Facts)
		key := "toolsListChanged"
		switch {
		case d.tools:
		case d.resources:
			key = "resourcesListChanged"
		case d.prompts:
			key = "promptsListChanged"
		}
		s, a, err := subOpenAck(p, map[string]any{key: true})
		if err != nil || s == nil {
			return err
		}
		defer s.Close()
		if a.Ack == nil {
			subNoAck(p, s, a)
			return nil
		}
		after, _ := s.Watch(p.Ctx, subGrace)
		for _, m := range append(a.Before, after...) {
			if flag, ok := subTypeOf[m.Method]; ok && flag != key {
				p.Failf(check.AtMessage(s.Ev(), m, "/method"), "the subscription sent %s, but only %s was requested", m.Method, key)
			}
			if m.Method == "notifications/resources/updated" {
				p.Failf(check.AtMessage(s.Ev(), m, "/method"), "the subscription sent notifications/resources/updated, but no resourceSubscriptions were requested")
			}
		}
		return nil
	}),
}

var SUB4 = &check.Check{
	ID: "SUB-4", Level: check.Must, Transports: check.Both,
	Waits:   true, // a listen stream and its grace period
	Follows: subFollows,
	Spec:    "basic/index.mdx §Per-notification protocol fields; basic/patterns/subscriptions.mdx",
	Doc:     "every notification of a subscription carries _meta subscriptionId equal to the listen id",
	Fix:     "put _meta[\"io.modelcontextprotocol/subscriptionId\"] = the listen request id on every subscription notification",
	Run: subRun(func(p *check.Pass) error {
		w := subWatched(p, subFullFilter(p.Env.Facts))
		if ok, err := w.open(p); !ok {
			return err
		}
		s, a := w.s, w.a
		if a.Ack == nil {
			subNoAckEv(p, w.ev, a)
			return nil
		}
		for _, m := range append(append(slices.Clip(a.Before), a.Ack), w.after...) {
			if m.Kind() != jsonrpc.KindNotification {
				continue
			}
			if got := progSubID(m); !jsonrpc.SameID(got, s.ID) {
				p.Failf(subIDAt(w.ev, m, got), "%s on the subscription has subscriptionId %s, want %s", jsonrpc.Clip(m.Method, 60), subShowID(got), s.ID)
			}
		}
		return nil
	}),
}

var SUB5 = &check.Check{
	ID: "SUB-5", Level: check.Must, Transports: check.Both,
	Waits:   true, // a listen stream and its grace period
	Follows: subFollows,
	Spec:    "server/utilities/logging.mdx; basic/transports/streamable-http.mdx §Receiving Messages",
	Doc:     "no notifications/message or notifications/progress travel on a listen stream",
	Fix:     "send log and progress notifications only on the stream of the request they belong to",
	Run: subRun(func(p *check.Pass) error {
		s, a, err := subOpenAck(p, subFullFilter(p.Env.Facts), mcpclient.WithLogLevel("debug"), mcpclient.WithProgressToken("mcp-eval-sub5"))
		if err != nil || s == nil {
			return err
		}
		defer s.Close()
		if a.Ack == nil {
			subNoAck(p, s, a)
			return nil
		}
		after, _ := s.Watch(p.Ctx, subGrace)
		for _, m := range append(a.Before, after...) {
			if m.Method == "notifications/message" || m.Method == "notifications/progress" {
				p.Failf(check.AtMessage(s.Ev(), m, "/method"), "%s was sent on the listen stream", m.Method)
			}
		}
		return nil
	}),
}

var SUB7 = &check.Check{
	ID: "SUB-7", Level: check.Must, Transports: check.Stdio,
	Waits:   true, // a listen stream and its grace period
	Follows: subFollows,
	Spec:    "basic/transports/stdio.mdx §Cancellation; basic/patterns/subscriptions.mdx",
	Doc:     "after notifications/cancelled for the listen id, no further message of that subscription arrives",
	Fix:     "stop a subscription, without any further message, when the client cancels its listen request",
	Run: subRun(func(p *check.Pass) error {
		s, a, err := subOpenAck(p, subFullFilter(p.Env.Facts))
		if err != nil || s == nil {
			return err
		}
		defer s.Close()
		if a.Ack == nil {
			subNoAck(p, s, a)
			return nil
		}
		// A server may end a subscription by itself, at once (its
		// notifications/cancelled, then the listen's result:
		// subscriptions.mdx §Cancellation). What it sends within a quiet
		// window after the acknowledgment is read before the client's
		// cancellation is written, and what was read then was on its way
		// before the server could read it (cancellation.mdx §Timing
		// Considerations): only what is read after is judged.
		s.Watch(p.Ctx, stdioQuiet)
		cancelAt := time.Now()
		if err := s.Cancel(p.Ctx); err != nil {
			return err
		}
		// The fence: once the server answered a later request, it has read
		// the cancellation.
		if _, err := s.client.Do(p.Ctx, "server/discover", nil); err != nil {
			return err
		}
		for deadline := time.Now().Add(stdioQuiet); ; {
			m, ended := s.Next(p.Ctx, time.Until(deadline))
			if ended || m == nil {
				break
			}
			if s.lastAt.Before(cancelAt) {
				continue
			}
			switch {
			case m.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(m.ID, s.ID):
				p.Failf(s.Ev(), "the listen request was answered after the client cancelled it")
			case m.Kind() == jsonrpc.KindNotification && jsonrpc.SameID(progSubID(m), s.ID):
				p.Failf(s.Ev(), "%s for the subscription arrived after the client cancelled it", jsonrpc.Clip(m.Method, 60))
			}
		}
		return nil
	}),
}

var SUB8 = &check.Check{
	ID: "SUB-8", Level: check.Info, Transports: check.Both,
	Follows: subFollows,
	Spec:    "basic/patterns/subscriptions.mdx §Multiple Subscriptions",
	Doc:     "several subscriptions can run at once, each acknowledged under its own id",
	Fix:     "keep concurrent subscriptions apart by their subscriptionId",
	Run: subRun(func(p *check.Pass) error {
		// On stdio both are on the repetition's listen process, which the
		// other SUB checks' listens may share: each is told apart by its id.
		filter := subFullFilter(p.Env.Facts)
		var streams []*subStream
		defer func() {
			for _, s := range streams {
				s.Close()
			}
		}()
		for i := 0; i < 2; i++ {
			s, a, err := subOpenAck(p, filter)
			if err != nil || s == nil {
				return err
			}
			streams = append(streams, s)
			if a.Ack == nil || !jsonrpc.SameID(progSubID(a.Ack), s.ID) {
				p.Failf(s.Ev(), "listen request %d of 2 open at once was not acknowledged under its own id %s", i+1, s.ID)
			}
		}
		return nil
	}),
}

var subFamily = family{name: "SUB", title: "subscriptions/listen", checks: []*check.Check{SUB1, SUB2, SUB3, SUB4, SUB5, SUB7, SUB8},
	unobservable: map[string]string{
		"SUB-6": "needs the server to end a subscription by itself, which the harness cannot cause on an arbitrary server",
		"SUB-9": "needs a list to change while a subscription is open, which takes a fixture tool that changes it",
	}}

// subIDPtr is where a subscription notification carries its subscriptionId.
var subIDPtr = check.Pointer("params", "_meta", mcpclient.MetaSubscriptionID)

// subIDAt locates a wrong subscriptionId (got, nil when absent) in m.
func subIDAt(ev *check.Evidence, m *jsonrpc.Message, got json.RawMessage) *check.Evidence {
	if got == nil {
		return check.AbsentMessage(ev, m, subIDPtr)
	}
	return check.AtMessage(ev, m, subIDPtr)
}
