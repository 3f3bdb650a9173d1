package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// HTTP: see ../shared/docs/spec-checklist.md.

var httpFamily = family{name: "HTTP", checks: []*check.Check{}}
