package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// VER: see ../shared/docs/spec-checklist.md.

var verFamily = family{name: "VER", checks: []*check.Check{}}
