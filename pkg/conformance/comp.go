package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// COMP: see ../shared/docs/spec-checklist.md.

var compFamily = family{name: "COMP", checks: []*check.Check{}}
