package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// SCHEMA: see ../shared/docs/spec-checklist.md.

var schemaFamily = family{name: "SCHEMA", checks: []*check.Check{}}
