package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// RSRC: resources (server/resources.mdx; checklist §1.10).

func rsrcServed(f *check.Facts) bool {
	return f.Has("resources") || f.ResourcesErr == nil && len(f.Resources) > 0 || f.TemplatesErr == nil && len(f.Templates) > 0
}

const rsrcNotServed = "the server does not declare the resources capability"

// rsrcMaxReads bounds how many listed resources one check reads.
const rsrcMaxReads = 3

var RSRC1 = &check.Check{
	ID: "RSRC-1", Level: check.Must, Transports: check.Both,
	Spec: "server/resources.mdx §Listing Resources, §Resource Templates",
	Doc:  "resources/list and resources/templates/list give valid ListResourcesResult / ListResourceTemplatesResult pages, the same on every connection",
	Fix:  "answer both lists with {resultType, resources|resourceTemplates, ttlMs, cacheScope} and serve the same entries to every connection",
	Run: func(p *check.Pass) error {
		if !rsrcServed(p.Env.Facts) {
			p.Skipf(rsrcNotServed)
			return nil
		}
		res, resOK, err := schemaJudgeList(p, "resources/list", "resources", "ListResourcesResult")
		if err != nil {
			return err
		}
		tmpl, tmplOK, err := rsrcTemplates(p)
		if err != nil {
			return err
		}
		if resOK {
			if err := rsrcSameOnFresh(p, "resources/list", "resources", "uri", res); err != nil {
				return err
			}
		}
		if tmplOK && tmpl != nil {
			if err := rsrcSameOnFresh(p, "resources/templates/list", "resourceTemplates", "uriTemplate", tmpl); err != nil {
				return err
			}
		}
		if resOK {
			p.Passf(toolEvidence(res), "resources/list: %d resources, valid and the same on a fresh connection", len(res.Items))
		}
		return nil
	},
}

// rsrcTemplates judges resources/templates/list; a server that does not
// implement it (-32601) gets a warning, since templates are optional
// content but the method belongs to the capability.
func rsrcTemplates(p *check.Pass) (*mcpclient.ListResult, bool, error) {
	_, err := p.List("resources/templates/list", "resourceTemplates")
	if err != nil {
		if rpc, ok := errors.AsType[*mcpclient.RPCError](err); ok && rpc.Code() == jsonrpc.CodeMethodNotFound {
			p.Warnf(check.FromResponseAt(rpc.Response, "/error/code"), "resources/templates/list gave -32601 although the server declares resources")
			return nil, true, nil
		}
	}
	return schemaJudgeList(p, "resources/templates/list", "resourceTemplates", "ListResourceTemplatesResult")
}

// rsrcSameOnFresh compares the keys with the repetition's list on a
// fresh connection.
func rsrcSameOnFresh(p *check.Pass, method, key, id string, first *mcpclient.ListResult) error {
	lr, err, openErr := freshList(p, method)
	if openErr != nil {
		return fmt.Errorf("opening a fresh connection: %w", openErr)
	}
	if err != nil {
		if schemaTransportErr(err) {
			return err
		}
		p.Failf(toolEvidence(lr), "%s fails on a fresh connection while it works on the first: %s", method, jsonrpc.Clip(err.Error(), 160))
		return nil
	}
	if added, removed := schemaSetDiff(schemaEntryNames(first.Items, id), schemaEntryNames(lr.Items, id)); len(added)+len(removed) > 0 {
		p.Failf(toolListAt(lr, key), "%s on a fresh connection differs from the first: %s", method, schemaDiffText(added, removed))
	}
	return nil
}

// rsrcRead is one resources/read of a listed resource.
type rsrcRead struct {
	uri string
	res *mcpclient.Result
	rpc *mcpclient.RPCError
	err error
}

// at is the read's evidence located at ptr in its response.
func (r *rsrcRead) at(ptr string) *check.Evidence {
	switch {
	case r.rpc != nil:
		return check.FromResponseAt(r.rpc.Response, ptr)
	case r.res != nil:
		return check.FromResponseAt(r.res.Response, ptr)
	}
	return nil
}

func (r *rsrcRead) ev() *check.Evidence {
	if r.rpc != nil {
		return check.FromResponse(r.rpc.Response)
	}
	if r.res != nil {
		return check.FromResponse(r.res.Response)
	}
	return nil
}

// rsrcReads reads up to rsrcMaxReads listed resources; it skips the check
// when none is listed.
func rsrcReads(p *check.Pass) ([]*rsrcRead, error) {
	uris, ok := rsrcReadable(p)
	if !ok {
		return nil, nil
	}
	var out []*rsrcRead
	for _, uri := range uris {
		rd, err := rsrcReadOne(p, uri)
		if err != nil {
			return nil, err
		}
		out = append(out, rd)
	}
	return out, nil
}

