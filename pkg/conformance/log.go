package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// LOG: see ../shared/docs/spec-checklist.md.

var logFamily = family{name: "LOG", checks: []*check.Check{}}
