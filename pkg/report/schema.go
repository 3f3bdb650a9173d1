package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaJSON is report.schema.json, the JSON Schema (2020-12) of a report.
//
//go:embed report.schema.json
var schemaJSON []byte

// Schema returns a copy of report.schema.json, for tools and docs that want
// the file itself.
func Schema() []byte { return append([]byte(nil), schemaJSON...) }

// layer0Schema is conformance.schema.json, the schema of the Layer 0
// section, which is also what `mcp-eval check --json` writes on its own.
//
//go:embed conformance.schema.json
var layer0Schema []byte

// ConformanceSchema returns a copy of conformance.schema.json.
func ConformanceSchema() []byte { return append([]byte(nil), layer0Schema...) }

const (
	schemaURL       = "https://github.com/mcp-eval/mcp-eval-action/pkg/report/report.schema.json"
	layer0SchemaURL = "https://github.com/mcp-eval/mcp-eval-action/pkg/report/conformance.schema.json"
)

// compiled compiles the schemas once; the result is never modified, so
// sharing it is safe.
var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	// No loader: a $ref to anything but the two embedded schemas is an
	// error, never a network or file fetch.
	c.UseLoader(noLoader{})
	for url, doc := range map[string][]byte{schemaURL: schemaJSON, layer0SchemaURL: layer0Schema} {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
		if err != nil {
			return nil, fmt.Errorf("report: embedded schema %s: %w", url, err)
		}
		if err := c.AddResource(url, v); err != nil {
			return nil, fmt.Errorf("report: embedded schema %s: %w", url, err)
		}
	}
	return c.Compile(schemaURL)
})

// CompileSchema compiles report.schema.json now, once per process (about
// 25 ms of CPU), so that a run that will write a report can do it while it
// waits for the server instead of after the last check.
func CompileSchema() { _, _ = compiled() }

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schema %s is not embedded in mcp-eval", url)
}

// maxSchemaErrors bounds how many schema violations an error lists: enough
// to fix a generator, not a wall of text for a file that is not a report.
const maxSchemaErrors = 8

// validateSchema checks a decoded document (numbers as json.Number)
// against report.schema.json.
func validateSchema(doc any) error {
	sch, err := compiled()
	if err != nil {
		return err
	}
	err = sch.Validate(doc)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err
	}
	// The library's own text has the best message per location ("missing
	// properties 'commit', …"); its structured outputs say only
	// "validation failed" for some keywords. Keep its leaf lines.
	var lines []string
	for _, l := range strings.Split(ve.Error(), "\n") {
		m := leafRE.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil || m[2] == "validation failed" {
			continue
		}
		loc := m[1]
		if loc == "" {
			loc = "/"
		}
		lines = append(lines, loc+": "+m[2])
	}
	sort.Strings(lines)
	lines = compact(lines)
	if len(lines) == 0 {
		lines = []string{ve.Error()}
	}
	more := ""
	if len(lines) > maxSchemaErrors {
		more = fmt.Sprintf("\n  … and %d more", len(lines)-maxSchemaErrors)
		lines = lines[:maxSchemaErrors]
	}
	return fmt.Errorf("%w:\n  %s%s", ErrSchema, strings.Join(lines, "\n  "), more)
}

// leafRE reads one "- at '/path': message" line of a ValidationError.
var leafRE = regexp.MustCompile(`^- at '([^']*)': (.+)$`)

func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
