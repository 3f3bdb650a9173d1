package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// REM: what a 2026-07-28 server answers to what was removed (changelog
// Major 1-9; checklist §1.14).

// remRemoved are the removed requests REM-1 sends, with plausible params.
var remRemoved = []struct {
	method string
	params map[string]any
}{
	{"ping", nil},
	{"logging/setLevel", map[string]any{"level": "info"}},
	{"resources/subscribe", map[string]any{"uri": "mcp-eval://no-such-resource"}},
	{"resources/unsubscribe", map[string]any{"uri": "mcp-eval://no-such-resource"}},
	{"tasks/list", nil},
	{"tasks/result", map[string]any{"taskId": "mcp-eval-no-such-task"}},
}

// remDescribe says what answered a client request, for messages.
func remDescribe(resp *mcpclient.Response) string {
	var s string
	if resp.Exchange != nil && resp.Exchange.HTTP != nil {
		s = fmt.Sprintf("HTTP %d with ", resp.Exchange.HTTP.Status)
	}
	switch {
	case resp.Error != nil:
		return s + fmt.Sprintf("error %d", resp.Error.Code)
	case resp.Result != nil:
		return s + "a result"
	}
	return s + "no response"
}

var REM1 = &check.Check{
	ID: "REM-1", Level: check.Must, Transports: check.Both,
	Spec: "changelog.mdx (removed methods); basic/transports/streamable-http.mdx §Request Metadata",
	Doc:  "ping, logging/setLevel, resources/subscribe, resources/unsubscribe, tasks/list and tasks/result get -32601 (HTTP 404)",
	Fix:  "drop the removed 2025-11-25 methods and answer them with -32601 (HTTP 404)",
	Run: func(p *check.Pass) error {
		return p.Cases("", len(remRemoved), func(i int) error {
			r := remRemoved[i]
			resp, err := p.Env.Client.Do(p.Ctx, r.method, r.params)
			if resp == nil || transport.Lost(err) {
				// A process that has exited (every check shares it; any
				// one's request may have ended it) is no answer to judge.
				return err
			}
			ev := check.FromResponse(resp)
			if err != nil {
				p.Failf(ev, "%s: %v, want error -32601", r.method, err)
				return nil
			}
			status := 0
			if resp.Exchange != nil && resp.Exchange.HTTP != nil {
				status = resp.Exchange.HTTP.Status
			}
			if resp.Error == nil || resp.Error.Code != jsonrpc.CodeMethodNotFound || (p.Env.Transport == "http" && status != http.StatusNotFound) {
				want := "error -32601"
				if p.Env.Transport == "http" {
					want = "HTTP 404 with error -32601"
				}
				p.Failf(respAnswerEv(resp, jsonrpc.CodeMethodNotFound), "removed method %s got %s, want %s", r.method, remDescribe(resp), want)
			}
			return nil
		})
	},
}

// remInitParams are a legacy initialize's params (checklist §3.8).
var remInitParams = map[string]any{"protocolVersion": mcpclient.Legacy1125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "mcp-eval", "version": "0.1.0"}}

// remInitAnswer judges an answer to initialize: an error (naming the
// supported versions, SHOULD for a modern-only server) or a legacy
// InitializeResult. dualEra: the run saw the server run a legacy session,
// so an error need not name the versions (versioning.mdx: the SHOULD is
// for servers that support only modern versions).
func remInitAnswer(p *check.Pass, ev *check.Evidence, what string, resp *mcpclient.Response, dualEra bool) {
	var m *jsonrpc.Message
	if resp != nil && resp.Exchange != nil {
		m = resp.Exchange.Response
	}
	if m == nil {
		p.Failf(ev, "%s got no JSON-RPC response, want an error", what)
		return
	}
	if m.Error == nil {
		var ir struct {
			ProtocolVersion string          `json:"protocolVersion"`
			Capabilities    json.RawMessage `json:"capabilities"`
		}
		if json.Unmarshal(m.Result, &ir) == nil && slices.Contains(mcpclient.LegacyVersions, ir.ProtocolVersion) && bytes.HasPrefix(bytes.TrimSpace(ir.Capabilities), []byte("{")) {
			p.Passf(ev, "%s got a legacy InitializeResult for %s: a dual-era server", what, ir.ProtocolVersion)
			return
		}
		p.Failf(atResponse(ev, resp, "/result"), "%s got a result that is not a legacy InitializeResult, want a JSON-RPC error", what)
		return
	}
	if dualEra {
		p.Passf(ev, "%s got error %d; the server is dual-era, and the SHOULD to name the supported versions is for modern-only servers", what, m.Error.Code)
		return
	}
	versions := []string{mcpclient.Latest}
	if d := p.Env.Facts.Discover; d != nil {
		for _, v := range d.SupportedVersions {
			if !slices.Contains(versions, v) {
				versions = append(versions, v)
			}
		}
	}
	text := m.Error.Message + string(m.Error.Data)
	for _, v := range versions {
		if strings.Contains(text, v) {
			return
		}
	}
	p.Warnf(atResponse(ev, resp, "/error"), "%s got error %d without naming the supported versions; a modern-only server should name them (%s)", what, m.Error.Code, strings.Join(versions, ", "))
}

