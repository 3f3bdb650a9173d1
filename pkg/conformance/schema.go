package conformance

import (
	"encoding/json"
	"fmt"

	"github.com/mcp-eval/mcp-eval-action/pkg/check"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonrpc"
	"github.com/mcp-eval/mcp-eval-action/pkg/jsonschema"
	"github.com/mcp-eval/mcp-eval-action/pkg/mcpclient"
)

// SCHEMA: the JSON Schemas in tool definitions (basic/index.mdx §JSON Schema
// Usage; checklist §1.9). Every inputSchema and outputSchema is compiled by
// pkg/jsonschema: its declared dialect (2020-12 when absent), $ref only
// within the document and never fetched, bounded in size, depth,
// subschemas and time. Each check reports one kind of finding.

// schemaFinding is one tool schema that could not be compiled.
type schemaFinding struct {
	tool  string // tool name
	which string // "inputSchema" or "outputSchema"
	err   *jsonschema.Error
	ev    *check.Evidence // located at the schema
}

// schemaFindings compiles every tool's schemas; judged counts the schemas
// compiled. It skips the check when there are no tools.
func schemaFindings(p *check.Pass) (findings []schemaFinding, judged int, ev *check.Evidence, ok bool, err error) {
	if !toolServed(p.Env.Facts) {
		p.Skipf(toolNotServed)
		return nil, 0, nil, false, nil
	}
	items, lr, ok, err := toolListRaw(p)
	if !ok {
		return nil, 0, nil, false, err
	}
	if p.Env.Memo == nil { // a unit test's bare Env
		f := schemaFind(p.Env, items, lr)
		return f.findings, f.judged, toolEvidence(lr), true, nil
	}
	// The SCHEMA checks of a repetition judge one listing: it is read
	// once, not by each (on a server of 1,000 tools every tool and schema
	// decoded twelve times a run, not five).
	f, _ := p.Env.Memo.Do(schemaFoundKey{lr}, func() any { return schemaFind(p.Env, items, lr) }).(*schemaFound)
	return f.findings, f.judged, toolEvidence(lr), true, nil
}

// schemaFoundKey names, in the run's Memo, what schemaFind found in one
// listing.
type schemaFoundKey struct{ lr *mcpclient.ListResult }

type schemaFound struct {
	findings []schemaFinding
	judged   int
}

// schemaFind compiles the schemas of items, the entries of lr.
func schemaFind(env check.Env, items []json.RawMessage, lr *mcpclient.ListResult) *schemaFound {
	f := &schemaFound{}
	for i, raw := range items {
		var t map[string]json.RawMessage
		if json.Unmarshal(raw, &t) != nil {
			continue // TOOL-4
		}
		var name string
		_ = json.Unmarshal(t["name"], &name)
		for _, which := range []string{"inputSchema", "outputSchema"} {
			s, present := t[which]
			var obj map[string]json.RawMessage
			if !present || json.Unmarshal(s, &obj) != nil || obj == nil {
				continue // absent, or not an object: TOOL-4
			}
			f.judged++
			if _, err := schemaCompileTool(env, s); err != nil {
				if e, isErr := err.(*jsonschema.Error); isErr {
					f.findings = append(f.findings, schemaFinding{tool: name, which: which, err: e, ev: listEntryAt(lr, "tools", i, false, which)})
				}
			}
		}
	}
	return f
}

// schemaReport reports the findings of the given kinds.
func schemaReport(p *check.Pass, kinds map[jsonschema.Kind]bool, what string) error {
	findings, judged, ev, ok, err := schemaFindings(p)
	if !ok {
		return err
	}
	if judged == 0 {
		p.Skipf("no tool has an inputSchema or outputSchema object")
		return nil
	}
	for _, f := range findings {
		if kinds[f.err.Kind] {
			p.Failf(f.ev, "tool %q %s: %s", jsonrpc.Clip(f.tool, 80), f.which, f.err)
		}
	}
	p.Passf(ev, "%d tool schemas: %s", judged, what)
	return nil
}

var SCHEMA1 = &check.Check{
	ID: "SCHEMA-1", Level: check.Must, Transports: check.Both, Seed: 5,
	Spec: "basic/index.mdx §JSON Schema Usage; schema.ts Tool.inputSchema; SEP-2106",
	Doc:  "every inputSchema and outputSchema is a valid schema of its declared $schema, JSON Schema 2020-12 when absent",
	Fix:  "make each tool schema validate against the JSON Schema 2020-12 metaschema (or the dialect its $schema names)",
	Run: func(p *check.Pass) error {
		return schemaReport(p, map[jsonschema.Kind]bool{jsonschema.Invalid: true}, "each valid for its dialect")
	},
}

var SCHEMA2 = &check.Check{
	ID: "SCHEMA-2", Level: check.Must, Transports: check.Both, Seed: 5,
	Spec: "basic/index.mdx §$ref Resolution",
	Doc:  "every $ref in a tool schema resolves within the document; a reference to another document is never fetched and is reported",
	Fix:  "inline referenced schemas under $defs and point $ref at #/$defs/...; clients never fetch remote schemas",
	Run: func(p *check.Pass) error {
		return schemaReport(p, map[jsonschema.Kind]bool{jsonschema.External: true, jsonschema.Unresolvable: true}, "every $ref resolves within its document")
	},
}

var SCHEMA3 = &check.Check{
	ID: "SCHEMA-3", Level: check.Should, Transports: check.Both,
	Spec: "basic/index.mdx §Composition-Keyword Resource Use",
	Doc:  "tool schemas stay within the harness's bounds (size, nesting depth, number of subschemas, compile time, no $ref loop)",
	Fix:  "simplify the schema: fewer and shallower subschemas, no $ref cycles that never consume the instance",
	Run: func(p *check.Pass) error {
		what := fmt.Sprintf("all within %d bytes, %d levels, %d subschemas and %v", jsonschema.DefaultMaxBytes, jsonschema.DefaultMaxDepth, jsonschema.DefaultMaxSubschemas, jsonschema.DefaultTimeout)
		return schemaReport(p, map[jsonschema.Kind]bool{jsonschema.OverBounds: true}, what)
	},
}

var SCHEMA4 = &check.Check{
	ID: "SCHEMA-4", Level: check.Info, Transports: check.Both,
	Spec: "basic/index.mdx §JSON Schema Usage (unsupported dialects)",
	Doc:  "a tool schema whose $schema names a dialect the harness cannot handle is reported as \"dialect unsupported\", not invalid",
	Fix:  "declare JSON Schema 2020-12 (or omit $schema) so that every client can validate the tool",
	Run: func(p *check.Pass) error {
		findings, judged, ev, ok, err := schemaFindings(p)
		if !ok {
			return err
		}
		for _, f := range findings {
			if f.err.Kind == jsonschema.DialectUnsupported {
				p.Warnf(f.ev, "tool %q %s: %s", jsonrpc.Clip(f.tool, 80), f.which, f.err)
			}
		}
		if judged == 0 {
			p.Skipf("no tool has an inputSchema or outputSchema object")
			return nil
		}
		p.Passf(ev, "%d tool schemas, all in a dialect the harness implements", judged)
		return nil
	},
}

var schemaFamily = family{name: "SCHEMA", title: "JSON Schema", checks: []*check.Check{SCHEMA1, SCHEMA2, SCHEMA3, SCHEMA4}}
