package conformance

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// STATE: statelessness (basic/index.mdx §Statelessness, checklist §1.2).

var stateFamily = family{name: "STATE", title: "statelessness", checks: []*check.Check{STATE1, STATE2}}

var STATE1 = &check.Check{
	ID: "STATE-1", Level: check.Must, Transports: check.Both,
	Waits: true, // a process of its own (stdio)
	Spec:  "basic/index.mdx §Statelessness",
	Doc:   "the server does not take the version or capabilities from earlier requests on the connection",
	Fix:   "judge every request on its own _meta; carry cross-request state only in explicit ids the client sends",
	Run: func(p *check.Pass) error {
		// One connection: a new stdio process, or the shared keep-alive HTTP
		// connection. A complete request first, then the same request
		// missing a field the first one carried: the answer must not be
		// filled in from the first. On stdio the process then goes on to
		// META-1 (handOn), which says why it observes there what it would
		// on a new process: STATE-1's first requests are server/discover's.
		// A sample (Pass.Cases) may begin with tools/list, whose complete
		// request can pin a dual-era process's era before any request
		// without the version; so on stdio, where the process is new
		// anyway, every repetition sends every case, beginning with
		// server/discover's (three requests more than a sample, one start
		// fewer: META-1's).
		c := p.Env.Client
		if p.Env.Transport == "stdio" {
			fc, closeFresh, err := p.Env.Fresh(p.Ctx)
			if err != nil {
				return err
			}
			defer handOn(p, fc, closeFresh)
			// A complete server/discover, as its own first requests: it
			// pins no era.
			if err := answersAgain(p, fc); err != nil {
				return err
			}
			c = fc
		}
		var ok passTally
		methods := metaMethods(p.Env.Facts)
		cases := p.Cases
		if p.Env.Transport == "stdio" {
			cases = func(_ string, n int, send func(int) error) error {
				for k := range n {
					if err := send(k); err != nil {
						return err
					}
				}
				return nil
			}
		}
		err := cases("", len(methods), func(k int) error {
			method := methods[k]
			w, err := newWire(c, method, nil, mcpclient.WithCapabilities(stateAllCaps))
			if err != nil {
				return err
			}
			first, err := sendWire(p.Ctx, c.Transport(), w)
			if err != nil {
				return err
			}
			if first.result() == nil {
				p.Skipf("%s with complete _meta got %s, so there is no baseline", method, first.describe())
				return errCasesOver
			}
			for _, v := range metaMissing[:2] {
				w, err := newWire(c, method, nil)
				if err != nil {
					return err
				}
				v.edit(w)
				r, err := sendWire(p.Ctx, c.Transport(), w)
				if err != nil {
					return err
				}
				if r.result() != nil {
					p.Failf(r.evidenceAt("/result"), "%s %s got a result right after a request that carried it: the field was taken from the earlier request", method, v.what)
					continue
				}
				ok.add(r.evidence())
			}
			return nil
		})
		if err != nil {
			return casesOver(err)
		}
		ok.report(p, "%d requests missing protocolVersion or clientCapabilities were rejected right after requests that carried them", ok.n)
		return nil
	},
}

var STATE2 = &check.Check{
	ID: "STATE-2", Level: check.Should, Transports: check.Both,
	Spec: "basic/index.mdx §Statelessness; basic/patterns/mrtr.mdx §Retrying",
	Doc:  "an MRTR retry is accepted on a new connection (on stdio, in a new process: informational)",
	Fix:  "keep what a retry needs in requestState (integrity-protected with a key every instance shares), not in the connection or process",
	Run: func(p *check.Pass) error {
		where := "on a new HTTP connection"
		if p.Env.Transport == "stdio" {
			where = "in a new server process"
		}
		// One new connection (process) for every item's retry: new to
		// each requestState, and one stdio process rather than one per item.
		var fc *mcpclient.Client
		closeFresh := func() {}
		listed := false
		defer func() { closeFresh() }()
		return stateEach(p, func(j *mrtrJudge, target *stateTarget) (mrtrStatus, string, *check.Evidence, error) {
			first, note, err := stateAskShared(p, target)
			if first == nil {
				return mrtrNA, note, nil, err
			}
			answers, ok := stateAnswers(first.Result)
			if !ok {
				return mrtrNA, fmt.Sprintf("%s asks for input the harness cannot answer (%q)", target.Label, stateInputMethods(first.Result)), nil, nil
			}
			if fc == nil {
				c, closeFn, err := p.Env.Fresh(p.Ctx)
				if err != nil {
					return mrtrNA, "", nil, err
				}
				fc, closeFresh = c, closeFn
			}
			if target.Method == "tools/call" && !listed {
				// The new client learns the tools' x-mcp-header declarations.
				if _, err := fc.ListTools(p.Ctx); err != nil {
					return mrtrNA, "", nil, err
				}
				listed = true
			}
			res, err := fc.Continue(p.Ctx, stateResult(first), answers)
			if res == nil || res.Response == nil {
				return mrtrNA, "", nil, err
			}
			resp := res.Response
			ev := check.FromResponse(resp)
			switch {
			case resp.Error != nil && p.Env.Transport == "stdio":
				return mrtrOK, fmt.Sprintf("informational: the retry of %s %s got error %d (%s); the retry works only in the process that issued the requestState", target.Label, where, resp.Error.Code, jsonrpc.Clip(resp.Error.Message, 120)), ev, nil
			case resp.Error != nil:
				j.Failf(check.FromResponseAt(resp, "/error/code"), "the retry of %s %s got error %d (%s), want a complete or input_required result", target.Label, where, resp.Error.Code, jsonrpc.Clip(resp.Error.Message, 120))
				return mrtrBad, "", nil, nil
			case res.ResultType != mcpclient.ResultComplete && res.ResultType != mcpclient.ResultInputRequired:
				j.Failf(stateResultTypeAt(resp), "the retry of %s %s got resultType %q", target.Label, where, res.ResultType)
				return mrtrBad, "", nil, nil
			}
			return mrtrOK, fmt.Sprintf("the retry of %s %s was accepted (%s)", target.Label, where, res.ResultType), ev, nil
		})
	},
}

// stateResult turns a raw input_required response into what Continue takes.
func stateResult(resp *mcpclient.Response) *mcpclient.Result {
	res := &mcpclient.Result{Response: resp, ResultType: mcpclient.ResultInputRequired, Rounds: 1}
	var ir mcpclient.InputRequiredResult
	_ = json.Unmarshal(resp.Result, &ir)
	res.InputRequired = &ir
	return res
}

// stateResultTypeAt locates a result's resultType, or its absence.
func stateResultTypeAt(resp *mcpclient.Response) *check.Evidence {
	var r map[string]json.RawMessage
	if json.Unmarshal(resp.Result, &r) == nil {
		if _, ok := r["resultType"]; !ok {
			return check.FromResponseAbsent(resp, "/result/resultType")
		}
	}
	return check.FromResponseAt(resp, "/result/resultType")
}