var REM2 = &check.Check{
	ID: "REM-2", Level: check.Must, Transports: check.Both,
	Waits: true, // the exchange on a process of its own or first on the quiet one (stdio, remStdio)
	Spec:  "basic/versioning.mdx §Backward Compatibility with Initialization-Based Versions",
	Doc:   "initialize gets a JSON-RPC error naming the supported versions (HTTP: 400 without modern headers, 404/-32601 with them), unless the server is dual-era",
	Fix:   "answer initialize with an error that names the supported versions, or run a full legacy session (dual-era)",
	Run: func(p *check.Pass) error {
		side, err := legacySideOf(p)
		if err != nil {
			return err
		}
		// With modern _meta and headers: a modern request for a method
		// 2026-07-28 does not have. A dual-era server may also take it for
		// a legacy opening (versioning.mdx: "An initialize request selects
		// legacy semantics").
		var resp *mcpclient.Response
		if p.Env.Transport == "stdio" {
			o := remStdioOf(p)
			if o.openErr != nil {
				return o.openErr
			}
			resp, err = o.init, o.initErr
		} else {
			c, closeFn, ferr := p.Env.Fresh(p.Ctx)
			if ferr != nil {
				return ferr
			}
			defer closeFn()
			resp, err = c.Do(p.Ctx, "initialize", remInitParams)
		}
		if resp == nil {
			return err
		}
		ev := check.FromResponse(resp)
		if resp.Exchange == nil || resp.Exchange.Response == nil {
			p.Failf(ev, "initialize with modern _meta: %v, want a JSON-RPC error", err)
		} else {
			remInitAnswer(p, ev, "initialize with modern _meta", resp, side.dualEra)
			if h := resp.Exchange.HTTP; h != nil && resp.Error != nil && (h.Status != http.StatusNotFound || resp.Error.Code != jsonrpc.CodeMethodNotFound) {
				p.Failf(respAnswerEv(resp, jsonrpc.CodeMethodNotFound), "initialize with modern headers and _meta got %s, want HTTP 404 with error -32601", remDescribe(resp))
			}
		}
		remLegacyInit(p, side)
		return nil
	},
}

// remLegacyInit judges the legacy-style initialize (no _meta, no modern
// headers) that opened a connection of its own: dual-era, or rejected
// (HTTP: 400 from header validation).
func remLegacyInit(p *check.Pass, side *legacySide) {
	const what = "a legacy-style initialize (no _meta, no modern headers)"
	if side.dualEra {
		p.Passf(side.ev, "%s: the server is dual-era", side.observed)
		return
	}
	var m *jsonrpc.Message
	status := 0
	if side.init != nil && side.init.Exchange != nil {
		m = side.init.Exchange.Response
		if side.init.Exchange.HTTP != nil {
			status = side.init.Exchange.HTTP.Status
		}
	}
	switch {
	case side.init == nil:
		p.Failf(side.ev, "%s: %s, want a JSON-RPC error", what, side.observed)
	case m != nil && m.Result != nil && side.version != "":
		p.Failf(side.ev, "%s: a server that answers initialize runs a legacy session (dual-era), or it rejects initialize", side.observed)
	case m != nil && m.Result != nil:
		remInitAnswer(p, side.ev, what, side.init, false)
	case p.Env.Transport == "http":
		if status != http.StatusBadRequest {
			p.Failf(side.ev, "%s got %s, want HTTP 400 from header validation", what, remDescribe(side.init))
		}
	default:
		remInitAnswer(p, side.ev, what, side.init, false)
	}
}

// remLegacyNotifications are 2025-11-25 client notifications.
var remLegacyNotifications = []string{"notifications/initialized", "notifications/roots/list_changed"}

// stdioQuiet is how long a stdio check waits after a fence for messages
// that should not come.
const stdioQuiet = 30 * time.Millisecond

