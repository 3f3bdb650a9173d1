package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// STATE: see ../shared/docs/spec-checklist.md.

var stateFamily = family{name: "STATE", checks: []*check.Check{}}
