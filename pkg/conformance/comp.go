package conformance

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// COMP: completion/complete (server/utilities/completion.mdx; checklist
// §1.10).

// compRef is a completion target built from the server's own prompts and
// resource templates.
type compRef struct {
	ref  map[string]any
	arg  string
	what string
}

// compTemplateVar matches an RFC 6570 expression and captures its first
// variable name (operators and modifiers stripped).
var compTemplateVar = regexp.MustCompile(`\{[+#./;?&]?([A-Za-z0-9_%.]+)`)

// compRefs lists the refs the harness can ask completions for: every
// prompt argument, then every resource template variable.
func compRefs(f *check.Facts) []compRef {
	var out []compRef
	for _, pr := range f.Prompts {
		for _, a := range pr.Arguments {
			out = append(out, compRef{
				ref:  map[string]any{"type": "ref/prompt", "name": pr.Name},
				arg:  a.Name,
				what: "argument " + quoteClip(a.Name) + " of prompt " + quoteClip(pr.Name),
			})
		}
	}
	for _, t := range f.Templates {
		if m := compTemplateVar.FindStringSubmatch(t.URITemplate); m != nil {
			out = append(out, compRef{
				ref:  map[string]any{"type": "ref/resource", "uri": t.URITemplate},
				arg:  m[1],
				what: "variable " + quoteClip(m[1]) + " of template " + quoteClip(t.URITemplate),
			})
		}
	}
	return out
}

func quoteClip(s string) string {
	return `"` + strings.ReplaceAll(jsonrpc.Clip(s, 80), `"`, `\"`) + `"`
}

// compMaxRefs bounds how many refs COMP-1 asks about.
const compMaxRefs = 3

var COMP1 = &check.Check{
	ID: "COMP-1", Level: check.Must, Transports: check.Both,
	Spec: "server/utilities/completion.mdx §Completion Results, §CompleteResult",
	Doc:  "completion/complete gives a CompleteResult: completion.values a string array of at most 100 items, optional integer total and boolean hasMore",
	Fix:  "return {resultType, completion: {values: [...at most 100], total?, hasMore?}} and cap values at 100",
	Run: func(p *check.Pass) error {
		if !p.Env.Facts.Has("completions") {
			p.Skipf("the server does not declare the completions capability")
			return nil
		}
		refs := compRefs(p.Env.Facts)
		if len(refs) == 0 {
			p.Skipf("no prompt argument or resource template variable to complete")
			return nil
		}
		// Every ref in one repetition, a sample and what went wrong in the
		// others (Pass.Cases), as COMP-3 asks them.
		refs = refs[:min(len(refs), compMaxRefs)]
		return p.Cases("refs", len(refs), func(i int) error {
			r := refs[i]
			resp, err := p.Do("completion/complete", map[string]any{"ref": r.ref, "argument": map[string]any{"name": r.arg, "value": ""}})
			if err != nil {
				return err
			}
			ev := check.FromResponse(resp)
			if resp.Error != nil {
				p.Failf(atResponse(ev, resp, "/error/code"), "completion/complete for %s gave error %d (%s): %s", r.what, resp.Error.Code, jsonrpc.CodeName(resp.Error.Code), jsonrpc.Clip(resp.Error.Message, 120))
				return nil
			}
			if rt, ok := resp.ResultType(); !ok || rt != "complete" {
				p.Failf(atProblem(ev, resp, problem{at: "/result/resultType", absent: compMember(resp.Result, "resultType") == nil}), "completion/complete for %s has resultType %s, want \"complete\"", r.what, shown(compMember(resp.Result, "resultType")))
			}
			if compMember(resp.Result, "completion") == nil {
				// COMP-3's fault: one wire fault is one failure. The skip
				// stands only if no other ref was judged.
				p.Skipf("no completion/complete result carried completion to judge (COMP-3 reports it)")
				return nil
			}
			problems, at, err := schemaOracleAt("CompleteResult", resp.Result)
			if err != nil {
				return err
			}
			if problems != "" {
				p.Failf(atResponse(ev, resp, check.InResult(at)), "completion/complete for %s is not a valid CompleteResult: %s", r.what, problems)
				return nil
			}
			p.Passf(ev, "completion/complete for %s returned a valid CompleteResult", r.what)
			return nil
		})
	},
}

func compMember(raw json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m[key]
}

