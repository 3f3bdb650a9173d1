package jsonschema

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"
	"time"

	lib "github.com/santhosh-tekuri/jsonschema/v6"
)

// mcpSchemaDoc is mcp-eval's own JSON Schema (2020-12) of the MCP
// 2026-07-28 messages the conformance checks judge, written from the
// specification text and docs/spec-checklist.md. It is not the official
// schema.json: it holds only the definitions the checks name, with the
// members those need, and mcpdefs_test.go checks that it agrees with the
// official schema on a corpus of messages. Every definition is under $defs.
//
//go:embed mcpschema/defs.json
var mcpSchemaDoc []byte

const mcpBase = "urn:mcp-eval:mcp-2026-07-28"

var mcpSchemas struct {
	once sync.Once
	err  error
	mu   sync.Mutex
	c    *lib.Compiler
	defs map[string]*Schema
}

// MCP returns the definition named def (e.g. "CallToolResult") of our MCP
// 2026-07-28 definitions, compiled once, as an oracle for wire messages.
// Results take any string resultType: branch on resultType first, then
// validate the concrete definition (checklist §0). InputRequiredResult
// pins resultType to "input_required"; ContentBlock is discriminated by
// type, so a bad block is reported against the definition its type names.
func MCP(def string) (*Schema, error) {
	m := &mcpSchemas
	m.once.Do(func() {
		doc, err := lib.UnmarshalJSON(bytes.NewReader(mcpSchemaDoc))
		if err != nil {
			m.err = fmt.Errorf("the embedded MCP definitions are not JSON: %w", err)
			return
		}
		m.c = lib.NewCompiler()
		m.c.DefaultDraft(lib.Draft2020)
		m.c.UseLoader(&refusingLoader{})
		m.c.UseRegexpEngine(ecmaRegexp)
		if err := m.c.AddResource(mcpBase, doc); err != nil {
			m.err = err
		}
		m.defs = map[string]*Schema{}
	})
	if m.err != nil {
		return nil, m.err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.defs[def]; ok {
		return s, nil
	}
	sch, err := m.c.Compile(mcpBase + "#/$defs/" + def)
	if err != nil {
		return nil, fmt.Errorf("MCP definition %q: %w", def, err)
	}
	s := &Schema{sch: sch, dialect: Draft2020, lim: Limits{Timeout: 5 * time.Second}.withDefaults()}
	m.defs[def] = s
	return s, nil
}
