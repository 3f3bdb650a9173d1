package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// DISC: server/discover (server/discover.mdx, checklist §1.4).

var DISC1 = &check.Check{
	ID: "DISC-1", Level: check.Must, Transports: check.Both, Seed: 1,
	Spec: "server/discover.mdx §Discovery; basic/versioning.mdx",
	Doc:  "server/discover answers with a result, and supportedVersions holds a version the harness speaks",
	Fix:  "implement server/discover and list 2026-07-28 in supportedVersions",
	Run: func(p *check.Pass) error {
		// The repetition's one server/discover: DISC-1, DISC-2, DISC-8 and
		// CACHE-1 judge the same answer, each its own rule.
		resp, err := p.Do("server/discover", nil)
		if err != nil {
			return err
		}
		ev := check.FromResponse(resp)
		if resp.Error != nil {
			p.Failf(atResponse(ev, resp, "/error/code"), "server/discover returned error %d (%s) instead of a result", resp.Error.Code, jsonrpc.CodeName(resp.Error.Code))
			return nil
		}
		var dr mcpclient.DiscoverResult
		if err := json.Unmarshal(resp.Result, &dr); err != nil {
			p.Failf(atResponse(ev, resp, "/result"), "server/discover result is not a DiscoverResult: %v", err)
			return nil
		}
		if !slices.Contains(dr.SupportedVersions, mcpclient.Latest) {
			pb := problem{at: "/result/supportedVersions", absent: dr.SupportedVersions == nil}
			p.Failf(atProblem(ev, resp, pb), "supportedVersions %q does not contain %s", dr.SupportedVersions, mcpclient.Latest)
			return nil
		}
		p.Passf(ev, "server/discover lists %q", dr.SupportedVersions)
		return nil
	},
}

