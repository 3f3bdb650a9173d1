package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
	"github.com/mcp-eval/mcp-eval-action/pkg/transport"
)

// MRTR: multi round-trip requests (basic/patterns/mrtr.mdx; checklist
// §1.11). The checks need a request that answers input_required: a tool the
// harness may call (readOnlyHint, or --call-tool), a listed resource or a
// prompt; see mrtr_find.go.

var MRTR1 = &check.Check{
	ID: "MRTR-1", Level: check.Must, Transports: check.Both,
	Spec:    "basic/patterns/mrtr.mdx §Supported Requests",
	Doc:     "resultType \"input_required\" appears only on tools/call, resources/read and prompts/get",
	Fix:     "answer every other method directly; ask for input only from tools/call, resources/read or prompts/get",
	Monitor: mrtr1Monitor,
	Run: func(p *check.Pass) error {
		f := p.Env.Facts
		type probe struct {
			method string
			params map[string]any
		}
		probes := []probe{{"server/discover", nil}}
		if toolServed(f) {
			probes = append(probes, probe{"tools/list", nil})
		}
		if rsrcServed(f) {
			probes = append(probes, probe{"resources/list", nil}, probe{"resources/templates/list", nil})
		}
		if promptServed(f) {
			probes = append(probes, probe{"prompts/list", nil})
		}
		if refs := compRefs(f); f.Has("completions") && len(refs) > 0 {
			probes = append(probes, probe{"completion/complete", map[string]any{"ref": refs[0].ref, "argument": map[string]any{"name": refs[0].arg, "value": ""}}})
		}
		// Every probe in one repetition, a sample and what went wrong in the
		// others (Pass.Cases).
		sent := 0
		err := p.Cases("", len(probes), func(i int) error {
			pr := probes[i]
			// Every capability declared (stateAllCaps declares what mrtrCaps
			// does and more), in the sweep RPC-4 judges too.
			resp, err := p.DoWithCapabilities(stateAllCaps, pr.method, pr.params)
			if err != nil {
				return err
			}
			sent++
			if rt, _ := resp.ResultType(); rt == mcpclient.ResultInputRequired {
				p.Failf(check.FromResponseAt(resp, "/result/resultType"), "%s returned resultType \"input_required\"; only tools/call, resources/read and prompts/get may", pr.method)
			}
			return nil
		})
		if err != nil {
			return err
		}
		p.Passf(nil, "%d other methods answered without input_required, with elicitation, sampling and roots declared", sent)
		return nil
	},
}

// mrtrRaw decodes the interim result's members.
func mrtrRaw(t *mrtrTarget) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(t.first.Response.Result, &m)
	return m
}

var MRTR2 = &check.Check{
	ID: "MRTR-2", Level: check.Must, Transports: check.Both,
	Spec: "basic/patterns/mrtr.mdx §Input Required Result; schema.ts InputRequiredResult",
	Doc:  "an InputRequiredResult has at least one of inputRequests (an object) or requestState (a string)",
	Fix:  "send inputRequests, requestState or both with every input_required result",
	Run: func(p *check.Pass) error {
		return mrtrEach(p, mrtrShared, func(j *mrtrJudge, t *mrtrTarget) (mrtrStatus, string, *check.Evidence, error) {
			m, ev := mrtrRaw(t), t.ev()
			ir, hasIR := m["inputRequests"]
			rs, hasRS := m["requestState"]
			var obj map[string]json.RawMessage
			var str string
			irOK := hasIR && json.Unmarshal(ir, &obj) == nil && obj != nil
			rsOK := hasRS && json.Unmarshal(rs, &str) == nil
			st := mrtrOK
			if hasIR && !irOK {
				j.Failf(t.at(false, "inputRequests"), "%s: inputRequests is %s, want an object", t.label(), shown(ir))
				st = mrtrBad
			}
			if hasRS && !rsOK {
				j.Failf(t.at(false, "requestState"), "%s: requestState is %s, want a string", t.label(), shown(rs))
				st = mrtrBad
			}
			if !irOK && !rsOK {
				j.Failf(t.at(!hasIR, "inputRequests"), "%s: the input_required result has neither inputRequests nor requestState", t.label())
				return mrtrBad, "", nil, nil
			}
			return st, fmt.Sprintf("%s: input_required with inputRequests %v, requestState %v", t.label(), irOK, rsOK), ev, nil
		})
	},
}

