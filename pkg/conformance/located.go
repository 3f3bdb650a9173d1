package conformance

import (
	"encoding/json"
	"slices"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// problem is one thing wrong with a response and where it is: at is an
// RFC 6901 pointer into the response message ("/error/data/supported"),
// atStatus for the HTTP status, "" when the fault is not one thing the
// server sent (a response that never came). Findings made from a problem point at it, so
// the evidence shows the fault and one fault broken by two rules is
// reported once (check.Result.SameAs).
type problem struct {
	at, msg string
	// absent: the member at names is missing (the finding is its absence).
	absent bool
}

// atStatus locates a problem at the HTTP status of the response.
const atStatus = "httpStatus"

// msgs are the problems' messages.
func msgs(ps []problem) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.msg)
	}
	return out
}

// evidenceFor is the exchange as the evidence of one problem.
func (r *reply) evidenceFor(pb problem) *check.Evidence {
	if pb.absent && r.raw != nil {
		return check.Absent(r.evidence(), r.raw, pb.at)
	}
	return r.evidenceAt(pb.at)
}

// evidenceAt is the exchange as evidence, located at ptr (a value that is
// there; "" leaves it unlocated).
func (r *reply) evidenceAt(ptr string) *check.Evidence {
	ev := r.evidence()
	switch {
	case ptr == atStatus:
		if r.status != 0 {
			ev.OnStatus = true
		}
		return ev
	case ptr == "" || r.raw == nil:
		return ev
	}
	return check.At(ev, r.raw, ptr)
}

// replyAt locates what a reply answered instead of the one expected: its
// error code, its result, or nothing when it is not a JSON-RPC response.
func replyAt(r *reply) string {
	switch {
	case r.has("error"):
		if _, ok := r.rpcError(); ok {
			return "/error/code"
		}
		return "/error"
	case r.has("result"):
		return "/result"
	}
	return ""
}

// atResponse is ev (the evidence of resp) located at ptr in resp's message.
func atResponse(ev *check.Evidence, resp *mcpclient.Response, ptr string) *check.Evidence {
	if resp == nil {
		return ev
	}
	return check.At(ev, check.ResponseMessage(resp), ptr)
}

// absentInResponse is ev (the evidence of resp) located at a member ptr
// names that resp lacks.
func absentInResponse(ev *check.Evidence, resp *mcpclient.Response, ptr string) *check.Evidence {
	if resp == nil {
		return ev
	}
	return check.Absent(ev, check.ResponseMessage(resp), ptr)
}

// atProblem is ev located at a problem of resp.
func atProblem(ev *check.Evidence, resp *mcpclient.Response, pb problem) *check.Evidence {
	if ev == nil {
		ev = check.FromResponse(resp)
	}
	if pb.absent {
		return absentInResponse(ev, resp, pb.at)
	}
	return atResponse(ev, resp, pb.at)
}

// listEntryAt is the evidence of a list's i-th entry (counted over every
// page, as ListResult.Items are) located at sub, the tokens after the
// entry ("name", "inputSchema"); with absent, at a member sub names that
// the entry lacks. The first page unlocated when no page holds entry i.
func listEntryAt(lr *mcpclient.ListResult, key string, i int, absent bool, sub ...any) *check.Evidence {
	resp, j := listEntryPage(lr, key, i)
	if resp == nil {
		return toolEvidence(lr)
	}
	ptr := check.Pointer(append([]any{"result", key, j}, sub...)...)
	if absent {
		return check.FromResponseAbsent(resp, ptr)
	}
	return check.FromResponseAt(resp, ptr)
}

// listEntryPage finds the page that holds a list's i-th entry and the
// entry's index on that page.
func listEntryPage(lr *mcpclient.ListResult, key string, i int) (*mcpclient.Response, int) {
	if lr == nil || i < 0 {
		return nil, 0
	}
	for _, pg := range lr.Pages {
		if pg.Response == nil {
			continue
		}
		var r map[string]json.RawMessage
		var entries []json.RawMessage
		if json.Unmarshal(pg.Response.Result, &r) != nil || json.Unmarshal(r[key], &entries) != nil {
			continue
		}
		if i < len(entries) {
			return pg.Response, i
		}
		i -= len(entries)
	}
	return nil, 0
}

// listEntryNamed is listEntryAt for the first entry whose member field is
// name.
func listEntryNamed(lr *mcpclient.ListResult, key, field, name string, sub ...any) *check.Evidence {
	if lr == nil {
		return nil
	}
	i := slices.Index(schemaEntryNames(lr.Items, field), name)
	if i < 0 {
		return toolEvidence(lr)
	}
	return listEntryAt(lr, key, i, false, sub...)
}

// deepestAt locates tokens in resp: the value when it is there, else the
// first member on the way that is missing (absent), so that a finding
// about a missing nested member points at the object that lacks it.
func deepestAt(resp *mcpclient.Response, tokens ...any) *check.Evidence {
	msg := check.ResponseMessage(resp)
	for n := 1; n <= len(tokens); n++ {
		ptr := check.Pointer(tokens[:n]...)
		if _, _, ok := check.Locate(msg, ptr); !ok {
			return absentInResponse(check.FromResponse(resp), resp, ptr)
		}
	}
	return atResponse(check.FromResponse(resp), resp, check.Pointer(tokens...))
}

// discoverAt is the evidence of a server/discover response, asked again,
// at tokens (deepestAt): the checks that judge the discover result the run
// opened with have only its result, not the exchange. Unlocated, with the
// result the run opened with, when the request fails.
func discoverAt(p *check.Pass, tokens ...any) *check.Evidence {
	resp, err := p.Env.Client.Do(p.Ctx, "server/discover", nil)
	if err != nil || resp == nil || resp.Result == nil {
		return &check.Evidence{Request: "server/discover", Response: jsonrpc.Clip(string(p.Env.Facts.DiscoverRaw), 600)}
	}
	return deepestAt(resp, append([]any{"result"}, tokens...)...)
}

// unaskedAt locates a response nothing asked for (an answer to a
// notification, a request the server sent) at its result, its error or
// its method in msg, the message as the server wrote it; ev unlocated when
// msg is not one JSON message (an SSE body).
func unaskedAt(ev *check.Evidence, msg []byte) *check.Evidence {
	for _, ptr := range []string{"/result", "/error", "/method"} {
		if _, _, ok := check.Locate(msg, ptr); ok {
			return check.At(ev, msg, ptr)
		}
	}
	return ev
}

// respAnswerAt is what a response answered: its error code, or its result
// ("" when it has neither).
func respAnswerAt(resp *mcpclient.Response) string {
	switch {
	case resp == nil:
		return ""
	case resp.Error != nil:
		return "/error/code"
	case resp.Result != nil:
		return "/result"
	}
	return ""
}

// respAnswerEv is resp's evidence located at what answered (respAnswerAt);
// when its error code is want and only the HTTP status was wrong, at the
// status.
func respAnswerEv(resp *mcpclient.Response, want int64) *check.Evidence {
	ev := check.FromResponse(resp)
	if resp != nil && resp.Error != nil && resp.Error.Code == want {
		ev.OnStatus = ev.Status != 0
		return ev
	}
	return atResponse(ev, resp, respAnswerAt(resp))
}