var DISC2 = &check.Check{
	ID: "DISC-2", Level: check.Must, Transports: check.Both, Seed: 3,
	Spec: "server/discover.mdx §DiscoverResult; server/utilities/caching.mdx §Cacheable Results",
	Doc:  "the discover result has resultType \"complete\", supportedVersions, capabilities, an integer ttlMs >= 0 and cacheScope public|private",
	Fix:  "return every required DiscoverResult field, including ttlMs and cacheScope",
	Run: func(p *check.Pass) error {
		resp, err := p.Do("server/discover", nil)
		if err != nil {
			return err
		}
		ev := check.FromResponse(resp)
		if resp.Error != nil {
			p.Skipf("server/discover failed (DISC-1 reports it)")
			return nil
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(resp.Result, &m); err != nil {
			p.Failf(atResponse(ev, resp, "/result"), "result is not a JSON object")
			return nil
		}
		for _, pb := range discoverShape(m) {
			p.Failf(atProblem(ev, resp, pb), "%s", pb.msg)
		}
		return nil
	},
}

// discoverShape lists what is wrong with a DiscoverResult's members,
// pointing into the response.
func discoverShape(m map[string]json.RawMessage) []problem {
	var out []problem
	bad := func(member, msg string) {
		out = append(out, problem{at: check.Pointer("result", member), msg: msg, absent: m[member] == nil})
	}
	var rt string
	if json.Unmarshal(m["resultType"], &rt) != nil || rt != mcpclient.ResultComplete {
		bad("resultType", fmt.Sprintf("resultType is %s, want \"complete\"", shown(m["resultType"])))
	}
	var versions []string
	if json.Unmarshal(m["supportedVersions"], &versions) != nil || versions == nil {
		bad("supportedVersions", fmt.Sprintf("supportedVersions is %s, want an array of strings", shown(m["supportedVersions"])))
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(m["capabilities"], &caps) != nil || caps == nil {
		bad("capabilities", fmt.Sprintf("capabilities is %s, want an object", shown(m["capabilities"])))
	}
	for _, h := range cacheHintFaults(m) {
		bad(h.member, h.problem)
	}
	if raw, ok := m["instructions"]; ok {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			bad("instructions", "instructions is not a string")
		}
	}
	return out
}

// shown renders a raw member for a message: "missing" or its JSON.
func shown(raw json.RawMessage) string {
	if raw == nil {
		return "missing"
	}
	return jsonrpc.Clip(string(raw), 60)
}

var DISC3 = &check.Check{
	ID: "DISC-3", Level: check.Must, Transports: check.Both,
	Spec: "schema.ts DiscoverResult.supportedVersions",
	Doc:  "supportedVersions contains the version the discover request was served under",
	Fix:  "list every version the server serves, including the one it just answered",
	Run: func(p *check.Pass) error {
		if p.Env.Facts.Discover == nil {
			p.Skipf("no discover result to judge")
			return nil
		}
		// The client asked under 2026-07-28 and got a result, so the server
		// served that version.
		if !slices.Contains(p.Env.Facts.Discover.SupportedVersions, mcpclient.Latest) {
			p.Failf(discoverAt(p, "supportedVersions"), "server/discover was answered under %s but supportedVersions is %q", mcpclient.Latest, p.Env.Facts.Discover.SupportedVersions)
		}
		return nil
	},
}

var DISC4 = &check.Check{
	ID: "DISC-4", Level: check.Should, Transports: check.Both,
	Spec: "server/discover.mdx §DiscoverResult",
	Doc:  "the discover result carries _meta[\"io.modelcontextprotocol/serverInfo\"] with name and version",
	Fix:  "add _meta.io.modelcontextprotocol/serverInfo = {name, version} to the discover result",
	Run: func(p *check.Pass) error {
		d := p.Env.Facts.Discover
		if d == nil {
			p.Skipf("no discover result to judge")
			return nil
		}
		if si := d.Meta.ServerInfo; si == nil || si.Name == "" || si.Version == "" {
			at := []any{"_meta", mcpclient.MetaServerInfo}
			if si != nil && si.Name == "" {
				at = append(at, "name")
			} else if si != nil {
				at = append(at, "version")
			}
			p.Failf(discoverAt(p, at...), "no serverInfo {name, version} in the discover result's _meta")
		}
		return nil
	},
}

var DISC5 = &check.Check{
	ID: "DISC-5", Level: check.Info, Transports: check.Both,
	Spec: "SEP-2575 §Changes since Final (PR #3002)",
	Doc:  "serverInfo is not at the top level of the discover result (a pre-final draft shape)",
	Fix:  "move serverInfo into the result's _meta",
	Run: func(p *check.Pass) error {
		if d := p.Env.Facts.Discover; d != nil && d.ServerInfo != nil {
			p.Warnf(discoverAt(p, "serverInfo"), "the discover result has a top-level serverInfo, a pre-final draft leftover; 2026-07-28 puts it in _meta")
		}
		return nil
	},
}

var DISC6 = &check.Check{
	ID: "DISC-6", Level: check.Must, Transports: check.Both,
	Spec: "server/tools.mdx, resources.mdx, prompts.mdx, utilities/completion.mdx, utilities/logging.mdx §Capabilities",
	Doc:  "every feature the server serves is declared in capabilities",
	Fix:  "declare tools, resources, prompts, completions and logging in server/discover when you serve them",
	Run: func(p *check.Pass) error {
		f := p.Env.Facts
		if why := f.CapabilitiesUnread(); why != "" {
			p.Skipf("%s", why)
			return nil
		}
		served := map[string]bool{
			"tools":     f.ToolsErr == nil && len(f.Tools)+len(f.Dropped) > 0,
			"resources": f.ResourcesErr == nil && len(f.Resources) > 0 || f.TemplatesErr == nil && len(f.Templates) > 0,
			"prompts":   f.PromptsErr == nil && len(f.Prompts) > 0,
		}
		for _, capName := range []string{"tools", "resources", "prompts"} {
			if served[capName] && !f.Has(capName) {
				p.Failf(discoverAt(p, "capabilities", capName), "the server serves %s but does not declare the %q capability", capName, capName)
			}
		}
		return nil
	},
}

// extensionKey is the _meta key grammar with a mandatory prefix (RES-4,
// basic/versioning.mdx: extension identifiers).
var extensionKey = regexp.MustCompile(`^(?:[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?/(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$`)

var DISC7 = &check.Check{
	ID: "DISC-7", Level: check.Must, Transports: check.Both,
	Spec: "basic/versioning.mdx §Extensions; schema.ts ServerCapabilities.extensions",
	Doc:  "keys of capabilities.extensions follow the _meta key rules with a mandatory prefix",
	Fix:  "name extensions like com.example/my-extension",
	Run: func(p *check.Pass) error {
		raw, ok := p.Env.Facts.Capabilities["extensions"]
		if !ok {
			p.Skipf("the server declares no extensions")
			return nil
		}
		var ext map[string]json.RawMessage
		if err := json.Unmarshal(raw, &ext); err != nil {
			p.Failf(discoverAt(p, "capabilities", "extensions"), "capabilities.extensions is not an object: %s", shown(raw))
			return nil
		}
		for k := range ext {
			if !extensionKey.MatchString(k) {
				p.Failf(discoverAt(p, "capabilities", "extensions", k), "extension key %q has no valid prefix (want e.g. com.example/name)", jsonrpc.Clip(k, 80))
			}
		}
		return nil
	},
}

// discClientOnly are the capabilities only a client declares
// (ClientCapabilities); ServerCapabilities has none of them.
var discClientOnly = []string{"sampling", "elicitation", "roots"}

var DISC9 = &check.Check{
	ID: "DISC-9", Level: check.Should, Transports: check.Both,
	Spec: "schema.ts ServerCapabilities, ClientCapabilities; client/sampling.mdx, client/elicitation.mdx, client/roots.mdx §Capabilities",
	Doc:  "capabilities declares no client-only capability (sampling, elicitation, roots)",
	Fix:  "leave sampling, elicitation and roots out of server/discover's capabilities: a server asks for them with input_required, a client declares them per request",
	Run: func(p *check.Pass) error {
		f := p.Env.Facts
		if f.Discover == nil {
			p.Skipf("no discover result to read capabilities from (DISC-1 reports it)")
			return nil
		}
		var found []string
		for _, name := range discClientOnly {
			if f.Has(name) {
				found = append(found, fmt.Sprintf("%s %s", name, jsonrpc.Clip(string(f.Capabilities[name]), 60)))
			}
		}
		ev := &check.Evidence{Request: "server/discover", Response: jsonrpc.Clip(string(compMember(f.DiscoverRaw, "capabilities")), 600)}
		if len(found) > 0 {
			// The schema allows extra members, so this is no MUST; but a
			// client reading them learns nothing true about the server.
			for _, name := range discClientOnly {
				if f.Has(name) {
					ev = discoverAt(p, "capabilities", name)
					break
				}
			}
			p.Warnf(ev, "capabilities declares client-only capabilities: %s; ServerCapabilities defines none of them", strings.Join(found, ", "))
			return nil
		}
		p.Passf(ev, "capabilities declares only server capabilities (%s)", strings.Join(f.CapabilityNames(), ", "))
		return nil
	},
}

var DISC8 = &check.Check{
	ID: "DISC-8", Level: check.Must, Transports: check.Both,
	Spec: "basic/patterns/mrtr.mdx §Supported Requests",
	Doc:  "server/discover never answers with an input_required result",
	Fix:  "answer server/discover directly; MRTR is only for tools/call, resources/read and prompts/get",
	Run: func(p *check.Pass) error {
		resp, err := p.Do("server/discover", nil)
		if err != nil {
			return err
		}
		if rt, _ := resp.ResultType(); rt == mcpclient.ResultInputRequired {
			p.Failf(check.FromResponseAt(resp, "/result/resultType"), "server/discover returned resultType \"input_required\"")
		}
		return nil
	},
}
