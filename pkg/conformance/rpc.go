package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// RPC: the JSON-RPC base (basic/index.mdx, checklist §1.1).

var rpcFamily = family{name: "RPC", title: "JSON-RPC base", checks: []*check.Check{RPC1, RPC2, RPC3, RPC4, RPC5, RPC6}}

var RPC1 = &check.Check{
	ID: "RPC-1", Level: check.Must, Transports: check.Both,
	Spec:    "basic/index.mdx §Result Responses, §Error Responses; schema.ts JSONRPCResultResponse, JSONRPCErrorResponse",
	Doc:     "every response has \"jsonrpc\":\"2.0\", the request's id with its JSON type, and exactly one of result or error",
	Fix:     "echo the request id exactly as sent (a string id stays a string, even \"123\") and answer with jsonrpc \"2.0\" and exactly one of result or error",
	Monitor: rpc1Monitor,
	Run: func(p *check.Pass) error {
		probes := []struct {
			method string
			id     json.RawMessage
			what   string
		}{
			{"server/discover", wireStringID(false), "a string id"},
			{"server/discover", wireStringID(true), "a string id of digits"},
			{"server/discover", nil, "an integer id"}, // the client's own
		}
		var ok passTally
		judge := func(method, what string, r *reply, id json.RawMessage) {
			problems := rpcEnvelopeAt(r, id)
			for _, pb := range problems {
				p.Failf(r.evidenceFor(pb), "%s sent with %s: %s", method, what, pb.msg)
			}
			if len(problems) == 0 {
				ok.add(r.evidence())
			}
		}
		err := p.Cases("ids", len(probes), func(i int) error {
			pr := probes[i]
			if pr.id == nil {
				// An integer id, as the client numbers its own: on HTTP
				// the repetition's server/discover, as the server wrote
				// it (stdio keeps no bytes of a shared answer).
				if p.Env.Transport == "http" {
					if resp, err := p.Do(pr.method, nil); err == nil {
						if r := replyOfHTTP(resp); r != nil {
							judge(pr.method, pr.what, r, resp.ID)
							return nil
						}
					}
				}
				pr.id = wireNumberID()
			}
			w, err := newWire(p.Env.Client, pr.method, nil)
			if err != nil {
				return err
			}
			w.setID(pr.id)
			r, err := sendWire(p.Ctx, p.Env.Client.Transport(), w)
			if err != nil {
				return err
			}
			judge(pr.method, pr.what, r, pr.id)
			return nil
		})
		if err != nil {
			return err
		}
		// The error response: the unknown method of this repetition's
		// error sweep, sent under a string id.
		samples, err := errSamples(p)
		if errNeeds(err, func(m string, _ bool) bool { return m == errUnknownMethod }) {
			return err
		}
		for _, s := range samples {
			if s.method == errUnknownMethod {
				judge(s.method, "a string id (unknown method, so an error response)", s.r, s.id)
			}
		}
		ok.report(p, "%d responses to string, digit-string and integer ids carried jsonrpc \"2.0\", the same id and one of result or error", ok.n)
		return nil
	},
}

// rpcEnvelope lists what is wrong with the envelope of a response to the
// request with id sent.
func rpcEnvelope(r *reply, sent json.RawMessage) []string { return msgs(rpcEnvelopeAt(r, sent)) }

// rpcEnvelopeAt is rpcEnvelope with where each problem is in the response.
func rpcEnvelopeAt(r *reply, sent json.RawMessage) []problem {
	if r.raw == nil {
		return []problem{{msg: r.describe()}}
	}
	if r.fields == nil {
		return []problem{{msg: "the response is not a JSON object: " + clipBytes(r.raw, 120)}}
	}
	var out []problem
	var version string
	if raw, ok := r.fields["jsonrpc"]; !ok {
		out = append(out, problem{at: "/jsonrpc", absent: true, msg: `the response has no "jsonrpc" member, want "2.0"`})
	} else if json.Unmarshal(raw, &version) != nil || version != jsonrpc.Version {
		out = append(out, problem{at: "/jsonrpc", msg: fmt.Sprintf(`"jsonrpc" is %s, want "2.0"`, shown(raw))})
	}
	got, hasID := r.fields["id"]
	switch {
	case !hasID:
		out = append(out, problem{at: "/id", absent: true, msg: fmt.Sprintf("the response has no id, want %s", sent)})
	case jsonrpc.SameID(got, sent):
	case idText(got) == idText(sent):
		out = append(out, problem{at: "/id", msg: fmt.Sprintf("the response id is %s, want %s with the same JSON type", shown(got), sent)})
	default:
		out = append(out, problem{at: "/id", msg: fmt.Sprintf("the response id is %s, want %s", shown(got), sent)})
	}
	_, hasResult := r.fields["result"]
	_, hasError := r.fields["error"]
	switch {
	case hasResult && hasError:
		out = append(out, problem{at: "/error", msg: "the response has both result and error, want exactly one"})
	case !hasResult && !hasError:
		out = append(out, problem{msg: "the response has neither result nor error, want exactly one"})
	}
	return out
}

