package conformance

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// CACHE: caching hints (server/utilities/caching.mdx, checklist §1.6).

var cacheFamily = family{
	name:   "CACHE",
	title:  "caching",
	checks: []*check.Check{CACHE1, CACHE2, CACHE3},
	unobservable: map[string]string{
		"CACHE-4": "not a server rule: GetPromptResult, CallToolResult and CompleteResult may leave ttlMs out, and the harness keeps no cache, so it never caches results of requests that carried inputResponses or requestState",
	},
}

// cacheMaxReads bounds the resources read by CACHE-1.
const cacheMaxReads = 3

// cacheSample is one result a cacheable method returned.
type cacheSample struct {
	what string
	resp *mcpclient.Response
}

// cacheSamples gathers the results of server/discover and every page of
// every list, as the repetition observed them (the same answers other
// checks judge).
func cacheSamples(p *check.Pass) ([]cacheSample, error) {
	var out []cacheSample
	resp, err := p.Do("server/discover", nil)
	if err != nil {
		return nil, err
	}
	out = append(out, cacheSample{"server/discover", resp})
	for _, l := range pageLists(p.Env.Facts) {
		lr, err := p.List(l.method, l.key)
		if lr == nil {
			return nil, err
		}
		for i, pg := range lr.Pages {
			if pg.Response != nil {
				out = append(out, cacheSample{pageName(l.method, i, pg), pg.Response})
			}
		}
	}
	return out, nil
}

// cacheRead is the repetition's read of the first few listed resources'
// i-th (the reads RSRC-2 judges too, and samples alike: Pass.Cases).
func cacheRead(p *check.Pass, i int) (cacheSample, error) {
	uri := p.Env.Facts.Resources[i].URI
	resp, err := p.Do("resources/read", map[string]any{"uri": uri})
	return cacheSample{fmt.Sprintf("resources/read %q", jsonrpc.Clip(uri, 80)), resp}, err
}

