package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// AUTH: see ../shared/docs/spec-checklist.md.

var authFamily = family{name: "AUTH", checks: []*check.Check{}}