var RPC2 = &check.Check{
	ID: "RPC-2", Level: check.Must, Transports: check.Both,
	Spec: "basic/index.mdx §Error Responses",
	Doc:  "error.code is an integer, error.message a string, and the id is left out only when the request id could not be read",
	Fix:  "answer with {\"code\": <integer>, \"message\": <string>} and the request's id",
	Run: func(p *check.Pass) error {
		// The requests that should fail are ERR's sweep of this
		// repetition: RPC-2 judges their envelopes, ERR their codes.
		samples, err := errSamples(p)
		if errNeeds(err, func(_ string, rpc2 bool) bool { return rpc2 }) {
			return err
		}
		judged, asked := 0, 0
		for _, s := range samples {
			if !s.rpc2 {
				continue
			}
			asked++
			r, id := s.r, s.id
			ev := r.evidence()
			if r.raw == nil {
				p.Failf(ev, "%s: %s", s.method, r.describe())
				continue
			}
			if !r.has("error") {
				continue // not an error: other checks judge that (DISC-1, CALL-2, RSRC-3)
			}
			judged++
			for _, pb := range rpcErrorShapeAt(r.fields["error"]) {
				p.Failf(r.evidenceFor(pb), "%s: %s", s.method, pb.msg)
			}
			got, hasID := r.fields["id"]
			switch {
			case !hasID:
				p.Failf(r.evidenceFor(problem{at: "/id", absent: true}), "%s: the error response has no id although the request id %s was readable", s.method, id)
			case string(bytes.TrimSpace(got)) == "null":
				p.Failf(r.evidenceAt("/id"), "%s: the error response has id null although the request id %s was readable", s.method, id)
			case !jsonrpc.SameID(got, id):
				p.Failf(r.evidenceAt("/id"), "%s: the error response id is %s, want %s", s.method, shown(got), id)
			}
		}
		if judged == 0 {
			p.Skipf("none of the %d requests that should fail got an error response", asked)
		}
		return nil
	},
}

// rpcProbe is one request a check sends.
type rpcProbe struct {
	method string
	params map[string]any
}

// rpcErrorShape lists what is wrong with an error object.
func rpcErrorShape(raw json.RawMessage) []string { return msgs(rpcErrorShapeAt(raw)) }

// rpcErrorShapeAt is rpcErrorShape with where each problem is in the
// response.
func rpcErrorShapeAt(raw json.RawMessage) []problem {
	var e map[string]json.RawMessage
	if json.Unmarshal(raw, &e) != nil || e == nil {
		return []problem{{at: "/error", msg: fmt.Sprintf("error is %s, want an object with code and message", shown(raw))}}
	}
	var out []problem
	var code float64
	if c, ok := e["code"]; !ok {
		out = append(out, problem{at: "/error/code", absent: true, msg: "error.code is missing"})
	} else if json.Unmarshal(c, &code) != nil || code != math.Trunc(code) {
		out = append(out, problem{at: "/error/code", msg: fmt.Sprintf("error.code is %s, want an integer", shown(c))})
	}
	var msg string
	if m, ok := e["message"]; !ok {
		out = append(out, problem{at: "/error/message", absent: true, msg: "error.message is missing"})
	} else if json.Unmarshal(m, &msg) != nil {
		out = append(out, problem{at: "/error/message", msg: fmt.Sprintf("error.message is %s, want a string", shown(m))})
	}
	return out
}