// mrtrRequestDefs maps an input request method to its schema definition.
var mrtrRequestDefs = map[string]string{
	"elicitation/create":     "ElicitRequest",
	"sampling/createMessage": "CreateMessageRequest",
	"roots/list":             "ListRootsRequest",
}

// mrtrDuplicateKeys lists the keys that occur more than once in a JSON
// object (encoding/json keeps the last and hides the others).
func mrtrDuplicateKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]int{}
	var dups []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return dups
		}
		k, _ := tok.(string)
		if seen[k]++; seen[k] == 2 {
			dups = append(dups, k)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return dups
		}
	}
	return dups
}

var MRTR3 = &check.Check{
	ID: "MRTR-3", Level: check.Must, Transports: check.Both,
	Spec: "basic/patterns/mrtr.mdx §Input Requests; schema.json $defs/InputRequests",
	Doc:  "every inputRequests value is {method, params} without jsonrpc or id, for elicitation/create, sampling/createMessage or roots/list, with unique keys",
	Fix:  "put bare {method, params} objects under unique keys in inputRequests, no JSON-RPC envelope",
	Run: func(p *check.Pass) error {
		return mrtrEach(p, mrtrShared, mrtr3Judge)
	},
}

func mrtr3Judge(j *mrtrJudge, t *mrtrTarget) (mrtrStatus, string, *check.Evidence, error) {
	m, ev := mrtrRaw(t), t.ev()
	raw, ok := m["inputRequests"]
	var reqs map[string]json.RawMessage
	if !ok || json.Unmarshal(raw, &reqs) != nil || len(reqs) == 0 {
		return mrtrNA, fmt.Sprintf("%s answered input_required without input requests", t.label()), nil, nil
	}
	st := mrtrOK
	for _, k := range mrtrDuplicateKeys(raw) {
		// At the object: a pointer names one of the duplicates only.
		j.Failf(t.at(false, "inputRequests"), "%s: inputRequests key %q occurs more than once", t.label(), jsonrpc.Clip(k, 60))
		st = mrtrBad
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var r map[string]json.RawMessage
		if json.Unmarshal(reqs[k], &r) != nil || r == nil {
			j.Failf(t.at(false, "inputRequests", k), "%s: inputRequests[%q] is %s, want {method, params}", t.label(), k, shown(reqs[k]))
			st = mrtrBad
			continue
		}
		for _, env := range []string{"jsonrpc", "id"} {
			if _, has := r[env]; has {
				j.Failf(t.at(false, "inputRequests", k, env), "%s: inputRequests[%q] carries %q; input requests are bare {method, params}", t.label(), k, env)
				st = mrtrBad
			}
		}
		var method string
		_ = json.Unmarshal(r["method"], &method)
		def, known := mrtrRequestDefs[method]
		if !known {
			_, hasMethod := r["method"]
			j.Failf(t.at(!hasMethod, "inputRequests", k, "method"), "%s: inputRequests[%q] has method %s, want elicitation/create, sampling/createMessage or roots/list", t.label(), k, shown(r["method"]))
			st = mrtrBad
			continue
		}
		problems, at, err := schemaOracleAt(def, reqs[k])
		if err != nil {
			return 0, "", nil, err
		}
		if problems != "" {
			j.Failf(atResponse(t.ev(), t.first.Response, check.Pointer("result", "inputRequests", k)+at), "%s: inputRequests[%q] is not a valid %s: %s", t.label(), k, def, problems)
			st = mrtrBad
		}
	}
	return st, fmt.Sprintf("%s: %d input requests judged", t.label(), len(reqs)), ev, nil
}

