package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// TASK: see ../shared/docs/spec-checklist.md.

var taskFamily = family{name: "TASK", checks: []*check.Check{}}
