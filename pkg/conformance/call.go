package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// CALL: see ../shared/docs/spec-checklist.md.

var callFamily = family{name: "CALL", checks: []*check.Check{}}