// mrtrUndeclared says why an input request needs a capability that caps
// (a clientCapabilities object) does not declare, "" when it is declared;
// soft is true for a SHOULD (includeContext without sampling.context).
func mrtrUndeclared(raw json.RawMessage, caps map[string]json.RawMessage) (why string, soft bool) {
	var r struct {
		Method string `json:"method"`
		Params struct {
			Mode           string          `json:"mode"`
			Tools          json.RawMessage `json:"tools"`
			ToolChoice     json.RawMessage `json:"toolChoice"`
			IncludeContext string          `json:"includeContext"`
		} `json:"params"`
	}
	_ = json.Unmarshal(raw, &r)
	sub := func(name string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(caps[name], &m)
		return m
	}
	switch r.Method {
	case "elicitation/create":
		e, ok := caps["elicitation"]
		if !ok {
			return "elicitation/create needs the elicitation capability", false
		}
		el := sub("elicitation")
		_, form := el["form"]
		_, url := el["url"]
		if r.Params.Mode == "url" && !url {
			return fmt.Sprintf("URL-mode elicitation needs elicitation.url (declared %s)", jsonrpc.Clip(string(e), 60)), false
		}
		if r.Params.Mode != "url" && url && !form {
			return "form-mode elicitation needs elicitation.form (only url was declared)", false
		}
	case "sampling/createMessage":
		if _, ok := caps["sampling"]; !ok {
			return "sampling/createMessage needs the sampling capability", false
		}
		s := sub("sampling")
		if len(r.Params.Tools) > 0 || len(r.Params.ToolChoice) > 0 {
			if _, ok := s["tools"]; !ok {
				return "sampling with tools needs sampling.tools", false
			}
		}
		if r.Params.IncludeContext != "" && r.Params.IncludeContext != "none" {
			if _, ok := s["context"]; !ok {
				return fmt.Sprintf("includeContext %q should be used only with sampling.context", r.Params.IncludeContext), true
			}
		}
	case "roots/list":
		if _, ok := caps["roots"]; !ok {
			return "roots/list needs the roots capability", false
		}
	}
	return "", false
}

var MRTR4 = &check.Check{
	ID: "MRTR-4", Level: check.Must, Transports: check.Both,
	Spec: "basic/patterns/mrtr.mdx §Input Requests; client/elicitation.mdx §Capabilities; client/sampling.mdx",
	Doc:  "a server asks only for input the request's clientCapabilities declare; without them it answers -32021 or goes on without asking",
	Fix:  "read this request's clientCapabilities before asking; return -32021 when a needed capability is missing",
	Run: func(p *check.Pass) error {
		return mrtrEach(p, mrtrShared, mrtr4Judge)
	},
}

func mrtr4Judge(j *mrtrJudge, t *mrtrTarget) (mrtrStatus, string, *check.Evidence, error) {
	st := mrtrOK
	var declared map[string]json.RawMessage
	_ = json.Unmarshal(mrtrCaps, &declared)
	if t.first.InputRequired != nil {
		for _, k := range slices.Sorted(maps.Keys(t.first.InputRequired.InputRequests)) {
			why, soft := mrtrUndeclared(t.first.InputRequired.InputRequests[k], declared)
			switch {
			case why == "":
			case soft:
				j.Warnf(t.at(false, "inputRequests", k), "%s: inputRequests[%q]: %s", t.label(), k, why)
				st = mrtrBad
			default:
				j.Failf(t.at(false, "inputRequests", k), "%s: inputRequests[%q]: %s, which the request (%s) does not declare", t.label(), k, why, mrtrCaps)
				st = mrtrBad
			}
		}
	}
	res, err := mrtr4NoCaps(j, t)
	if err != nil {
		if rpc, ok := mrtrRPC(err); ok {
			ev := check.FromResponse(rpc.Response)
			if rpc.Code() == jsonrpc.CodeMissingRequiredClientCapability {
				return st, fmt.Sprintf("%s with clientCapabilities {} gave -32021", t.label()), ev, nil
			}
			j.Warnf(check.FromResponseAt(rpc.Response, "/error/code"), "%s with clientCapabilities {} gave error %d (%s); a server that needs a capability returns -32021", t.label(), rpc.Code(), jsonrpc.CodeName(rpc.Code()))
			return mrtrBad, "", nil, nil
		}
		if schemaTransportErr(err) {
			return 0, "", nil, err
		}
		if res == nil || res.ResultType != mcpclient.ResultInputRequired {
			j.Failf(nil, "%s with clientCapabilities {}: %v", t.label(), err)
			return mrtrBad, "", nil, nil
		}
	}
	ev := check.FromResponse(res.Response)
	if res.InputRequired == nil {
		return st, fmt.Sprintf("%s with clientCapabilities {} completed without asking", t.label()), ev, nil
	}
	for _, k := range slices.Sorted(maps.Keys(res.InputRequired.InputRequests)) {
		if why, _ := mrtrUndeclared(res.InputRequired.InputRequests[k], map[string]json.RawMessage{}); why != "" {
			st = mrtrBad
			j.Failf(atResponse(ev, res.Response, check.Pointer("result", "inputRequests", k)), "%s with clientCapabilities {} still asked inputRequests[%q]: %s", t.label(), k, why)
		}
	}
	return st, fmt.Sprintf("%s with clientCapabilities {} asked for nothing it may not", t.label()), ev, nil
}