// stdioFenced writes lines to a process, then sends a fence request and
// returns every stdout line that arrived until quiet after the fence's
// response (the fence's own response excluded).
func stdioFenced(ctx context.Context, c *mcpclient.Client, lines [][]byte, quiet time.Duration) ([]transport.Inbound, error) {
	t, ok := c.Transport().(*transport.StdioTransport)
	if !ok {
		return nil, nil
	}
	tap, stop := t.Tap(512)
	defer stop()
	for _, l := range lines {
		if err := t.WriteLine(ctx, l); err != nil {
			return nil, err
		}
	}
	fence, err := c.Do(ctx, "server/discover", nil)
	if err != nil {
		return nil, err
	}
	var out []transport.Inbound
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		select {
		case in := <-tap:
			if in.Msg != nil && in.Msg.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(in.Msg.ID, fence.ID) {
				continue
			}
			out = append(out, in)
		case <-timer.C:
			return out, nil
		case <-ctx.Done():
			return out, nil
		}
	}
}

var REM3 = &check.Check{
	ID: "REM-3", Level: check.Must, Transports: check.Both,
	Waits: true, // the exchange on a process of its own or first on the quiet one (stdio, remStdio)
	Spec:  "basic/index.mdx §Notifications; basic/transports/streamable-http.mdx §Sending Messages",
	Doc:   "legacy client notifications (notifications/initialized, notifications/roots/list_changed) never get a JSON-RPC response (HTTP: 202 or a 4xx status)",
	Fix:   "ignore notifications/initialized and notifications/roots/list_changed (HTTP: 202 or a 4xx without a result)",
	Run: func(p *check.Pass) error {
		if p.Env.Transport == "http" {
			// Each notification once per run, the rule N times
			// (Pass.Cases).
			return p.Cases("", len(remLegacyNotifications), func(i int) error {
				n := remLegacyNotifications[i]
				body, h, err := httpNotificationBody(p.Env.Client, n, nil)
				if err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(p.Ctx, httpRawTimeout)
				rr, err := p.Env.HTTP.Do(ctx, &transport.RawRequest{Body: body, Header: h})
				cancel()
				if rr == nil {
					return err
				}
				ev := check.FromRaw(body, h, rr)
				switch {
				case rr.Status == http.StatusAccepted && len(bytes.TrimSpace(rr.Body)) == 0:
				case rr.Status >= 400 && rr.Status < 500:
					for _, m := range rr.Messages {
						if m.Result != nil {
							p.Failf(unaskedAt(ev, rr.Body), "%s got HTTP %d with a JSON-RPC result", n, rr.Status)
						}
					}
				default:
					ev.OnStatus = true
					p.Failf(ev, "%s got %s, want 202 with an empty body or a 4xx status", n, httpDescribe(rr, nil))
				}
				return nil
			})
		}
		lines := remLegacyLines()
		o := remStdioOf(p)
		if o.openErr != nil {
			return o.openErr
		}
		got, err := o.got, o.gotErr
		if !o.notified {
			// initialize left the shared process unusable: a process
			// of this check's own.
			c, closeFn, ferr := p.Env.Fresh(p.Ctx)
			if ferr != nil {
				return ferr
			}
			defer closeFn()
			got, err = stdioFenced(p.Ctx, c, lines, stdioQuiet)
		}
		if err != nil {
			return err
		}
		for _, in := range got {
			if in.Msg != nil && in.Msg.Kind() == jsonrpc.KindResponse {
				p.Failf(unaskedAt(&check.Evidence{Transport: "stdio", Request: string(bytes.Join(lines, []byte("\n"))), Response: jsonrpc.Clip(string(in.Raw), 600)}, in.Raw), "a legacy notification was answered with a JSON-RPC response")
			}
		}
		return nil
	},
}

// remLegacyLines are the lines of remLegacyNotifications as REM-3 writes
// them on stdio.
func remLegacyLines() [][]byte {
	var lines [][]byte
	for _, n := range remLegacyNotifications {
		lines = append(lines, []byte(`{"jsonrpc":"2.0","method":"`+n+`"}`))
	}
	return lines
}

// remStdioKey is the Memo key of a repetition's REM-2/REM-3 exchange on
// stdio.
type remStdioKey struct{ run int }

