package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// TOOL: see ../shared/docs/spec-checklist.md.

var toolFamily = family{name: "TOOL", checks: []*check.Check{}}