// mrtr4NoCaps is the item sent with clientCapabilities {}: the
// repetition's shared request (stateNoCapsShared), read as CallTool,
// ReadResource and GetPrompt read it. A -32020 on a tools/call is sent
// again by CallTool, which re-lists the tools first.
func mrtr4NoCaps(j *mrtrJudge, t *mrtrTarget) (*mcpclient.Result, error) {
	p := j.p
	resp, err := stateNoCapsShared(p, j.runCtx, t.method, t.params)
	if p.Ctx.Err() != nil {
		return nil, p.Ctx.Err()
	}
	if t.method == "tools/call" && err == nil && resp.Error != nil && resp.Error.Code == jsonrpc.CodeHeaderMismatch {
		return mrtrSend(p, t.method, t.params, stateNoCaps)
	}
	return mcpclient.ResultOf(t.method, resp, err)
}

var MRTR5 = &check.Check{
	ID: "MRTR-5", Level: check.Must, Transports: check.Both,
	Spec: "basic/patterns/mrtr.mdx §Retrying; server/tools.mdx §Input Required Tool Results",
	Doc:  "a retry under a new id with inputResponses and the exact requestState is answered with complete or another input_required, not an error",
	Fix:  "accept the retry: read inputResponses and the echoed requestState and finish (or ask again)",
	Run: func(p *check.Pass) error {
		// The one check that retries the repetition's shared answer with
		// its real requestState (mrtrAgainShared).
		return mrtrEach(p, mrtrShared, func(j *mrtrJudge, t *mrtrTarget) (mrtrStatus, string, *check.Evidence, error) {
			if t.first.InputRequired == nil {
				return mrtrNA, fmt.Sprintf("%s: the input_required result is malformed (MRTR-2, MRTR-3 report it)", t.label()), nil, nil
			}
			res, err := p.Env.Client.Continue(p.Ctx, t.first, mrtrAnswers(t.first.InputRequired.InputRequests))
			if err != nil {
				if rpc, ok := mrtrRPC(err); ok {
					j.Failf(check.FromResponseAt(rpc.Response, "/error/code"), "the retry of %s with inputResponses and requestState gave error %d (%s): %s", t.label(), rpc.Code(), jsonrpc.CodeName(rpc.Code()), jsonrpc.Clip(rpc.Err.Message, 120))
					return mrtrBad, "", nil, nil
				}
				if schemaTransportErr(err) {
					return 0, "", nil, err
				}
				var ev *check.Evidence
				if res != nil {
					ev = check.FromResponseAt(res.Response, "/result")
				}
				j.Failf(ev, "the retry of %s: %v", t.label(), err)
				return mrtrBad, "", nil, nil
			}
			return mrtrOK, fmt.Sprintf("the retry of %s was answered %s", t.label(), res.ResultType), check.FromResponse(res.Response), nil
		})
	},
}

// mrtrUnknownKey is an inputResponses key no server asked for.
const mrtrUnknownKey = "mcp-eval-unrequested"

var MRTR6 = &check.Check{
	ID: "MRTR-6", Level: check.Should, Transports: check.Both,
	Spec: "basic/patterns/mrtr.mdx §Error Handling",
	Doc:  "a retry that lacks the requested inputResponses gets a new input_required, not an error; unknown extra keys are ignored",
	Fix:  "ask again (input_required) when answers are missing, and ignore inputResponses keys you did not ask for",
	Run: func(p *check.Pass) error {
		return mrtrEach(p, mrtrOwn, mrtr6Judge)
	},
}

