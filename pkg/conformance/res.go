package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// RES: see ../shared/docs/spec-checklist.md.

var resFamily = family{name: "RES", checks: []*check.Check{}}
