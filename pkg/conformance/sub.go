package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// SUB: see ../shared/docs/spec-checklist.md.

var subFamily = family{name: "SUB", checks: []*check.Check{}}
