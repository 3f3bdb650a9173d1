package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// CACHE: see ../shared/docs/spec-checklist.md.

var cacheFamily = family{name: "CACHE", checks: []*check.Check{}}