// rpcNotifications are client notifications no server answers: an invalid
// cancellation (cancellation.mdx: SHOULD be ignored) and one no server
// knows.
var rpcNotifications = [][]byte{
	[]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"mcp-eval-nope","reason":"mcp-eval conformance probe"}}`),
	[]byte(`{"jsonrpc":"2.0","method":"notifications/mcp-eval/probe","params":{}}`),
}

// rpcNotificationMethod is the method of one of rpcNotifications.
func rpcNotificationMethod(b []byte) string {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(b, &m)
	return m.Method
}

var RPC3 = &check.Check{
	ID: "RPC-3", Level: check.Must, Transports: check.Both,
	Waits: true, // a turn on a quiet process (stdio), and a quiet period after the notifications
	Spec:  "basic/index.mdx §Notifications; basic/patterns/cancellation.mdx §Error Handling",
	Doc:   "a client notification gets no JSON-RPC response",
	Fix:   "never answer a message without an id; ignore unknown notifications and invalid cancellations",
	Run: func(p *check.Pass) error {
		if p.Env.Transport == "http" {
			return rpc3HTTP(p)
		}
		fc, closeFresh, err := quietTurn(p)
		if err != nil {
			return err
		}
		defer closeFresh()
		st, ok := fc.Transport().(*transport.StdioTransport)
		if !ok {
			return fmt.Errorf("fresh stdio connection has transport %T", fc.Transport())
		}
		var quiet passTally
		for i, n := range rpcNotifications {
			// Each notification is followed by a sentinel request; only the
			// last waits a little longer for a late answer.
			grace := time.Duration(0)
			if i == len(rpcNotifications)-1 {
				grace = rpcStdioGrace
			}
			lines, sentinel, err := rpcStdioProbe(p.Ctx, fc, st, n, grace, nil)
			ev := &check.Evidence{Transport: "stdio", Request: string(n)}
			if err != nil {
				first, _, _ := strings.Cut(err.Error(), "\n")
				p.Failf(ev, "after the notification %s the server did not answer server/discover: %s", rpcNotificationMethod(n), first)
				return nil
			}
			stray := rpcStray(lines, sentinel)
			if len(stray) > 0 {
				ev.Response = clipBytes(stray[0], 600)
				p.Failf(unaskedAt(ev, stray[0]), "the server answered the notification %s with a JSON-RPC response", rpcNotificationMethod(n))
				continue
			}
			quiet.add(ev)
		}
		quiet.report(p, "no response to %d notifications (an invalid cancellation, an unknown notification)", quiet.n)
		return nil
	},
}

func rpc3HTTP(p *check.Pass) error {
	var quiet passTally
	for _, n := range rpcNotifications {
		var rr *transport.RawResponse
		var h http.Header
		if rpcNotificationMethod(n) == "notifications/cancelled" {
			// The repetition's invalid cancellation as the client builds
			// it, which HTTP-4 judges too.
			posted := httpPostCancelled(p)
			if posted.rr == nil {
				return posted.err
			}
			n, h, rr = posted.body, posted.header, posted.rr
		} else {
			h = httpHeader(http.Header{mcpclient.HeaderProtocolVersion: {p.Env.Client.Info().ProtocolVersion}, mcpclient.HeaderMethod: {rpcNotificationMethod(n)}})
			ctx, cancel := context.WithTimeout(p.Ctx, wireTimeout)
			var err error
			rr, err = p.Env.HTTP.Do(ctx, &transport.RawRequest{Body: n, Header: h})
			cancel()
			if rr == nil {
				return err
			}
		}
		ev := check.FromRaw(n, h, rr)
		var resp *jsonrpc.Message
		for _, m := range rr.Messages {
			if m.Kind() == jsonrpc.KindResponse {
				resp = m
				break
			}
		}
		method := rpcNotificationMethod(n)
		ok2xx := rr.Status >= 200 && rr.Status < 300
		switch {
		case resp != nil && resp.Error == nil:
			p.Failf(unaskedAt(ev, rr.Body), "the server answered the notification %s with a JSON-RPC result (HTTP %d)", method, rr.Status)
		case resp != nil && ok2xx:
			p.Failf(unaskedAt(ev, rr.Body), "the server answered the notification %s with a JSON-RPC error response and HTTP %d; an accepted notification gets 202 and no body", method, rr.Status)
		case resp != nil:
			// streamable-http.mdx: a notification the server does not accept
			// gets an error status, optionally with an id-less error body.
			p.Warnf(unaskedAt(ev, rr.Body), "the server rejected the notification %s with HTTP %d and error %d (%s): %q; %s", method, rr.Status, resp.Error.Code, jsonrpc.CodeName(resp.Error.Code), jsonrpc.Clip(resp.Error.Message, 160), rpcRejectionWhy(method, resp.Error))
		default:
			quiet.add(ev)
		}
	}
	quiet.report(p, "no JSON-RPC response to %d notifications (an invalid cancellation, an unknown notification)", quiet.n)
	return nil
}

// rpcRejectionWhy says what a rejected notification means, from the error
// itself: a rejection of the request's headers (-32020) or of its params
// or _meta is no judgement of the cancellation it carried, so only an
// error that names neither is read as not ignoring an invalid
// cancellation.
func rpcRejectionWhy(method string, e *jsonrpc.Error) string {
	msg := strings.ToLower(e.Message)
	switch {
	case e.Code == jsonrpc.CodeHeaderMismatch || strings.Contains(msg, "header"):
		return "the server rejected the request's headers, not the notification's content; no response was due"
	case strings.Contains(msg, "_meta") || strings.Contains(msg, "meta"):
		return "the server rejected the notification's _meta, not what it notified; no response was due"
	case e.Code == jsonrpc.CodeInvalidParams:
		return "the server rejected the notification's params; no response was due"
	case method == "notifications/cancelled":
		return "no response was due, and a cancellation of an unknown request SHOULD be ignored"
	}
	return "no response was due"
}

// rpcStdioGrace is how long a stdio probe keeps listening after the
// sentinel request was answered, for a late answer to the probe line; at
// least as long as the sentinel took, up to rpcStdioGraceMost: a server
// that answers its requests each in its own time may answer the line
// after the sentinel written behind it (one taking 0-300 ms for each
// answer missed RPC-5's error responses in 9 of 20 runs).
const (
	rpcStdioGrace     = 50 * time.Millisecond
	rpcStdioGraceMost = time.Second
)

// rpcStdioProbe writes line on a fresh stdio server, then asks
// server/discover as a sentinel, and returns every stdout line seen until
// the sentinel's answer, with the sentinel's id. With grace it listens that
// much longer unless enough reports that what it waits for has come. An
// error means the server did not answer the sentinel.
func rpcStdioProbe(ctx context.Context, fc *mcpclient.Client, st *transport.StdioTransport, line []byte, grace time.Duration, enough func(lines [][]byte, sentinel json.RawMessage) bool) ([][]byte, json.RawMessage, error) {
	tap, stop := st.Tap(1024)
	defer stop()
	if err := st.WriteLine(ctx, line); err != nil {
		return nil, nil, err
	}
	// The sentinel needs no outside work: a server that read it and sits
	// idle is silent, not slow (transport.WithIdleSilence); the transport
	// waits longer where this process took more than a third of the bound
	// to answer server/discover before (its probe, say: a gateway asks its
	// upstreams): three times that.
	sctx, cancel := context.WithTimeout(transport.WithIdleSilence(ctx, 500*time.Millisecond), wireTimeout)
	asked := time.Now()
	resp, err := fc.Do(sctx, "server/discover", nil)
	took := time.Since(asked)
	cancel()
	var lines [][]byte
	for drained := false; !drained; {
		select {
		case in := <-tap:
			lines = append(lines, in.Raw)
		default:
			drained = true
		}
	}
	if err != nil {
		return lines, nil, err
	}
	if grace <= 0 || (enough != nil && enough(lines, resp.ID)) {
		return lines, resp.ID, nil
	}
	timer := time.NewTimer(max(grace, min(took, rpcStdioGraceMost)))
	defer timer.Stop()
	for {
		select {
		case in := <-tap:
			lines = append(lines, in.Raw)
			if enough != nil && enough(lines, resp.ID) {
				return lines, resp.ID, nil
			}
		case <-timer.C:
			return lines, resp.ID, nil
		}
	}
}

// rpcStray returns the responses among lines that answer nothing the
// harness sent with an id: not the sentinel's.
func rpcStray(lines [][]byte, sentinel json.RawMessage) [][]byte {
	var out [][]byte
	for _, l := range lines {
		switch answers(l, sentinel) {
		case answerExact:
			continue
		case answerNoID:
			out = append(out, l)
		case answerNone, answerLoose:
			var f map[string]json.RawMessage
			if json.Unmarshal(l, &f) != nil {
				continue
			}
			_, isMsg := f["method"]
			_, hasResult := f["result"]
			_, hasError := f["error"]
			if !isMsg && (hasResult || hasError) {
				out = append(out, l)
			}
		}
	}
	return out
}

var RPC4 = &check.Check{
	ID: "RPC-4", Level: check.Must, Transports: check.Both,
	Spec:    "basic/patterns/index.mdx; basic/transports/stdio.mdx; basic/transports/streamable-http.mdx §Receiving Messages",
	Doc:     "the server never sends a JSON-RPC request (ping, roots/list, sampling/createMessage, elicitation/create)",
	Fix:     "ask for client input through an InputRequiredResult (MRTR) instead of sending requests",
	Monitor: rpc4Monitor,
	Run: func(p *check.Pass) error {
		f := p.Env.Facts
		probes := []rpcProbe{{"server/discover", nil}}
		for _, l := range pageLists(f) {
			probes = append(probes, rpcProbe{l.method, nil})
		}
		if len(f.Resources) > 0 {
			probes = append(probes, rpcProbe{"resources/read", map[string]any{"uri": f.Resources[0].URI}})
		}
		if len(f.Prompts) > 0 {
			probes = append(probes, rpcProbe{"prompts/get", promptGetParams(p, f.Prompts[0])})
		}
		if targets := callTargets(p); len(targets) > 0 {
			// The call every check of the repetition shares (Pass.Do).
			probes = append(probes, rpcProbe{"tools/call", map[string]any{"name": targets[0].tool.Name, "arguments": targets[0].args}})
		}
		// Every probe in one repetition, a sample and what went wrong in the
		// others (Pass.Cases).
		err := p.Cases("", len(probes), func(i int) error {
			pr := probes[i]
			// Every capability declared, so a server that asks only a
			// client that can answer asks; the same sweep as MRTR-1's.
			resp, err := p.DoWithCapabilities(stateAllCaps, pr.method, pr.params)
			if err != nil && (resp == nil || resp.Exchange == nil) {
				if p.Ctx.Err() != nil {
					return err
				}
				p.SendAgain()
				return nil
			}
			for _, m := range resp.Exchange.ServerRequests {
				p.Failf(check.AtMessage(check.FromResponse(resp), m, "/method"), "while answering %s the server sent the JSON-RPC request %q (id %s)", pr.method, jsonrpc.Clip(m.Method, 60), jsonrpc.Clip(string(m.ID), 40))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if p.Env.Stdio != nil {
			n := 0
			for _, a := range p.Env.Stdio.Anomalies() {
				if a.Kind != "server-request" {
					continue
				}
				if n++; n <= 3 {
					p.Failf(&check.Evidence{Transport: "stdio", Response: a.Excerpt}, "the server wrote a JSON-RPC request on stdout: %s", jsonrpc.Clip(a.Excerpt, 120))
				}
			}
		}
		return nil
	},
}

var RPC5 = &check.Check{
	ID: "RPC-5", Level: check.Must, Transports: check.Both,
	Waits:   true, // a process of its own, or the one handChain hands on (stdio)
	Follows: handFollows("RPC-5"),
	Spec:    "basic/index.mdx §Error Codes (JSON-RPC 2.0)",
	Doc:     "unparseable JSON gets error -32700 and a structurally invalid request gets -32600 (on stdio: the server survives them)",
	Fix:     "answer invalid JSON with -32700 and invalid request objects with -32600, and keep serving",
	Run: func(p *check.Pass) error {
		id := wireStringID(false)
		parseErr := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":`)
		w, err := newWire(p.Env.Client, "tools/list", nil)
		if err != nil {
			return err
		}
		w.setID(id)
		w.msg["method"] = 42
		invalid := w.bytes()
		if p.Env.Transport == "http" {
			return rpc5HTTP(p, parseErr, invalid, id)
		}
		// Malformed lines may leave the process deaf: a new process, or
		// where the run's plan says so the one the checks before it in
		// handChain are done with, if it still answers. Only STDIO-4
		// comes after, and it sends nothing; it gets the process only if
		// the server answered after every malformed line: one whose
		// reader died may still be alive, and would not see EOF.
		var fc *mcpclient.Client
		var closeFresh func()
		answered, serves := false, false
		if p.Env.Memo != nil && quietPlanOf(p.Env.Memo).chainRPC5 {
			var handed bool
			fc, closeFresh, handed, err = takeHandedOn(p)
			if err == nil && handed {
				if serves = servesDiscover(p.Ctx, fc); !serves {
					closeFresh()
					fc, closeFresh, err = p.Env.Fresh(p.Ctx)
				}
			}
			if err != nil {
				return err
			}
			defer func() {
				if answered {
					handOn(p, fc, closeFresh)
				} else {
					closeFresh()
				}
			}()
		} else {
			if fc, closeFresh, err = p.Env.Fresh(p.Ctx); err != nil {
				return err
			}
			defer closeFresh()
		}
		st, ok := fc.Transport().(*transport.StdioTransport)
		if !ok {
			return fmt.Errorf("fresh stdio connection has transport %T", fc.Transport())
		}
		// A new process that then answered nothing at all would read as
		// one the malformed lines silenced.
		if !serves {
			if err := answersAgain(p, fc); err != nil {
				return err
			}
		}
		// stdio.mdx forbids the client to write such lines, so on stdio the
		// rule is robustness: a wrong or missing error is a warning, a
		// server that dies or stops answering fails.
		for _, c := range []struct {
			line []byte
			want int64
			what string
		}{{parseErr, jsonrpc.CodeParseError, "an unparseable line"}, {invalid, jsonrpc.CodeInvalidRequest, "a request whose method is a number"}} {
			lines, sentinel, err := rpcStdioProbe(p.Ctx, fc, st, c.line, rpcStdioGrace, func(lines [][]byte, sentinel json.RawMessage) bool { return len(rpcStray(lines, sentinel)) > 0 })
			ev := &check.Evidence{Transport: "stdio", Request: clipBytes(c.line, 400)}
			if err != nil {
				first, _, _ := strings.Cut(err.Error(), "\n")
				p.Failf(ev, "after %s the server no longer answers: %s", c.what, first)
				return nil
			}
			var got *reply
			for _, l := range rpcStray(lines, sentinel) {
				got = &reply{transport: "stdio", sent: c.line}
				got.setRaw(l)
				break
			}
			if got == nil {
				p.Warnf(ev, "no error response to %s, want %d (%s); the server kept serving", c.what, c.want, jsonrpc.CodeName(c.want))
				continue
			}
			ev.Response = clipBytes(got.raw, 600)
			if code := got.code(); code != c.want {
				p.Warnf(rpcReplyAt(ev, got), "%s got %s, want error %d (%s); the server kept serving", c.what, got.describe(), c.want, jsonrpc.CodeName(c.want))
				continue
			}
			rpc5NullID(p, ev, got, c.want)
			p.Passf(ev, "an unparseable line got -32700 and an invalid request -32600, and the server kept serving")
		}
		answered = true
		return nil
	},
}