// remStdio is what REM-2 and REM-3 judge on stdio, one exchange per
// repetition: REM-2's initialize (with modern _meta) as the first request
// after the probe, then REM-3's legacy notifications and a fence. The
// order is fixed and is the one an older client sends (initialize, then
// notifications/initialized), so neither check is judged on a sequence it
// would not see alone: initialize comes first on a new process, as on one
// of its own, and a notification never gets a response, whatever era
// initialize put a dual-era process in.
//
// Where the run shares processes the exchange opens the repetition's
// quiet process, before its list walk (remQuiet): a server that rejects
// initialize is left as a new process would be for the walk (the TS SDK v2
// pins the process to 2026-07-28, as the walk's first complete request
// would); one that answers it runs a legacy session there, so the walk
// gets a new process, as it did before. Otherwise the exchange has a
// process of its own, closed when both are read.
type remStdio struct {
	openErr  error
	init     *mcpclient.Response
	initErr  error
	notified bool // REM-3's lines were written (else it needs a process of its own)
	got      []transport.Inbound
	gotErr   error
}

// remExchange makes the exchange on c.
func remExchange(ctx context.Context, c *mcpclient.Client) *remStdio {
	o := &remStdio{}
	o.init, o.initErr = c.Do(ctx, "initialize", remInitParams)
	st, ok := c.Transport().(*transport.StdioTransport)
	if o.init == nil || o.init.Exchange == nil || o.init.Exchange.Response == nil || !ok || stdioGone(st) {
		// No answer to initialize (or the process died): the
		// notifications would be judged on a server that stopped.
		return o
	}
	o.notified = true
	o.got, o.gotErr = stdioFenced(ctx, c, remLegacyLines(), stdioQuiet)
	return o
}

// rejected: initialize got a JSON-RPC error and the process is still
// there to serve the walk.
func (o *remStdio) rejected(c *mcpclient.Client) bool {
	return o.notified && o.init.Exchange.Response.Error != nil && o.gotErr == nil && stdioLive(c)
}

// remQuietKey is the Memo key of a repetition's remQuiet.
type remQuietKey struct{ run int }

// remQuiet is a repetition's exchange on its quiet process.
type remQuiet struct {
	once sync.Once
	done chan struct{} // closed once o is set
	o    *remStdio
}

// remQuietWantedKey is the Memo key of the run's answer to "is REM-2 or
// REM-3 selected" (set by Run, remWant): the quiet process opens with the
// exchange only then.
type remQuietWantedKey struct{}

// remWant records whether the run selected REM-2 or REM-3 (stdio).
func remWant(m *check.Memo, kind string, selected []*check.Check) {
	want := kind == "stdio" && slices.ContainsFunc(selected, func(c *check.Check) bool { return c == REM2 || c == REM3 })
	m.Do(remQuietWantedKey{}, func() any { return want })
}

// remQuietOf is p's repetition's exchange on its quiet process, nil where
// none is made: no Memo, a plan that shares nothing, or neither check
// selected.
func remQuietOf(p *check.Pass) *remQuiet {
	if p.Env.Memo == nil || !quietPlanOf(p.Env.Memo).share {
		return nil
	}
	if want, _ := p.Env.Memo.Do(remQuietWantedKey{}, func() any { return false }).(bool); !want {
		return nil
	}
	rq, _ := p.Env.Memo.Do(remQuietKey{p.Run}, func() any { return &remQuiet{done: make(chan struct{})} }).(*remQuiet)
	return rq
}

// remQuietWait bounds how long the walk waits for the exchange on its
// process: a server that never answers initialize would otherwise hold the
// repetition's walk and turns for the request timeout. The exchange goes
// on without the walk, as long as it would on a process of its own.
const remQuietWait = 2 * time.Second

// openWith makes the exchange on c, the repetition's first quiet process,
// and says whether c may go on to the walk. When it may not, c is closed
// here, once the exchange is over.
func (rq *remQuiet) openWith(ctx context.Context, c *mcpclient.Client) bool {
	mine := false
	rq.once.Do(func() { mine = true })
	if !mine {
		go c.Close()
		return false
	}
	kept := make(chan bool, 1)
	go func() {
		o := remExchange(ctx, c)
		keep := o.rejected(c)
		rq.o = o
		close(rq.done)
		kept <- keep
	}()
	timer := time.NewTimer(remQuietWait)
	defer timer.Stop()
	select {
	case keep := <-kept:
		if !keep {
			// Closed aside: a server that ignores EOF would hold the
			// walk for its grace period.
			go c.Close()
		}
		return keep
	case <-timer.C:
		go func() {
			<-rq.done
			c.Close()
		}()
		return false
	}
}

// skip gives up the exchange on the quiet process (it could not be
// opened): wait returns nil, and the exchange gets a process of its own.
func (rq *remQuiet) skip() { rq.once.Do(func() { close(rq.done) }) }

