package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// REM: see ../shared/docs/spec-checklist.md.

var remFamily = family{name: "REM", checks: []*check.Check{}}
