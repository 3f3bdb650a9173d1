package conformance

import (
	"encoding/json"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// Sweeps: the requests several checks of one repetition judge, sent once
// per repetition (check.Pass.Run) and shared, as Pass.Do shares the plain
// requests. Run i of every MUST check judges sweep i, so each run is still
// an independent observation of the server; a sweep is read, never changed.

// capsKey names one request sent with declared client capabilities in one
// repetition.
type capsKey struct {
	run                  int
	method, params, caps string
}

type capsAnswer struct {
	resp *mcpclient.Response
	err  error
}

// doWithCaps is Env.Client.Do(method, params, WithCapabilities(caps)),
// asked once per repetition for every check that sends the same request
// with the same capabilities (RPC-4 and MRTR-1 ask discover and the lists
// with every capability declared; RES-3 and STATE the input_required
// item). Only a request without effects belongs here.
func doWithCaps(p *check.Pass, caps json.RawMessage, method string, params any) (*mcpclient.Response, error) {
	if p.Env.Memo == nil {
		return p.Env.Client.Do(p.Ctx, method, params, mcpclient.WithCapabilities(caps))
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	k := capsKey{run: p.Run, method: method, params: string(b), caps: string(caps)}
	// The driver gives every check of a run the same context, so the first
	// asker's is the run's.
	v, _ := p.Env.Memo.Do(k, func() any {
		resp, err := p.Env.Client.Do(p.Ctx, method, params, mcpclient.WithCapabilities(caps))
		return capsAnswer{resp, err}
	}).(capsAnswer)
	return v.resp, v.err
}