func rpc5HTTP(p *check.Pass, parseErr, invalid []byte, id json.RawMessage) error {
	version := p.Env.Client.Info().ProtocolVersion
	// The parse-error body names tools/list, so its headers match what a
	// server could read from it.
	h := http.Header{mcpclient.HeaderProtocolVersion: {version}, mcpclient.HeaderMethod: {"tools/list"}}
	r, err := sendBytes(p.Ctx, p.Env.HTTP, parseErr, h, nil, "tools/list")
	if err != nil {
		return err
	}
	ev := r.evidence()
	if code := r.code(); code != jsonrpc.CodeParseError {
		p.Failf(r.evidenceAt(replyAt(r)), "an unparseable body got %s, want error -32700 (Parse error)", r.describe())
	} else {
		rpc5NullID(p, ev, r, jsonrpc.CodeParseError)
	}
	// A method that is not a string cannot be mirrored in Mcp-Method, so the
	// header is left out and -32020 is as fitting as -32600 (AMB-11).
	h = http.Header{mcpclient.HeaderProtocolVersion: {version}}
	r, err = sendBytes(p.Ctx, p.Env.HTTP, invalid, h, id, "tools/list")
	if err != nil {
		return err
	}
	ev = r.evidence()
	switch r.code() {
	case jsonrpc.CodeInvalidRequest:
		rpc5NullID(p, ev, r, jsonrpc.CodeInvalidRequest)
	case jsonrpc.CodeHeaderMismatch:
		p.Passf(ev, "a request whose method is a number got -32020 (header validation ran first, AMB-11)")
	default:
		p.Failf(r.evidenceAt(replyAt(r)), "a request whose method is a number got %s, want error -32600 (Invalid Request)", r.describe())
	}
	p.Passf(ev, "an unparseable body got -32700 and an invalid request -32600")
	return nil
}