func mrtr6Judge(j *mrtrJudge, t *mrtrTarget) (mrtrStatus, string, *check.Evidence, error) {
	p := j.p
	if t.first.InputRequired == nil {
		return mrtrNA, fmt.Sprintf("%s: the input_required result is malformed (MRTR-2, MRTR-3 report it)", t.label()), nil, nil
	}
	st := mrtrOK
	var lines []string
	var okEv *check.Evidence
	judge := func(res *mcpclient.Result, err error, what string, want func(rt string) bool, expect string) error {
		if err != nil {
			st = mrtrBad
			if rpc, ok := mrtrRPC(err); ok {
				j.Failf(check.FromResponseAt(rpc.Response, "/error/code"), "the retry of %s %s gave error %d (%s), want %s", t.label(), what, rpc.Code(), jsonrpc.CodeName(rpc.Code()), expect)
				return nil
			}
			if schemaTransportErr(err) {
				return err
			}
			j.Failf(nil, "the retry of %s %s: %v", t.label(), what, err)
			return nil
		}
		if ev := check.FromResponse(res.Response); !want(res.ResultType) {
			st = mrtrBad
			j.Failf(stateResultTypeAt(res.Response), "the retry of %s %s was answered %s, want %s", t.label(), what, res.ResultType, expect)
		} else {
			lines = append(lines, fmt.Sprintf("%s was answered %s", what, res.ResultType))
			if okEv == nil {
				okEv = ev
			}
		}
		return nil
	}
	if len(t.first.InputRequired.InputRequests) > 0 {
		res, err := p.Env.Client.Continue(p.Ctx, t.first, nil)
		if err := judge(res, err, "without inputResponses", func(rt string) bool { return rt == mcpclient.ResultInputRequired }, "a new input_required"); err != nil {
			return 0, "", nil, err
		}
	}
	answers := mrtrAnswers(t.first.InputRequired.InputRequests)
	answers[mrtrUnknownKey] = json.RawMessage(`{"action":"decline"}`)
	res, err := p.Env.Client.Continue(p.Ctx, t.first, answers)
	if err := judge(res, err, fmt.Sprintf("with an extra inputResponses key %q", mrtrUnknownKey), func(string) bool { return true }, "the extra key to be ignored"); err != nil {
		return 0, "", nil, err
	}
	return st, fmt.Sprintf("the retry of %s %s", t.label(), strings.Join(lines, "; ")), okEv, nil
}

var MRTR7 = &check.Check{
	ID: "MRTR-7", Level: check.Must, Transports: check.Both,
	Spec: "basic/patterns/mrtr.mdx §Request State (integrity), §Security Considerations",
	Doc:  "a retry whose requestState was tampered with is rejected (an error or a new input_required); acceptance is a warning",
	Fix:  "protect requestState (e.g. an HMAC with an expiry) and reject a retry whose state does not verify",
	Run: func(p *check.Pass) error {
		// Every item that carries a requestState is tampered with; the
		// items without one have nothing to protect.
		return mrtrEach(p, mrtrShared, mrtr7Judge)
	},
}

