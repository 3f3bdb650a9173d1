package conformance

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// LOG: request-scoped logging (server/utilities/logging.mdx, checklist
// §1.13). On stdio a log message carries no request id (AMB-18), so the
// checks that judge them use a fresh process with one request in flight.

// logLevelOrder in increasing severity (schema LoggingLevel).
var logLevelOrder = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// logRank is a level's severity, -1 for an unknown level.
func logRank(level string) int { return slices.Index(logLevelOrder, level) }

// logWindow is how long LOG checks watch past the final response.
const logWindow = stdioQuiet

// logTool is the call LOG checks make: a tool that sends logs, else any
// callable tool (nil when none may be called).
func logTool(p *check.Pass) *progEmitter {
	es := progFindEmitters(p)
	if es.logs != nil {
		return es.logs
	}
	if es.progress != nil {
		return es.progress
	}
	if tools := p.Env.CallableTools(); len(tools) > 0 {
		return &progEmitter{Tool: tools[0], Args: progArgs(tools[0].InputSchema, false)}
	}
	return nil
}

var LOG1 = &check.Check{
	ID: "LOG-1", Level: check.Must, Transports: check.Both,
	Waits:   true, // its observations are turns on the repetition's quiet processes
	Spec:    "server/utilities/logging.mdx §Log Messages; schema.ts RequestMetaObject.logLevel",
	Doc:     "no notifications/message for a request without _meta logLevel",
	Fix:     "send log notifications only for requests that set _meta[\"io.modelcontextprotocol/logLevel\"]",
	Monitor: log1Monitor,
	Run: func(p *check.Pass) error {
		t := logTool(p)
		if t == nil {
			progSkipNoTool(p)
			return nil
		}
		c, closeFn, err := progClient(p)
		if err != nil {
			return err
		}
		defer closeFn()
		obs, err := progObserve(p.Ctx, c, "tools/call", map[string]any{"name": t.Tool.Name, "arguments": t.Args}, logWindow)
		if err != nil {
			return err
		}
		if logs := progByMethod(append(obs.Before, obs.After...), "notifications/message"); len(logs) > 0 {
			p.Failf(check.AtMessage(obs.Ev, logs[0], "/method"), "tools/call %s without a logLevel got %d notifications/message", t.Tool.Name, len(logs))
		}
		return nil
	},
}

var LOG2 = &check.Check{
	ID: "LOG-2", Level: check.Must, Transports: check.Both,
	Waits: true, // its observations are turns on the repetition's quiet processes
	Spec:  "server/utilities/logging.mdx §Log Levels, §Log Messages",
	Doc:   "with logLevel L, every notifications/message is at level L or above and comes before the request's final response",
	Fix:   "filter log notifications by the request's logLevel and send them before its response",
	Run: func(p *check.Pass) error {
		es := progFindEmitters(p)
		if es.logs == nil {
			if err := es.logsUnseen(); err != nil {
				return err
			}
			return progSkipNoEmitter(p, es, "notifications/message")
		}
		const level = "notice"
		c, closeFn, err := progClient(p)
		if err != nil {
			return err
		}
		defer closeFn()
		obs, err := progObserve(p.Ctx, c, "tools/call", map[string]any{"name": es.logs.Tool.Name, "arguments": es.logs.Args}, logWindow, mcpclient.WithLogLevel(level))
		if err != nil {
			return err
		}
		for _, m := range progByMethod(obs.Before, "notifications/message") {
			var got string
			_ = json.Unmarshal(progParams(m)["level"], &got)
			switch r := logRank(got); {
			case r < 0:
				p.Failf(check.AtMessage(obs.Ev, m, "/params/level"), "notifications/message has level %q, want one of %v", jsonrpc.Clip(got, 40), logLevelOrder)
			case r < logRank(level):
				p.Failf(check.AtMessage(obs.Ev, m, "/params/level"), "with logLevel %q the server sent a %q message", level, got)
			}
		}
		if late := progByMethod(obs.After, "notifications/message"); len(late) > 0 {
			p.Failf(check.AtMessage(obs.Ev, late[0], "/method"), "%d notifications/message arrived after the final response", len(late))
		}
		return nil
	},
}

var LOG3 = &check.Check{
	ID: "LOG-3", Level: check.Must, Transports: check.Both,
	Spec: "server/utilities/logging.mdx §Capabilities",
	Doc:  "a server that sends notifications/message declares capabilities.logging",
	Fix:  "declare \"logging\": {} in the server/discover capabilities",
	Run: func(p *check.Pass) error {
		if p.Env.Facts.Has("logging") {
			return nil
		}
		if why := p.Env.Facts.CapabilitiesUnread(); why != "" {
			p.Skipf("%s", why)
			return nil
		}
		es := progFindEmitters(p)
		if es.logs == nil {
			if err := es.logsUnseen(); err != nil {
				return err
			}
			return progSkipNoEmitter(p, es, "notifications/message")
		}
		p.Failf(es.logs.At("/method"), "tool %s sent notifications/message, but capabilities has no \"logging\"", es.logs.Tool.Name)
		return nil
	},
}

var LOG4 = &check.Check{
	ID: "LOG-4", Level: check.Should, Transports: check.Both,
	Spec: "server/utilities/logging.mdx §Error Handling",
	Doc:  "an unknown logLevel (\"verbose\") gets error -32602",
	Fix:  "reject a logLevel that is not a LoggingLevel with -32602",
	Run: func(p *check.Pass) error {
		m := "server/discover"
		if p.Env.Facts.Has("tools") {
			m = "tools/list"
		}
		resp, err := p.Env.Client.Do(p.Ctx, m, nil, mcpclient.WithLogLevel("verbose"))
		if resp == nil {
			return err
		}
		if resp.Error == nil || resp.Error.Code != jsonrpc.CodeInvalidParams {
			got := "a result"
			if resp.Error != nil {
				got = "error " + jsonrpc.CodeName(resp.Error.Code)
			}
			p.Failf(check.FromResponseAt(resp, respAnswerAt(resp)), "%s with logLevel \"verbose\" got %s, want error -32602", m, got)
		}
		return nil
	},
}

var logFamily = family{name: "LOG", title: "logging", checks: []*check.Check{LOG1, LOG2, LOG3, LOG4}}

// log1Monitor watches every 2026-07-28 request of the run that set no
// logLevel (the list requests, discover and every check's own calls).
var log1Monitor = &check.Monitor{
	Doc: "no request of the run without _meta logLevel gets notifications/message",
	Watch: func(x *check.Exchange) (bool, string) {
		if !x.Modern() || x.Exchange == nil || x.Exchange.Ambiguous {
			return false, ""
		}
		if _, set := x.Meta[mcpclient.MetaLogLevel]; set {
			return false, ""
		}
		if n := len(progByMethod(x.Exchange.Notifications, "notifications/message")); n > 0 {
			return true, fmt.Sprintf("%s without a logLevel got %d notifications/message", x.Method, n)
		}
		return true, ""
	},
	LocateIn: func(x *check.Exchange) (*jsonrpc.Message, string, bool) {
		if logs := progByMethod(x.Exchange.Notifications, "notifications/message"); len(logs) > 0 {
			return logs[0], "/method", false
		}
		return nil, "", false
	},
}
