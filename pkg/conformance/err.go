package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// ERR: see ../shared/docs/spec-checklist.md.

var errFamily = family{name: "ERR", checks: []*check.Check{}}