// rpc5NullID warns about "id": null on the error to an unreadable request:
// JSON-RPC 2.0 wants it, the MCP schema's RequestId does not admit it
// (AMB-15).
func rpc5NullID(p *check.Pass, ev *check.Evidence, r *reply, code int64) {
	if raw, ok := r.fields["id"]; ok && string(bytes.TrimSpace(raw)) == "null" && code == jsonrpc.CodeParseError {
		p.Warnf(rpcReplyAtPtr(ev, r, "/id"), "the -32700 error carries \"id\": null; MCP leaves the id out when it cannot be read (the schema's RequestId does not admit null, AMB-15)")
	}
}

// rpcNonASCII is text in the Latin-1 range, so a server that writes it as
// Latin-1 instead of UTF-8 produces invalid UTF-8 bytes.
const rpcNonASCII = "mcp-eval-ünïcødé"

var RPC6 = &check.Check{
	ID: "RPC-6", Level: check.Must, Transports: check.Both,
	Spec: "basic/transports/index.mdx §Messages",
	Doc:  "every message the server sends is UTF-8",
	Fix:  "encode every message as UTF-8, including text echoed from the request",
	Run: func(p *check.Pass) error {
		f := p.Env.Facts
		probes := []rpcProbe{{"server/discover", nil}}
		for _, l := range pageLists(f) {
			probes = append(probes, rpcProbe{l.method, nil})
		}
		shared := len(probes)
		if f.Has("tools") || f.ToolsErr == nil {
			probes = append(probes, rpcProbe{"tools/call", map[string]any{"name": rpcNonASCII, "arguments": map[string]any{}}})
		}
		if f.Has("resources") {
			probes = append(probes, rpcProbe{"resources/read", map[string]any{"uri": "mcp-eval://" + rpcNonASCII + "/0"}})
		}
		if f.Has("prompts") {
			probes = append(probes, rpcProbe{"prompts/get", map[string]any{"name": rpcNonASCII}})
		}
		// Each probe once per run, the rule N times (Pass.Cases): the
		// echoing probes are variants; on HTTP the shared requests are
		// judged in every repetition, since they cost nothing more.
		judge := func(i int) error {
			pr := probes[i]
			if i < shared && p.Env.Transport == "http" {
				// Discover and the lists as every check of this
				// repetition asks them: the HTTP exchange keeps the body
				// as the server wrote it.
				resp, err := p.Do(pr.method, pr.params)
				if err == nil && resp.Exchange != nil && resp.Exchange.HTTP != nil {
					if body := resp.Exchange.HTTP.Body; !utf8.Valid(body) {
						p.Failf(check.FromResponse(resp), "the answer to %s is not valid UTF-8 (first bad byte at offset %d)", pr.method, rpcBadUTF8(body))
					}
					return nil
				}
				if p.Ctx.Err() != nil {
					return p.Ctx.Err()
				}
				// No HTTP answer to judge: ask once more on the raw layer,
				// which keeps what came whatever it is.
			}
			w, err := newWire(p.Env.Client, pr.method, pr.params)
			if err != nil {
				return err
			}
			r, err := sendWire(p.Ctx, p.Env.Client.Transport(), w)
			if err != nil {
				return err
			}
			body := r.raw
			if r.http != nil {
				body = r.http.Body // the whole body, every SSE event included
			}
			if !utf8.Valid(body) {
				p.Failf(r.evidence(), "the answer to %s is not valid UTF-8 (first bad byte at offset %d)", pr.method, rpcBadUTF8(body))
			}
			return nil
		}
		first := 0
		if p.Env.Transport == "http" {
			for i := range shared {
				if err := judge(i); err != nil {
					return err
				}
			}
			first = shared
		}
		return p.Cases("", len(probes)-first, func(i int) error { return judge(first + i) })
	},
}