// wait returns the exchange, opening the repetition's quiet process (as
// its first turn would) if no one has; nil if none could be made there.
func (rq *remQuiet) wait(p *check.Pass) *remStdio {
	quietOf(p).openUnless(p, rq.done) // a failure to open leaves the exchange to a process of its own
	select {
	case <-rq.done:
		return rq.o
	default:
		return nil
	}
}

func remStdioOf(p *check.Pass) *remStdio {
	compute := func() any {
		if rq := remQuietOf(p); rq != nil {
			if o := rq.wait(p); o != nil {
				return o
			}
		}
		c, closeFn, err := p.Env.Fresh(p.Ctx)
		if err != nil {
			return &remStdio{openErr: err}
		}
		defer closeFn()
		return remExchange(p.Ctx, c)
	}
	if p.Env.Memo == nil {
		o, _ := compute().(*remStdio)
		return o
	}
	o, _ := p.Env.Memo.Do(remStdioKey{run: p.Run}, compute).(*remStdio)
	if o == nil {
		return &remStdio{openErr: errors.New("the REM-2/REM-3 exchange on stdio failed (a harness bug)")}
	}
	return o
}

// remSessionID is the session id REM-4 sends; the server must ignore it.
const remSessionID = "mcp-eval-session"

var REM4 = &check.Check{
	ID: "REM-4", Level: check.Should, Transports: check.HTTP,
	Spec: "basic/transports/streamable-http.mdx §Earlier Streamable HTTP Revisions",
	Doc:  "GET and DELETE on the endpoint get 405 (with MCP-Protocol-Version: 2026-07-28; without it too unless the server is dual-era), and the server neither mints nor echoes Mcp-Session-Id",
	Fix:  "answer GET and DELETE with 405 and drop Mcp-Session-Id handling (a dual-era server: whenever MCP-Protocol-Version names 2026-07-28)",
	Run: func(p *check.Pass) error {
		side, err := legacySideOf(p)
		if err != nil {
			return err
		}
		// The modern side is probed with the modern header. Without it a
		// dual-era server rightly takes the legacy path (a 2025-11-25 GET
		// stream), so only a modern-only server is also asked that way, as
		// an older client would.
		versions := []string{mcpclient.Latest}
		if !side.dualEra {
			versions = append(versions, "")
		}
		for _, version := range versions {
			for _, method := range []string{http.MethodGet, http.MethodDelete} {
				h := http.Header{mcpclient.HeaderSessionID: {remSessionID}}
				what := method + " without MCP-Protocol-Version"
				if version != "" {
					h.Set(mcpclient.HeaderProtocolVersion, version)
					what = method + " with MCP-Protocol-Version: " + version
				}
				if method == http.MethodGet {
					h.Set("Accept", "text/event-stream")
					h.Set("Last-Event-ID", "1")
				}
				ctx, cancel := context.WithTimeout(p.Ctx, 2*time.Second)
				rr, err := p.Env.HTTP.Do(ctx, &transport.RawRequest{Method: method, Header: h})
				cancel()
				if rr == nil {
					return err
				}
				ev := check.FromRaw(nil, h, rr)
				ev.Request = method
				if rr.Status != http.StatusMethodNotAllowed {
					p.Failf(ev, "%s on the MCP endpoint got HTTP %d, want 405", what, rr.Status)
				}
				if v := rr.Header.Get(mcpclient.HeaderSessionID); v != "" {
					p.Failf(ev, "%s was answered with Mcp-Session-Id %q; 2026-07-28 has no sessions", what, jsonrpc.Clip(v, 60))
				}
			}
		}
		if side.dualEra {
			p.Passf(side.ev, "%s: a dual-era server, so GET and DELETE were sent with MCP-Protocol-Version: %s only (without it the legacy path is the server's to take)", side.observed, mcpclient.Latest)
		}
		rc, err := httpPost(p.Ctx, p.Env, "server/discover", nil, func(h http.Header, _ *[]byte) { h.Set(mcpclient.HeaderSessionID, remSessionID) })
		if err != nil {
			return err
		}
		if rc.final() == nil || rc.final().Result == nil {
			p.Failf(rc.EvAnswer(0), "server/discover with an Mcp-Session-Id header got %s; the header must be ignored", rc.Describe())
		}
		if v := rc.RR.Header.Get(mcpclient.HeaderSessionID); v != "" {
			p.Failf(rc.Ev(), "server/discover was answered with Mcp-Session-Id %q; 2026-07-28 has no sessions", jsonrpc.Clip(v, 60))
		}
		return nil
	},
}

var remFamily = family{name: "REM", title: "removed methods", checks: []*check.Check{REM1, REM2, REM3, REM4}}