// rsrcReadable are the URIs rsrcReads reads: up to rsrcMaxReads listed
// resources. It skips the check (ok false) when there is none.
func rsrcReadable(p *check.Pass) (uris []string, ok bool) {
	if !rsrcServed(p.Env.Facts) {
		p.Skipf(rsrcNotServed)
		return nil, false
	}
	for _, r := range p.Env.Facts.Resources {
		if len(uris) == rsrcMaxReads {
			break
		}
		if r.URI != "" {
			uris = append(uris, r.URI)
		}
	}
	if len(uris) == 0 {
		p.Skipf("resources/list lists no resource to read")
		return nil, false
	}
	return uris, true
}

// rsrcReadOne is the repetition's read of uri; the error is a transport's.
func rsrcReadOne(p *check.Pass, uri string) (*rsrcRead, error) {
	res, err := observedResult(p, "resources/read", map[string]any{"uri": uri})
	rd := &rsrcRead{uri: uri, res: res}
	if err != nil {
		if rpc, ok := errors.AsType[*mcpclient.RPCError](err); ok {
			rd.rpc = rpc
		} else if schemaTransportErr(err) {
			return nil, err
		} else {
			rd.err = err
		}
	}
	return rd, nil
}

var RSRC2 = &check.Check{
	ID: "RSRC-2", Level: check.Must, Transports: check.Both,
	Spec: "server/resources.mdx §Reading Resources; schema.ts ReadResourceResult",
	Doc:  "resources/read of a listed resource gives a ReadResourceResult (contents[], ttlMs, cacheScope) or an InputRequiredResult",
	Fix:  "answer resources/read with {resultType: \"complete\", contents: [{uri, text|blob, mimeType?}], ttlMs, cacheScope}",
	Run: func(p *check.Pass) error {
		uris, ok := rsrcReadable(p)
		if !ok {
			return nil
		}
		// Every listed resource in one repetition, a sample and what went
		// wrong in the others (Pass.Cases).
		return p.Cases("", len(uris), func(i int) error {
			rd, err := rsrcReadOne(p, uris[i])
			if err != nil {
				return err
			}
			return rsrc2Judge(p, rd)
		})
	},
}

// rsrc2Judge is RSRC-2 on one read.
func rsrc2Judge(p *check.Pass, rd *rsrcRead) error {
	ev := rd.ev()
	uri := jsonrpc.Clip(rd.uri, 120)
	switch {
	case rd.rpc != nil && rd.rpc.Code() == jsonrpc.CodeMissingRequiredClientCapability:
		return nil // needs a capability the harness did not declare
	case rd.rpc != nil && rd.rpc.Code() == jsonrpc.CodeInternalError:
		// An internal error is an allowed answer (resources.mdx
		// §Error Handling, RSRC-4 judges it); it says nothing about
		// the result shape this check is for.
		p.Warnf(rd.at("/error/code"), "resources/read of listed resource %q gave an internal error (-32603): %s", uri, jsonrpc.Clip(rd.rpc.Err.Message, 120))
		return nil
	case rd.rpc != nil:
		p.Failf(rd.at("/error/code"), "resources/read of listed resource %q gave error %d (%s): %s", uri, rd.rpc.Code(), jsonrpc.CodeName(rd.rpc.Code()), jsonrpc.Clip(rd.rpc.Err.Message, 120))
		return nil
	case rd.err != nil:
		p.Failf(rd.at("/result"), "resources/read %q: %v", uri, rd.err)
		return nil
	case rd.res.InputRequired != nil:
		p.Passf(ev, "resources/read %q asked for input (MRTR checks judge it)", uri)
		return nil
	}
	if rd.res.MissingResultType {
		p.Failf(absentInResponse(ev, rd.res.Response, "/result/resultType"), "resources/read %q result has no resultType", uri)
	}
	problems, at, err := schemaOracleAt("ReadResourceResult", rd.res.Response.Result)
	if err != nil {
		return err
	}
	if problems != "" {
		p.Failf(atResponse(ev, rd.res.Response, check.InResult(at)), "resources/read %q is not a valid ReadResourceResult: %s", uri, problems)
		return nil
	}
	for _, pr := range rsrcContentProblemsAt(rd.res.Response.Result) {
		p.Failf(rd.at(check.InResult(pr.at)), "resources/read %q %s", uri, pr.msg)
	}
	p.Passf(ev, "resources/read %q returned a valid ReadResourceResult", uri)
	return nil
}

// rsrcContentProblems checks what the schema leaves as annotations: blob
// is base64, and the result is not empty.
func rsrcContentProblems(result json.RawMessage) []string { return msgs(rsrcContentProblemsAt(result)) }