// rpcBadUTF8 is the offset of the first invalid UTF-8 sequence.
func rpcBadUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// rpc4Monitor watches for requests from the server on all the run's
// traffic: on HTTP in the answer to every 2026-07-28 request (its SSE
// stream), on stdio in every line of every process (a request line is
// told as a Line, whichever request it came during, so the exchange's own
// copy is not counted again).
var rpc4Monitor = &check.Monitor{
	Doc: "no answer of the run carries a request from the server, and no stdout line of any process is one",
	Watch: func(x *check.Exchange) (bool, string) {
		switch {
		case x.Line != nil:
			if msg := stdioRequest(*x.Line); msg != "" {
				return true, msg
			}
			return false, ""
		case x.Transport == "stdio":
			return x.Response() != nil && !rpcPinnedStray(x), ""
		case !x.Modern() || x.Exchange == nil:
			return false, ""
		}
		// A server that sent a request and waits for its answer never
		// answers the client's: the exchange counts without a response.
		if rs := x.Exchange.ServerRequests; len(rs) > 0 {
			return true, fmt.Sprintf("while answering %s the server sent the JSON-RPC request %q", x.Method, jsonrpc.Clip(rs[0].Method, 60))
		}
		return x.Response() != nil, ""
	},
	LocateIn: func(x *check.Exchange) (*jsonrpc.Message, string, bool) {
		if x.Exchange != nil && len(x.Exchange.ServerRequests) > 0 {
			return x.Exchange.ServerRequests[0], "/method", false
		}
		return nil, "", false
	},
}

