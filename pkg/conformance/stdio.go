package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// STDIO: see ../shared/docs/spec-checklist.md.

var stdioFamily = family{name: "STDIO", checks: []*check.Check{}}
