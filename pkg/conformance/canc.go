package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// CANC: see ../shared/docs/spec-checklist.md.

var cancFamily = family{name: "CANC", checks: []*check.Check{}}