// rpc1Monitor watches the ids of every response of the run: on stdio a
// response to no request in flight, on either transport one under another
// id than its request's.
var rpc1Monitor = &check.Monitor{
	Doc: "every response carries its request's id; on stdio no response answers an id that is not in flight",
	Watch: func(x *check.Exchange) (bool, string) {
		resp := x.Response()
		switch {
		case x.Stray():
			if resp == nil {
				return false, ""
			}
			return true, fmt.Sprintf("a response under id %s answered no request in flight", shown(resp.ID))
		case rpcPinnedStray(x):
			return false, ""
		case resp == nil:
			if x.Exchange == nil {
				return false, ""
			}
			// An event stream that carried a response under another id
			// and ended before its own.
			for _, a := range x.Exchange.Anomalies {
				if x.Transport == "http" && a.Kind == "unknown-id" {
					return true, fmt.Sprintf("the %s request with id %s got a response under id %s on its event stream", x.Method, x.ID, a.Excerpt)
				}
			}
			return false, ""
		case len(resp.ID) == 0 || string(bytes.TrimSpace(resp.ID)) == "null":
			if resp.Error != nil {
				return false, "" // RPC-2 judges an error without an id
			}
			return true, fmt.Sprintf("the %s request with id %s got a result without an id", x.Method, x.ID)
		case !jsonrpc.SameID(resp.ID, x.ID):
			return true, fmt.Sprintf("the %s request with id %s was answered under id %s", x.Method, x.ID, shown(resp.ID))
		}
		return true, ""
	},
	Locate: func(x *check.Exchange) (string, bool) {
		resp := x.Response()
		if resp == nil {
			return "", false // the wrong id came in an anomaly, not this response
		}
		return "/id", len(resp.ID) == 0
	},
}

// rpcPinnedStray reports whether x failed on stdio for a stray response
// the monitor was already told of.
func rpcPinnedStray(x *check.Exchange) bool {
	if x.Exchange == nil {
		return false
	}
	for _, a := range x.Exchange.Anomalies {
		if a.Kind == transport.StrayPinned {
			return true
		}
	}
	return false
}

// rpcReplyAt locates what a reply answered (replyAt) on ev, which keeps
// its own request and transport.
func rpcReplyAt(ev *check.Evidence, r *reply) *check.Evidence {
	return rpcReplyAtPtr(ev, r, replyAt(r))
}

func rpcReplyAtPtr(ev *check.Evidence, r *reply, ptr string) *check.Evidence {
	if ptr == "" || r.raw == nil {
		return ev
	}
	return check.At(ev, r.raw, ptr)
}