// rsrcContentProblemsAt is rsrcContentProblems with where each problem is:
// a pointer into the result.
func rsrcContentProblemsAt(result json.RawMessage) []problem {
	var r struct {
		Contents []struct {
			URI  string  `json:"uri"`
			Blob *string `json:"blob"`
		} `json:"contents"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil
	}
	var out []problem
	for i, c := range r.Contents {
		if c.Blob != nil && !callBase64(*c.Blob) {
			out = append(out, problem{at: check.Pointer("contents", i, "blob"), msg: fmt.Sprintf("contents[%d].blob is not base64", i)})
		}
	}
	return out
}

// rsrcMissingURI is a URI that names no resource: the scheme of a listed
// resource (so a server that routes by scheme reaches its resource
// handler) and a host and path no server uses.
func rsrcMissingURI(f *check.Facts) string {
	scheme := "mcp-eval"
	for _, r := range f.Resources {
		if u, err := url.Parse(r.URI); err == nil && u.Scheme != "" {
			scheme = u.Scheme
			break
		}
	}
	return scheme + "://mcp-eval.invalid/no-such-resource-5e1d2b"
}

var RSRC3 = &check.Check{
	ID: "RSRC-3", Level: check.Must, Transports: check.Both, Seed: 6,
	Spec: "server/resources.mdx §Error Handling; SEP-2164",
	Doc:  "reading a resource that does not exist gives error -32602 (not -32002, not empty contents), ideally with data.uri",
	Fix:  "answer resources/read of an unknown URI with JSON-RPC error -32602 and data {\"uri\": ...}",
	Run: func(p *check.Pass) error {
		if !rsrcServed(p.Env.Facts) {
			p.Skipf(rsrcNotServed)
			return nil
		}
		uri := rsrcMissingURI(p.Env.Facts)
		resp, err := p.Do("resources/read", map[string]any{"uri": uri})
		if err != nil {
			return err
		}
		ev := check.FromResponse(resp)
		if resp.Error == nil {
			var r struct {
				Contents []json.RawMessage `json:"contents"`
			}
			_ = json.Unmarshal(resp.Result, &r)
			if rt, _ := resp.ResultType(); rt == mcpclient.ResultInputRequired {
				p.Failf(atResponse(ev, resp, "/result/resultType"), "resources/read of missing %q got input_required, want error -32602", uri)
			} else if len(r.Contents) == 0 {
				p.Failf(callResultAt(resp, "contents"), "resources/read of missing %q got a result with empty contents, want error -32602", uri)
			} else {
				p.Failf(atResponse(ev, resp, "/result/contents"), "resources/read of missing %q got contents, want error -32602", uri)
			}
			return nil
		}
		switch code := resp.Error.Code; code {
		case jsonrpc.CodeInvalidParams:
		case -32002:
			p.Failf(atResponse(ev, resp, "/error/code"), "resources/read of missing %q gave -32002 (resource not found before 2026-07-28), want -32602", uri)
			return nil
		default:
			p.Failf(atResponse(ev, resp, "/error/code"), "resources/read of missing %q gave error %d (%s), want -32602", uri, code, jsonrpc.CodeName(code))
			return nil
		}
		var data struct {
			URI *string `json:"uri"`
		}
		if resp.Error.Data == nil || json.Unmarshal(resp.Error.Data, &data) != nil || data.URI == nil {
			p.Warnf(rsrcNoDataURI(ev, resp), "error -32602 for missing %q has no data.uri (SEP-2164 and the spec example include it)", uri)
			return nil
		}
		p.Passf(ev, "missing resource gave -32602 with data.uri")
		return nil
	},
}

var RSRC4 = &check.Check{
	ID: "RSRC-4", Level: check.Should, Transports: check.Both,
	Spec: "server/resources.mdx §Error Handling",
	Doc:  "internal errors of resources/read use -32603 (judged on the listed resources the harness reads)",
	Fix:  "report internal failures of resources/read as JSON-RPC error -32603",
	Run: func(p *check.Pass) error {
		reads, err := rsrcReads(p)
		if err != nil || reads == nil {
			return err
		}
		seen := 0
		for _, rd := range reads {
			if rd.rpc == nil {
				continue
			}
			switch code := rd.rpc.Code(); code {
			case jsonrpc.CodeInternalError:
				seen++
				p.Passf(rd.ev(), "reading %q failed with -32603", jsonrpc.Clip(rd.uri, 120))
			case jsonrpc.CodeInvalidParams, jsonrpc.CodeMissingRequiredClientCapability:
				// a judgement about the request, not an internal error
			default:
				seen++
				p.Failf(rd.at("/error/code"), "reading listed resource %q failed with %d (%s); internal errors should use -32603", jsonrpc.Clip(rd.uri, 120), code, jsonrpc.CodeName(code))
			}
		}
		if seen == 0 {
			p.Skipf("no read of a listed resource failed, so no internal error was seen")
		}
		return nil
	},
}

var rsrcFamily = family{name: "RSRC", title: "resources", checks: []*check.Check{RSRC1, RSRC2, RSRC3, RSRC4}}

// rsrcNoDataURI locates a missing data.uri: at the data without it, or
// where data is missing, or at a data that is not an object.
func rsrcNoDataURI(ev *check.Evidence, resp *mcpclient.Response) *check.Evidence {
	var data map[string]json.RawMessage
	switch {
	case resp.Error.Data == nil:
		return absentInResponse(ev, resp, "/error/data")
	case json.Unmarshal(resp.Error.Data, &data) != nil || data == nil:
		return atResponse(ev, resp, "/error/data")
	}
	if _, has := data["uri"]; has {
		return atResponse(ev, resp, "/error/data/uri") // null
	}
	return absentInResponse(ev, resp, "/error/data/uri")
}
