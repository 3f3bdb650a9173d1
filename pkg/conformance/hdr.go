package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// HDR: see ../shared/docs/spec-checklist.md.

var hdrFamily = family{name: "HDR", checks: []*check.Check{}}