var COMP2 = &check.Check{
	ID: "COMP-2", Level: check.Should, Transports: check.Both,
	Spec: "server/utilities/completion.mdx §Error Handling",
	Doc:  "completion/complete gives -32601 when completions are not supported and -32602 for an unknown prompt name",
	Fix:  "answer completion/complete with -32601 when you do not declare completions, and -32602 for a prompt you do not have",
	Run: func(p *check.Pass) error {
		if unread := p.Env.Facts.CapabilitiesUnread(); unread != "" {
			p.Skipf("%s; whether -32601 or -32602 is the answer turns on whether completions are declared", unread)
			return nil
		}
		ref := map[string]any{"type": "ref/prompt", "name": promptNoSuchPrompt}
		params := map[string]any{"ref": ref, "argument": map[string]any{"name": "x", "value": ""}}
		resp, err := p.Do("completion/complete", params)
		if err != nil {
			return err
		}
		ev := check.FromResponse(resp)
		want, why := int64(jsonrpc.CodeInvalidParams), "for unknown prompt "+quoteClip(promptNoSuchPrompt)
		if !p.Env.Facts.Has("completions") {
			want, why = jsonrpc.CodeMethodNotFound, "although the server does not declare completions"
		}
		switch {
		case resp.Error == nil:
			p.Failf(atResponse(ev, resp, "/result"), "completion/complete %s succeeded, want error %d", why, want)
		case resp.Error.Code != want:
			p.Failf(atResponse(ev, resp, "/error/code"), "completion/complete %s gave error %d (%s), want %d", why, resp.Error.Code, jsonrpc.CodeName(resp.Error.Code), want)
		default:
			p.Passf(ev, "completion/complete %s gave %d", why, want)
		}
		return nil
	},
}

var COMP3 = &check.Check{
	ID: "COMP-3", Level: check.Must, Transports: check.Both,
	Spec: "server/utilities/completion.mdx §CompleteResult; schema.json CompleteResult (required: completion, resultType)",
	Doc:  "every completion/complete result carries a completion object, whatever it was asked",
	Fix:  "put the values under completion: {resultType: \"complete\", completion: {values: [...]}}, also for an argument with nothing to suggest",
	Run: func(p *check.Pass) error {
		// The refs COMP-1 asks about, and COMP-2's unknown prompt: a server
		// that answers that one (or one that does not declare completions
		// yet answers) still owes a CompleteResult.
		type ask struct {
			what   string
			params map[string]any
		}
		var asks []ask
		if p.Env.Facts.Has("completions") {
			refs := compRefs(p.Env.Facts)
			for _, r := range refs[:min(len(refs), compMaxRefs)] {
				asks = append(asks, ask{r.what, map[string]any{"ref": r.ref, "argument": map[string]any{"name": r.arg, "value": ""}}})
			}
		}
		asks = append(asks, ask{"unknown prompt " + quoteClip(promptNoSuchPrompt), map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": promptNoSuchPrompt}, "argument": map[string]any{"name": "x", "value": ""}}})
		judged := 0
		// Every ask in one repetition, a sample and what went wrong or
		// could not be judged in the others (Pass.Cases).
		err := p.Cases("asks", len(asks), func(i int) error {
			a := asks[i]
			resp, err := p.Do("completion/complete", a.params)
			if err != nil {
				return err
			}
			if resp.Error != nil || resp.Result == nil {
				p.SendAgain()
				return nil // an error is COMP-1's or COMP-2's to judge
			}
			if rt, _ := resp.ResultType(); rt == mcpclient.ResultInputRequired {
				p.SendAgain()
				return nil // an interim result owes no completion yet
			}
			judged++
			ev := check.FromResponse(resp)
			c := compMember(resp.Result, "completion")
			var obj map[string]json.RawMessage
			switch {
			case c == nil:
				p.Failf(absentInResponse(ev, resp, "/result/completion"), "completion/complete for %s returned a result without completion (the schema requires it)", a.what)
			case json.Unmarshal(c, &obj) != nil || obj == nil:
				p.Failf(atResponse(ev, resp, "/result/completion"), "completion/complete for %s has completion %s, want an object with values", a.what, shown(c))
			default:
				p.Passf(ev, "completion/complete for %s carries completion", a.what)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if judged == 0 {
			p.Skipf("no completion/complete request got a result (the server answered each with an error)")
		}
		return nil
	},
}

var compFamily = family{name: "COMP", title: "completion", checks: []*check.Check{COMP1, COMP2, COMP3},
	added: map[string]string{"COMP-3": "CompleteResult requires completion (schema.json); COMP-1 judges only the refs it can build, so a result without completion went unseen on a real server"}}