var CACHE1 = &check.Check{
	ID: "CACHE-1", Level: check.Must, Transports: check.Both, Seed: 3,
	Spec:    "server/utilities/caching.mdx §Cacheable Results; schema.ts CacheableResult",
	Doc:     "complete results of server/discover, the four lists and resources/read carry an integer ttlMs >= 0 and cacheScope public|private",
	Fix:     "add ttlMs (an integer >= 0) and cacheScope (\"public\" or \"private\") to discover, list and resources/read results",
	Monitor: cache1Monitor,
	Run: func(p *check.Pass) error {
		samples, err := cacheSamples(p)
		if err != nil {
			return err
		}
		judged := 0
		judge := func(s cacheSample) {
			if s.resp.Error != nil || s.resp.Result == nil {
				return
			}
			if rt, ok := s.resp.ResultType(); ok && rt != mcpclient.ResultComplete {
				return // input_required carries no hints (CACHE-2)
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(s.resp.Result, &m) != nil {
				return
			}
			judged++
			for _, h := range cacheHintFaults(m) {
				pb := problem{at: check.Pointer("result", h.member), msg: h.problem, absent: m[h.member] == nil}
				p.Failf(atProblem(nil, s.resp, pb), "%s: %s", s.what, h.problem)
			}
		}
		for _, s := range samples {
			judge(s)
		}
		err = p.Cases("reads", min(len(p.Env.Facts.Resources), cacheMaxReads), func(i int) error {
			s, err := cacheRead(p, i)
			if err != nil {
				return err
			}
			judge(s)
			return nil
		})
		if err != nil {
			return err
		}
		if judged == 0 {
			p.Skipf("no cacheable method answered with a result")
		}
		return nil
	},
}

var CACHE2 = &check.Check{
	ID: "CACHE-2", Level: check.Should, Transports: check.Both,
	Spec: "server/utilities/caching.mdx §Cacheable Results",
	Doc:  "input_required results carry no caching hints (no ttlMs, no cacheScope)",
	Fix:  "leave ttlMs and cacheScope out of InputRequiredResult",
	Run: func(p *check.Pass) error {
		return stateEach(p, func(j *mrtrJudge, target *stateTarget) (mrtrStatus, string, *check.Evidence, error) {
			resp, note, err := stateAskShared(p, target)
			if resp == nil {
				return mrtrNA, note, nil, err
			}
			var m map[string]json.RawMessage
			_ = json.Unmarshal(resp.Result, &m)
			st := mrtrOK
			for _, k := range []string{"ttlMs", "cacheScope"} {
				if raw, ok := m[k]; ok {
					j.Failf(check.FromResponseAt(resp, check.Pointer("result", k)), "the input_required result of %s has %s %s; interim results are not cacheable and carry no hints", target.Label, k, shown(raw))
					st = mrtrBad
				}
			}
			return st, fmt.Sprintf("the input_required result of %s carries no caching hints", target.Label), check.FromResponse(resp), nil
		})
	},
}

var CACHE3 = &check.Check{
	ID: "CACHE-3", Level: check.Must, Transports: check.Both,
	Spec: "server/utilities/caching.mdx §Pagination",
	Doc:  "every page of one list has the same cacheScope",
	Fix:  "give every page of a list the cacheScope of its first page",
	Run: func(p *check.Pass) error {
		compared := 0
		for _, l := range pageLists(p.Env.Facts) {
			lr, err := p.List(l.method, l.key)
			if lr == nil {
				return err
			}
			var firstScope string
			var firstPage int
			seen := 0
			for i, pg := range lr.Pages {
				if pg.Response == nil || pg.Response.Result == nil {
					continue
				}
				var r struct {
					CacheScope json.RawMessage `json:"cacheScope"`
				}
				_ = json.Unmarshal(pg.Response.Result, &r)
				scope := shown(r.CacheScope)
				seen++
				if seen == 1 {
					firstScope, firstPage = scope, i
					continue
				}
				if scope != firstScope {
					pb := problem{at: "/result/cacheScope", absent: r.CacheScope == nil}
					p.Failf(atProblem(nil, pg.Response, pb), "%s has cacheScope %s but page %d has %s; all pages of one list share a scope", pageName(l.method, i, pg), scope, firstPage+1, firstScope)
				}
			}
			if schemaTransportErr(err) && !p.Found() {
				// A walk the transport cut short (the process exited
				// or went silent) left pages unread: that is not a list
				// of one page. A mismatch found before it, in this list
				// or an earlier one, stands. (A page the server refused
				// is PAGE-1's.)
				return err
			}
			if seen > 1 {
				compared++
			}
		}
		if compared == 0 {
			p.Skipf("no list has more than one page to compare")
		}
		return nil
	},
}

// cacheableMethods are the methods whose complete results carry caching
// hints (caching.mdx §Cacheable Results).
var cacheableMethods = map[string]bool{
	"server/discover": true, "tools/list": true, "prompts/list": true, "resources/list": true,
	"resources/templates/list": true, "resources/read": true,
}

// cache1Monitor watches every cacheable result of the run, every page of
// every list and every read included.
var cache1Monitor = &check.Monitor{
	Doc: "every complete result of server/discover, a list or resources/read carries valid ttlMs and cacheScope",
	Watch: func(x *check.Exchange) (bool, string) {
		if !x.Modern() || !cacheableMethods[x.Method] || x.Result == nil {
			return false, ""
		}
		var rt string
		if raw, ok := x.Result["resultType"]; ok && (json.Unmarshal(raw, &rt) != nil || rt != mcpclient.ResultComplete) {
			return false, "" // input_required carries no hints (CACHE-2); a bad resultType is RES-2's
		}
		if problems := cacheHints(x.Result); len(problems) > 0 {
			return true, fmt.Sprintf("%s: %s", x.Method, strings.Join(problems, "; "))
		}
		return true, ""
	},
	Locate: func(x *check.Exchange) (string, bool) {
		faults := cacheHintFaults(x.Result)
		if len(faults) == 0 {
			return "", false
		}
		_, present := x.Result[faults[0].member]
		return check.Pointer("result", faults[0].member), !present
	},
}