// mrtr7Judge judges the repetition's shared answer (mrtrShared) only for
// whether it has a requestState; the state it tampers with is from an
// answer of its own, so that a server that revokes a flow on a state that
// fails verification does not fail MRTR-5's retry of the shared one.
func mrtr7Judge(j *mrtrJudge, t *mrtrTarget) (mrtrStatus, string, *check.Evidence, error) {
	p := j.p
	state, why := mrtrStateOf(t)
	if why != "" {
		return mrtrNA, why, nil, nil
	}
	own, note, err := mrtrAgain(p, t)
	if own == nil {
		return mrtrNA, note, nil, err
	}
	if state, why = mrtrStateOf(own); why != "" {
		return mrtrNA, why, nil, nil
	}
	t = own
	tampered, _ := json.Marshal(mrtrTamper(state))
	resp, err := mrtrRetry(p, t, mrtrAnswers(t.first.InputRequired.InputRequests), tampered)
	if err != nil {
		switch transport.KindOf(err) {
		case transport.KindTimeout, transport.KindProcessExited, transport.KindStreamBroken, transport.KindMalformed, transport.KindBadID:
			j.Failf(check.FromResponse(resp), "the retry of %s with a tampered requestState got no usable answer: %v", t.label(), err)
			return mrtrBad, "", nil, nil
		}
		return 0, "", nil, err
	}
	ev := check.FromResponse(resp)
	outcome, problem := mrtrOutcome(resp)
	switch outcome {
	case "error":
		return mrtrOK, fmt.Sprintf("%s: a tampered requestState was rejected with error %d", t.label(), resp.Error.Code), ev, nil
	case mcpclient.ResultInputRequired:
		return mrtrOK, fmt.Sprintf("%s: a tampered requestState got a new input_required", t.label()), ev, nil
	case "":
		j.Failf(stateResultTypeAt(resp), "the retry of %s with a tampered requestState got an invalid answer: %s", t.label(), problem)
		return mrtrBad, "", nil, nil
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	if t.method == "tools/call" && json.Unmarshal(resp.Result, &r) == nil && r.IsError {
		return mrtrOK, fmt.Sprintf("%s: a tampered requestState was rejected as a tool error", t.label()), ev, nil
	}
	problems, at, err := schemaOracleAt(mrtrResultDef[t.method], resp.Result)
	if err != nil {
		return 0, "", nil, err
	}
	if problems != "" {
		j.Failf(atResponse(ev, resp, check.InResult(at)), "the retry of %s with a tampered requestState got an invalid %s: %s", t.label(), mrtrResultDef[t.method], problems)
		return mrtrBad, "", nil, nil
	}
	j.Warnf(atResponse(ev, resp, "/result/resultType"), "the retry of %s with a tampered requestState (one character changed) completed; skipping integrity protection is allowed only when tampering can cause nothing worse than a failed request", t.label())
	return mrtrBad, "", nil, nil
}

// mrtrStateOf is the input_required answer's requestState, or why there
// is none to tamper with.
func mrtrStateOf(t *mrtrTarget) (string, string) {
	if t.first.InputRequired == nil || t.first.InputRequired.RequestState == nil {
		return "", fmt.Sprintf("%s: the input_required result has no requestState to tamper with", t.label())
	}
	var state string
	if json.Unmarshal(t.first.InputRequired.RequestState, &state) != nil {
		return "", fmt.Sprintf("%s: requestState is not a string (MRTR-2 reports it)", t.label())
	}
	return state, ""
}

var MRTR8 = &check.Check{
	ID: "MRTR-8", Level: check.Must, Transports: check.HTTP,
	Spec: "SEP-2322 §Protocol Requirements for Ephemeral Workflow; basic/transports/streamable-http.mdx §Sending Messages",
	Doc:  "an InputRequiredResult sent on an SSE stream is the last message on that stream",
	Fix:  "send nothing after the input_required result on its stream, and close the stream",
	Run: func(p *check.Pass) error {
		if p.Env.HTTP == nil {
			p.Skipf("not a Streamable HTTP server")
			return nil
		}
		return mrtrEach(p, mrtrSearched, mrtr8Judge)
	},
}

func mrtr8Judge(j *mrtrJudge, t *mrtrTarget) (mrtrStatus, string, *check.Evidence, error) {
	p := j.p
	// Ask for logs and progress so that a server that streams them
	// answers on an SSE stream.
	_, out, err := p.Env.Client.Build(t.method, t.params, mcpclient.WithCapabilities(mrtrCaps), mcpclient.WithLogLevel("debug"), mcpclient.WithProgressToken("mcp-eval-mrtr-8"))
	if err != nil {
		return 0, "", nil, err
	}
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	for k, v := range out.Header {
		h[http.CanonicalHeaderKey(k)] = v
	}
	ctx, cancel := context.WithTimeout(p.Ctx, 5*time.Second)
	defer cancel()
	rr, err := p.Env.HTTP.Do(ctx, &transport.RawRequest{Body: out.Body, Header: h})
	if rr == nil {
		return 0, "", nil, err
	}
	ev := check.FromRaw(out.Body, h, rr)
	if !rr.SSE {
		return mrtrNA, fmt.Sprintf("%s answered with a JSON body, not an SSE stream (a log level and a progress token did not make it stream)", t.label()), nil, nil
	}
	idx := -1
	for i, m := range rr.Messages {
		if m.Kind() == jsonrpc.KindResponse && jsonrpc.SameID(m.ID, out.ID) {
			idx = i
			break
		}
	}
	if idx < 0 {
		if err != nil {
			return 0, "", nil, err
		}
		return mrtrNA, fmt.Sprintf("%s: the SSE stream ended without its response", t.label()), nil, nil
	}
	var rt struct {
		ResultType string `json:"resultType"`
	}
	if final := rr.Messages[idx]; final.Result == nil || json.Unmarshal(final.Result, &rt) != nil || rt.ResultType != mcpclient.ResultInputRequired {
		return mrtrNA, fmt.Sprintf("%s: the streamed answer was not input_required this time", t.label()), nil, nil
	}
	if after := rr.Messages[idx+1:]; len(after) > 0 {
		what := after[0].Method
		if what == "" {
			what = after[0].Kind().String()
		}
		j.Failf(ev, "%s: %d messages followed the input_required result on its SSE stream (first: %s)", t.label(), len(after), jsonrpc.Clip(what, 60))
		return mrtrBad, "", nil, nil
	}
	if err != nil || !rr.Ended {
		j.Warnf(ev, "%s: the SSE stream stayed open after the input_required result (the final response should end it)", t.label())
		return mrtrBad, "", nil, nil
	}
	return mrtrOK, fmt.Sprintf("%s: the input_required result was the last message of its SSE stream (%d messages)", t.label(), len(rr.Messages)), ev, nil
}

var MRTR9 = &check.Check{
	ID: "MRTR-9", Level: check.Info, Transports: check.Both,
	Spec: "basic/patterns/mrtr.mdx §Request State; server/utilities/caching.mdx; client/elicitation.mdx",
	Doc:  "requestState is opaque to the client, interim results carry no caching hints, and an elicitation without mode is form mode",
	Fix:  "leave ttlMs and cacheScope off input_required results",
	Run: func(p *check.Pass) error {
		return mrtrEach(p, mrtrSearched, mrtr9Judge)
	},
}

func mrtr9Judge(j *mrtrJudge, t *mrtrTarget) (mrtrStatus, string, *check.Evidence, error) {
	m, ev := mrtrRaw(t), t.ev()
	st := mrtrOK
	for _, k := range []string{"ttlMs", "cacheScope"} {
		if _, has := m[k]; has {
			j.Warnf(t.at(false, k), "%s: the input_required result carries %s; interim results are not cacheable and carry no caching hints", t.label(), k)
			st = mrtrBad
		}
	}
	var notes []string
	var state string
	if json.Unmarshal(m["requestState"], &state) == nil && m["requestState"] != nil {
		notes = append(notes, fmt.Sprintf("requestState is an opaque string of %d characters, echoed unparsed", len(state)))
	}
	var reqs map[string]struct {
		Method string `json:"method"`
		Params struct {
			Mode *string `json:"mode"`
		} `json:"params"`
	}
	_ = json.Unmarshal(m["inputRequests"], &reqs)
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		if r := reqs[k]; r.Method == "elicitation/create" && r.Params.Mode == nil {
			notes = append(notes, fmt.Sprintf("elicitation %q has no mode, which means form mode", k))
		}
	}
	if len(notes) == 0 {
		notes = append(notes, "no caching hints")
	}
	return st, fmt.Sprintf("%s: %s", t.label(), strings.Join(notes, "; ")), ev, nil
}

var mrtrFamily = family{name: "MRTR", title: "multi round-trip requests", checks: []*check.Check{MRTR1, MRTR2, MRTR3, MRTR4, MRTR5, MRTR6, MRTR7, MRTR8, MRTR9}}

// mrtrMethods are the methods that may answer input_required.
var mrtrMethods = map[string]bool{"tools/call": true, "resources/read": true, "prompts/get": true}

// mrtr1Monitor watches the resultType of every answer of the run: the
// lists, discover and completions every check asks, with whatever
// capabilities each declared.
var mrtr1Monitor = &check.Monitor{
	Doc: "no answer of the run but tools/call, resources/read and prompts/get has resultType \"input_required\"",
	Watch: func(x *check.Exchange) (bool, string) {
		if !x.Modern() || x.Result == nil || mrtrMethods[x.Method] {
			return false, ""
		}
		var rt string
		if json.Unmarshal(x.Result["resultType"], &rt) == nil && rt == mcpclient.ResultInputRequired {
			return true, fmt.Sprintf("%s returned resultType \"input_required\"; only tools/call, resources/read and prompts/get may", x.Method)
		}
		return true, ""
	},
	Locate: func(*check.Exchange) (string, bool) { return "/result/resultType", false },
}
