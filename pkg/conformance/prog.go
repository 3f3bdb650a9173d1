package conformance

import "github.com/mcp-eval/mcp-eval-action/pkg/check"

// PROG: see ../shared/docs/spec-checklist.md.

var progFamily = family{name: "PROG", checks: []*check.Check{}}
